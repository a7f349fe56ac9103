"""SEG-method surveys: a survey's method (rated pairs, the default, or the SEG's scenarios,
thresholds and risk matrices), its scenarios, and each rater's thresholds and matrix per
scenario. Existing surveys become pairs surveys; nothing stored is changed.

Revision ID: seg_method
Revises: survey_owner
"""

import sqlalchemy as sa
from alembic import op

revision = "seg_method"
down_revision = "survey_owner"
branch_labels = None
depends_on = None


def _answer_keys() -> list[sa.Column]:
    return [
        sa.Column(
            "rater_id",
            sa.Integer(),
            sa.ForeignKey("survey_raters.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "scenario_id",
            sa.Integer(),
            sa.ForeignKey("seg_scenarios.id", ondelete="CASCADE"),
            primary_key=True,
        ),
    ]


def upgrade() -> None:
    op.add_column(
        "surveys",
        sa.Column("method", sa.String(16), nullable=False, server_default="pairs"),
    )
    op.create_table(
        "seg_scenarios",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "survey_id",
            sa.Integer(),
            sa.ForeignKey("surveys.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(80), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("insulin", sa.Boolean(), nullable=False),
        sa.UniqueConstraint("survey_id", "position", name="uq_seg_scenarios_position"),
    )
    op.create_table(
        "seg_thresholds",
        *_answer_keys(),
        sa.Column("a_max", sa.Integer(), nullable=False),
        sa.Column("b_max", sa.Integer(), nullable=False),
        sa.Column("c_max", sa.Integer(), nullable=False),
        sa.Column("d_max", sa.Integer(), nullable=False),
        sa.Column("first_answered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "seg_matrices",
        *_answer_keys(),
        sa.Column("scores", sa.JSON(), nullable=False),
        sa.Column("first_answered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    for table in ("seg_matrices", "seg_thresholds", "seg_scenarios"):
        op.drop_table(table)
    with op.batch_alter_table("surveys") as batch:
        batch.drop_column("method")
