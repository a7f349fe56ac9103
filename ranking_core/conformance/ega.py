"""The ``ega`` vector: Clarke and Parkes (type 1) zone counts of the R package ega 2.0.0's example
data (``glucose_data``, 5,072 pairs in mg/dL) against its vignette, with every differing pair
traced to its cause.

The vignette's tables differ from the published grid definitions on a few pairs:

* Clarke: pairs reading exactly 20 % high are in zone A by the published rule (|BGM − REF| ≤
  20 % of REF; Clarke et al., Diabetes Care 1987) and by ega 2.0.0's own code (``are <= 20``),
  in B in the vignette, which was made with an older rule.
* Parkes type 1: ega puts a pair lying exactly on a zone border in the worse zone (ours, the
  inner one: :mod:`ranking_core.grids.parkes`), and ega's type-1 lower D polygon runs from
  (250, 40) towards the type-2 vertex (410, 110) continued along the type-1 slope, to the
  plot's edge x = max(max REF + 20, 550) (ega ``getParkesZones``), while the published type-1
  border is (250, 40)–(550, 150) (Pfützner et al., J Diabetes Sci Technol 2013).

:func:`vignette_zones` reproduces the vignette's zone of every pair from ours and these causes
alone; :func:`compare_ega` tabulates both counts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.conformance.common import Comparison, ConformanceDataError, check_file
from ranking_core.grids.registry import ZoneGrid, get_grid

__all__ = [
    "PUBLISHED_ZONES",
    "compare_ega",
    "differing_pairs",
    "read_glucose_data",
    "vignette_zones",
]

VECTOR = "ega"
SOURCE = "ega 2.0.0 vignette"
# zone counts A–E of glucose_data in the vignette (inst/doc/ega.html)
PUBLISHED_ZONES = {"clarke": (3652, 1171, 53, 180, 16), "parkes-type1": (3906, 951, 165, 48, 2)}
ZONES = ("A", "B", "C", "D", "E")
_BORDER_STEP = 1e-6  # mg/dL: a pair on a border changes zone within this distance
_MAX_PAIRS = 1_000_000


def read_glucose_data(folder: Path) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(ref, test) in mg/dL from ``glucose_data.csv``."""
    path = check_file(folder / "glucose_data.csv")
    frame = pd.read_csv(path, nrows=_MAX_PAIRS + 1)
    if not {"ref", "test"} <= set(frame.columns) or len(frame) > _MAX_PAIRS:
        raise ConformanceDataError(
            f"{path}: needs columns ref and test and at most {_MAX_PAIRS:,} rows"
        )
    values = frame[["ref", "test"]].apply(pd.to_numeric, errors="coerce").to_numpy(float)
    bad = np.flatnonzero(~np.isfinite(values).all(axis=1) | (values < 0).any(axis=1))
    if bad.size:
        raise ConformanceDataError(
            f"{path}, line {bad[0] + 2}: ref and test must be numbers ≥ 0 (mg/dL)"
        )
    return values[:, 0], values[:, 1]


def _zone_grid(name: str) -> ZoneGrid:
    grid = get_grid(name)
    assert isinstance(grid, ZoneGrid)
    return grid


def _clarke_exactly_20_high(
    ref: NDArray[np.float64], test: NDArray[np.float64], zone: NDArray[np.intp]
) -> NDArray[np.bool_]:
    """Pairs in Clarke A that read exactly 20 % above the reference (100·(test − ref) = 20·ref,
    exact for whole mg/dL), not by the both-below-70 rule."""
    return (zone == 0) & (100.0 * (test - ref) == 20.0 * ref) & ~((ref < 70) & (test < 70))


def _parkes_border(
    ref: NDArray[np.float64], test: NDArray[np.float64], zone: NDArray[np.intp]
) -> NDArray[np.intp]:
    """The worst zone within :data:`_BORDER_STEP` of each pair (its own zone unless it lies on
    a border)."""
    grid = _zone_grid("parkes-type1")
    step = _BORDER_STEP
    around = [
        grid.zone_index(ref + dr, test + dt)
        for dr, dt in ((step, 0.0), (-step, 0.0), (0.0, step), (0.0, -step))
    ]
    return np.max([zone, *around], axis=0)


def _ega_lower_d(ref: NDArray[np.float64], test: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Pairs inside ega 2.0.0's type-1 lower D polygon: (250, 0), (250, 40), (x_max, y_end),
    (x_max, 0) with x_max = max(max REF + 20, 550) and y_end = 110 + (110/300)(x_max − 410)."""
    x_max = max(float(ref.max()) + 20.0, 550.0)
    y_end = 110.0 + (150.0 - 40.0) / (550.0 - 250.0) * (x_max - 410.0)
    edge = 40.0 + (ref - 250.0) * (y_end - 40.0) / (x_max - 250.0)
    return (ref > 250.0) & (test < edge)


def vignette_zones(
    grid: str, ref: NDArray[np.float64], test: NDArray[np.float64]
) -> tuple[NDArray[np.intp], NDArray[np.intp], dict[str, NDArray[np.bool_]]]:
    """(our zone index, the vignette's zone index reproduced from ours and the known causes,
    the pairs each cause moves) for ``grid`` "clarke" or "parkes-type1"."""
    ours = _zone_grid(grid).zone_index(ref, test)
    theirs = ours.copy()
    causes: dict[str, NDArray[np.bool_]] = {}
    if grid == "clarke":
        high = _clarke_exactly_20_high(ref, test, ours)
        theirs[high] = 1
        causes[
            "reading exactly 20 % high: A by the published rule and ega 2.0.0's code (≤ 20 %), "
            "B in the vignette (made with an older rule)"
        ] = high
        return ours, theirs, causes
    worse = _parkes_border(ref, test, ours)
    on_border = worse != ours
    theirs[on_border] = worse[on_border]
    ega_d = _ega_lower_d(ref, test)
    below = test < ref
    vertex = below & (ega_d & (ours < 3) | ~ega_d & (ours == 3))
    theirs[vertex & ega_d] = 3
    theirs[vertex & ~ega_d] = 2
    for upper_zone in (1, 2, 3, 4):
        moved = on_border & (worse == upper_zone)
        if moved.any():
            above = test[moved] > ref[moved]
            side = "upper " if above.all() else "lower " if not above.any() else ""
            causes[
                f"on the {side}{ZONES[upper_zone - 1]}/{ZONES[upper_zone]} border: "
                f"{ZONES[upper_zone - 1]} here (borders belong to the milder zone), "
                f"{ZONES[upper_zone]} in ega"
            ] = moved
    causes[
        "in ega's lower D polygon, which uses the type-2 vertex (410, 110): D in ega, C "
        "by the published type-1 border (250, 40)–(550, 150)"
    ] = vertex
    return ours, theirs, causes


def differing_pairs(
    grid: str, ref: NDArray[np.float64], test: NDArray[np.float64]
) -> dict[str, list[tuple[float, float]]]:
    """The (ref, test) pairs each known cause moves, in data order (repeats kept)."""
    _, _, causes = vignette_zones(grid, ref, test)
    return {
        cause: [(float(ref[i]), float(test[i])) for i in np.flatnonzero(mask)]
        for cause, mask in causes.items()
    }


def _pairs_text(ref: NDArray, test: NDArray, mask: NDArray[np.bool_]) -> str:
    where = np.flatnonzero(mask)
    listed = ", ".join(f"({ref[i]:g}, {test[i]:g})" for i in where)
    return f"{where.size} pair{'s' if where.size > 1 else ''} {listed}"


def compare_ega(folder: Path) -> list[Comparison]:
    """Per grid and zone: the vignette's count against ours (each difference explained pair by
    pair), then against ours with the listed pairs where the vignette has them."""
    ref, test = read_glucose_data(folder)
    rows = []
    for grid, published in PUBLISHED_ZONES.items():
        title = get_grid(grid).title
        ours, theirs, causes = vignette_zones(grid, ref, test)
        count = np.bincount(ours, minlength=5)
        reproduced = np.bincount(theirs, minlength=5)
        for k, zone in enumerate(ZONES):
            parts = []
            for cause, mask in causes.items():
                leave, enter = (
                    mask & (ours == k) & (theirs != k),
                    mask & (ours != k) & (theirs == k),
                )
                if leave.any():
                    parts.append(f"{_pairs_text(ref, test, leave)} {cause}")
                if enter.any():
                    parts.append(f"{_pairs_text(ref, test, enter)} {cause}")
            why = (
                "; ".join(parts)
                if count[k] != published[k] and reproduced[k] == published[k]
                else ""
            )
            rows.append(
                Comparison(
                    VECTOR,
                    SOURCE,
                    f"{title}: zone {zone}",
                    published[k],
                    float(count[k]),
                    0.0,
                    0,
                    why,
                )
            )
        for k, zone in enumerate(ZONES):
            rows.append(
                Comparison(
                    VECTOR,
                    SOURCE,
                    f"{title}: zone {zone}, the listed pairs as ega has them",
                    published[k],
                    float(reproduced[k]),
                    0.0,
                    0,
                )
            )
    return rows
