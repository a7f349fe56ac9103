"""The record store as first released: records (kind, name, time, JSON summary) and their blobs.

Revision ID: initial
Revises:
"""

import sqlalchemy as sa
from alembic import op

from ranking_core.migrations.columns import parent_key

revision = "initial"
down_revision = None


def upgrade() -> None:
    op.create_table(
        "records",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("meta", sa.JSON(), nullable=False),
        sa.UniqueConstraint("kind", "name", name="uq_records_kind_name"),
    )
    op.create_table(
        "blobs",
        sa.Column("id", sa.Integer(), primary_key=True),
        parent_key("record_id", "records", nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        sa.UniqueConstraint("record_id", "key", name="uq_blobs_record_key"),
    )


def downgrade() -> None:
    op.drop_table("blobs")
    op.drop_table("records")
