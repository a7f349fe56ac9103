"""The record store: named records of four kinds in one database, each with an owner.

Safe under concurrent use (several dashboard sessions or processes on one database):

- every write (save, replace, rename, delete) is one short transaction that first takes a write
  lock — ``BEGIN IMMEDIATE`` on SQLite (one writer at a time; readers go on in WAL mode), a
  transaction advisory lock per record name on PostgreSQL — so two replaces of one name never
  interleave and a failed write leaves what was stored before; a database still locked after
  the store's timeout (:data:`~ranking_core.storage.engine.BUSY_TIMEOUT`, 5 s) is reported busy;
- a read takes no lock: it waits for no writer and no writer waits for it; a load reads the
  record and its blobs in one statement, so it sees one committed version;
- the schema is never upgraded when a database is opened, only by :meth:`Store.upgrade`
  (``riskgrid db upgrade``, the dashboard's start) or the first write after a riskgrid update;
  a read of an older schema is refused with a sentence saying so;
- every failure is a :class:`StorageError` with a message.

Records belong to someone: ``saved_by`` names the signed-in user who saved a record (empty: the
operator, from the command line or a dashboard without a login), and a write that passes ``by``
(the signed-in user) may replace, rename or delete only that user's own records. The SEG table in
use is one record: storing another replaces it, which only its owner (or the operator) may do.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, delete, insert, select, text, update
from sqlalchemy.exc import IntegrityError

from ranking_core.storage.checks import (
    _BLOBS,
    SAVED_BY_MAX,
    StorageError,
    _check_kind,
    _check_meter_frame,
    _check_rating_frame,
    _json_ready,
    _lookup_name,
    _not_found,
    array_from_bytes,
    array_to_bytes,
    check_grid,
    check_grid_metadata,
    check_record_name,
    frame_from_bytes,
    frame_to_bytes,
    seg_table_from_bytes,
)
from ranking_core.storage.engine import (
    BUSY_TIMEOUT,
    create_store_engine,
    default_database_url,
    file_location,
    lock_key,
    newer_message,
    outdated_message,
    parse_url,
    schema_state,
    sqlite_file,
    storage_errors,
    upgrade_schema,
)
from ranking_core.storage.schema import (
    BLOBS,
    RECORDS,
    RecordInfo,
    StoredFrame,
    StoredGrid,
    StoredSEGTable,
    owner_label,
)

# the lock every write of a SEG table record takes besides its name's: one table is in use
if TYPE_CHECKING:  # NumPy and pandas are imported by the methods that use them, when they run
    import pandas as pd
    from numpy.typing import ArrayLike

SEG_IN_USE = "(the SEG table in use)"


class Store:
    """Named records in one database.

    Parameters
    ----------
    url : SQLAlchemy URL of a SQLite or PostgreSQL database; default
        :func:`~ranking_core.storage.engine.default_database_url`. Opening connects nothing and
        changes nothing: a new database (and, for SQLite, its folder) is created by the first
        use, an older schema upgraded by :meth:`upgrade` or the first write.
    timeout : seconds a write waits for another writer of the same database before the database
        is reported busy.
    """

    def __init__(self, url: str | None = None, *, timeout: float = BUSY_TIMEOUT) -> None:
        self.url = url or default_database_url()
        parsed = parse_url(self.url)
        self.dialect = parsed.get_backend_name()
        self.where = file_location(parsed)
        self.file = sqlite_file(parsed)  # the SQLite file, None for PostgreSQL
        self.timeout = float(timeout)
        self.engine = create_store_engine(parsed, self.timeout)
        self._schema_current = False

    def dispose(self) -> None:
        """Close the connection pool."""
        self.engine.dispose()

    # -- schema ---------------------------------------------------------------------------------
    def upgrade(self) -> str:
        """Bring the schema to this riskgrid's revision (creating the tables of a new database);
        one process at a time. Returns the state found: ``"current"`` (nothing done), ``"empty"``
        (created) or ``"outdated"`` (upgraded)."""
        before = upgrade_schema(self.engine, self.dialect, self.where, self.timeout)
        self._schema_current = True
        return before

    def schema(self) -> str:
        """The schema's state, read without a lock: ``"current"``, ``"empty"``, ``"outdated"``,
        or the revision of a newer riskgrid."""
        with storage_errors("reading the database schema", self.where, self.timeout, self.file):
            with self.engine.connect() as conn:
                return schema_state(conn)

    def journal_mode(self) -> str | None:
        """SQLite's journal mode (``"wal"`` once created or upgraded by this riskgrid); None for
        PostgreSQL or a SQLite file that does not exist yet."""
        if self.dialect != "sqlite" or self.schema() == "empty":
            return None
        with storage_errors("reading the journal mode", self.where, self.timeout, self.file):
            with self.engine.connect() as conn:
                return str(conn.exec_driver_sql("PRAGMA journal_mode").scalar())

    def check_can_save(self, kind: str, name: str, *, replace: bool = False) -> None:
        """Before long work whose result will be saved as ``name``: the database opens, its
        schema is current (upgraded if older), it accepts writes, and (without ``replace``) the
        name is free; :class:`StorageError` with the reason otherwise. Takes the write lock for
        an instant (a write rolled back)."""
        _check_kind(kind)
        name = check_record_name(name, kind)
        self._ready(write=True)
        action = f"checking that {self.where} accepts writes"
        with (
            storage_errors(action, self.where, self.timeout, self.file),
            self.engine.connect() as conn,
        ):
            conn.execution_options(riskgrid_write=True)
            transaction = conn.begin()
            try:
                if self.dialect == "sqlite":  # an unchanged header value, rolled back below
                    version = conn.exec_driver_sql("PRAGMA user_version").scalar()
                    conn.exec_driver_sql(f"PRAGMA user_version = {int(version or 0)}")
                else:
                    conn.execute(text("CREATE TEMPORARY TABLE riskgrid_write_check (x int)"))
                taken = conn.scalar(
                    select(RECORDS.c.id).where(RECORDS.c.kind == kind, RECORDS.c.name == name)
                )
            finally:
                transaction.rollback()
        if taken is not None and not replace:
            raise StorageError(
                f"a {kind.replace('_', ' ')} named {name!r} already exists; choose another name"
            )

    def _ready(self, write: bool) -> None:
        """Before a read or write: the schema is this riskgrid's. A new database is created; an
        older schema is upgraded by a write and refused to a read (one sentence)."""
        if self._schema_current:
            return
        state = self.schema()
        if state == "current":
            self._schema_current = True
        elif state == "empty" or (state == "outdated" and write):
            self.upgrade()
        elif state == "outdated":
            raise StorageError(outdated_message(self.where))
        else:
            raise StorageError(newer_message(self.where, state))

    # -- transactions ---------------------------------------------------------------------------
    @contextmanager
    def _write(self, action: str, kind: str, *names: str) -> Iterator[Connection]:
        """One write transaction holding the lock of every (kind, name) it touches."""
        self._ready(write=True)
        if kind == "seg_table":
            names = (*names, SEG_IN_USE)
        with (
            storage_errors(action, self.where, self.timeout, self.file),
            self.engine.connect() as conn,
        ):
            conn.execution_options(riskgrid_write=True)
            with conn.begin():
                if self.dialect == "postgresql":
                    for key in sorted({lock_key(kind, n) for n in names}):
                        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})
                yield conn

    @contextmanager
    def _read(self, action: str) -> Iterator[Connection]:
        """A connection for reads: no lock taken, errors as sentences naming ``action``."""
        self._ready(write=False)
        with (
            storage_errors(action, self.where, self.timeout, self.file),
            self.engine.connect() as conn,
        ):
            yield conn

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
                same = RECORDS.c.kind == kind
                if kind != "seg_table":  # the SEG table in use is one record, whatever its name
                    same = same & (RECORDS.c.name == name)
                olds = conn.execute(
                    select(RECORDS.c.id, RECORDS.c.name, RECORDS.c.saved_by).where(same)
                ).all()
                for old in olds:
                    if kind == "seg_table":
                        _check_seg_owner(old.name, old.saved_by, saved_by, replace)
                    elif not replace:
                        raise StorageError(
                            f"a {label} named {name!r} already exists; choose "
                            "another name or replace it"
                        )
                    _check_owner(kind, name, old.saved_by, saved_by, "replace")
                if olds:
                    ids = [old.id for old in olds]
                    conn.execute(delete(BLOBS).where(BLOBS.c.record_id.in_(ids)))
                    conn.execute(delete(RECORDS).where(RECORDS.c.id.in_(ids)))
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
        with self._read(f"listing {kind.replace('_', ' ')}s") as conn:
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
        with self._read(f"loading {kind.replace('_', ' ')} {name!r}") as conn:
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
        missing = [key for key in _BLOBS[kind] if key not in blobs]
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
        import numpy as np

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
        import numpy as np

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
        """Keep the SEG table every report uses: the uploaded file's bytes (in the user's own
        database, never in the project), as the one SEG table record. The table is read and
        checked first (:func:`seg_table_from_bytes`), so an invalid or oversized file is refused
        and nothing is stored. A table already in use, under any name, is replaced only with
        ``replace`` and only by its owner: a signed-in ``saved_by`` other than the one who
        stored it is refused (the operator, ``saved_by=None``, may replace any)."""
        name = check_record_name(name, "seg_table")
        label = check_record_name(Path(str(file_name)).name or "RiskPairData.csv", "file")
        seg_table_from_bytes(content, label)
        digest = hashlib.sha256(bytes(content)).hexdigest()
        meta = {"file_name": label, "bytes": len(content), "sha256": digest}
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
        """The SEG table in use (the one SEG table record; of a database that kept several, the
        newest), or None."""
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


def _check_seg_owner(name: str, owner: str | None, by: str | None, replace: bool) -> None:
    """Storing a SEG table while ``name`` (stored by ``owner``) is in use: refused without
    ``replace``, and refused to a signed-in ``by`` who did not store it."""
    if by is not None and owner != by:
        raise StorageError(
            f"the SEG table in use ({name!r}) was stored by {owner_label(owner)}; only they may "
            "replace it, so your upload was not stored"
        )
    if not replace:
        raise StorageError(
            f"a SEG table is in use ({name!r}, stored by {owner_label(owner)}); replace it to "
            "store another"
        )


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
