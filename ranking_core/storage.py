"""Persistence of rating sets, meter data, learned grids and the user's SEG table (SQLAlchemy 2.x).

One record per saved thing, identified by its kind and a name the user chooses; its arrays and
files are blobs of the record.

Safe under concurrent use (several dashboard sessions or processes on one database):

- every write (save, replace, rename, delete) is one transaction that first takes a write lock —
  ``BEGIN IMMEDIATE`` on SQLite (one writer at a time, readers go on in WAL mode), a transaction
  advisory lock per record name on PostgreSQL — so two replaces of one name never interleave and
  a failed write leaves what was stored before;
- a load reads the record and its blobs in one statement, so it sees one committed version, never
  a record between the removal of the old version and the insertion of the new one;
- every failure is a :class:`StorageError` with a message (driver errors included).

Nothing stored is code: arrays are ``.npy`` bytes written and read with ``allow_pickle=False``,
frames ``.npz`` archives of their columns, an uploaded SEG table the user's file bytes, and the
kernel / filter / estimator of a learned grid their class *name*, looked up in a fixed allow-list
of the project's own classes (:data:`ALLOWED_CLASSES`); a record can never make the loader import
a module. Before anything is stored it is checked: names are printable text, ratings and meter
pairs pass the same row rules as an upload, a learned grid is finite, on the risk scale and
601 × 601.

The schema is managed by Alembic (``ranking_core/migrations``); :class:`Store` upgrades a database
to the newest revision when it opens it. The database is SQLite in the user's data directory
(``platformdirs.user_data_dir("riskgrid")``) unless ``RISKGRID_DATABASE_URL`` names another
SQLAlchemy URL (PostgreSQL: ``postgresql+psycopg://user:password@host/db``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
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
    Connection,
    DateTime,
    ForeignKey,
    LargeBinary,
    String,
    UniqueConstraint,
    create_engine,
    delete,
    event,
    insert,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from ranking_core.filters import (
    IteratedLavrentiev,
    Landweber,
    Lavrentiev,
    Showalter,
    SpectralCutoff,
)
from ranking_core.grids.coordinates import GlucoseTransform, TransformedKernel
from ranking_core.grids.learned import learned_grid
from ranking_core.grids.risk_scale import RISK_MAX
from ranking_core.grids.seg import GLUCOSE_MAX, SEGTable, load_seg_table
from ranking_core.grids.signed import AbsoluteRisk
from ranking_core.inputs import InputError
from ranking_core.kernels import GaussianKernel, LaplacianKernel, LinearKernel, PolynomialKernel
from ranking_core.learners.spectral import SpectralRanker, SpectralRegressor
from ranking_core.ratings import read_rating_set
from ranking_core.validation import describe_rows

__all__ = [
    "ALLOWED_CLASSES",
    "DATABASE_URL_ENV",
    "GRID_OVERSHOOT",
    "KINDS",
    "NAME_MAX",
    "RecordInfo",
    "RecordNotFound",
    "StorageError",
    "Store",
    "StoredFrame",
    "StoredGrid",
    "StoredSEGTable",
    "array_from_bytes",
    "array_to_bytes",
    "check_grid",
    "check_record_name",
    "default_database_url",
    "frame_from_bytes",
    "frame_to_bytes",
]

DATABASE_URL_ENV = "RISKGRID_DATABASE_URL"
KINDS = ("rating_set", "meter_data", "learned_grid", "seg_table")
NAME_MAX = 200
SAVED_BY_MAX = 320  # an e-mail address at most
MIGRATIONS = Path(__file__).with_name("migrations")
GRID_SIZE = GLUCOSE_MAX + 1  # the 0..600 mg/dL lattice, step 1
# A fitted ranking function is put on the rating scale by its intercept (DESIGN §3); between and
# beyond the rated points a smooth fit may pass the ends of the scale a little. One category past
# either end is allowed; anything further is a failed fit (λ far too small), not a risk grid.
GRID_OVERSHOOT = 1.0
# The classes a learned-grid record may name (by exact class name), and nothing else.
ALLOWED_CLASSES: Mapping[str, type] = {
    cls.__name__: cls
    for cls in (SpectralRanker, SpectralRegressor, GaussianKernel, LaplacianKernel, LinearKernel,
                PolynomialKernel, TransformedKernel, GlucoseTransform, Lavrentiev,
                IteratedLavrentiev, SpectralCutoff, Landweber, Showalter)
}
_ESTIMATORS = ("SpectralRanker", "SpectralRegressor")
_COMPONENTS = tuple(name for name in ALLOWED_CLASSES if name not in _ESTIMATORS)
_BLOBS = {"rating_set": ("frame",), "meter_data": ("frame",),
          "learned_grid": ("coef", "X_fit", "y_fit", "X_train", "y_train"), "seg_table": ()}


class StorageError(ValueError):
    """A save, load, rename or delete was refused or failed; the message says why."""


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
    except (ValueError, OSError, EOFError) as exc:
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
    except (ValueError, KeyError, OSError, EOFError) as exc:
        raise StorageError(f"stored frame is damaged or unsafe ({exc})") from exc


# -- checks before anything is stored -----------------------------------------------------------
def check_record_name(name: str, kind: str = "record") -> str:
    """The name without surrounding spaces; :class:`StorageError` unless it is 1..NAME_MAX
    printable characters (no control characters such as NUL or line breaks, no invisible
    formatting characters)."""
    label = kind.replace("_", " ")
    if not isinstance(name, str):
        raise StorageError(f"a {label} name must be text, not {type(name).__name__}")
    name = name.strip()
    if not name or len(name) > NAME_MAX:
        raise StorageError(f"a {label} needs a name of 1..{NAME_MAX} characters")
    bad = sorted({c for c in name if not c.isprintable()})
    if bad:
        shown = ", ".join(f"U+{ord(c):04X}" for c in bad)
        raise StorageError(f"a {label} name must be printable text; this one contains {shown}")
    return name


def check_grid(grid: ArrayLike, signed: bool = False, label: str = "learned grid") -> None:
    """Refuse a risk grid that is not (601, 601), has a non-finite value, or leaves the risk
    scale 0..4 by more than :data:`GRID_OVERSHOOT` (−4..4 for a signed grid)."""
    values = np.asarray(grid, dtype=np.float64)
    if values.shape != (GRID_SIZE, GRID_SIZE):
        raise StorageError(f"{label}: a grid must be {GRID_SIZE} × {GRID_SIZE} (0..{GLUCOSE_MAX} "
                           f"mg/dL); got shape {values.shape}")
    finite = np.isfinite(values)
    if not finite.all():
        raise StorageError(f"{label}: {int((~finite).sum()):,} grid values are not finite "
                           "numbers; not stored")
    low = (-RISK_MAX if signed else 0.0) - GRID_OVERSHOOT
    high = RISK_MAX + GRID_OVERSHOOT
    if values.min() < low or values.max() > high:
        scale = f"{-RISK_MAX:g}..{RISK_MAX:g}" if signed else f"0..{RISK_MAX:g}"
        raise StorageError(
            f"{label}: grid values run from {values.min():.3g} to {values.max():.3g}, far off the "
            f"risk scale {scale} (more than {GRID_OVERSHOOT:g} beyond it); the fit failed "
            "(λ too small?) and was not stored")


def _check_rating_frame(frame: pd.DataFrame, name: str) -> None:
    try:
        checked = read_rating_set(frame, unit="mg/dL", name=name)
    except InputError as exc:
        raise StorageError(f"rating set not stored: {exc}") from exc
    if checked.problems:
        rules = "; ".join(p.message for p in checked.problems)
        raise StorageError(f"rating set {name!r} not stored: {rules}. Store the checked rows "
                           "(read_rating_set keeps only the valid ones)")


def _check_meter_frame(frame: pd.DataFrame, name: str) -> None:
    by_lower = {str(c).strip().lower(): c for c in frame.columns}
    for column in ("bgm", "ref"):
        if column not in by_lower:
            raise StorageError(f"meter data {name!r} not stored: no {column.upper()} column")
        values = pd.to_numeric(frame[by_lower[column]], errors="coerce").to_numpy(np.float64)
        bad = ~np.isfinite(values) | (values < 0)
        if bad.any():
            raise StorageError(f"meter data {name!r} not stored: {column.upper()} is not a "
                               f"number ≥ 0 mg/dL in {describe_rows(np.flatnonzero(bad))}")


# -- schema (changes go through a new Alembic revision in ranking_core/migrations) --------------
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
    saved_by: Mapped[str | None] = mapped_column(String(SAVED_BY_MAX), nullable=True)


class _Blob(_Base):
    __tablename__ = "blobs"
    __table_args__ = (UniqueConstraint("record_id", "key", name="uq_blobs_record_key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(64))
    content: Mapped[bytes] = mapped_column(LargeBinary)


METADATA = _Base.metadata
RECORDS, BLOBS = _Record.__table__, _Blob.__table__


# -- public records -----------------------------------------------------------------------------
@dataclass(frozen=True)
class RecordInfo:
    """One line of a listing: what was saved, when, by whom (when a login was used), and its
    summary metadata."""

    id: int
    kind: str
    name: str
    created_at: datetime
    meta: dict[str, Any] = field(default_factory=dict)
    saved_by: str | None = None

    @property
    def version(self) -> str:
        """A key that changes whenever the record is saved again (for caches: SQLite may give a
        replaced record its old id back)."""
        return f"{self.id}@{self.created_at.isoformat()}"


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
    params : the ranker's constructor parameters (JSON: kernel and filter as names, or as an
        allow-listed class name and its fields; γ in (mg/dL)²).
    lam : the chosen λ.
    coef : (m,) kernel coefficients c; intercept : b (Kriukova et al. 2014, eq. 4; DESIGN §3).
    X_fit, y_fit : the points the ranker was fitted on, REF/estimate in mg/dL and ratings.
    X_train, y_train : the whole training set (fit + λ-selection points).
    metrics : named numbers (e.g. misranking against the reference) and the λ rule used.
    signed : the ratings were learned as signed risks (sign(REF − estimate)·rating); the risk
        grid is then |f| (:class:`~ranking_core.grids.signed.AbsoluteRisk`).
    estimator : the class name of the fitted estimator (one of :data:`ALLOWED_CLASSES`).
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
    estimator: str = "SpectralRanker"

    def model(self) -> SpectralRanker | SpectralRegressor:
        """The ranker again: refitted on ``X_fit``/``y_fit`` with the stored parameters at ``lam``
        (one decomposition, O(m³)); raises :class:`StorageError` if its coefficients differ from
        the stored ones (a changed solver or damaged record) or the record names a class outside
        :data:`ALLOWED_CLASSES`."""
        cls = _allowed_class(self.estimator, _ESTIMATORS, legacy=False)
        params = dict(self.params)
        params["kernel"] = _component_from_json(params.get("kernel", "gaussian"))
        params["filter"] = _component_from_json(params.get("filter", "lavrentiev"))
        gamma = params.get("gamma")
        if isinstance(gamma, list):
            params["gamma"] = tuple(gamma)
        try:
            ranker = cls(**params).fit(self.X_fit, self.y_fit).resolve(self.lam)
        except (TypeError, ValueError) as exc:
            raise StorageError(f"learned grid {self.info.name!r} cannot be rebuilt: {exc}") from exc
        tolerance = 1e-6 * max(1.0, float(np.max(np.abs(self.coef), initial=0.0)))
        if ranker.coef_.shape != self.coef.shape or np.max(
            np.abs(ranker.coef_ - self.coef), initial=0.0
        ) > tolerance:
            raise StorageError(
                f"learned grid {self.info.name!r}: refitting gives other coefficients than the "
                "stored ones (the record was saved by an incompatible version or is damaged)"
            )
        return ranker


def _allowed_class(stored: Any, names: tuple[str, ...], legacy: bool = True) -> type:
    """The allow-listed class (one of ``names``) a record names by its exact class name; with
    ``legacy`` also the ``"ranking_core.module:Name"`` form that earlier versions wrote for
    kernels and filters. Never imports anything."""
    label = str(stored)
    module, _, name = label.rpartition(":") if legacy else ("", "", label)
    if module and not module.startswith("ranking_core."):
        raise StorageError(f"stored class {label!r} is not one of riskgrid's own classes")
    if name not in names:
        raise StorageError(f"stored class {label!r} is not allowed (one of: {', '.join(names)})")
    return ALLOWED_CLASSES[name]


def _component_to_json(value: Any) -> Any:
    """A kernel or filter parameter as JSON: a name stays a name; an allow-listed dataclass (e.g.
    ``IteratedLavrentiev(k=3)``, a transformed Gaussian kernel) becomes its class name and
    fields."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if ALLOWED_CLASSES.get(name) is not type(value):
            raise StorageError(f"cannot store {value!r}: only riskgrid's own kernels and filters "
                               "are stored")
        fields = {f.name: _component_to_json(getattr(value, f.name))
                  for f in dataclasses.fields(value)}
        return {"class": name, "fields": fields}
    return _json_ready(value)


def _component_from_json(value: Any) -> Any:
    """Inverse of :func:`_component_to_json`; builds only allow-listed dataclasses."""
    if isinstance(value, list):
        return [_component_from_json(v) for v in value]
    if not (isinstance(value, Mapping) and "class" in value):
        return value  # plain JSON data (a name, a number)
    cls = _allowed_class(value.get("class"), _COMPONENTS)
    if not isinstance(value.get("fields", {}), Mapping):
        raise StorageError(f"stored component {value.get('class')!r} has no field record")
    fields = {k: _component_from_json(v) for k, v in value.get("fields", {}).items()}
    try:
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})
    except (TypeError, ValueError) as exc:
        raise StorageError(f"stored component {cls.__name__} has bad fields: {exc}") from exc


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


def _lock_key(*parts: str) -> int:
    """A signed 64-bit key for PostgreSQL advisory locks."""
    digest = hashlib.blake2b("\x00".join(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@contextmanager
def _storage_errors(action: str) -> Iterator[None]:
    """Driver and SQL errors as :class:`StorageError` naming the action."""
    try:
        yield
    except SQLAlchemyError as exc:
        detail = getattr(exc, "orig", None) or exc
        raise StorageError(f"{action} failed in the database: "
                           f"{str(detail).strip().splitlines()[0]}") from exc


class Store:
    """Named records in one database.

    Parameters
    ----------
    url : SQLAlchemy URL; default :func:`default_database_url`. The database is created (and, for
        SQLite, the file's folder) and upgraded to the newest schema if needed.
    timeout : seconds a write waits for another writer of the same database before failing.
    """

    def __init__(self, url: str | None = None, *, timeout: float = 60.0) -> None:
        self.url = url or default_database_url()
        with _storage_errors("opening the database"):
            url = make_url(self.url)
            self.dialect = url.get_backend_name()
            if self.dialect == "sqlite":
                if url.database and url.database != ":memory:":
                    Path(url.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
                self.engine = create_engine(url)
                _sqlite_transactions(self.engine, timeout)
            elif self.dialect == "postgresql":  # a write waits at most `timeout` for a lock
                self.engine = create_engine(
                    url, connect_args={"options": f"-c lock_timeout={int(timeout * 1000)}"})
            else:
                self.engine = create_engine(url)
            self._migrate()

    def dispose(self) -> None:
        """Close the connection pool."""
        self.engine.dispose()

    # -- transactions ---------------------------------------------------------------------------
    @contextmanager
    def _write(self, action: str, kind: str, *names: str) -> Iterator[Connection]:
        """One write transaction holding the lock of every (kind, name) it touches."""
        with _storage_errors(action), self.engine.connect() as conn:
            conn.execution_options(riskgrid_write=True)
            with conn.begin():
                if self.dialect == "postgresql":
                    for key in sorted({_lock_key(kind, n) for n in names}):
                        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})
                yield conn

    def _migrate(self) -> None:
        """Upgrade the schema to the newest Alembic revision, one process at a time. A database
        made before migrations existed (tables, no version) is stamped with the first revision."""
        from alembic import command
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        with self._write("upgrading the database schema", "schema", "migrations") as conn:
            config.attributes["connection"] = conn
            tables = set(inspect(conn).get_table_names())
            if "records" in tables and "alembic_version" not in tables:
                command.stamp(config, "initial")
            command.upgrade(config, "head")

    # -- generic --------------------------------------------------------------------------------
    def _save(
        self, kind: str, name: str, meta: Mapping[str, Any], blobs: Mapping[str, bytes],
        replace: bool, saved_by: str | None,
    ) -> RecordInfo:
        """Write one record and its blobs in one locked transaction; with ``replace`` an existing
        record of that name is removed in the same transaction (new id, new time)."""
        _check_kind(kind)
        name = check_record_name(name, kind)
        meta = _json_ready(meta)
        if saved_by is not None:
            saved_by = check_record_name(saved_by, "saver")[:SAVED_BY_MAX]
        label = kind.replace("_", " ")
        try:
            with self._write(f"saving {label} {name!r}", kind, name) as conn:
                old = conn.scalar(select(RECORDS.c.id).where(
                    RECORDS.c.kind == kind, RECORDS.c.name == name))
                if old is not None:
                    if not replace:
                        raise StorageError(f"a {label} named {name!r} already exists; choose "
                                           "another name or replace it")
                    conn.execute(delete(BLOBS).where(BLOBS.c.record_id == old))
                    conn.execute(delete(RECORDS).where(RECORDS.c.id == old))
                created = datetime.now(UTC)
                record_id = conn.execute(insert(RECORDS).values(
                    kind=kind, name=name, created_at=created, meta=meta, saved_by=saved_by,
                ).returning(RECORDS.c.id)).scalar_one()
                if blobs:
                    conn.execute(insert(BLOBS), [
                        {"record_id": record_id, "key": key, "content": bytes(content)}
                        for key, content in blobs.items()])
        except IntegrityError as exc:  # only without a lock (another dialect)
            raise StorageError(f"a {label} named {name!r} already exists") from exc
        return RecordInfo(record_id, kind, name, created, dict(meta), saved_by)

    def list_records(self, kind: str) -> list[RecordInfo]:
        """Saved records of one kind, newest first."""
        _check_kind(kind)
        with _storage_errors(f"listing {kind.replace('_', ' ')}s"), self.engine.connect() as conn:
            rows = conn.execute(select(RECORDS).where(RECORDS.c.kind == kind)
                                .order_by(RECORDS.c.created_at.desc(), RECORDS.c.id.desc()))
            return [_info(row) for row in rows]

    def delete(self, kind: str, name: str) -> None:
        """Delete a record and its blobs (one transaction); :class:`RecordNotFound` if absent."""
        _check_kind(kind)
        name = check_record_name(name, kind)
        with self._write(f"deleting {kind.replace('_', ' ')} {name!r}", kind, name) as conn:
            record_id = conn.scalar(select(RECORDS.c.id).where(
                RECORDS.c.kind == kind, RECORDS.c.name == name))
            if record_id is None:
                raise _not_found(kind, name)
            conn.execute(delete(BLOBS).where(BLOBS.c.record_id == record_id))
            conn.execute(delete(RECORDS).where(RECORDS.c.id == record_id))

    def rename(self, kind: str, name: str, new_name: str) -> RecordInfo:
        """Give a record another name (same content, id and time); refused if the new name is
        taken or not printable text, :class:`RecordNotFound` if there is no such record."""
        _check_kind(kind)
        name = check_record_name(name, kind)
        new_name = check_record_name(new_name, kind)
        label = kind.replace("_", " ")
        with self._write(f"renaming {label} {name!r}", kind, name, new_name) as conn:
            row = conn.execute(select(RECORDS).where(
                RECORDS.c.kind == kind, RECORDS.c.name == name)).first()
            if row is None:
                raise _not_found(kind, name)
            if new_name == name:
                return _info(row)
            taken = conn.scalar(select(RECORDS.c.id).where(
                RECORDS.c.kind == kind, RECORDS.c.name == new_name))
            if taken is not None:
                raise StorageError(f"a {label} named {new_name!r} already exists; choose "
                                   "another name")
            conn.execute(update(RECORDS).where(RECORDS.c.id == row.id).values(name=new_name))
        return dataclasses.replace(_info(row), name=new_name)

    def _load(self, kind: str, name: str) -> tuple[RecordInfo, dict[str, bytes]]:
        """The record and its blobs from one statement (one committed version)."""
        _check_kind(kind)
        name = check_record_name(name, kind)
        query = (select(RECORDS, BLOBS.c.key, BLOBS.c.content)
                 .outerjoin(BLOBS, BLOBS.c.record_id == RECORDS.c.id)
                 .where(RECORDS.c.kind == kind, RECORDS.c.name == name))
        with _storage_errors(f"loading {kind.replace('_', ' ')} {name!r}"), \
                self.engine.connect() as conn:
            rows = conn.execute(query).all()
        if not rows:
            raise _not_found(kind, name)
        blobs = {row.key: row.content for row in rows if row.key is not None}
        missing = [key for key in _BLOBS[kind] if key not in blobs]
        if missing:
            raise StorageError(f"{kind.replace('_', ' ')} {name!r} is damaged: it has no "
                               f"{', '.join(missing)}")
        return _info(rows[0]), blobs

    # -- rating sets and meter data -------------------------------------------------------------
    def save_rating_set(
        self, name: str, frame: pd.DataFrame, meta: Mapping[str, Any] | None = None, *,
        replace: bool = False, saved_by: str | None = None,
    ) -> RecordInfo:
        """Save a validated rating set (columns reference, estimate in mg/dL, rating 0..4
        [, rater]); refused unless every row passes the rating-set rules."""
        _check_rating_frame(frame, check_record_name(name, "rating_set"))
        return self._save_frame("rating_set", name, frame, meta, replace, saved_by)

    def load_rating_set(self, name: str) -> StoredFrame:
        return self._load_frame("rating_set", name)

    def save_meter_data(
        self, name: str, frame: pd.DataFrame, meta: Mapping[str, Any] | None = None, *,
        replace: bool = False, saved_by: str | None = None,
    ) -> RecordInfo:
        """Save checked meter data (BGM/REF pairs in mg/dL, finite, ≥ 0); refused otherwise."""
        _check_meter_frame(frame, check_record_name(name, "meter_data"))
        return self._save_frame("meter_data", name, frame, meta, replace, saved_by)

    def load_meter_data(self, name: str) -> StoredFrame:
        return self._load_frame("meter_data", name)

    def _save_frame(self, kind: str, name: str, frame: pd.DataFrame,
                    meta: Mapping[str, Any] | None, replace: bool,
                    saved_by: str | None) -> RecordInfo:
        summary = {"rows": len(frame), "columns": [str(c) for c in frame.columns], **(meta or {})}
        return self._save(kind, name, summary, {"frame": frame_to_bytes(frame)}, replace,
                          saved_by)

    def _load_frame(self, kind: str, name: str) -> StoredFrame:
        info, blobs = self._load(kind, name)
        return StoredFrame(info, frame_from_bytes(blobs["frame"]))

    # -- learned grids --------------------------------------------------------------------------
    def save_learned_grid(
        self,
        name: str,
        model: SpectralRanker | SpectralRegressor,
        X_train: ArrayLike,
        y_train: ArrayLike,
        metrics: Mapping[str, Any] | None = None,
        *,
        signed: bool = False,
        replace: bool = False,
        saved_by: str | None = None,
    ) -> RecordInfo:
        """Save a fitted ranker's parameters, coefficients, fitted points, training set, metrics.

        ``model`` must keep its fitted points (kernel solvers, not the primal linear form);
        ``y_train`` holds the ratings it learned (signed ones when ``signed``). The grid it gives
        on the 601 × 601 lattice is checked first (:func:`check_grid`); a failed fit is refused."""
        name = check_record_name(name, "learned_grid")
        if type(model).__name__ not in _ESTIMATORS or ALLOWED_CLASSES[
                type(model).__name__] is not type(model):
            raise StorageError(f"save_learned_grid stores {' or '.join(_ESTIMATORS)} models, "
                               f"not {type(model).__name__}")
        if getattr(model, "X_fit_", None) is None or not hasattr(model, "coef_"):
            raise StorageError("save_learned_grid needs a fitted kernel ranker (with X_fit_)")
        X_train = np.asarray(X_train, dtype=np.float64)
        y_train = np.asarray(y_train, dtype=np.float64)
        if not (np.isfinite(X_train).all() and np.isfinite(y_train).all()):
            raise StorageError(f"learned grid {name!r}: the training set has non-finite values")
        low = -RISK_MAX if signed else 0.0
        if y_train.size and (y_train.min() < low or y_train.max() > RISK_MAX):
            raise StorageError(f"learned grid {name!r}: ratings must lie in "
                               f"{low:g}..{RISK_MAX:g}")
        params = model.get_params()
        params["kernel"] = _component_to_json(params["kernel"])
        params["filter"] = _component_to_json(params["filter"])
        params.pop("lam")
        n_fit = len(model.X_fit_)
        y_fit = _fit_targets(model, X_train, y_train, n_fit)
        check_grid(learned_grid(AbsoluteRisk(model) if signed else model), label=repr(name))
        meta = {"params": params, "lam": float(model.lam), "intercept": float(model.intercept_),
                "m": len(y_train), "m_fit": n_fit, "metrics": dict(metrics or {}),
                "signed": bool(signed), "estimator": type(model).__name__}
        arrays = {"coef": model.coef_, "X_fit": model.X_fit_, "y_fit": y_fit,
                  "X_train": X_train, "y_train": y_train}
        return self._save("learned_grid", name, meta,
                          {k: array_to_bytes(v) for k, v in arrays.items()}, replace, saved_by)

    def load_learned_grid(self, name: str) -> StoredGrid:
        info, blobs = self._load("learned_grid", name)
        arrays = {k: array_from_bytes(v) for k, v in blobs.items()}
        meta = info.meta
        try:
            return StoredGrid(info, dict(meta["params"]), float(meta["lam"]), arrays["coef"],
                              float(meta["intercept"]), arrays["X_fit"], arrays["y_fit"],
                              arrays["X_train"], arrays["y_train"], dict(meta.get("metrics", {})),
                              bool(meta.get("signed", False)),
                              _allowed_class(meta.get("estimator", "SpectralRanker"),
                                             _ESTIMATORS, legacy=False).__name__)
        except (KeyError, TypeError, ValueError) as exc:
            raise StorageError(f"learned grid {name!r} is damaged ({exc!r})") from exc

    # -- the SEG table --------------------------------------------------------------------------
    def save_seg_table(
        self,
        name: str,
        *,
        path: str | os.PathLike | None = None,
        content: bytes | None = None,
        file_name: str | None = None,
        replace: bool = False,
        saved_by: str | None = None,
    ) -> RecordInfo:
        """Remember the user's SEG table: a path on this machine, or the uploaded file's bytes
        (kept in the user's own database, never in the project). The table is checked first, so
        an invalid file is refused and nothing is stored."""
        if (path is None) == (content is None):
            raise StorageError("save_seg_table: give either path or content")
        name = check_record_name(name, "seg_table")
        label = file_name or (Path(path).name if path is not None else "RiskPairData.csv")
        stored = StoredSEGTable(
            RecordInfo(0, "seg_table", name, datetime.now(UTC)),
            None if path is None else str(Path(path).expanduser().resolve()), content, label,
        )
        stored.load()  # raises SEGTableError / SEGTableMissing with the loader's message
        meta = {"path": stored.path, "file_name": label,
                "bytes": None if content is None else len(content)}
        blobs = {} if content is None else {"file": content}
        return self._save("seg_table", name, meta, blobs, replace, saved_by)

    def load_seg_table_record(self, name: str) -> StoredSEGTable:
        info, blobs = self._load("seg_table", name)
        return StoredSEGTable(info, info.meta.get("path"), blobs.get("file"),
                              info.meta.get("file_name") or "RiskPairData.csv")

    def latest_seg_table(self) -> StoredSEGTable | None:
        """The most recently saved SEG table record, or None."""
        saved = self.list_records("seg_table")
        return self.load_seg_table_record(saved[0].name) if saved else None


def _sqlite_transactions(engine: Any, timeout: float) -> None:
    """SQLite with real transactions: the driver's own BEGIN handling off, ``BEGIN IMMEDIATE``
    (the write lock, taken at once) for writes, WAL so that readers never wait for a writer,
    foreign keys on, and a busy timeout instead of an immediate 'database is locked'."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        cursor.execute("PRAGMA foreign_keys = ON")
        if engine.url.database not in (None, "", ":memory:"):
            cursor.execute("PRAGMA journal_mode = WAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        write = conn.get_execution_options().get("riskgrid_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


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


def _not_found(kind: str, name: str) -> RecordNotFound:
    return RecordNotFound(f"no {kind.replace('_', ' ')} named {name!r} is stored")


def _info(row: Any) -> RecordInfo:
    created = row.created_at
    if created.tzinfo is None:  # SQLite returns naive datetimes
        created = created.replace(tzinfo=UTC)
    return RecordInfo(row.id, row.kind, row.name, created, dict(row.meta or {}),
                      row.saved_by)
