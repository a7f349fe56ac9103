"""Pieces the migration scripts share: a column that points at a parent row and goes with it,
and a revision that adds one optional text column."""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa
from alembic import op

from ranking_core.storage.schema import parent_key

__all__ = ["added_text_column", "parent_key"]


def added_text_column(
    table: str, column: str, length: int
) -> tuple[Callable[[], None], Callable[[], None]]:
    """``(upgrade, downgrade)`` of a revision that adds the optional text column ``column`` of
    at most ``length`` characters to ``table`` (empty in the rows already there), and drops it
    again (in batch mode, which SQLite needs to drop a column)."""

    def upgrade() -> None:
        op.add_column(table, sa.Column(column, sa.String(length), nullable=True))

    def downgrade() -> None:
        with op.batch_alter_table(table) as batch:
            batch.drop_column(column)

    return upgrade, downgrade
