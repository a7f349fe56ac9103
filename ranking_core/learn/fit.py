"""Learn a risk grid from a rating set: one call, one settings object, one result that carries them.

:func:`learn_grid` takes validated ratings (reference, estimate in mg/dL; risk 0..4) and a frozen
:class:`~ranking_core.learn.settings.LearnSettings` and returns a
:class:`~ranking_core.learn.result.LearnedGrid`. Without settings the ratings choose
(:func:`~ranking_core.learn.training.default_recipe`: the robust recipe for a rater panel, the
best one otherwise). The CLI, the dashboard, plan-panel, the reproductions and the benchmarks all
call it, so a grid learned in one reproduces in the others.

The fit runs in three steps: the training set (:func:`~ranking_core.learn.training.
training_set`: ratings, rater codes, diagonal points, signed targets), the plan
(:func:`~ranking_core.learn.plan.plan_fit`: method, the kernel built once, the candidate λ, the
memory limit) and one engine of :data:`ENGINES`, a table from the plan's engine name to the
function that computes λ and the model from an :class:`EngineCall` (the plan, whose candidate λ
it searches, and the training points): ``"spectral"`` (every rule by
:func:`~ranking_core.selection.choose` on the spectral decomposition), ``"direct"``
(:func:`~ranking_core.learners.direct.fast_kfold_lambda`), ``"robust"``
(:func:`~ranking_core.learners.robust.kfold_robust`) and ``"low-rank"`` (every rule on one
pivoted Cholesky factor, :mod:`ranking_core.learners.lowrank`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ranking_core.learn.plan import FitPlan, plan_fit
from ranking_core.learn.result import LearnedGrid, PanelFit, panel_fit
from ranking_core.learn.settings import PRESETS, LearnSettings
from ranking_core.learn.training import default_recipe, training_set
from ranking_core.learners.direct import ONE_FOLD_TRAIN, DirectRanker, fast_kfold_lambda
from ranking_core.learners.lowrank import LowRankRanker, lowrank_kfold, lowrank_split
from ranking_core.learners.robust import kfold_robust, rating_step
from ranking_core.ratings import RatingSet
from ranking_core.selection import AprioriRule, Choice, choose, fit_apriori_lambda

__all__ = ["APRIORI_SIZES", "ENGINES", "EngineCall", "learn_grid", "learn_panel"]

Progress = Callable[[int, int], None]
HOLDOUT_FIT_FRACTION = 0.5  # the hold-out rule's share that fits (choose's default fit_fraction)
APRIORI_SIZES = (20, 30, 40, 50)  # subset sizes for λ₊ (Kriukova et al. 2014, §4.4)


@dataclass(frozen=True)
class EngineCall:
    """What an engine of :data:`ENGINES` is given: the plan (its candidate λ, ``plan.lams``,
    are the grid every engine searches), the training points ``X`` (m, 2) in mg/dL and targets
    ``y`` (m,), the a-priori rule when that rule chooses, and ``progress(done, total)``."""

    plan: FitPlan
    X: NDArray
    y: NDArray
    apriori: AprioriRule | None = None
    progress: Progress | None = None

    def folds(self) -> dict:
        """The fold arguments every engine takes: the folds of ``choose(rule="kfold")``."""
        settings = self.plan.settings
        return {
            "n_splits": int(settings.n_splits),
            "random_state": 0,
            "progress": self.progress,
            "criterion": settings.criterion,
        }


Engine = Callable[[EngineCall], Choice]


def _spectral(call: EngineCall) -> Choice:
    """Every rule as :func:`~ranking_core.selection.choose` states it, on the decomposition."""
    settings = call.plan.settings
    return choose(
        call.plan.ranker,
        call.X,
        call.y,
        rule=settings.rule,
        grid=call.plan.lams,
        refit=settings.refit_all or settings.rule != "holdout",
        apriori=call.apriori,
        value=settings.lam,
        **call.folds(),
    )


def _direct(call: EngineCall) -> Choice:
    """k-fold on the first fold or the glucose lattice and one direct refit."""
    plan = call.plan
    return fast_kfold_lambda(
        plan.ranker, call.X, call.y, plan.lams, method=plan.method, **call.folds()
    )


def _robust(call: EngineCall) -> Choice:
    """Robust fits against least-squares fits on the same folds, the lower curve wins: every
    fold (``"exact"``), or beyond the first fold on at most ONE_FOLD_TRAIN points and the refit
    by one direct factorisation (Cholesky, or the sparse lattice for the largest sets)."""
    plan = call.plan
    if plan.method == "exact":
        return kfold_robust(plan.ranker, call.X, call.y, plan.lams, **call.folds())
    solver = "cholesky" if plan.method == "one-fold" else "lattice"
    return kfold_robust(
        plan.ranker,
        call.X,
        call.y,
        plan.lams,
        folds=1,
        max_train=ONE_FOLD_TRAIN,
        refit_with=DirectRanker(plan.kernel, solver=solver),
        **call.folds(),
    )


def _low_rank(call: EngineCall) -> Choice:
    """Every rule on one low-rank factor of the kernel: k-fold and hold-out factor all inputs
    once and form each training part's r × r covariance from moments
    (:func:`~ranking_core.learners.lowrank.lowrank_kfold`; the hold-out split is that of
    :func:`~ranking_core.selection.choose`, the first half fits); the other rules are
    :func:`~ranking_core.selection.choose`'s on one fit of the factor."""
    plan, settings = call.plan, call.plan.settings
    ranker = plan.ranker
    assert isinstance(ranker, LowRankRanker), "the low-rank plan holds a LowRankRanker"
    if settings.rule == "kfold":
        folds = call.folds()
        return lowrank_kfold(ranker, call.X, call.y, plan.lams, **folds)
    if settings.rule == "holdout":
        m = len(call.y)
        cut = int(HOLDOUT_FIT_FRACTION * m)
        return lowrank_split(
            ranker,
            call.X,
            call.y,
            plan.lams,
            [(np.arange(cut), np.arange(cut, m))],
            rule="holdout",
            criterion=settings.criterion,
            refit=settings.refit_all,
            progress=call.progress,
        )
    return _spectral(call)


ENGINES: dict[str, Engine] = {
    "spectral": _spectral,
    "direct": _direct,
    "robust": _robust,
    "low-rank": _low_rank,
}


def learn_grid(
    ratings: RatingSet | tuple[ArrayLike, ArrayLike],
    settings: LearnSettings | None = None,
    *,
    progress: Progress | None = None,
) -> LearnedGrid:
    """Learn a risk grid from ratings with ``settings`` (default: :func:`default_recipe`, the
    best recipe, or the robust one for ratings from a panel).

    Parameters
    ----------
    ratings : a validated :class:`~ranking_core.ratings.RatingSet`, or (X, y) with X the
        (m, 2) pairs (reference, estimate) in mg/dL and y the (m,) ratings on 0..4.
    settings : the choices; kept unchanged in the result.
    progress : ``progress(done, total)`` while fitting (folds, subsets of the a-priori rule).

    Returns
    -------
    :class:`LearnedGrid` at the λ the rule chose. The computation follows
    :func:`~ranking_core.learn.plan.plan_fit`: up to 2,000 ratings one eigendecomposition per
    fold and one for the refit (any other λ then costs O(m·r)); beyond, the first fold's curve
    or the lattice and a direct refit. Too few ratings, constant ratings and more ratings than
    the memory budget allows are refused at once (``ValueError`` with a sentence).
    """
    settings = PRESETS[default_recipe(ratings)[0]] if settings is None else settings
    data = training_set(
        ratings,
        anchors=int(settings.anchors),
        signed=settings.signed,
        with_raters=settings.robust is not None,
    )
    plan = plan_fit(settings, data.n_ratings)
    X, y, lams = data.X, data.y, plan.lams
    apriori = None
    report = progress
    if settings.rule == "apriori":
        steps = len(APRIORI_SIZES) * int(settings.apriori_draws) + 1
        apriori = fit_apriori_lambda(
            plan.ranker,
            X,
            y,
            sizes=APRIORI_SIZES,
            draws=int(settings.apriori_draws),
            lams=lams,
            progress=None if progress is None else lambda done, _total: progress(done, steps),
        )
        report = None if progress is None else (lambda _done, _total: progress(steps, steps))
    choice = ENGINES[plan.engine](EngineCall(plan, X, y, apriori, report))
    lam = float(choice.value)
    return LearnedGrid(
        settings,
        choice.model,
        lam,
        lam,
        lams,
        choice.curve,
        apriori,
        X,
        y,
        data.n_ratings,
        data.checksum,
        n_raters=data.n_raters,
        answer_step=rating_step(data.y_ratings),
        method=plan.method,
    )


def learn_panel(
    ratings: RatingSet | pd.DataFrame,
    settings: LearnSettings | None = None,
    progress: Progress | None = None,
) -> PanelFit:
    """Learn a grid from a rating set (columns reference, estimate in mg/dL, rating 0..4,
    optional rater) with ``settings`` (default: the ``"robust"`` preset: the best recipe with
    Huber weights, λ by the mean absolute validation error and a monotone grid) and attach to
    each rating its consensus risk, residual, weight and flag
    (:func:`~ranking_core.learn.result.panel_fit`)."""
    settings = PRESETS["robust"] if settings is None else settings
    data = ratings if isinstance(ratings, RatingSet) else RatingSet(ratings)
    return panel_fit(learn_grid(data, settings, progress=progress), data)
