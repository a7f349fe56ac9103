"""What is computed from a survey's answers: progress per rater, test-retest agreement, check
answers, the export, the grid learned so far and the next batch.

Every function here takes the frame of :meth:`SurveyStore.answers
<ranking_core.surveys.storage.SurveyStore.answers>` (one row per queue place, rating NaN where
not answered yet) and nothing else from the database, except :func:`next_batch`, which adds the
batch it plans.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ranking_core.panels.design import MIN_RATINGS
from ranking_core.surveys.design import MAX_PAIRS, check_passed
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
    "status",
]

EXPORT_COLUMNS = ("reference", "estimate", "rating", "rater", "answered_at", "role")
# the planner's method that won in plan-panel's measurements (benchmarks/panels.py, design)
PLAN_METHOD = "imse"
RETEST_TOLERANCE = 0.5  # a repeat agrees when it differs by at most this (one answer step)


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


def _retest(group: pd.DataFrame) -> tuple[int, float, float]:
    """(repeats answered, share within one step, mean |difference|) of one rater."""
    done = group[group["rating"].notna()]
    first = done[done["role"] == "pair"].set_index("pair_id")["rating"]
    again = done[done["role"] == "repeat"].set_index("pair_id")["rating"]
    both = again.index.intersection(first.index)
    if not len(both):
        return 0, float("nan"), float("nan")
    difference = np.abs(again.loc[both].to_numpy() - first.loc[both].to_numpy())
    return len(both), float(np.mean(difference <= RETEST_TOLERANCE)), float(difference.mean())


def rater_progress(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per rater: answered, queued, seconds_per_answer (median time between answers),
    repeats (answered twice), retest_agreement (share of repeats within 0.5 of the first answer),
    retest_difference (mean |difference|), checks_answered, checks_passed, revoked."""
    rows = []
    for rater, group in frame.groupby("rater", sort=False):
        done = group[group["rating"].notna()]
        times = np.sort(done["first_answered_at"].to_numpy(dtype="datetime64[ns]"))
        gaps = np.diff(times) / np.timedelta64(1, "s")
        repeats, agreement, difference = _retest(group)
        checks = done[done["role"] == "check"]
        passed = sum(
            check_passed(x, r) for x, r in zip(checks["expected"], checks["rating"], strict=True)
        )
        rows.append(
            {
                "rater": rater,
                "answered": len(done),
                "queued": len(group),
                "seconds_per_answer": float(np.median(gaps)) if len(gaps) else float("nan"),
                "repeats": repeats,
                "retest_agreement": agreement,
                "retest_difference": difference,
                "checks_answered": len(checks),
                "checks_passed": int(passed),
                "revoked": bool(group["revoked"].iloc[0]),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
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
        ],
    )


def batch_answered(frame: pd.DataFrame, batch: int) -> bool:
    """Whether every active rater has answered every pair of ``batch`` in their queue (and
    there is at least one answer in it)."""
    rows = frame[(frame["batch"] == batch) & ~frame["revoked"]]
    return bool(len(rows)) and bool(rows["rating"].notna().all())


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


def status(surveys: SurveyStore, name: str) -> dict:
    """The survey's state as plain data (the ``riskgrid survey status`` JSON)."""
    survey = surveys.get(name)
    frame = surveys.answers(name)
    raters = surveys.raters(name)
    progress = rater_progress(frame)
    by_rater = {r.rater: r for r in progress.itertuples(index=False)}

    def number(value: float) -> float | None:
        return None if pd.isna(value) else round(float(value), 3)

    return {
        "survey": survey.name,
        "open": survey.is_open,
        "batches": survey.batches,
        "unit": survey.settings.unit,
        "range_mg_dl": list(survey.settings.glucose_range),
        "pairs_asked": int(frame["pair_id"].nunique()) if len(frame) else 0,
        "answers": int(frame["rating"].notna().sum()),
        "queued": len(frame),
        "last_batch_answered": batch_answered(frame, survey.batches - 1),
        "raters": [
            {
                "rater": r.rater,
                "revoked": bool(r.revoked),
                "answered": int(getattr(by_rater.get(r.rater), "answered", 0)),
                "queued": int(getattr(by_rater.get(r.rater), "queued", 0)),
                "seconds_per_answer": number(
                    getattr(by_rater.get(r.rater), "seconds_per_answer", np.nan)
                ),
                "retest_agreement": number(
                    getattr(by_rater.get(r.rater), "retest_agreement", np.nan)
                ),
                "checks_passed": int(getattr(by_rater.get(r.rater), "checks_passed", 0)),
                "checks_answered": int(getattr(by_rater.get(r.rater), "checks_answered", 0)),
            }
            for r in raters.itertuples(index=False)
        ],
    }
