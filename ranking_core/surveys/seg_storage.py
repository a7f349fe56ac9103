"""SEG-method surveys in the records database: creating one with its scenarios, editing the
scenarios before the first answer, saving each rater's thresholds and risk matrix per scenario
as they go, and what the organiser reads (progress, flags, the two export tables).

Every function takes a :class:`~ranking_core.surveys.storage.SurveyStore` and keeps its rules:
the survey belongs to its owner (a store acting for a signed-in user opens only theirs), a
rater's link works whoever owns it, and a closed survey or a revoked link takes no answer. Every
write is one short transaction committed before the call returns; saving the same (rater,
scenario) again updates its one row (``INSERT … ON CONFLICT``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import delete, func, insert, select
from sqlalchemy.dialects import postgresql, sqlite

from ranking_core.storage import check_record_name
from ranking_core.surveys.design import SurveySettings, new_token
from ranking_core.surveys.seg_method import (
    ACTIONS,
    SEG_METHOD,
    Flag,
    Scenario,
    check_matrix,
    check_scenarios,
    check_thresholds,
    consistency_flags,
    export_frames,
    matrix_rows,
    threshold_rows,
)
from ranking_core.surveys.seg_tables import SCENARIOS, SEG_MATRICES, SEG_THRESHOLDS
from ranking_core.surveys.storage import SurveyStore, check_open_for_answers
from ranking_core.surveys.tables import (
    RATERS,
    SURVEYS,
    RaterAccess,
    Survey,
    SurveyError,
    _aware,
    _now,
    check_instructions,
)

__all__ = [
    "SegAnswer",
    "SegRow",
    "StoredScenario",
    "create_seg_survey",
    "default_seg_instructions",
    "rater_answers",
    "save_matrix",
    "save_thresholds",
    "seg_answers",
    "seg_export",
    "seg_status",
    "set_scenarios",
    "stored_scenarios",
]


@dataclass(frozen=True)
class StoredScenario:
    """A scenario as stored: its id, its place (0, 1, …) and its words."""

    id: int
    position: int
    name: str
    description: str
    insulin: bool

    @property
    def scenario(self) -> Scenario:
        return Scenario(self.name, self.description, self.insulin)


@dataclass(frozen=True)
class SegAnswer:
    """A rater's answers for one scenario: the cut points (whole mg/dL, A..D) and the 5 × 5
    matrix (rows measured A..E, columns actual A..E), None where not given yet."""

    thresholds: tuple[int, ...] | None = None
    matrix: np.ndarray | None = None
    thresholds_at: datetime | None = None
    matrix_at: datetime | None = None

    @property
    def done(self) -> bool:
        return self.thresholds is not None and self.matrix is not None


def default_seg_instructions(unit: str) -> str:
    """The instructions raters see when the organiser gives none (plain text)."""
    return (
        "For each patient scenario, first give the glucose ranges in which you would take "
        "each of five actions: the highest glucose at which you would take A (emergency "
        "treatment of a low), B (oral glucose), C (no action) and D (insulin, or exercise and "
        f"eat less), in {unit}; E (emergency treatment of a high) runs up to 600 mg/dL. Then "
        "score the risk, from 1 (none) to 9 (extreme), of a patient acting when the meter's "
        "reading lies in one action's range while the true glucose lies in another's. Your "
        "answers are saved as you go: you can stop and come back to this link at any time."
    )


def _scenario_rows(survey_id: int, scenarios: Sequence[Scenario]) -> list[dict[str, Any]]:
    return [
        {
            "survey_id": survey_id,
            "position": p,
            "name": s.name,
            "description": s.description,
            "insulin": s.insulin,
        }
        for p, s in enumerate(scenarios)
    ]


def create_seg_survey(
    surveys: SurveyStore,
    name: str,
    scenarios: Sequence[Scenario],
    settings: SurveySettings,
    instructions: str = "",
) -> tuple[Survey, str]:
    """Store a new SEG-method survey (owned by the user ``surveys`` acts for) with its
    scenarios; returns the survey and the organiser's token (shown once)."""
    name = check_record_name(name, "survey")
    instructions = check_instructions(instructions or default_seg_instructions(settings.unit))
    try:
        kept = check_scenarios(scenarios)
    except ValueError as exc:
        raise SurveyError(str(exc)) from None
    token = new_token()
    with surveys._write(f"creating survey {name!r}", name) as conn:
        survey_id = surveys.insert_survey(
            conn, name, token, settings, instructions, method=SEG_METHOD
        )
        conn.execute(insert(SCENARIOS), _scenario_rows(survey_id, kept))
    return surveys.get(name), token


def _seg_survey(surveys: SurveyStore, name: str) -> Survey:
    survey = surveys.get(name)  # there, and the user's
    if survey.method != SEG_METHOD:
        raise SurveyError(f"survey {name!r} asks for rated pairs, not the SEG's method")
    return survey


def stored_scenarios(surveys: SurveyStore, survey: Survey) -> list[StoredScenario]:
    """The survey's scenarios in order (for a survey already opened: by link or by name)."""
    with surveys._read(f"reading the scenarios of survey {survey.name!r}") as conn:
        rows = conn.execute(
            select(
                SCENARIOS.c.id,
                SCENARIOS.c.position,
                SCENARIOS.c.name,
                SCENARIOS.c.description,
                SCENARIOS.c.insulin,
            )
            .where(SCENARIOS.c.survey_id == survey.id)
            .order_by(SCENARIOS.c.position)
        ).all()
    return [StoredScenario(r.id, r.position, r.name, r.description, bool(r.insulin)) for r in rows]


def _answer_count(conn: Any, survey_id: int) -> int:
    total = 0
    for table in (SEG_THRESHOLDS, SEG_MATRICES):
        total += int(
            conn.scalar(
                select(func.count())
                .select_from(table.join(SCENARIOS, SCENARIOS.c.id == table.c.scenario_id))
                .where(SCENARIOS.c.survey_id == survey_id)
            )
            or 0
        )
    return total


def set_scenarios(surveys: SurveyStore, name: str, scenarios: Sequence[Scenario]) -> None:
    """Replace the survey's scenarios; refused once any rater has saved an answer (the
    answers would lose the scenario they were given for)."""
    survey = _seg_survey(surveys, name)
    try:
        kept = check_scenarios(scenarios)
    except ValueError as exc:
        raise SurveyError(str(exc)) from None
    with surveys._write(f"changing the scenarios of survey {name!r}", name) as conn:
        if _answer_count(conn, survey.id):
            raise SurveyError(
                f"survey {name!r} has answers already; its scenarios can be changed only "
                "before the first answer"
            )
        conn.execute(delete(SCENARIOS).where(SCENARIOS.c.survey_id == survey.id))
        conn.execute(insert(SCENARIOS), _scenario_rows(survey.id, kept))


def _upsert(surveys: SurveyStore, table: Any, values: dict[str, Any], changed: dict[str, Any]):
    dialect = {"sqlite": sqlite, "postgresql": postgresql}.get(surveys.store.dialect)
    if dialect is None:
        raise SurveyError(f"surveys need SQLite or PostgreSQL, not {surveys.store.dialect}")
    statement = dialect.insert(table).values(**values)
    return statement.on_conflict_do_update(
        index_elements=[table.c.rater_id, table.c.scenario_id], set_=changed
    )


def _save(
    surveys: SurveyStore, access: RaterAccess, scenario_id: int, table: Any, answer: dict
) -> None:
    """Store (or change) one answer of the rater for a scenario of their survey, committed on
    return; refused when the survey was closed or the link revoked meanwhile."""
    now = _now()
    values = {"rater_id": access.rater_id, "scenario_id": int(scenario_id), **answer}
    statement = _upsert(
        surveys,
        table,
        {**values, "first_answered_at": now, "answered_at": now},
        {**answer, "answered_at": now},
    )
    check = (
        select(RATERS.c.revoked_at, SURVEYS.c.closed_at, SCENARIOS.c.id.label("scenario"))
        .join(SURVEYS, SURVEYS.c.id == RATERS.c.survey_id)
        .outerjoin(
            SCENARIOS,
            (SCENARIOS.c.survey_id == SURVEYS.c.id) & (SCENARIOS.c.id == int(scenario_id)),
        )
        .where(RATERS.c.id == access.rater_id)
    )
    with surveys._write("saving an answer", f"{access.survey.name}/{access.rater_id}") as conn:
        row = check_open_for_answers(conn.execute(check).first())
        if row.scenario is None:
            raise SurveyError(f"scenario {scenario_id} is not in this rater's survey")
        conn.execute(statement)


def save_thresholds(
    surveys: SurveyStore,
    access: RaterAccess,
    scenario_id: int,
    values: Sequence[float | None],
    unit: str | None = None,
) -> tuple[int, ...]:
    """Check the four cut points given in ``unit`` (default: the survey's) and store them in
    whole mg/dL; returns them. ValueError (the rule) for a bad value."""
    cuts = check_thresholds(values, unit or access.survey.settings.unit)
    answer = dict(zip(("a_max", "b_max", "c_max", "d_max"), cuts, strict=True))
    _save(surveys, access, scenario_id, SEG_THRESHOLDS, answer)
    return cuts


def save_matrix(
    surveys: SurveyStore, access: RaterAccess, scenario_id: int, scores: Sequence[Sequence]
) -> np.ndarray:
    """Check and store the 5 × 5 risk matrix; returns it (ValueError naming the cells)."""
    matrix = check_matrix(scores)
    answer = {"scores": [int(v) for v in matrix.ravel()]}
    _save(surveys, access, scenario_id, SEG_MATRICES, answer)
    return matrix


def _answers_query(survey_id: int, rater_id: int | None = None):
    query = (
        select(
            RATERS.c.name.label("rater"),
            RATERS.c.revoked_at.isnot(None).label("revoked"),
            SCENARIOS.c.id.label("scenario_id"),
            SCENARIOS.c.position,
            SCENARIOS.c.name.label("scenario"),
            SEG_THRESHOLDS.c.a_max,
            SEG_THRESHOLDS.c.b_max,
            SEG_THRESHOLDS.c.c_max,
            SEG_THRESHOLDS.c.d_max,
            SEG_THRESHOLDS.c.answered_at.label("thresholds_at"),
            SEG_MATRICES.c.scores,
            SEG_MATRICES.c.answered_at.label("matrix_at"),
        )
        .join(SCENARIOS, SCENARIOS.c.survey_id == RATERS.c.survey_id)
        .outerjoin(
            SEG_THRESHOLDS,
            (SEG_THRESHOLDS.c.rater_id == RATERS.c.id)
            & (SEG_THRESHOLDS.c.scenario_id == SCENARIOS.c.id),
        )
        .outerjoin(
            SEG_MATRICES,
            (SEG_MATRICES.c.rater_id == RATERS.c.id)
            & (SEG_MATRICES.c.scenario_id == SCENARIOS.c.id),
        )
        .where(RATERS.c.survey_id == survey_id)
        .order_by(RATERS.c.invited, SCENARIOS.c.position)
    )
    return query if rater_id is None else query.where(RATERS.c.id == rater_id)


def _answer(row: Any) -> SegAnswer:
    cuts = None if row.a_max is None else (row.a_max, row.b_max, row.c_max, row.d_max)
    matrix = None if row.scores is None else np.asarray(row.scores, np.int64).reshape(5, 5)
    return SegAnswer(cuts, matrix, _aware(row.thresholds_at), _aware(row.matrix_at))


def rater_answers(surveys: SurveyStore, access: RaterAccess) -> dict[int, SegAnswer]:
    """The rater's answers so far by scenario id (every scenario present)."""
    with surveys._read("reading a rater's answers") as conn:
        rows = conn.execute(_answers_query(access.survey.id, access.rater_id)).all()
    return {r.scenario_id: _answer(r) for r in rows}


@dataclass(frozen=True)
class SegRow:
    """One rater's answers for one scenario, as the organiser reads them; ``flags`` is None
    without a matrix."""

    rater: str
    revoked: bool
    scenario: str
    position: int
    answer: SegAnswer
    flags: list[Flag] | None


def seg_answers(surveys: SurveyStore, name: str) -> list[SegRow]:
    """One row per (rater, scenario), raters in order of invitation, scenarios in order."""
    survey = _seg_survey(surveys, name)
    with surveys._read(f"reading the answers of survey {name!r}") as conn:
        rows = conn.execute(_answers_query(survey.id)).all()
    found = []
    for r in rows:
        answer = _answer(r)
        flags = None if answer.matrix is None else consistency_flags(answer.matrix)
        found.append(SegRow(r.rater, bool(r.revoked), r.scenario, r.position, answer, flags))
    return found


def seg_export(surveys: SurveyStore, name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``thresholds.csv`` (rater, scenario, action, max: whole mg/dL, A..D) and ``matrix.csv``
    (rater, scenario, measured, actual, score: all 25 cells, the diagonal 1) of every answer
    saved, by rater and scenario."""
    thresholds: list[tuple] = []
    matrices: list[tuple] = []
    for row in seg_answers(surveys, name):
        if row.answer.thresholds is not None:
            thresholds += threshold_rows(row.rater, row.scenario, row.answer.thresholds)
        if row.answer.matrix is not None:
            matrices += matrix_rows(row.rater, row.scenario, row.answer.matrix)
    first, second = export_frames(thresholds, matrices)
    return first, second


def seg_status(surveys: SurveyStore, name: str) -> dict:
    """The survey's state as plain data (``riskgrid survey status`` for a SEG-method survey):
    per rater the scenarios with thresholds, with a matrix, complete, and the flags raised."""
    survey = _seg_survey(surveys, name)
    rows = seg_answers(surveys, name)
    scenarios = stored_scenarios(surveys, survey)
    raters = surveys.raters(name)
    per_rater = []
    for rater, revoked in zip(raters["rater"], raters["revoked"], strict=True):
        mine = [row for row in rows if row.rater == rater]
        answers = [row.answer for row in mine]
        per_rater.append(
            {
                "rater": str(rater),
                "revoked": bool(revoked),
                "thresholds": sum(a.thresholds is not None for a in answers),
                "matrices": sum(a.matrix is not None for a in answers),
                "complete": sum(a.done for a in answers),
                "scenarios": len(scenarios),
                "flags": sum(len(row.flags or ()) for row in mine),
            }
        )
    return {
        "survey": survey.name,
        "method": SEG_METHOD,
        "open": survey.is_open,
        "unit": survey.settings.unit,
        "scenarios": [s.name for s in scenarios],
        "actions": list(ACTIONS),
        "complete": sum(r["complete"] for r in per_rater),
        "asked": len(scenarios) * len(per_rater),
        "raters": per_rater,
    }
