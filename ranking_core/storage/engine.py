"""The database under the record store: its URL, the engine, what its errors mean, and its schema
revision.

- Only SQLite and PostgreSQL are used (:data:`DIALECTS`); any other URL, a URL that is no URL and
  a driver that is not installed are each one sentence (:class:`StorageError`), the password of a
  URL never shown.
- SQLite runs in WAL mode (set when the database is created or upgraded: readers never wait for
  the one writer) with a busy timeout of :data:`BUSY_TIMEOUT` seconds; a write takes the write lock
  at once (``BEGIN IMMEDIATE``), a read starts a plain deferred transaction and takes no lock.
  PostgreSQL writes wait at most as long for a lock (``lock_timeout``).
- A database still busy after that, a read-only database file and a driver error are sentences
  naming the action (:func:`storage_errors`), never a traceback and never a minute's wait.
- The schema is upgraded once (``riskgrid db upgrade``, the dashboard's start, or the first write
  after a riskgrid update: :func:`upgrade_schema`), never when a database is opened for a read;
  :func:`schema_state` reads the revision without any lock.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import platformdirs
from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from ranking_core.storage.checks import StorageError

DATABASE_URL_ENV = "RISKGRID_DATABASE_URL"
DIALECTS = ("sqlite", "postgresql")
MIGRATIONS = Path(__file__).resolve().parents[1] / "migrations"
# The newest Alembic revision (ranking_core/migrations/versions; a test checks that it is the
# head), so that a store can tell an old schema without loading the migration scripts.
SCHEMA_REVISION = "seg_method"
# seconds a write waits for the write lock (and a read for a checkpoint) before the database is
# reported busy; the schema upgrade, run once, waits longer for the others' writes to end
BUSY_TIMEOUT = 5.0
UPGRADE_TIMEOUT = 60.0
UPGRADE_COMMAND = "riskgrid db upgrade"
URL_EXAMPLES = "sqlite:///PATH or postgresql+psycopg://user:password@host/db"


def default_database_url(environ: Mapping[str, str] | None = None) -> str:
    """``$RISKGRID_DATABASE_URL`` if set, else SQLite in the user's data directory."""
    environ = os.environ if environ is None else environ
    url = environ.get(DATABASE_URL_ENV)
    if url:
        return url
    folder = Path(platformdirs.user_data_dir("riskgrid", appauthor=False))
    return f"sqlite:///{folder / 'riskgrid.sqlite3'}"


def parse_url(url: str) -> URL:
    """The SQLAlchemy URL of a SQLite or PostgreSQL database; :class:`StorageError` for text that
    is no database URL or names another database."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError, TypeError):
        raise StorageError(
            f"the database URL ({DATABASE_URL_ENV}) is not a database URL; give {URL_EXAMPLES}"
        ) from None
    backend = parsed.get_backend_name()
    if backend not in DIALECTS:
        raise StorageError(
            f"the database URL {shown_url(parsed)} names a {backend} database; riskgrid keeps "
            f"its records in SQLite or PostgreSQL ({URL_EXAMPLES})"
        )
    return parsed


def shown_url(url: URL) -> str:
    """The URL as it may be shown: without its password."""
    return url.render_as_string(hide_password=True)


def create_store_engine(url: URL, timeout: float) -> Engine:
    """An engine for ``url`` (SQLite: its folder made, WAL transactions; PostgreSQL: writes wait
    at most ``timeout`` seconds for a lock). A driver that is not installed is a
    :class:`StorageError`."""
    try:
        if url.get_backend_name() == "sqlite":
            if url.database and url.database != ":memory:":
                folder = Path(url.database).expanduser().parent
                try:
                    folder.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise StorageError(
                        f"opening the database failed: cannot make its folder {folder} "
                        f"({exc.strerror})"
                    ) from exc
            engine = create_engine(url)
            _sqlite_transactions(engine, timeout)
            return engine
        return create_engine(
            url, connect_args={"options": f"-c lock_timeout={int(timeout * 1000)}"}
        )
    except ImportError as exc:
        raise StorageError(
            f"the database driver {exc.name or url.drivername!r} for {shown_url(url)} is not "
            "installed (PostgreSQL needs psycopg: postgresql+psycopg://…)"
        ) from None
    except SQLAlchemyError as exc:  # e.g. a driver name SQLAlchemy does not know
        raise StorageError(
            f"the database URL {shown_url(url)} cannot be used: {_first_line(exc)}"
        ) from None


def _sqlite_transactions(engine: Engine, timeout: float) -> None:
    """SQLite with real transactions: the driver's own BEGIN handling off, ``BEGIN IMMEDIATE``
    (the write lock, taken at once) for writes, a deferred ``BEGIN`` (no lock in WAL mode) for
    reads, foreign keys on, and a busy timeout instead of an immediate 'database is locked'."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        write = conn.get_execution_options().get("riskgrid_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _sqlite_pragma(conn: Connection, pragma: str) -> None:
    """Run ``PRAGMA pragma`` on the driver's connection, outside any transaction (SQLite changes
    the journal mode only there)."""
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(f"PRAGMA {pragma}")
    finally:
        cursor.close()


def lock_key(*parts: str) -> int:
    """A signed 64-bit key for PostgreSQL advisory locks."""
    digest = hashlib.blake2b("\x00".join(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _first_line(exc: BaseException) -> str:
    detail = getattr(exc, "orig", None) or exc
    return (str(detail).strip().splitlines() or [type(detail).__name__])[0]


def _is_busy(exc: SQLAlchemyError) -> bool:
    detail = getattr(exc, "orig", None)
    if getattr(detail, "sqlstate", None) in ("55P03", "40P01"):  # lock timeout, deadlock
        return True
    message = str(detail or exc).lower()
    return "database is locked" in message or "database table is locked" in message


def _is_read_only(exc: SQLAlchemyError) -> bool:
    detail = getattr(exc, "orig", None)
    if getattr(detail, "sqlstate", None) == "25006":  # read-only SQL transaction
        return True
    message = str(detail or exc).lower()
    return "readonly database" in message or "read-only" in message


@contextmanager
def storage_errors(
    action: str,
    where: str = "the database",
    timeout: float = BUSY_TIMEOUT,
    file: Path | None = None,
) -> Iterator[None]:
    """Driver, SQL, schema-upgrade and file-system errors as one :class:`StorageError` sentence
    naming the action: a database still locked after ``timeout`` seconds is *busy*, a file or
    server that refuses writes is *read-only*, and so is a SQLite ``file`` that SQLite cannot
    open because the file or its folder may not be written (:func:`unopenable_file_message`)."""
    try:
        yield
    except SQLAlchemyError as exc:
        if _is_busy(exc):
            raise StorageError(
                f"{action} failed: {where} is busy (another riskgrid process kept it locked for "
                f"more than {timeout:g} s); try again in a moment"
            ) from None
        if _is_read_only(exc):
            raise StorageError(
                f"{action} failed: {where} is read-only (riskgrid may read it but not change "
                "it); use a database you may write to"
            ) from None
        if file is not None and "unable to open database file" in _first_line(exc).lower():
            reason = unopenable_file_message(file)
            if reason is not None:
                raise StorageError(f"{action} failed: {reason}") from None
        raise StorageError(f"{action} failed in the database: {_first_line(exc)}") from exc
    except OSError as exc:
        raise StorageError(f"{action} failed: {exc.strerror or exc}") from exc
    except Exception as exc:
        if not _is_migration_error(exc):
            raise
        raise StorageError(  # e.g. a database upgraded by a newer riskgrid
            f"{action} failed: {_first_line(exc)} (was the database made by a newer riskgrid?)"
        ) from exc


def _is_migration_error(exc: Exception) -> bool:
    """An error of Alembic's commands (only a schema upgrade runs them, and it has imported
    Alembic: a read never loads it, so that reading records starts at once)."""
    alembic_util = sys.modules.get("alembic.util")
    return alembic_util is not None and isinstance(exc, alembic_util.CommandError)


# -- the schema revision -----------------------------------------------------------------------
def schema_state(conn: Connection) -> str:
    """The database's schema without taking any lock: ``"current"`` (the code's revision),
    ``"empty"`` (no riskgrid tables yet), ``"outdated"`` (an older revision, or a database from
    before migrations), else the unknown revision it names (a newer riskgrid's)."""
    tables = set(inspect(conn).get_table_names())
    if "alembic_version" not in tables:
        return "outdated" if "records" in tables else "empty"
    revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    if revision == SCHEMA_REVISION:
        return "current"
    if revision is None or revision in _older_revisions():
        return "outdated"
    return str(revision)


def _older_revisions() -> set[str]:
    """The revisions before :data:`SCHEMA_REVISION` (their file names, without importing them)."""
    return {p.stem for p in (MIGRATIONS / "versions").glob("*.py")} - {SCHEMA_REVISION}


def outdated_message(where: str) -> str:
    return (
        f"{where} has an older schema than this riskgrid; run `{UPGRADE_COMMAND}` "
        "(or save anything: the first write upgrades it)"
    )


def newer_message(where: str, revision: str) -> str:
    return (
        f"{where} was made by a newer riskgrid (schema revision {revision!r}); update riskgrid "
        "to use it"
    )


def upgrade_schema(engine: Engine, dialect: str, where: str, timeout: float = BUSY_TIMEOUT) -> str:
    """Upgrade the schema to :data:`SCHEMA_REVISION` in one write transaction, one process at a
    time (the others wait up to :data:`UPGRADE_TIMEOUT` s and then find it done), and turn on WAL
    for SQLite. A database from before migrations (tables, no version) is stamped with the first
    revision. Returns the state before: ``"current"``, ``"empty"`` or ``"outdated"``."""
    from alembic import command
    from alembic.config import Config

    file = sqlite_file(engine.url)
    with storage_errors("upgrading the database schema", where, UPGRADE_TIMEOUT, file):
        with engine.connect() as conn:  # a look first: nothing to do takes no lock
            before = schema_state(conn)
            conn.rollback()
        if before not in ("current", "empty", "outdated"):
            raise StorageError(newer_message(where, before))
        if before == "current":
            return before
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        with engine.connect() as conn:
            if dialect == "sqlite":
                _sqlite_pragma(conn, f"busy_timeout = {int(UPGRADE_TIMEOUT * 1000)}")
                if engine.url.database not in (None, "", ":memory:"):
                    _sqlite_pragma(conn, "journal_mode = WAL")
            conn.execution_options(riskgrid_write=True)
            try:
                with conn.begin():
                    if dialect == "postgresql":
                        conn.execute(text(f"SET LOCAL lock_timeout = '{int(UPGRADE_TIMEOUT)}s'"))
                        conn.execute(
                            text("SELECT pg_advisory_xact_lock(:key)"),
                            {"key": lock_key("schema", "migrations")},
                        )
                    config.attributes["connection"] = conn
                    now = schema_state(conn)
                    if now not in ("current", "empty", "outdated"):
                        raise StorageError(newer_message(where, now))
                    tables = set(inspect(conn).get_table_names())
                    if "records" in tables and "alembic_version" not in tables:
                        command.stamp(config, "initial")
                    command.upgrade(config, "head")
            finally:
                if dialect == "sqlite":
                    _sqlite_pragma(conn, f"busy_timeout = {int(timeout * 1000)}")
    return before


def sqlite_file(url: URL) -> Path | None:
    """The file of a SQLite database (a URI filename's path without its query), else None
    (PostgreSQL, or SQLite in memory)."""
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    path = str(url.database).removeprefix("file:").split("?", 1)[0]  # file:…?mode=ro&uri=true
    return Path(path).expanduser()


def file_location(url: URL) -> str:
    """Where the database is, for messages: the SQLite file, or the URL without its password."""
    file = sqlite_file(url)
    return f"the database file {file}" if file is not None else f"the database {shown_url(url)}"


def unopenable_file_message(file: Path) -> str | None:
    """Why SQLite cannot open ``file`` when the cause is a permission, as one sentence saying
    what to do; None when the file and its folder may be written (another cause).

    SQLite writes beside the file (its WAL journal and shared-memory index, ``-wal``/``-shm``)
    even to read a database in WAL mode, so a writable file in a read-only folder (or on a
    read-only disk) cannot be opened either: SQLite then says only "unable to open database
    file"."""
    folder = file.parent
    change = f"or set {DATABASE_URL_ENV} to a database you may write to"
    if not file.exists():
        if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
            return (
                f"the database file {file} cannot be created: its folder {folder} is read-only; "
                f"make the folder writable, {change}"
            )
        return None
    if not os.access(file, os.W_OK):
        return (
            f"the database file {file} is read-only; make it and its folder {folder} writable "
            f"(SQLite writes its journal beside it), {change}"
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        return (
            f"the database file {file} is read-only: its folder {folder} may not be written, "
            f"where SQLite writes its journal beside it; make the folder writable, {change}"
        )
    return None
