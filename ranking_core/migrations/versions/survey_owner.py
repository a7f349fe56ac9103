"""Each survey belongs to someone: the signed-in user who created it (empty: the operator, from
the command line or a dashboard without a login). Surveys made before are the operator's.

Revision ID: survey_owner
Revises: surveys
"""

import sqlalchemy as sa
from alembic import op

revision = "survey_owner"
down_revision = "surveys"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("surveys", sa.Column("owner", sa.String(320), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("surveys") as batch:
        batch.drop_column("owner")
