"""Rating surveys: surveys, their pairs, raters (token hashes only), queues and answers.

Revision ID: surveys
Revises: grid_arrays
"""

import sqlalchemy as sa
from alembic import op

from ranking_core.migrations.columns import parent_key

revision = "surveys"
down_revision = "grid_arrays"


def upgrade() -> None:
    op.create_table(
        "surveys",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("organiser_hash", sa.String(64), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("instructions", sa.Text(), nullable=False),
        sa.Column("batches", sa.Integer(), nullable=False),
    )
    op.create_table(
        "survey_pairs",
        sa.Column("id", sa.Integer(), primary_key=True),
        parent_key("survey_id", "surveys", nullable=False, index=True),
        sa.Column("batch", sa.Integer(), nullable=False),
        sa.Column("reference", sa.Float(), nullable=False),
        sa.Column("estimate", sa.Float(), nullable=False),
        sa.Column("expected", sa.String(16), nullable=True),
    )
    op.create_table(
        "survey_raters",
        sa.Column("id", sa.Integer(), primary_key=True),
        parent_key("survey_id", "surveys", nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("invited", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("survey_id", "name", name="uq_survey_raters_name"),
    )
    op.create_table(
        "survey_queue",
        parent_key("rater_id", "survey_raters", primary_key=True),
        sa.Column("position", sa.Integer(), primary_key=True),
        parent_key("pair_id", "survey_pairs", nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("batch", sa.Integer(), nullable=False),
    )
    op.create_table(
        "survey_answers",
        parent_key("rater_id", "survey_raters", primary_key=True),
        sa.Column("position", sa.Integer(), primary_key=True),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("first_answered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    for table in ("survey_answers", "survey_queue", "survey_raters", "survey_pairs", "surveys"):
        op.drop_table(table)
