"""Persistence of rating sets, meter data, learned grids, the SEG table in use and surveys
(SQLAlchemy 2.x), in SQLite or PostgreSQL.

One record per saved thing, identified by its kind and a name the user chooses; its arrays and
files are blobs of the record; each record keeps its owner (the signed-in user who saved it, or
the operator). The parts:

- :mod:`~ranking_core.storage.checks`: what a record passes before it is stored, and the safe
  encodings of arrays and frames (no pickle, no code, no server paths);
- :mod:`~ranking_core.storage.schema`: the tables and what a load returns;
- :mod:`~ranking_core.storage.engine`: the database URL, WAL and busy timeout, errors as
  sentences, the schema revision and its upgrade (``riskgrid db upgrade``);
- :mod:`~ranking_core.storage.records`: :class:`Store`, the records and their owners.

The schema is managed by Alembic (``ranking_core/migrations``) and upgraded once — by
``riskgrid db upgrade``, the dashboard's start, or the first write after an update — never when a
database is opened for a read. The database is SQLite in the user's data directory
(``platformdirs.user_data_dir("riskgrid")``) unless ``RISKGRID_DATABASE_URL`` names another
SQLAlchemy URL (PostgreSQL: ``postgresql+psycopg://user:password@host/db``).
"""

from ranking_core.storage.checks import (
    ARRAY_MAX_VALUES,
    GRID_METADATA_KEYS,
    GRID_OVERSHOOT,
    GRID_SIZE,
    KINDS,
    NAME_MAX,
    SAVED_BY_MAX,
    SEG_TABLE_MAX_BYTES,
    RecordNotFound,
    StorageError,
    array_from_bytes,
    array_to_bytes,
    check_grid,
    check_grid_metadata,
    check_record_name,
    display_name,
    frame_from_bytes,
    frame_to_bytes,
    json_bool,
    seg_table_from_bytes,
)
from ranking_core.storage.engine import (
    BUSY_TIMEOUT,
    DATABASE_URL_ENV,
    MIGRATIONS,
    SCHEMA_REVISION,
    UPGRADE_COMMAND,
    default_database_url,
)
from ranking_core.storage.records import Store
from ranking_core.storage.schema import (
    BLOBS,
    METADATA,
    OPERATOR,
    RECORDS,
    RecordInfo,
    StoredFrame,
    StoredGrid,
    StoredSEGTable,
    owner_label,
)

__all__ = [
    "ARRAY_MAX_VALUES",
    "BLOBS",
    "BUSY_TIMEOUT",
    "DATABASE_URL_ENV",
    "GRID_METADATA_KEYS",
    "GRID_OVERSHOOT",
    "GRID_SIZE",
    "KINDS",
    "METADATA",
    "MIGRATIONS",
    "NAME_MAX",
    "OPERATOR",
    "RECORDS",
    "SAVED_BY_MAX",
    "SCHEMA_REVISION",
    "SEG_TABLE_MAX_BYTES",
    "UPGRADE_COMMAND",
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
    "owner_label",
    "seg_table_from_bytes",
]
