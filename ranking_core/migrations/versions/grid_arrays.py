"""A learned grid is stored as the 601 × 601 grid that was shown, with its grid.json metadata; an
uploaded SEG table only as its bytes.

Earlier versions stored a learned grid as a spectral ranker (class names, coefficients, fitted
points, training set) and rebuilt the grid on every load; a robust or monotone grid could not be
kept that way. This revision rebuilds each such record's grid once, as those versions did (the
ranker refitted on its fitted points at the stored λ, its coefficients checked against the stored
ones, |f| for a signed fit; only riskgrid's own classes, named in the record, are ever built; no
module is imported by name), and stores it beside the old blobs with metadata in the grid.json
layout. A record that cannot be rebuilt (a class outside the allow-list, changed coefficients, a
stored ``"signed"`` that is not a JSON boolean) is kept and marked damaged, with the reason the
loader then gives. A SEG-table record that named a file on the server is marked the same way:
such paths are never opened.

Revision ID: grid_arrays
Revises: saved_by
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np
import sqlalchemy as sa
from alembic import op

from ranking_core.filters import (
    IteratedLavrentiev,
    Landweber,
    Lavrentiev,
    Showalter,
    SpectralCutoff,
)
from ranking_core.grids.coordinates import GlucoseTransform, TransformedKernel
from ranking_core.grids.learned import learned_grid
from ranking_core.grids.signed import AbsoluteRisk
from ranking_core.kernels import GaussianKernel, LaplacianKernel, LinearKernel, PolynomialKernel
from ranking_core.learners.spectral import SpectralRanker, SpectralRegressor
from ranking_core.storage import (
    StorageError,
    array_from_bytes,
    array_to_bytes,
    check_grid,
    json_bool,
)
from ranking_core.version import riskgrid_version

revision = "grid_arrays"
down_revision = "saved_by"

# The classes an earlier learned-grid record may name (by exact class name), and nothing else.
ALLOWED_CLASSES: Mapping[str, type] = {
    cls.__name__: cls
    for cls in (
        SpectralRanker,
        SpectralRegressor,
        GaussianKernel,
        LaplacianKernel,
        LinearKernel,
        PolynomialKernel,
        TransformedKernel,
        GlucoseTransform,
        Lavrentiev,
        IteratedLavrentiev,
        SpectralCutoff,
        Landweber,
        Showalter,
    )
}
ESTIMATORS = ("SpectralRanker", "SpectralRegressor")
COMPONENTS = tuple(name for name in ALLOWED_CLASSES if name not in ESTIMATORS)
MODEL_BLOBS = ("coef", "X_fit", "y_fit", "X_train", "y_train")

records = sa.table(
    "records",
    sa.column("id", sa.Integer),
    sa.column("kind", sa.String),
    sa.column("name", sa.String),
    sa.column("meta", sa.JSON),
)
blobs = sa.table(
    "blobs",
    sa.column("record_id", sa.Integer),
    sa.column("key", sa.String),
    sa.column("content", sa.LargeBinary),
)


def allowed_class(stored: Any, names: tuple[str, ...]) -> type:
    """The allow-listed class (one of ``names``) a record names by its class name, or by the
    ``"ranking_core.module:Name"`` form of the first versions. Never imports anything."""
    label = str(stored)
    module, _, name = label.rpartition(":")
    if module and not module.startswith("ranking_core."):
        raise StorageError(f"stored class {label!r} is not one of riskgrid's own classes")
    if name not in names:
        raise StorageError(f"stored class {label!r} is not allowed (one of: {', '.join(names)})")
    return ALLOWED_CLASSES[name]


def component(value: Any) -> Any:
    """A stored kernel or filter: a name stays a name; ``{"class", "fields"}`` builds the
    allow-listed dataclass."""
    if isinstance(value, list):
        return [component(v) for v in value]
    if not (isinstance(value, Mapping) and "class" in value):
        return value
    cls = allowed_class(value.get("class"), COMPONENTS)
    fields = value.get("fields", {})
    if not isinstance(fields, Mapping):
        raise StorageError(f"stored component {value.get('class')!r} has no field record")
    fields = {k: component(v) for k, v in fields.items()}
    try:
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})
    except (TypeError, ValueError) as exc:
        raise StorageError(f"stored component {cls.__name__} has bad fields: {exc}") from exc


def rebuilt_grid(meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> np.ndarray:
    """The grid an earlier version showed for this record: its ranker refitted on the fitted
    points at the stored λ, coefficients checked, |f| for a signed fit."""
    signed = json_bool(meta, "signed", False, "the record")
    cls = allowed_class(meta.get("estimator", "SpectralRanker"), ESTIMATORS)
    params = dict(meta["params"])
    params["kernel"] = component(params.get("kernel", "gaussian"))
    params["filter"] = component(params.get("filter", "lavrentiev"))
    if isinstance(params.get("gamma"), list):
        params["gamma"] = tuple(params["gamma"])
    try:
        model = cls(**params).fit(arrays["X_fit"], arrays["y_fit"]).resolve(float(meta["lam"]))
    except (TypeError, ValueError) as exc:
        raise StorageError(f"its ranker cannot be rebuilt: {exc}") from exc
    coef = arrays["coef"]
    tolerance = 1e-6 * max(1.0, float(np.max(np.abs(coef), initial=0.0)))
    if (
        model.coef_.shape != coef.shape
        or np.max(np.abs(model.coef_ - coef), initial=0.0) > tolerance
    ):
        raise StorageError("refitting gives other coefficients than the stored ones")
    grid = learned_grid(AbsoluteRisk(model) if signed else model)
    check_grid(grid)
    return grid


def converted(
    meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray], grid: np.ndarray
) -> dict[str, Any]:
    """The record's new summary: grid.json-style metadata, the old metrics, the old summary kept
    under ``earlier``."""
    metrics = dict(meta.get("metrics") or {})
    checksum = metrics.get("ratings_checksum")
    if not isinstance(checksum, str):
        digest = hashlib.sha256(np.ascontiguousarray(arrays["X_train"], np.float64).tobytes())
        digest.update(np.ascontiguousarray(arrays["y_train"], np.float64).tobytes())
        checksum = "sha256:" + digest.hexdigest()
    settings = metrics.get("settings")
    if not isinstance(settings, Mapping):
        settings = {
            "estimator": meta.get("estimator", "SpectralRanker"),
            "signed": meta.get("signed", False),
            **meta["params"],
        }
    metadata = {
        "settings": dict(settings),
        "lambda": float(meta["lam"]),
        "ratings": len(arrays["y_train"]),
        "points_fitted": len(arrays["y_fit"]),
        "ratings_checksum": checksum,
        "riskgrid_version": f"saved by an earlier version; grid rebuilt from its ranker "
        f"by {riskgrid_version()}",
    }
    return {
        "metadata": metadata,
        "metrics": metrics,
        "m": metadata["ratings"],
        "earlier": dict(meta),
    }


def upgrade() -> None:
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(records.c.id, records.c.kind, records.c.meta).where(
            records.c.kind.in_(("learned_grid", "seg_table"))
        )
    ).all()
    for row in rows:
        meta = dict(row.meta) if isinstance(row.meta, Mapping) else {}
        keys = dict(
            connection.execute(
                sa.select(blobs.c.key, blobs.c.content).where(blobs.c.record_id == row.id)
            ).all()
        )
        if row.kind == "seg_table":
            if "file" not in keys:
                meta["damaged"] = (
                    "it names a file on the server instead of holding the "
                    "uploaded table, and server paths are never opened; upload "
                    "the table again"
                )
        elif "grid" not in keys:
            try:
                arrays = {key: array_from_bytes(keys[key]) for key in MODEL_BLOBS}
                grid = rebuilt_grid(meta, arrays)
            except (StorageError, KeyError, TypeError, ValueError) as exc:
                meta = {
                    "damaged": f"its ranker could not be turned into a grid ({exc})",
                    "earlier": meta,
                }
            else:
                meta = converted(meta, arrays, grid)
                connection.execute(
                    sa.insert(blobs).values(
                        record_id=row.id, key="grid", content=array_to_bytes(grid)
                    )
                )
        else:
            continue
        connection.execute(sa.update(records).where(records.c.id == row.id).values(meta=meta))


def downgrade() -> None:
    """Converted records get their earlier summary back and lose the grid; records saved as
    grids by this version cannot be turned into rankers and are left as they are (earlier
    versions report them as damaged)."""
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(records.c.id, records.c.meta).where(
            records.c.kind.in_(("learned_grid", "seg_table"))
        )
    ).all()
    for row in rows:
        meta = row.meta if isinstance(row.meta, Mapping) else {}
        if "earlier" in meta:
            connection.execute(
                sa.delete(blobs).where(blobs.c.record_id == row.id, blobs.c.key == "grid")
            )
            connection.execute(
                sa.update(records).where(records.c.id == row.id).values(meta=meta["earlier"])
            )
        elif "damaged" in meta:
            connection.execute(
                sa.update(records)
                .where(records.c.id == row.id)
                .values(meta={k: v for k, v in meta.items() if k != "damaged"})
            )
