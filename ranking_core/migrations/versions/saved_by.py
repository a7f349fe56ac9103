"""Each record remembers who saved it (the signed-in user's e-mail or name; empty without login).

Revision ID: saved_by
Revises: initial
"""

import sqlalchemy as sa
from alembic import op

revision = "saved_by"
down_revision = "initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("records", sa.Column("saved_by", sa.String(320), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("records") as batch:
        batch.drop_column("saved_by")
