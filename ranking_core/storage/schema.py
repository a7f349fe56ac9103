"""The record tables (changes go through a new Alembic revision in ``ranking_core/migrations``)
and what a load returns: a listing line, a frame, a SEG table's bytes, a learned grid."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    Column,
    DateTime,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from ranking_core.storage.checks import NAME_MAX, SAVED_BY_MAX, seg_table_from_bytes

if TYPE_CHECKING:  # annotations only: reading records needs neither NumPy nor pandas
    import numpy as np
    import pandas as pd
    from numpy.typing import NDArray

    from ranking_core.grids.seg import SEGTable

OPERATOR = "the operator (command line or a dashboard without login)"


def owner_label(owner: str | None) -> str:
    """Who a record or survey belongs to, in words: the signed-in user who stored it, or the
    operator (stored from the command line or a dashboard without a login)."""
    return owner if owner else OPERATOR


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
# the mapped classes' Table objects (``__table__`` is declared only as a FromClause)
RECORDS = METADATA.tables[_Record.__tablename__]
BLOBS = METADATA.tables[_Blob.__tablename__]


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

    @cached_property
    def sha256(self) -> str:
        """The SHA-256 of the stored file's bytes (hex)."""
        return hashlib.sha256(self.content).hexdigest()

    def describe(self) -> str:
        """Which SEG table this is, for a report's provenance: its file name, the first 12 hex
        digits of its file's SHA-256 and who stored it."""
        return (
            f"{self.file_name} (sha256 {self.sha256[:12]}, stored by "
            f"{owner_label(self.info.saved_by)})"
        )


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


def parent_key(name: str, parent: str, **options: Any) -> Column:
    """Integer column ``name`` holding the id of a row of table ``parent``, deleted with that
    row (``ON DELETE CASCADE``); ``options`` as for :class:`sqlalchemy.Column`. The survey
    tables and the migrations that create them build their keys with it."""
    return Column(name, Integer, ForeignKey(f"{parent}.id", ondelete="CASCADE"), **options)
