"""Persistence of rating sets, meter data, learned grids and the user's SEG table (SQLAlchemy 2.x).

One record per saved thing, identified by its kind and a name the user chooses; its arrays and
files are blobs of the record. A record and its blobs are written in one transaction, so a failure
never leaves half a record, and a rejected save changes nothing already stored.

Arrays are stored as ``.npy`` bytes written with ``allow_pickle=False`` and read back the same way;
frames as ``.npz`` archives of their columns (numbers as float64/int64, text as fixed-width
unicode); an uploaded SEG table as the user's file bytes. Nothing is ever pickled.

The database is SQLite in the user's data directory (``platformdirs.user_data_dir("riskgrid")``)
unless ``RISKGRID_DATABASE_URL`` names another SQLAlchemy URL (for example PostgreSQL).
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import platformdirs
from numpy.typing import ArrayLike, NDArray
from sqlalchemy import (
    JSON,
    DateTime,
    ForeignKey,
    LargeBinary,
    String,
    UniqueConstraint,
    create_engine,
    select,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

from ranking_core.grids.seg import SEGTable, load_seg_table
from ranking_core.learners.spectral import SpectralRanker

__all__ = [
    "DATABASE_URL_ENV",
    "KINDS",
    "RecordInfo",
    "RecordNotFound",
    "StorageError",
    "Store",
    "StoredFrame",
    "StoredGrid",
    "StoredSEGTable",
    "array_from_bytes",
    "array_to_bytes",
    "default_database_url",
    "frame_from_bytes",
    "frame_to_bytes",
]

DATABASE_URL_ENV = "RISKGRID_DATABASE_URL"
KINDS = ("rating_set", "meter_data", "learned_grid", "seg_table")
NAME_MAX = 200


class StorageError(ValueError):
    """A save or load was refused (duplicate or empty name, unsafe or damaged content)."""


class RecordNotFound(StorageError, LookupError):
    """No record of that kind and name."""


# -- safe encodings -----------------------------------------------------------------------------
def array_to_bytes(values: ArrayLike) -> bytes:
    """``.npy`` bytes of a numeric or unicode array, written with ``allow_pickle=False``."""
    array = np.asarray(values)
    if array.dtype.kind not in "biufU":
        raise StorageError(f"cannot store an array of dtype {array.dtype} (numbers or text only)")
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def array_from_bytes(content: bytes) -> NDArray:
    """Inverse of :func:`array_to_bytes`; refuses pickled content."""
    try:
        return np.load(io.BytesIO(content), allow_pickle=False)
    except ValueError as exc:
        raise StorageError(f"stored array is not a plain numeric/text .npy ({exc})") from exc


def _column_array(column: pd.Series) -> NDArray:
    if pd.api.types.is_bool_dtype(column) or pd.api.types.is_numeric_dtype(column):
        return column.to_numpy()
    return column.astype("string").fillna("").to_numpy(dtype=str)


def frame_to_bytes(frame: pd.DataFrame) -> bytes:
    """``.npz`` bytes holding each column of ``frame`` (numbers kept, anything else as text)."""
    names = [str(c) for c in frame.columns]
    if len(set(names)) != len(names):
        raise StorageError(f"cannot store a frame with repeated column names: {names}")
    columns = {f"c{i}": _column_array(frame[c]) for i, c in enumerate(frame.columns)}
    for key, values in columns.items():
        if values.dtype.kind not in "biufU":
            raise StorageError(f"column {names[int(key[1:])]!r} has dtype {values.dtype}")
    buffer = io.BytesIO()
    np.savez(buffer, __columns__=np.array(names, dtype=str), **columns)
    return buffer.getvalue()


def frame_from_bytes(content: bytes) -> pd.DataFrame:
    """Inverse of :func:`frame_to_bytes`; refuses pickled content."""
    try:
        with np.load(io.BytesIO(content), allow_pickle=False) as archive:
            names = [str(n) for n in archive["__columns__"]]
            return pd.DataFrame({n: archive[f"c{i}"] for i, n in enumerate(names)})
    except (ValueError, KeyError, OSError) as exc:
        raise StorageError(f"stored frame is damaged or unsafe ({exc})") from exc


# -- schema -------------------------------------------------------------------------------------
class _Base(DeclarativeBase):
    pass


class _Record(_Base):
    __tablename__ = "records"
    __table_args__ = (UniqueConstraint("kind", "name", name="uq_records_kind_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(NAME_MAX))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    blobs: Mapped[list[_Blob]] = relationship(
        back_populates="record", cascade="all, delete-orphan"
    )


class _Blob(_Base):
    __tablename__ = "blobs"
    __table_args__ = (UniqueConstraint("record_id", "key", name="uq_blobs_record_key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(64))
    content: Mapped[bytes] = mapped_column(LargeBinary)
    record: Mapped[_Record] = relationship(back_populates="blobs")


# -- public records -----------------------------------------------------------------------------
@dataclass(frozen=True)
class RecordInfo:
    """One line of a listing: what was saved, when, and its summary metadata."""

    id: int
    kind: str
    name: str
    created_at: datetime
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StoredFrame:
    """A saved rating set or meter data set: the validated frame and its metadata."""

    info: RecordInfo
    frame: pd.DataFrame


@dataclass(frozen=True)
class StoredSEGTable:
    """A saved SEG table reference: a path on this machine or the uploaded file's bytes."""

    info: RecordInfo
    path: str | None
    content: bytes | None
    file_name: str

    def load(self) -> SEGTable:
        """Read and check the table (``SEGTableMissing``/``SEGTableError`` as the loader)."""
        if self.content is not None:
            return load_seg_table(io.BytesIO(self.content), name=self.file_name)
        return load_seg_table(self.path)


@dataclass(frozen=True)
class StoredGrid:
    """A saved learned grid: how it was learned and what it learned.

    Attributes
    ----------
    params : the ranker's constructor parameters (JSON: kernel and filter as names, γ in (mg/dL)²).
    lam : the chosen λ.
    coef : (m,) kernel coefficients c; intercept : b (Kriukova et al. 2014, eq. (4), DESIGN §3).
    X_fit, y_fit : the points the ranker was fitted on, REF/estimate in mg/dL and ratings.
    X_train, y_train : the whole training set (fit + λ-selection points).
    metrics : named numbers (e.g. misranking against the reference) and the λ rule used.
    signed : the ratings were learned as signed risks (sign(REF − estimate)·rating); the risk
        grid is then |f| (:class:`~ranking_core.grids.signed.AbsoluteRisk`).
    """

    info: RecordInfo
    params: dict[str, Any]
    lam: float
    coef: NDArray[np.float64]
    intercept: float
    X_fit: NDArray[np.float64]
    y_fit: NDArray[np.float64]
    X_train: NDArray[np.float64]
    y_train: NDArray[np.float64]
    metrics: dict[str, Any]
    signed: bool = False

    def model(self) -> SpectralRanker:
        """The ranker again: refitted on ``X_fit``/``y_fit`` with the stored parameters at ``lam``
        (one decomposition, O(m³)); raises :class:`StorageError` if its coefficients differ from
        the stored ones (a changed solver or damaged record)."""
        params = dict(self.params)
        params["kernel"] = _component_from_json(params["kernel"])
        params["filter"] = _component_from_json(params["filter"])
        gamma = params.get("gamma")
        if isinstance(gamma, list):
            params["gamma"] = tuple(gamma)
        ranker = SpectralRanker(**params).fit(self.X_fit, self.y_fit).resolve(self.lam)
        tolerance = 1e-6 * max(1.0, float(np.max(np.abs(self.coef), initial=0.0)))
        if ranker.coef_.shape != self.coef.shape or np.max(
            np.abs(ranker.coef_ - self.coef), initial=0.0
        ) > tolerance:
            raise StorageError(
                f"learned grid {self.info.name!r}: refitting gives other coefficients than the "
                "stored ones (the record was saved by an incompatible version or is damaged)"
            )
        return ranker


def _component_to_json(value: Any) -> Any:
    """A kernel or filter parameter as JSON: a name stays a name; a ranking_core dataclass (e.g.
    ``IteratedLavrentiev(k=3)``, a transformed Gaussian kernel) becomes its class path and
    fields."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        if not cls.__module__.startswith("ranking_core."):
            raise StorageError(f"cannot store {value!r}: only ranking_core components are stored")
        fields = {f.name: _component_to_json(getattr(value, f.name))
                  for f in dataclasses.fields(value)}
        return {"class": f"{cls.__module__}:{cls.__qualname__}", "fields": fields}
    return _json_ready(value)


def _component_from_json(value: Any) -> Any:
    """Inverse of :func:`_component_to_json`; builds only ranking_core dataclasses."""
    if not (isinstance(value, Mapping) and "class" in value):
        return value
    module, _, qualname = str(value["class"]).partition(":")
    if not module.startswith("ranking_core."):
        raise StorageError(f"stored component {value['class']!r} is not part of ranking_core")
    cls = getattr(importlib.import_module(module), qualname, None)
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise StorageError(f"stored component {value['class']!r} is not a ranking_core dataclass")
    fields = {k: _component_from_json(v) for k, v in value["fields"].items()}
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})


def _json_ready(value: Any) -> Any:
    """Plain JSON types (numbers, strings, lists, dicts); NumPy scalars and arrays converted."""
    if isinstance(value, Mapping):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [_json_ready(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise StorageError(f"cannot store {value!r} ({type(value).__name__}) as JSON")


def default_database_url(environ: Mapping[str, str] | None = None) -> str:
    """``$RISKGRID_DATABASE_URL`` if set, else SQLite in the user's data directory."""
    environ = os.environ if environ is None else environ
    url = environ.get(DATABASE_URL_ENV)
    if url:
        return url
    folder = Path(platformdirs.user_data_dir("riskgrid", appauthor=False))
    return f"sqlite:///{folder / 'riskgrid.sqlite3'}"


class Store:
    """Named records in one database.

    Parameters
    ----------
    url : SQLAlchemy URL; default :func:`default_database_url`. The tables are created if absent
        (and, for SQLite, the file's folder).
    """

    def __init__(self, url: str | None = None) -> None:
        self.url = url or default_database_url()
        if self.url.startswith("sqlite:///") and self.url != "sqlite:///:memory:":
            Path(self.url.removeprefix("sqlite:///")).expanduser().parent.mkdir(
                parents=True, exist_ok=True
            )
        self.engine = create_engine(self.url)
        _Base.metadata.create_all(self.engine)

    def dispose(self) -> None:
        """Close the connection pool."""
        self.engine.dispose()

    # -- generic --------------------------------------------------------------------------------
    def _save(
        self, kind: str, name: str, meta: Mapping[str, Any], blobs: Mapping[str, Any],
        replace: bool,
    ) -> RecordInfo:
        """Write one record and its blobs in one transaction. ``blobs`` values are bytes or
        zero-argument callables returning bytes (encoded inside the transaction)."""
        name = (name or "").strip()
        if not name or len(name) > NAME_MAX:
            raise StorageError(
                f"a {kind.replace('_', ' ')} needs a name of 1..{NAME_MAX} characters"
            )
        meta = _json_ready(meta)
        try:
            with Session(self.engine) as session, session.begin():
                old = session.scalar(
                    select(_Record).where(_Record.kind == kind, _Record.name == name)
                )
                if old is not None:
                    if not replace:
                        raise StorageError(
                            f"a {kind.replace('_', ' ')} named {name!r} already exists; choose "
                            "another name or delete it first"
                        )
                    session.delete(old)
                    session.flush()
                record = _Record(kind=kind, name=name, created_at=datetime.now(UTC), meta=meta)
                session.add(record)
                session.flush()
                for key, content in blobs.items():
                    data = content() if callable(content) else content
                    record.blobs.append(_Blob(key=key, content=bytes(data)))
                    session.flush()
                info = _info(record)
        except IntegrityError as exc:  # a concurrent save took the name first
            raise StorageError(
                f"a {kind.replace('_', ' ')} named {name!r} already exists ({exc.orig})"
            ) from exc
        return info

    def _get(self, session: Session, kind: str, name: str) -> _Record:
        record = session.scalar(select(_Record).where(_Record.kind == kind, _Record.name == name))
        if record is None:
            raise RecordNotFound(f"no {kind.replace('_', ' ')} named {name!r} is stored")
        return record

    def list_records(self, kind: str) -> list[RecordInfo]:
        """Saved records of one kind, newest first."""
        _check_kind(kind)
        with Session(self.engine) as session:
            records = session.scalars(
                select(_Record).where(_Record.kind == kind)
                .order_by(_Record.created_at.desc(), _Record.id.desc())
            )
            return [_info(r) for r in records]

    def delete(self, kind: str, name: str) -> None:
        """Delete a record and its blobs (one transaction); :class:`RecordNotFound` if absent."""
        _check_kind(kind)
        with Session(self.engine) as session, session.begin():
            session.delete(self._get(session, kind, name))

    def _load(self, kind: str, name: str) -> tuple[RecordInfo, dict[str, bytes]]:
        _check_kind(kind)
        with Session(self.engine) as session:
            record = self._get(session, kind, name)
            return _info(record), {b.key: b.content for b in record.blobs}

    # -- rating sets and meter data -------------------------------------------------------------
    def save_rating_set(
        self, name: str, frame: pd.DataFrame, meta: Mapping[str, Any] | None = None, *,
        replace: bool = False,
    ) -> RecordInfo:
        """Save a validated rating set (columns reference, estimate, rating[, rater])."""
        return self._save_frame("rating_set", name, frame, meta, replace)

    def load_rating_set(self, name: str) -> StoredFrame:
        return self._load_frame("rating_set", name)

    def save_meter_data(
        self, name: str, frame: pd.DataFrame, meta: Mapping[str, Any] | None = None, *,
        replace: bool = False,
    ) -> RecordInfo:
        """Save uploaded meter data (BGM/REF pairs in mg/dL)."""
        return self._save_frame("meter_data", name, frame, meta, replace)

    def load_meter_data(self, name: str) -> StoredFrame:
        return self._load_frame("meter_data", name)

    def _save_frame(self, kind: str, name: str, frame: pd.DataFrame,
                    meta: Mapping[str, Any] | None, replace: bool) -> RecordInfo:
        summary = {"rows": len(frame), "columns": [str(c) for c in frame.columns], **(meta or {})}
        return self._save(kind, name, summary, {"frame": lambda: frame_to_bytes(frame)}, replace)

    def _load_frame(self, kind: str, name: str) -> StoredFrame:
        info, blobs = self._load(kind, name)
        return StoredFrame(info, frame_from_bytes(blobs["frame"]))

    # -- learned grids --------------------------------------------------------------------------
    def save_learned_grid(
        self,
        name: str,
        model: SpectralRanker,
        X_train: ArrayLike,
        y_train: ArrayLike,
        metrics: Mapping[str, Any] | None = None,
        *,
        signed: bool = False,
        replace: bool = False,
    ) -> RecordInfo:
        """Save a fitted ranker's parameters, coefficients, fitted points, training set, metrics.

        ``model`` must keep its fitted points (kernel solvers, not the primal linear form);
        ``y_train`` holds the ratings it learned (signed ones when ``signed``)."""
        if getattr(model, "X_fit_", None) is None or not hasattr(model, "coef_"):
            raise StorageError("save_learned_grid needs a fitted kernel ranker (with X_fit_)")
        params = model.get_params()
        params["kernel"] = _component_to_json(params["kernel"])
        params["filter"] = _component_to_json(params["filter"])
        params.pop("lam")
        n_fit = len(model.X_fit_)
        y_fit = _fit_targets(model, np.asarray(X_train, float), np.asarray(y_train, float), n_fit)
        meta = {"params": params, "lam": float(model.lam), "intercept": float(model.intercept_),
                "m": len(np.asarray(y_train)), "m_fit": n_fit, "metrics": dict(metrics or {}),
                "signed": bool(signed)}
        arrays = {"coef": model.coef_, "X_fit": model.X_fit_, "y_fit": y_fit,
                  "X_train": np.asarray(X_train, dtype=np.float64),
                  "y_train": np.asarray(y_train, dtype=np.float64)}
        return self._save("learned_grid", name, meta,
                          {k: (lambda v=v: array_to_bytes(v)) for k, v in arrays.items()}, replace)

    def load_learned_grid(self, name: str) -> StoredGrid:
        info, blobs = self._load("learned_grid", name)
        arrays = {k: array_from_bytes(v) for k, v in blobs.items()}
        meta = info.meta
        return StoredGrid(info, meta["params"], float(meta["lam"]), arrays["coef"],
                          float(meta["intercept"]), arrays["X_fit"], arrays["y_fit"],
                          arrays["X_train"], arrays["y_train"], meta.get("metrics", {}),
                          bool(meta.get("signed", False)))

    # -- the SEG table --------------------------------------------------------------------------
    def save_seg_table(
        self,
        name: str,
        *,
        path: str | os.PathLike | None = None,
        content: bytes | None = None,
        file_name: str | None = None,
        replace: bool = False,
    ) -> RecordInfo:
        """Remember the user's SEG table: a path on this machine, or the uploaded file's bytes
        (kept in the user's own database, never in the project). The table is checked first, so
        an invalid file is refused and nothing is stored."""
        if (path is None) == (content is None):
            raise StorageError("save_seg_table: give either path or content")
        label = file_name or (Path(path).name if path is not None else "RiskPairData.csv")
        stored = StoredSEGTable(
            RecordInfo(0, "seg_table", name, datetime.now(UTC)),
            None if path is None else str(Path(path).expanduser().resolve()), content, label,
        )
        stored.load()  # raises SEGTableError / SEGTableMissing with the loader's message
        meta = {"path": stored.path, "file_name": label,
                "bytes": None if content is None else len(content)}
        blobs = {} if content is None else {"file": content}
        return self._save("seg_table", name, meta, blobs, replace)

    def load_seg_table_record(self, name: str) -> StoredSEGTable:
        info, blobs = self._load("seg_table", name)
        return StoredSEGTable(info, info.meta.get("path"), blobs.get("file"),
                              info.meta.get("file_name") or "RiskPairData.csv")

    def latest_seg_table(self) -> StoredSEGTable | None:
        """The most recently saved SEG table record, or None."""
        saved = self.list_records("seg_table")
        return self.load_seg_table_record(saved[0].name) if saved else None


def _fit_targets(model: SpectralRanker, X: NDArray, y: NDArray, n_fit: int) -> NDArray:
    """The ratings of the fitted points: they are the first ``n_fit`` training rows (hold-out) or
    all of them (k-fold refit, plain fit)."""
    if X.ndim != 2 or len(X) != len(y):
        raise StorageError("save_learned_grid: X_train must be (m, 2) and y_train (m,)")
    if n_fit > len(X) or not np.array_equal(X[:n_fit], model.X_fit_):
        raise StorageError(
            "save_learned_grid: the model's fitted points are not the first rows of X_train"
        )
    return y[:n_fit]


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise StorageError(f"unknown record kind {kind!r}; one of {', '.join(KINDS)}")


def _info(record: _Record) -> RecordInfo:
    created = record.created_at
    if created.tzinfo is None:  # SQLite returns naive datetimes
        created = created.replace(tzinfo=UTC)
    return RecordInfo(record.id, record.kind, record.name, created, dict(record.meta or {}))
