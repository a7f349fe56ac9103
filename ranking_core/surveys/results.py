"""What is computed from a survey's answers: progress per rater, test-retest agreement, check
answers (as frames, from :mod:`~ranking_core.surveys.progress`, which also gives the survey's
state), the export, the grid learned so far and the next batch.

Every function here takes the frame of :meth:`SurveyStore.answers
<ranking_core.surveys.storage.SurveyStore.answers>` (one row per queue place, rating NaN where
not answered yet) and nothing else from the database, except :func:`next_batch`, which adds the
batch it plans.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from ranking_core.panels.design import MIN_RATINGS
from ranking_core.surveys.design import MAX_PAIRS
from ranking_core.surveys.progress import (
    PROGRESS_COLUMNS,
    batch_answered_rows,
    rater_progress_rows,
)
from ranking_core.surveys.storage import SurveyError, SurveyStore

__all__ = [
    "EXPORT_COLUMNS",
    "PLAN_METHOD",
    "batch_answered",
    "export_frame",
    "fit_answers",
    "next_batch",
    "propose_batch",
    "rater_progress",
    "ratings_so_far",
]

EXPORT_COLUMNS = ("reference", "estimate", "rating", "rater", "answered_at", "role")
# the planner's method that won in plan-panel's measurements (benchmarks/panels.py, design)
PLAN_METHOD = "imse"


def _answered(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["rating"].notna()]


def export_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The answers as a rating set: reference, estimate (mg/dL), rating, rater, answered_at
    (ISO 8601, UTC) and role (pair, repeat or check), by rater and queue position."""
    done = _answered(frame)
    out = done[["reference", "estimate", "rating", "rater"]].copy()
    out["answered_at"] = done["answered_at"].dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    out["role"] = done["role"]
    return out.reset_index(drop=True)


def ratings_so_far(frame: pd.DataFrame) -> pd.DataFrame:
    """Every answer as a rating (reference, estimate, rating, rater), for learning."""
    return _answered(frame)[["reference", "estimate", "rating", "rater"]].reset_index(drop=True)


def rater_progress(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per rater: answered, queued, seconds_per_answer (median time between answers),
    repeats (answered twice), retest_agreement (share of repeats within 0.5 of the first answer),
    retest_difference (mean |difference|), checks_answered, checks_passed, revoked
    (:func:`~ranking_core.surveys.progress.rater_progress_rows`, as a frame)."""
    rows = rater_progress_rows(frame.itertuples(index=False))
    return pd.DataFrame(rows, columns=list(PROGRESS_COLUMNS))


def batch_answered(frame: pd.DataFrame, batch: int) -> bool:
    """Whether every active rater has answered every pair of ``batch`` in their queue (and
    there is at least one answer in it; :func:`~ranking_core.surveys.progress.
    batch_answered_rows`)."""
    return batch_answered_rows(frame.itertuples(index=False), batch)


def fit_answers(frame: pd.DataFrame, progress: Callable[[int, int], None] | None = None):
    """The robust fit (:func:`ranking_core.learn.learn_panel`, default robust recipe) of the
    answers so far, or None with fewer than 10 answers or a single distinct rating."""
    from ranking_core.learn import learn_panel

    ratings = ratings_so_far(frame)
    if len(ratings) < MIN_RATINGS or ratings["rating"].nunique() < 2:
        return None
    return learn_panel(ratings, progress=progress)


def propose_batch(
    frame: pd.DataFrame, k: int, glucose_range: tuple[float, float], seed: int, fit=None
) -> pd.DataFrame:
    """The next k pairs (reference, estimate, whole mg/dL) by the planner's :data:`PLAN_METHOD`
    from the answers so far (``fit``: their :func:`fit_answers`, computed if not given),
    inside the range and different from every pair the survey asked already; the start design
    while fewer than 10 answers exist."""
    from ranking_core.panels import plan_pairs

    fit = fit_answers(frame) if fit is None else fit
    asked = frame[["reference", "estimate"]].drop_duplicates()
    if fit is None:  # too few answers to learn from: more of the space-filling design
        pairs = plan_pairs(None, k + len(asked), seed=seed, glucose_range=glucose_range)
    else:
        pairs = plan_pairs(
            asked, k, seed=seed, method=PLAN_METHOD, model=fit.model, glucose_range=glucose_range
        )
    seen = set(map(tuple, asked.to_numpy().round().tolist()))
    fresh = [tuple(p) not in seen for p in pairs[["reference", "estimate"]].to_numpy().tolist()]
    return pairs.loc[fresh, ["reference", "estimate"]].head(k).reset_index(drop=True)


def next_batch(
    surveys: SurveyStore,
    name: str,
    k: int | None = None,
    *,
    force: bool = False,
    progress: Callable[[int, int], None] | None = None,
    added: dict | None = None,
) -> int | None:
    """Plan and add the next batch of ``k`` pairs (default: the survey's batch size) when the
    last batch is answered (or at once with ``force``); the number of batches afterwards, or
    None when nothing was added (not answered yet, or adaptive batches off and no ``k``).
    Safe to call from several places at once: a batch is added once. ``added``, when given,
    is filled by the database's transaction when this call added the batch (batch, pairs,
    raters) and left empty when another call added it first
    (:meth:`~ranking_core.surveys.storage.SurveyStore.append_batch`)."""
    survey = surveys.get(name)
    k = survey.settings.batch if k is None else int(k)
    if k > MAX_PAIRS:
        raise SurveyError(f"a batch holds at most {MAX_PAIRS:,} pairs; got {k:,}")
    if k < 1:
        if force:
            raise SurveyError("the batch size must be at least 1")
        return None
    frame = surveys.answers(name)
    if not force and not batch_answered(frame, survey.batches - 1):
        return None
    fit = fit_answers(frame, progress=progress)
    pairs = propose_batch(
        frame, k, survey.settings.glucose_range, seed=survey.settings.seed + survey.batches, fit=fit
    )
    if pairs.empty:
        raise SurveyError("the planner found no new pair inside the survey's range")
    return surveys.append_batch(name, pairs, survey.batches, added=added)
