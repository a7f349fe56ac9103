"""The tables of SEG-method surveys (created by the Alembic revision ``seg_method``): each
survey's scenarios, and per rater and scenario the action thresholds and the risk matrix
(one row each; saving again updates that row, so an answer is never stored twice).

A SEG-method survey is a row of ``surveys`` with ``method`` = ``"seg"``; deleting the survey,
a rater or a scenario deletes their answers with them (foreign keys with ``ON DELETE CASCADE``).
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from ranking_core.storage import METADATA
from ranking_core.storage.schema import parent_key

__all__ = ["SCENARIOS", "SEG_MATRICES", "SEG_THRESHOLDS"]

SCENARIOS = Table(
    "seg_scenarios",
    METADATA,
    Column("id", Integer, primary_key=True),
    parent_key("survey_id", "surveys", nullable=False, index=True),
    Column("position", Integer, nullable=False),  # 0, 1, … in the order raters see them
    Column("name", String(80), nullable=False),
    Column("description", Text, nullable=False),
    Column("insulin", Boolean, nullable=False),  # False: action D is "exercise and eat less"
    UniqueConstraint("survey_id", "position", name="uq_seg_scenarios_position"),
)


def _answer_keys() -> list[Column]:
    return [
        parent_key("rater_id", "survey_raters", primary_key=True),
        parent_key("scenario_id", "seg_scenarios", primary_key=True),
    ]


SEG_THRESHOLDS = Table(
    "seg_thresholds",
    METADATA,
    *_answer_keys(),
    # the highest glucose (whole mg/dL) at which the rater takes action A, B, C, D
    Column("a_max", Integer, nullable=False),
    Column("b_max", Integer, nullable=False),
    Column("c_max", Integer, nullable=False),
    Column("d_max", Integer, nullable=False),
    Column("first_answered_at", DateTime(timezone=True), nullable=False),
    Column("answered_at", DateTime(timezone=True), nullable=False),
)
SEG_MATRICES = Table(
    "seg_matrices",
    METADATA,
    *_answer_keys(),
    # 25 whole scores 1..9, row by row: measured action A..E, then actual action A..E
    Column("scores", JSON, nullable=False),
    Column("first_answered_at", DateTime(timezone=True), nullable=False),
    Column("answered_at", DateTime(timezone=True), nullable=False),
)
