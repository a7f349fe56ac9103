"""A survey's progress from its answers, in plain Python (no NumPy or pandas: ``riskgrid survey
status`` starts at once): per rater the answers given and queued, the median time between
answers, test-retest agreement and check pairs (:func:`rater_progress_rows`), whether a batch is
answered (:func:`batch_answered_rows`) and the survey's state as plain data (:func:`status`).

Each function reads answer rows with the fields of
:data:`~ranking_core.surveys.tables.ANSWER_COLUMNS` as attributes: the database rows of
:meth:`SurveyStore.answer_rows <ranking_core.surveys.storage.SurveyStore.answer_rows>` (rating
None where not answered) or a frame's ``itertuples()`` (rating NaN);
:mod:`~ranking_core.surveys.results` gives the same figures as frames for the pages.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from ranking_core.surveys.design import check_passed

if TYPE_CHECKING:
    from ranking_core.surveys.storage import SurveyStore

__all__ = [
    "PROGRESS_COLUMNS",
    "RETEST_TOLERANCE",
    "answered",
    "batch_answered_rows",
    "rater_progress_rows",
    "status",
]

RETEST_TOLERANCE = 0.5  # a repeat agrees when it differs by at most this (one answer step)
PROGRESS_COLUMNS = (
    "rater",
    "answered",
    "queued",
    "seconds_per_answer",
    "repeats",
    "retest_agreement",
    "retest_difference",
    "checks_answered",
    "checks_passed",
    "revoked",
)


def answered(rating: float | None) -> bool:
    """Whether a queue place holds an answer (its rating is neither None nor NaN)."""
    return rating is not None and not math.isnan(rating)


def _retest(done: Sequence[Any]) -> tuple[int, float, float]:
    """(repeats answered, share within one step, mean |difference|) of one rater's answers."""
    first = {row.pair_id: row.rating for row in done if row.role == "pair"}
    again = {row.pair_id: row.rating for row in done if row.role == "repeat"}
    differences = [abs(rating - first[pair]) for pair, rating in again.items() if pair in first]
    if not differences:
        return 0, math.nan, math.nan
    within = sum(d <= RETEST_TOLERANCE for d in differences)
    return len(differences), within / len(differences), statistics.fmean(differences)


def _rater_progress(rater: str, queue: Sequence[Any]) -> dict[str, Any]:
    """One rater's row of :func:`rater_progress_rows` from their queue places."""
    done = [row for row in queue if answered(row.rating)]
    times = sorted(row.first_answered_at for row in done)
    gaps = [(later - earlier).total_seconds() for earlier, later in pairwise(times)]
    repeats, agreement, difference = _retest(done)
    checks = [row for row in done if row.role == "check"]
    return {
        "rater": rater,
        "answered": len(done),
        "queued": len(queue),
        "seconds_per_answer": statistics.median(gaps) if gaps else math.nan,
        "repeats": repeats,
        "retest_agreement": agreement,
        "retest_difference": difference,
        "checks_answered": len(checks),
        "checks_passed": sum(check_passed(row.expected, row.rating) for row in checks),
        "revoked": bool(queue[0].revoked),
    }


def rater_progress_rows(rows: Iterable[Any]) -> list[dict[str, Any]]:
    """One dict per rater (in order of their first row), keyed by :data:`PROGRESS_COLUMNS`:
    answered, queued, seconds_per_answer (median time between answers, s), repeats (answered
    twice), retest_agreement (share of repeats within :data:`RETEST_TOLERANCE` of the first
    answer), retest_difference (mean |difference|), checks_answered, checks_passed, revoked;
    NaN where a figure has no answers to come from."""
    by_rater: dict[str, list[Any]] = {}
    for row in rows:
        by_rater.setdefault(row.rater, []).append(row)
    return [_rater_progress(rater, queue) for rater, queue in by_rater.items()]


def batch_answered_rows(rows: Iterable[Any], batch: int) -> bool:
    """Whether every active rater has answered every pair of ``batch`` in their queue (and
    there is at least one answer in it)."""
    places = [row for row in rows if row.batch == batch and not row.revoked]
    return bool(places) and all(answered(row.rating) for row in places)


def _number(value: float) -> float | None:
    return None if math.isnan(value) else round(float(value), 3)


def status(surveys: SurveyStore, name: str) -> dict:
    """The survey's state as plain data (the ``riskgrid survey status`` JSON): open or closed,
    batches, unit, range, pairs asked, answers and queue places, whether the last batch is
    answered, and per invited rater their progress (:func:`rater_progress_rows`)."""
    survey = surveys.get(name)
    rows = surveys.answer_rows(name)
    by_rater = {progress["rater"]: progress for progress in rater_progress_rows(rows)}
    raters = []
    for rater in surveys.rater_rows(name):
        progress = by_rater.get(rater.name, {})
        raters.append(
            {
                "rater": rater.name,
                "revoked": bool(rater.revoked),
                "answered": int(progress.get("answered", 0)),
                "queued": int(progress.get("queued", 0)),
                "seconds_per_answer": _number(progress.get("seconds_per_answer", math.nan)),
                "retest_agreement": _number(progress.get("retest_agreement", math.nan)),
                "checks_passed": int(progress.get("checks_passed", 0)),
                "checks_answered": int(progress.get("checks_answered", 0)),
            }
        )
    return {
        "survey": survey.name,
        "open": survey.is_open,
        "batches": survey.batches,
        "unit": survey.settings.unit,
        "range_mg_dl": list(survey.settings.glucose_range),
        "pairs_asked": len({row.pair_id for row in rows}),
        "answers": sum(answered(row.rating) for row in rows),
        "queued": len(rows),
        "last_batch_answered": batch_answered_rows(rows, survey.batches - 1),
        "raters": raters,
    }
