"""Alembic environment for riskgrid's record store.

Run by :func:`ranking_core.storage.engine.upgrade_schema`, which passes an open connection
(inside its locked write transaction) in ``config.attributes["connection"]``; the schema is never
generated from an online database here.
"""

from alembic import context

import ranking_core.surveys.tables  # noqa: F401 - the survey tables join METADATA
from ranking_core.storage import METADATA

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=METADATA,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
