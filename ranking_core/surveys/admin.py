"""Managing stored surveys: list them, delete one with everything it holds, give it a new
organiser link, and read what its raters cover of the start design.

Each function takes a :class:`~ranking_core.surveys.storage.SurveyStore` and so acts for the
store's user: the operator (``by`` None: the command line) may list and change every survey, a
signed-in user only the surveys they created (:meth:`SurveyStore.get
<ranking_core.surveys.storage.SurveyStore.get>` refuses another's). Every change is one
transaction of the records database: a survey is deleted whole (answers, queues, raters, pairs,
links) or not at all, and a new organiser token replaces the old one's hash in the same write
(the old link stops working at once; only the new token's SHA-256 is stored).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, select, union_all, update

from ranking_core.surveys.coverage import Coverage, coverage
from ranking_core.surveys.design import new_token, token_hash
from ranking_core.surveys.seg_tables import SCENARIOS, SEG_MATRICES, SEG_THRESHOLDS
from ranking_core.surveys.storage import SurveyError, SurveyStore
from ranking_core.surveys.tables import ANSWERS, PAIRS, QUEUE, RATERS, SURVEYS, Survey, _aware

__all__ = [
    "DEFAULT_METHOD",
    "MAX_LISTED",
    "SurveySummary",
    "delete_survey",
    "new_organiser_token",
    "survey_count",
    "survey_coverage",
    "survey_summaries",
]

MAX_LISTED = 1_000  # surveys listed at once (the oldest first); the rest are counted
DEFAULT_METHOD = "pairs"  # a survey whose settings name no method: raters rate (ref, meter) pairs


@dataclass(frozen=True)
class SurveySummary:
    """One line of the survey list.

    Attributes
    ----------
    name, method : the survey's name and how it asks (``pairs`` or ``seg``).
    owner : the signed-in user who created it; None: the operator.
    created_at : when it was created (UTC).
    raters : raters invited (revoked ones included).
    answers : answers stored.
    is_open : whether its links still take answers.
    """

    name: str
    method: str
    owner: str | None
    created_at: datetime
    raters: int
    answers: int
    is_open: bool

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "method": self.method,
            "owner": self.owner,
            "created_at": self.created_at.isoformat(),
            "raters": self.raters,
            "answers": self.answers,
            "open": self.is_open,
        }


def _visible(surveys: SurveyStore):
    query = select(SURVEYS)
    return query if surveys.by is None else query.where(SURVEYS.c.owner == surveys.by)


def survey_count(surveys: SurveyStore) -> int:
    """How many surveys the store's user may see."""
    query = select(func.count()).select_from(_visible(surveys).subquery())
    with surveys._read("counting the surveys") as conn:
        return int(conn.scalar(query) or 0)


def survey_summaries(surveys: SurveyStore, limit: int = MAX_LISTED) -> list[SurveySummary]:
    """The surveys the store's user may see, oldest first, at most ``limit`` of them, each with
    its counts of raters and answers (one statement)."""
    raters = (
        select(RATERS.c.survey_id, func.count().label("raters"))
        .group_by(RATERS.c.survey_id)
        .subquery()
    )
    # an answer: a rated pair, or a SEG-method scenario's thresholds or matrix
    answered = union_all(
        select(ANSWERS.c.rater_id),
        select(SEG_THRESHOLDS.c.rater_id),
        select(SEG_MATRICES.c.rater_id),
    ).subquery()
    answers = (
        select(RATERS.c.survey_id, func.count().label("answers"))
        .join(answered, answered.c.rater_id == RATERS.c.id)
        .group_by(RATERS.c.survey_id)
        .subquery()
    )
    query = (
        select(
            SURVEYS.c.name,
            SURVEYS.c.method,
            SURVEYS.c.owner,
            SURVEYS.c.created_at,
            SURVEYS.c.closed_at,
            func.coalesce(raters.c.raters, 0),
            func.coalesce(answers.c.answers, 0),
        )
        .outerjoin(raters, raters.c.survey_id == SURVEYS.c.id)
        .outerjoin(answers, answers.c.survey_id == SURVEYS.c.id)
        .order_by(SURVEYS.c.id)
        .limit(max(0, int(limit)))
    )
    if surveys.by is not None:
        query = query.where(SURVEYS.c.owner == surveys.by)
    with surveys._read("listing the surveys") as conn:
        rows = conn.execute(query).all()
    return [
        SurveySummary(
            name=name,
            method=str(method or DEFAULT_METHOD),
            owner=owner,
            created_at=_aware(created),
            raters=int(n_raters),
            answers=int(n_answers),
            is_open=closed is None,
        )
        for name, method, owner, created, closed, n_raters, n_answers in rows
    ]


def delete_survey(surveys: SurveyStore, name: str) -> dict[str, int]:
    """Delete the survey ``name`` with its answers, queues, raters (their links) and pairs, in
    one transaction; returns what was deleted (raters, answers, pairs). :class:`SurveyError`
    when there is no such survey or it is not the store's user's."""
    survey = surveys.get(name)  # there, and the user's
    raters = select(RATERS.c.id).where(RATERS.c.survey_id == survey.id)
    with surveys._write(f"deleting survey {name!r}", name) as conn:
        if conn.scalar(select(SURVEYS.c.id).where(SURVEYS.c.id == survey.id)) is None:
            raise SurveyError(f"no survey named {name!r} is stored")
        answers = conn.execute(delete(ANSWERS).where(ANSWERS.c.rater_id.in_(raters))).rowcount
        for seg_answers in (SEG_THRESHOLDS, SEG_MATRICES):  # a SEG-method survey's answers
            answers += conn.execute(
                delete(seg_answers).where(seg_answers.c.rater_id.in_(raters))
            ).rowcount
        conn.execute(delete(SCENARIOS).where(SCENARIOS.c.survey_id == survey.id))
        conn.execute(delete(QUEUE).where(QUEUE.c.rater_id.in_(raters)))
        n_raters = conn.execute(delete(RATERS).where(RATERS.c.survey_id == survey.id)).rowcount
        pairs = conn.execute(delete(PAIRS).where(PAIRS.c.survey_id == survey.id)).rowcount
        conn.execute(delete(SURVEYS).where(SURVEYS.c.id == survey.id))
    return {"raters": int(n_raters), "answers": int(answers), "pairs": int(pairs)}


def new_organiser_token(surveys: SurveyStore, name: str) -> tuple[Survey, str]:
    """A new organiser token for the survey (returned once, with the survey); the old
    organiser link stops working in the same transaction. Refused for another user's survey."""
    survey = surveys.get(name)
    token = new_token()
    with surveys._write(f"renewing the organiser link of survey {name!r}", name) as conn:
        done = conn.execute(
            update(SURVEYS)
            .where(SURVEYS.c.id == survey.id)
            .values(organiser_hash=token_hash(token))
        )
        if done.rowcount == 0:
            raise SurveyError(f"no survey named {name!r} is stored")
    return survey, token


def survey_coverage(surveys: SurveyStore, name: str) -> Coverage:
    """What the survey's active (not revoked) raters cover of its start design
    (:mod:`~ranking_core.surveys.coverage`)."""
    survey = surveys.get(name)
    with surveys._read(f"reading the raters of survey {name!r}") as conn:
        n_pairs = int(
            conn.scalar(
                select(func.count()).where(
                    PAIRS.c.survey_id == survey.id, PAIRS.c.batch == 0, PAIRS.c.expected.is_(None)
                )
            )
            or 0
        )
        rows = conn.execute(
            select(RATERS.c.invited, RATERS.c.revoked_at.is_(None)).where(
                RATERS.c.survey_id == survey.id
            )
        ).all()
    active = [int(index) for index, is_active in rows if is_active]
    return coverage(n_pairs, survey.settings, active, next_index=len(rows))
