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
- every failure is a :class:`StorageError` with a message (driver errors, damaged or tampered
  records included: an array whose header declares more values than its bytes hold is refused
  before anything is allocated).

Nothing stored is code or a server path: arrays are ``.npy`` bytes written and read with
``allow_pickle=False``, frames ``.npz`` archives of their columns, a learned grid the 601 × 601
grid that was shown (whatever learner, robust weights or monotone step made it) with its
``grid.json`` metadata, a SEG table the bytes of the uploaded file (checked by the SEG table
reader within :data:`SEG_TABLE_MAX_BYTES`). Before anything is stored it is checked: names are one
line of printable text, ratings and meter pairs pass the same row rules as an upload, a learned
grid is finite, on the risk scale and 601 × 601.

Records may belong to someone: ``saved_by`` names who saved a record when a login is used, and a
write that passes ``by`` (the signed-in user) may replace, rename or delete only that user's own
records.

The schema is managed by Alembic (``ranking_core/migrations``); :class:`Store` upgrades a database
to the newest revision when it opens it. The database is SQLite in the user's data directory
(``platformdirs.user_data_dir("riskgrid")``) unless ``RISKGRID_DATABASE_URL`` names another
SQLAlchemy URL (PostgreSQL: ``postgresql+psycopg://user:password@host/db``).
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import math
import os
import zipfile
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

from ranking_core.grids.risk_scale import RISK_MAX
from ranking_core.grids.seg import (
    GLUCOSE_MAX,
    WORKBOOK_SUFFIXES,
    SEGTable,
    SEGTableError,
    load_seg_table,
)
from ranking_core.inputs import InputError
from ranking_core.ratings import read_rating_set
from ranking_core.record_kinds import KINDS, RECORD_KINDS
from ranking_core.validation import describe_rows

__all__ = [
    "DATABASE_URL_ENV",
    "GRID_METADATA_KEYS",
    "GRID_OVERSHOOT",
    "KINDS",
    "NAME_MAX",
    "SEG_TABLE_MAX_BYTES",
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
    "check_grid_metadata",
    "check_record_name",
    "default_database_url",
    "display_name",
    "frame_from_bytes",
    "frame_to_bytes",
    "json_bool",
    "seg_table_from_bytes",
]

DATABASE_URL_ENV = "RISKGRID_DATABASE_URL"
NAME_MAX = 200
SAVED_BY_MAX = 320  # an e-mail address at most
MIGRATIONS = Path(__file__).with_name("migrations")
GRID_SIZE = GLUCOSE_MAX + 1  # the 0..600 mg/dL lattice, step 1
# A fitted ranking function is put on the rating scale by its intercept (DESIGN §3); between and
# beyond the rated points a smooth fit may pass the ends of the scale a little. One category past
# either end is allowed; anything further is a failed fit (λ far too small), not a risk grid.
GRID_OVERSHOOT = 1.0
# what a learned grid's metadata (its grid.json) must give, and the JSON type of each
GRID_METADATA_KEYS: Mapping[str, type | tuple[type, ...]] = {
    "settings": dict,
    "lambda": (int, float),
    "ratings_checksum": str,
    "riskgrid_version": str,
}
# The official RiskPairData table is about 9 MB as CSV, 2 MB gzipped; an uploaded table, and what
# its gzip or XLSX archive declares it expands to, may be at most this large.
SEG_TABLE_MAX_BYTES = 64 * 2**20
# the largest array a record may declare (a 601 × 601 grid is 361,201 values; a rating set of the
# input layer's 2,000,000 rows is the largest frame column)
ARRAY_MAX_VALUES = 4_000_000


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
    """Inverse of :func:`array_to_bytes`. Refuses pickled content, other dtypes than numbers and
    text, and a header whose declared shape does not match the bytes that follow it (checked
    before anything is allocated, so a tampered shape cannot exhaust memory)."""
    stream = io.BytesIO(content)
    try:
        version = np.lib.format.read_magic(stream)
        read_header = {
            (1, 0): np.lib.format.read_array_header_1_0,
            (2, 0): np.lib.format.read_array_header_2_0,
        }.get(version)
        if read_header is None:
            raise ValueError(f".npy format version {version} is not one riskgrid writes")
        shape, fortran, dtype = read_header(stream)
    except (ValueError, OSError, EOFError, SyntaxError, TypeError) as exc:
        raise StorageError(f"stored array is not a plain numeric/text .npy ({exc})") from exc
    if dtype.kind not in "biufU" or dtype.hasobject:
        raise StorageError(f"stored array is not a plain numeric/text .npy (dtype {dtype})")
    count = math.prod(shape)
    if count > ARRAY_MAX_VALUES or count * dtype.itemsize != len(content) - stream.tell():
        raise StorageError(
            f"stored array declares shape {shape} of {dtype} "
            f"({count * dtype.itemsize:,} bytes) but holds "
            f"{len(content) - stream.tell():,} bytes; it is damaged"
        )
    array = np.frombuffer(content, dtype=dtype, count=count, offset=stream.tell())
    return array.reshape(shape, order="F" if fortran else "C").copy()


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
    """Inverse of :func:`frame_to_bytes`; refuses pickled content, and members that declare more
    bytes than the archive could hold uncompressed (read through :func:`array_from_bytes`)."""
    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            members = {}
            for info in archive.infolist():
                if info.file_size > len(content):  # .npz archives are written uncompressed
                    raise StorageError(
                        f"stored frame member {info.filename!r} declares "
                        f"{info.file_size:,} bytes in a {len(content):,}-byte "
                        "archive; it is damaged"
                    )
                members[info.filename.removesuffix(".npy")] = archive.read(info)
        names = [str(n) for n in array_from_bytes(members["__columns__"])]
        return pd.DataFrame({n: array_from_bytes(members[f"c{i}"]) for i, n in enumerate(names)})
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, EOFError) as exc:
        if isinstance(exc, StorageError):
            raise
        raise StorageError(f"stored frame is damaged or unsafe ({exc})") from exc


# -- checks before anything is stored -----------------------------------------------------------
def check_record_name(name: str, kind: str = "record") -> str:
    """The name without surrounding spaces; :class:`StorageError` unless it is one line of
    1..NAME_MAX printable characters (no control characters such as NUL, ESC or line breaks, no
    invisible formatting characters such as bidi overrides)."""
    label = kind.replace("_", " ")
    if not isinstance(name, str):
        raise StorageError(f"a {label} name must be text, not {type(name).__name__}")
    name = name.strip()
    if not name or len(name) > NAME_MAX:
        raise StorageError(f"a {label} needs a name of 1..{NAME_MAX} characters")
    bad = sorted({c for c in name if not c.isprintable()})
    if bad:
        shown = ", ".join(f"U+{ord(c):04X}" for c in bad)
        raise StorageError(
            f"a {label} name must be one line of printable text; this one contains {shown}"
        )
    return name


def display_name(name: str) -> str:
    """A stored name as one line of printable text: every character that is not printable (a
    name saved by an earlier version may hold a line break or a control character) written as
    its escape, e.g. ``\\n`` or ``\\x1b``."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


def _lookup_name(name: str, kind: str) -> str:
    """A name to look a stored record up by: any text of at most NAME_MAX characters, so that a
    record saved with a name today's rules refuse can still be found, renamed and deleted."""
    if not isinstance(name, str) or not name or len(name) > NAME_MAX:
        raise StorageError(f"a {kind.replace('_', ' ')} name is text of 1..{NAME_MAX} characters")
    if "\x00" in name:  # no database stores it in a name (PostgreSQL refuses it in text)
        raise _not_found(kind, name)
    return name


def check_grid(grid: ArrayLike, signed: bool = False, label: str = "learned grid") -> None:
    """Refuse a risk grid that is not (601, 601), has a non-finite value, or leaves the risk
    scale 0..4 by more than :data:`GRID_OVERSHOOT` (−4..4 for a signed grid)."""
    values = np.asarray(grid, dtype=np.float64)
    if values.shape != (GRID_SIZE, GRID_SIZE):
        raise StorageError(
            f"{label}: a grid must be {GRID_SIZE} × {GRID_SIZE} (0..{GLUCOSE_MAX} "
            f"mg/dL); got shape {values.shape}"
        )
    finite = np.isfinite(values)
    if not finite.all():
        raise StorageError(
            f"{label}: {int((~finite).sum()):,} grid values are not finite numbers; not stored"
        )
    low = (-RISK_MAX if signed else 0.0) - GRID_OVERSHOOT
    high = RISK_MAX + GRID_OVERSHOOT
    if values.min() < low or values.max() > high:
        scale = f"{-RISK_MAX:g}..{RISK_MAX:g}" if signed else f"0..{RISK_MAX:g}"
        raise StorageError(
            f"{label}: grid values run from {values.min():.3g} to {values.max():.3g}, far off the "
            f"risk scale {scale} (more than {GRID_OVERSHOOT:g} beyond it); the fit failed "
            "(λ too small?) and was not stored"
        )


def check_grid_metadata(metadata: Any, label: str = "learned grid") -> dict[str, Any]:
    """The metadata of a learned grid (its ``grid.json``) as plain JSON, checked: it must give
    each of :data:`GRID_METADATA_KEYS` with its JSON type (true/false are not numbers, "false" is
    not a boolean), λ finite and > 0."""
    if not isinstance(metadata, Mapping):
        raise StorageError(f"{label}: the metadata must be a JSON object")
    metadata = _json_ready(metadata)
    for key, kind in GRID_METADATA_KEYS.items():
        value = metadata.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise StorageError(
                f"{label}: the metadata must give {key!r} as {_json_type(kind)}, not {value!r}"
            )
    if not (math.isfinite(metadata["lambda"]) and metadata["lambda"] > 0):
        raise StorageError(f"{label}: λ must be a finite number > 0, not {metadata['lambda']!r}")
    return metadata


def _json_type(kind: type | tuple[type, ...]) -> str:
    names = {
        dict: "an object",
        str: "text",
        bool: "true or false",
        int: "a number",
        float: "a number",
    }
    return names[kind[0] if isinstance(kind, tuple) else kind]


def json_bool(meta: Mapping[str, Any], key: str, default: bool, label: str) -> bool:
    """A stored true/false, strictly: a JSON boolean or absent (``default``); anything else (the
    text "false", 0, null) is a damaged record, never read as true."""
    value = meta.get(key, default)
    if not isinstance(value, bool):
        raise StorageError(f"{label} is damaged: {key!r} must be true or false, not {value!r}")
    return value


def seg_table_from_bytes(content: bytes, file_name: str) -> SEGTable:
    """The SEG table in an uploaded file's bytes (CSV, CSV.gz or XLSX), read by the SEG table
    reader within :data:`SEG_TABLE_MAX_BYTES`: the file, what a gzip file expands to and what an
    XLSX archive declares its parts expand to are checked before the table is parsed."""
    label = Path(str(file_name)).name or "uploaded SEG table"
    if not isinstance(content, bytes | bytearray) or len(content) > SEG_TABLE_MAX_BYTES:
        raise StorageError(
            f"{label}: a SEG table file may be at most {SEG_TABLE_MAX_BYTES:,} bytes"
        )
    suffix = Path(label).suffix.lower()
    try:
        if suffix == ".gz":
            with gzip.GzipFile(fileobj=io.BytesIO(content)) as unpacked:
                text_bytes = unpacked.read(SEG_TABLE_MAX_BYTES + 1)
            if len(text_bytes) > SEG_TABLE_MAX_BYTES:
                raise StorageError(
                    f"{label}: expands to more than {SEG_TABLE_MAX_BYTES:,} "
                    "bytes; a SEG table is about 9 MB"
                )
            return load_seg_table(
                io.BytesIO(text_bytes), name=label.removesuffix(".gz").removesuffix(".GZ")
            )
        if suffix in WORKBOOK_SUFFIXES:
            with zipfile.ZipFile(io.BytesIO(content)) as archive:
                declared = sum(info.file_size for info in archive.infolist())
            if declared > 4 * SEG_TABLE_MAX_BYTES:
                raise StorageError(
                    f"{label}: the workbook declares {declared:,} bytes "
                    "unpacked; a SEG table workbook is far smaller"
                )
        return load_seg_table(io.BytesIO(bytes(content)), name=label)
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise StorageError(f"{label}: cannot be unpacked ({exc})") from exc
    except SEGTableError as exc:  # SEGTableMissing included
        raise StorageError(str(exc)) from exc


def _check_rating_frame(frame: pd.DataFrame, name: str) -> None:
    try:
        checked = read_rating_set(frame, unit="mg/dL", name=name)
    except InputError as exc:
        raise StorageError(f"rating set not stored: {exc}") from exc
    if checked.problems:
        rules = "; ".join(p.message for p in checked.problems)
        raise StorageError(
            f"rating set {name!r} not stored: {rules}. Store the checked rows "
            "(read_rating_set keeps only the valid ones)"
        )


def _check_meter_frame(frame: pd.DataFrame, name: str) -> None:
    by_lower = {str(c).strip().lower(): c for c in frame.columns}
    for column in ("bgm", "ref"):
        if column not in by_lower:
            raise StorageError(f"meter data {name!r} not stored: no {column.upper()} column")
        values = pd.to_numeric(frame[by_lower[column]], errors="coerce").to_numpy(np.float64)
        bad = ~np.isfinite(values) | (values < 0)
        if bad.any():
            raise StorageError(
                f"meter data {name!r} not stored: {column.upper()} is not a "
                f"number ≥ 0 mg/dL in {describe_rows(np.flatnonzero(bad))}"
            )


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
    """A saved SEG table: the uploaded file's bytes and its file name."""

    info: RecordInfo
    content: bytes
    file_name: str

    def load(self) -> SEGTable:
        """Read and check the table (:class:`StorageError` with the reader's message)."""
        return seg_table_from_bytes(self.content, self.file_name)


@dataclass(frozen=True)
class StoredGrid:
    """A saved learned grid: the grid that was shown and how it was learned.

    Attributes
    ----------
    grid : (601, 601) risk indexed [reference, measured], 0..600 mg/dL step 1, exactly as it was
        shown when saved (not clipped: a learned surface may leave 0..4 slightly).
    metadata : the grid's ``grid.json`` content (settings, λ, the ratings' checksum, riskgrid's
        version; :func:`ranking_core.learn.grid_metadata`).
    metrics : named numbers measured when it was saved (e.g. misranking against the reference).
    """

    info: RecordInfo
    grid: NDArray[np.float64]
    metadata: dict[str, Any]
    metrics: dict[str, Any]

    @property
    def settings(self) -> dict[str, Any]:
        """The settings it was learned with (``LearnSettings.to_dict()``)."""
        return self.metadata["settings"]

    @property
    def lam(self) -> float:
        """The λ of the grid shown."""
        return float(self.metadata["lambda"])

    @property
    def checksum(self) -> str:
        """``sha256:…`` of the ratings it was learned from."""
        return self.metadata["ratings_checksum"]

    @property
    def riskgrid_version(self) -> str:
        """The riskgrid version that made the grid."""
        return self.metadata["riskgrid_version"]


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
    """Driver, SQL, schema-upgrade and file-system errors as :class:`StorageError` naming the
    action."""
    from alembic.util import CommandError

    try:
        yield
    except SQLAlchemyError as exc:
        detail = getattr(exc, "orig", None) or exc
        raise StorageError(
            f"{action} failed in the database: {str(detail).strip().splitlines()[0]}"
        ) from exc
    except CommandError as exc:  # e.g. a database upgraded by a newer riskgrid
        raise StorageError(
            f"{action} failed: {str(exc).strip().splitlines()[0]} (was the "
            "database made by a newer riskgrid?)"
        ) from exc
    except OSError as exc:
        raise StorageError(f"{action} failed: {exc.strerror or exc}") from exc


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
                    folder = Path(url.database).expanduser().parent
                    try:
                        folder.mkdir(parents=True, exist_ok=True)
                    except OSError as exc:
                        raise StorageError(
                            f"opening the database failed: cannot make its "
                            f"folder {folder} ({exc.strerror})"
                        ) from exc
                self.engine = create_engine(url)
                _sqlite_transactions(self.engine, timeout)
            elif self.dialect == "postgresql":  # a write waits at most `timeout` for a lock
                self.engine = create_engine(
                    url, connect_args={"options": f"-c lock_timeout={int(timeout * 1000)}"}
                )
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
        self,
        kind: str,
        name: str,
        meta: Mapping[str, Any],
        blobs: Mapping[str, bytes],
        replace: bool,
        saved_by: str | None,
    ) -> RecordInfo:
        """Write one record and its blobs in one locked transaction; with ``replace`` an existing
        record of that name is removed in the same transaction (new id, new time). A signed-in
        saver (``saved_by``) replaces only a record they saved themselves."""
        _check_kind(kind)
        name = check_record_name(name, kind)
        meta = _json_ready(meta)
        if saved_by is not None:
            saved_by = check_record_name(saved_by, "saver")[:SAVED_BY_MAX]
        label = kind.replace("_", " ")
        try:
            with self._write(f"saving {label} {name!r}", kind, name) as conn:
                old = conn.execute(
                    select(RECORDS.c.id, RECORDS.c.saved_by).where(
                        RECORDS.c.kind == kind, RECORDS.c.name == name
                    )
                ).first()
                if old is not None:
                    if not replace:
                        raise StorageError(
                            f"a {label} named {name!r} already exists; choose "
                            "another name or replace it"
                        )
                    _check_owner(kind, name, old.saved_by, saved_by, "replace")
                    conn.execute(delete(BLOBS).where(BLOBS.c.record_id == old.id))
                    conn.execute(delete(RECORDS).where(RECORDS.c.id == old.id))
                created = datetime.now(UTC)
                record_id = conn.execute(
                    insert(RECORDS)
                    .values(
                        kind=kind,
                        name=name,
                        created_at=created,
                        meta=meta,
                        saved_by=saved_by,
                    )
                    .returning(RECORDS.c.id)
                ).scalar_one()
                if blobs:
                    conn.execute(
                        insert(BLOBS),
                        [
                            {"record_id": record_id, "key": key, "content": bytes(content)}
                            for key, content in blobs.items()
                        ],
                    )
        except IntegrityError as exc:  # only without a lock (another dialect)
            raise StorageError(f"a {label} named {name!r} already exists") from exc
        return RecordInfo(record_id, kind, name, created, dict(meta), saved_by)

    def list_records(self, kind: str) -> list[RecordInfo]:
        """Saved records of one kind, newest first."""
        _check_kind(kind)
        with _storage_errors(f"listing {kind.replace('_', ' ')}s"), self.engine.connect() as conn:
            rows = conn.execute(
                select(RECORDS)
                .where(RECORDS.c.kind == kind)
                .order_by(RECORDS.c.created_at.desc(), RECORDS.c.id.desc())
            )
            return [_info(row) for row in rows]

    def delete(self, kind: str, name: str, *, by: str | None = None) -> None:
        """Delete a record and its blobs (one transaction); :class:`RecordNotFound` if absent.
        ``name`` is the stored name exactly (a name saved by an earlier version that today's
        rules refuse can still be deleted); with ``by`` (the signed-in user) only that user's
        own record is deleted, anything else is refused."""
        _check_kind(kind)
        name = _lookup_name(name, kind)
        with self._write(f"deleting {kind.replace('_', ' ')} {name!r}", kind, name) as conn:
            row = conn.execute(
                select(RECORDS.c.id, RECORDS.c.saved_by).where(
                    RECORDS.c.kind == kind, RECORDS.c.name == name
                )
            ).first()
            if row is None:
                raise _not_found(kind, name)
            _check_owner(kind, name, row.saved_by, by, "delete")
            conn.execute(delete(BLOBS).where(BLOBS.c.record_id == row.id))
            conn.execute(delete(RECORDS).where(RECORDS.c.id == row.id))

    def rename(self, kind: str, name: str, new_name: str, *, by: str | None = None) -> RecordInfo:
        """Give a record another name (same content, id and time); refused if the new name is
        taken or not one line of printable text, or, with ``by``, if the record is not that
        user's; :class:`RecordNotFound` if there is no such record."""
        _check_kind(kind)
        name = _lookup_name(name, kind)
        new_name = check_record_name(new_name, kind)
        label = kind.replace("_", " ")
        with self._write(f"renaming {label} {name!r}", kind, name, new_name) as conn:
            row = conn.execute(
                select(RECORDS).where(RECORDS.c.kind == kind, RECORDS.c.name == name)
            ).first()
            if row is None:
                raise _not_found(kind, name)
            _check_owner(kind, name, row.saved_by, by, "rename")
            if new_name == name:
                return _info(row)
            taken = conn.scalar(
                select(RECORDS.c.id).where(RECORDS.c.kind == kind, RECORDS.c.name == new_name)
            )
            if taken is not None:
                raise StorageError(
                    f"a {label} named {new_name!r} already exists; choose another name"
                )
            conn.execute(update(RECORDS).where(RECORDS.c.id == row.id).values(name=new_name))
        return dataclasses.replace(_info(row), name=new_name)

    def _load(self, kind: str, name: str) -> tuple[RecordInfo, dict[str, bytes]]:
        """The record and its blobs from one statement (one committed version)."""
        _check_kind(kind)
        name = _lookup_name(name, kind)
        query = (
            select(RECORDS, BLOBS.c.key, BLOBS.c.content)
            .outerjoin(BLOBS, BLOBS.c.record_id == RECORDS.c.id)
            .where(RECORDS.c.kind == kind, RECORDS.c.name == name)
        )
        with (
            _storage_errors(f"loading {kind.replace('_', ' ')} {name!r}"),
            self.engine.connect() as conn,
        ):
            rows = conn.execute(query).all()
        if not rows:
            raise _not_found(kind, name)
        info = _info(rows[0])
        if "damaged" in info.meta:  # a record of an earlier version the upgrade could not convert
            raise StorageError(
                f"{kind.replace('_', ' ')} {name!r} was saved by an earlier "
                f"version and cannot be read: {info.meta['damaged']}; delete it"
            )
        blobs = {row.key: row.content for row in rows if row.key is not None}
        missing = [key for key in RECORD_KINDS[kind].blobs if key not in blobs]
        if missing:
            raise StorageError(
                f"{kind.replace('_', ' ')} {name!r} is damaged: it has no {', '.join(missing)}"
            )
        return info, blobs

    # -- rating sets and meter data -------------------------------------------------------------
    def save_rating_set(
        self,
        name: str,
        frame: pd.DataFrame,
        meta: Mapping[str, Any] | None = None,
        *,
        replace: bool = False,
        saved_by: str | None = None,
    ) -> RecordInfo:
        """Save a validated rating set (columns reference, estimate in mg/dL, rating 0..4
        [, rater]); refused unless every row passes the rating-set rules."""
        _check_rating_frame(frame, check_record_name(name, "rating_set"))
        return self._save_frame("rating_set", name, frame, meta, replace, saved_by)

    def load_rating_set(self, name: str) -> StoredFrame:
        return self._load_frame("rating_set", name)

    def save_meter_data(
        self,
        name: str,
        frame: pd.DataFrame,
        meta: Mapping[str, Any] | None = None,
        *,
        replace: bool = False,
        saved_by: str | None = None,
    ) -> RecordInfo:
        """Save checked meter data (BGM/REF pairs in mg/dL, finite, ≥ 0); refused otherwise."""
        _check_meter_frame(frame, check_record_name(name, "meter_data"))
        return self._save_frame("meter_data", name, frame, meta, replace, saved_by)

    def load_meter_data(self, name: str) -> StoredFrame:
        return self._load_frame("meter_data", name)

    def _save_frame(
        self,
        kind: str,
        name: str,
        frame: pd.DataFrame,
        meta: Mapping[str, Any] | None,
        replace: bool,
        saved_by: str | None,
    ) -> RecordInfo:
        summary = {"rows": len(frame), "columns": [str(c) for c in frame.columns], **(meta or {})}
        return self._save(kind, name, summary, {"frame": frame_to_bytes(frame)}, replace, saved_by)

    def _load_frame(self, kind: str, name: str) -> StoredFrame:
        info, blobs = self._load(kind, name)
        return StoredFrame(info, frame_from_bytes(blobs["frame"]))

    # -- learned grids --------------------------------------------------------------------------
    def save_learned_grid(
        self,
        name: str,
        grid: ArrayLike,
        metadata: Mapping[str, Any],
        metrics: Mapping[str, Any] | None = None,
        *,
        replace: bool = False,
        saved_by: str | None = None,
    ) -> RecordInfo:
        """Save the grid that was shown: the (601, 601) risk grid as it is (float64, compared
        bit for bit on load), its metadata (the ``grid.json`` content of
        :func:`ranking_core.learn.grid_metadata`: settings, λ, ratings checksum, riskgrid
        version; checked by :func:`check_grid_metadata`) and optional metrics. The grid is
        checked first (:func:`check_grid`); a failed fit is refused."""
        name = check_record_name(name, "learned_grid")
        values = np.asarray(grid, dtype=np.float64)
        check_grid(values, label=repr(name))
        metadata = check_grid_metadata(metadata, repr(name))
        meta = {"metadata": metadata, "metrics": dict(metrics or {}), "m": metadata.get("ratings")}
        return self._save(
            "learned_grid", name, meta, {"grid": array_to_bytes(values)}, replace, saved_by
        )

    def load_learned_grid(self, name: str) -> StoredGrid:
        """A saved learned grid; :class:`StorageError` if the record is damaged (a grid that is
        not 601 × 601 finite risks, metadata without its settings, λ, checksum or version)."""
        info, blobs = self._load("learned_grid", name)
        label = f"learned grid {name!r}"
        grid = array_from_bytes(blobs["grid"])
        if grid.dtype != np.float64:
            raise StorageError(f"{label} is damaged: its grid has dtype {grid.dtype}")
        check_grid(grid, label=label)
        metadata = check_grid_metadata(info.meta.get("metadata"), label)
        metrics = info.meta.get("metrics", {})
        if not isinstance(metrics, Mapping):
            raise StorageError(f"{label} is damaged: its metrics are not a JSON object")
        return StoredGrid(info, grid, metadata, dict(metrics))

    # -- the SEG table --------------------------------------------------------------------------
    def save_seg_table(
        self,
        name: str,
        content: bytes,
        file_name: str,
        *,
        replace: bool = False,
        saved_by: str | None = None,
    ) -> RecordInfo:
        """Keep the user's SEG table: the uploaded file's bytes (in the user's own database, never
        in the project). The table is read and checked first (:func:`seg_table_from_bytes`), so
        an invalid or oversized file is refused and nothing is stored."""
        name = check_record_name(name, "seg_table")
        label = check_record_name(Path(str(file_name)).name or "RiskPairData.csv", "file")
        seg_table_from_bytes(content, label)
        meta = {"file_name": label, "bytes": len(content)}
        return self._save("seg_table", name, meta, {"file": bytes(content)}, replace, saved_by)

    def load_seg_table_record(self, name: str) -> StoredSEGTable:
        """A saved SEG table (its bytes; :meth:`StoredSEGTable.load` reads them). A record of an
        earlier version that named a file on the server instead is refused: such paths are never
        opened."""
        info, blobs = self._load("seg_table", name)
        return StoredSEGTable(
            info, blobs["file"], str(info.meta.get("file_name") or "RiskPairData.csv")
        )

    def latest_seg_table(self) -> StoredSEGTable | None:
        """The most recently saved SEG table record, or None."""
        saved = self.list_records("seg_table")
        return self.load_seg_table_record(saved[0].name) if saved else None


def _check_owner(kind: str, name: str, owner: str | None, by: str | None, action: str) -> None:
    """With a signed-in user ``by``, refuse to ``action`` a record someone else saved."""
    if by is not None and owner != by:
        whose = f"saved by {owner}" if owner else "saved without a login"
        raise StorageError(
            f"cannot {action} {kind.replace('_', ' ')} {name!r}: it was {whose}; "
            "only the one who saved it may change it"
        )


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


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise StorageError(f"unknown record kind {kind!r}; one of {', '.join(KINDS)}")


def _not_found(kind: str, name: str) -> RecordNotFound:
    return RecordNotFound(f"no {kind.replace('_', ' ')} named {name!r} is stored")


def _info(row: Any) -> RecordInfo:
    created = row.created_at
    if created.tzinfo is None:  # SQLite returns naive datetimes
        created = created.replace(tzinfo=UTC)
    meta = (
        row.meta
        if isinstance(row.meta, Mapping)
        else {"damaged": "its summary is not a JSON object"}
    )
    return RecordInfo(row.id, row.kind, row.name, created, dict(meta), row.saved_by)
