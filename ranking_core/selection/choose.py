"""One way to choose a learner's regularization parameter (and optionally γ): :func:`choose`.

Rules (Kriukova et al. 2014, §4.1, §4.3–4.4; DESIGN §4):

* ``"holdout"`` — the first ⌊fit_fraction·m⌋ points fit, the rest score every candidate by
  pairwise misranking (eq. (1));
* ``"kfold"`` — the same criterion averaged over k folds;

  both pick by :func:`near_minimum`: the first candidate (the largest λ of a decreasing grid)
  whose validation misranking ties with the smallest (within :data:`TIE_TOLERANCE`); with
  ``criterion="absolute-error"`` they score the mean absolute validation error |f(x) − y|
  instead (:func:`validation_scores`);
* ``"quasi-optimality"`` — λ_j minimising ‖f_{λ_j} − f_{λ_{j+1}}‖_H (Tikhonov & Glasko 1965), no
  held-out data;
* ``"apriori"`` — λ(m) = α·m^(−β/2) from a fitted :class:`~ranking_core.selection.AprioriRule`;
* ``"manual"`` — a given value.

A learner with a λ path (``path``/``resolve``) is decomposed once per fit and every λ of the grid
is solved from that decomposition; any other learner is fitted once per grid value of ``param``.
After the choice the model is refitted on all m points at the chosen values (``refit=True``, the
default); the :class:`Choice` records whether it was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import KFold

from ranking_core.lambda_rules import CRITERIA, PROTOCOLS, RULES, VALIDATED_RULES
from ranking_core.metrics import Predictor, pairwise_misranking, pairwise_misranking_rows
from ranking_core.validation import check_training_data, one_of

__all__ = [
    "CRITERIA",
    "PROTOCOLS",
    "RULES",
    "RULE_CHOICES",
    "TIE_TOLERANCE",
    "VALIDATED_RULES",
    "Choice",
    "RuleCall",
    "choose",
    "kfold_curves",
    "kfold_splits",
    "mean_over_folds",
    "near_minimum",
    "paper_lambda_grid",
    "protocol_refits",
    "validation_scores",
]

# Validation misranking values (shares of pairs, eq. (1)) closer than this are tied. A value is
# a count of misranked pairs over a count of pairs (averaged over folds), so two distinct values
# differ by at least 1/(k·P) ≫ 10⁻⁹ for P < 10⁸ pairs a fold, while the same counts summed in
# another order differ by round-off (≈ 10⁻¹⁶): equal counts are ties whatever the arithmetic,
# and a tie goes to the first candidate. Larger tolerances were measured and rejected
# (docs/SCALE.md): 10⁻⁴ moved the best recipe's λ up a hundredfold and its misranking from
# 0.70 % to 0.81 % at m = 2,000.
TIE_TOLERANCE = 1e-9

Estimator: TypeAlias = BaseEstimator | Callable[[object], BaseEstimator]
Progress = Callable[[int, int], None]


class _Steps:
    """Counts fits and reports ``progress(done, total)`` after each."""

    def __init__(self, total: int, progress: Progress | None) -> None:
        self.done, self.total, self.progress = 0, total, progress

    def __call__(self) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.total)


def paper_lambda_grid(lam0: float = 1.0, q: float = 0.95, n: int = 200) -> NDArray[np.float64]:
    """λ_j = λ₀·q^j, j = 0..n−1 (Kriukova et al. 2014, §4.1: λ₀ = 1, q = 0.95, n = 200; λ₀ = 15
    for CF)."""
    return lam0 * q ** np.arange(n, dtype=np.float64)


@dataclass(frozen=True)
class Choice:
    """What a rule chose, the curve it chose from, and the model.

    Attributes
    ----------
    value : the chosen value of ``param`` (λ for a path learner).
    param : the parameter chosen (``"lam"``, or e.g. ``"n_rounds"``).
    gamma : the chosen γ when several were tried, else ``None``.
    grid : (L,) the candidate values (``None`` for ``"apriori"`` and ``"manual"``).
    gammas : (G,) the candidate γ, or ``None``.
    curve : the criterion per candidate: validation misranking (hold-out, k-fold), or
        ‖f_{λ_j} − f_{λ_{j+1}}‖_H with the last entry NaN (quasi-optimality); shape (L,), or
        (G, L) with ``gammas``; ``None`` for ``"apriori"`` and ``"manual"``.
    model : the estimator at the chosen values: fitted on all m points when ``refit``, otherwise
        the hold-out rule's model fitted on the first part only.
    rule : the rule used.
    refit : whether ``model`` was refitted on all data after the choice.
    """

    value: float
    param: str
    gamma: object
    grid: NDArray[np.float64] | None
    gammas: tuple | None
    curve: NDArray[np.float64] | None
    model: BaseEstimator
    rule: str
    refit: bool


def protocol_refits(protocol: str, owner: str = "choose") -> bool:
    """Whether a hold-out ``protocol`` of :data:`PROTOCOLS` refits after the choice (the
    ``refit`` argument of :func:`choose`); ``owner`` names the caller in the error."""
    one_of(protocol, "protocol", tuple(PROTOCOLS), owner)
    return protocol == "refit"


def validation_scores(
    y_val: ArrayLike, predictions: ArrayLike, criterion: str = "misranking"
) -> NDArray[np.float64]:
    """The validation criterion of each row of ``predictions`` (L, n) against ``y_val`` (n,):
    ``"misranking"`` (pairwise misranking, Kriukova et al. 2014 eq. (1)) or ``"absolute-error"``
    (mean |f(x_i) − y_i| on the rating scale).

    The misranking of a validation part of n points rests on its n(n−1)/2 pairs but is a step
    function of the predictions, so on a small part (m/5 ratings) it jumps from one λ to the
    next and its minimum is a noisy choice; the absolute error is smooth in λ and, unlike the
    squared error, bounded in the influence of an outlying rating (docs/RESULTS.md, panels).
    """
    one_of(criterion, "criterion", CRITERIA, "validation_scores")
    y_val = np.asarray(y_val, dtype=np.float64)
    predictions = np.atleast_2d(np.asarray(predictions, dtype=np.float64))
    if criterion == "misranking":
        return pairwise_misranking_rows(y_val, predictions)
    return np.mean(np.abs(predictions - y_val), axis=1)


def _has_path(estimator: BaseEstimator) -> bool:
    return hasattr(estimator, "path") and hasattr(estimator, "resolve")


def _candidates(estimator: Estimator, gammas: Sequence | None) -> list[BaseEstimator]:
    """One unfitted estimator per γ: ``estimator(γ)`` for a factory, else ``gamma`` set."""
    if gammas is None:
        if not isinstance(estimator, BaseEstimator):
            raise ValueError("choose: an estimator factory needs gammas")
        return [estimator]
    if len(gammas) == 0:
        raise ValueError("choose: gammas must list at least one value")
    if isinstance(estimator, BaseEstimator):
        return [clone(estimator).set_params(gamma=gamma) for gamma in gammas]
    return [estimator(gamma) for gamma in gammas]


def _fit_at(
    estimator: BaseEstimator, param: str, value: float, X: NDArray, y: NDArray
) -> BaseEstimator:
    return clone(estimator).set_params(**{param: value}).fit(X, y)


Views = Callable[[BaseEstimator, NDArray], Sequence[Predictor]]


def _validation(
    estimator: BaseEstimator,
    param: str,
    grid: NDArray,
    X_fit: NDArray,
    y_fit: NDArray,
    X_val: NDArray,
    y_val: NDArray,
    criterion: str,
    views: Views | None = None,
) -> tuple[NDArray, list]:
    """(the criterion on the validation part per grid value, the fitted model(s)): one fit and
    its λ path for a path learner, one fit per value otherwise. With ``views`` (fitted model,
    grid) → paths, one fit and the criterion of each path, shape (V, L)."""
    if views is not None:
        model = clone(estimator).fit(X_fit, y_fit)
        return np.vstack(
            [
                validation_scores(y_val, path.predict(X_val), criterion)
                for path in views(model, grid)
            ]
        ), [model]
    if param == "lam" and _has_path(estimator):
        model = clone(estimator).fit(X_fit, y_fit)
        return validation_scores(y_val, model.path(grid).predict(X_val), criterion), [model]
    models = [_fit_at(estimator, param, value, X_fit, y_fit) for value in grid]
    if criterion == "misranking":
        curve = np.array([pairwise_misranking(y_val, model.predict(X_val)) for model in models])
    else:
        curve = validation_scores(y_val, [model.predict(X_val) for model in models], criterion)
    return curve, models


def near_minimum(curve: ArrayLike, tolerance: float = TIE_TOLERANCE, owner: str = "choose") -> int:
    """Index of the first value of ``curve`` within ``tolerance`` of its minimum (NaN ignored).

    The one rule by which every choice by validation misranking picks its candidate
    (:func:`choose`, :func:`~ranking_core.learners.direct.fast_kfold_lambda`, the presets): on
    a decreasing λ grid the first is the largest λ among the ties, the smoother fit and the
    better-conditioned system (condition number about ‖K‖/λ).
    ``owner`` names the caller in the error raised when every value is NaN.
    """
    values = np.asarray(curve, dtype=np.float64)
    if values.size == 0 or np.all(np.isnan(values)):
        raise ValueError(
            f"{owner}: the validation ratings are constant, so no candidate can be compared"
        )
    return int(np.flatnonzero(values <= np.nanmin(values) + tolerance)[0])


def choose(
    estimator: Estimator,
    X: ArrayLike,
    y: ArrayLike,
    *,
    rule: str,
    grid: ArrayLike | None = None,
    param: str = "lam",
    gammas: Sequence | None = None,
    refit: bool = True,
    fit_fraction: float = 0.5,
    n_splits: int = 5,
    random_state: int | None = 0,
    apriori: Callable[[int], float] | None = None,
    value: float | None = None,
    progress: Progress | None = None,
    criterion: str = "misranking",
) -> Choice:
    """Choose ``param`` (λ by default), and γ among ``gammas``, by ``rule``; return a
    :class:`Choice`.

    Parameters
    ----------
    estimator : an unfitted estimator, or with ``gammas`` also a factory γ → estimator (such as
        :attr:`ranking_core.learners.LearnerSpec.make`); without a factory γ is set by
        ``set_params(gamma=…)``.
    X : (m, d) inputs (glucose pairs: REF, estimate in mg/dL); y : (m,) ratings.
    rule : one of :data:`RULES`.
    grid : candidate values of ``param`` (default for λ: :func:`paper_lambda_grid`).
    param : the parameter chosen; a learner with a λ path solves every λ from one decomposition.
    gammas : candidate kernel widths γ, chosen with ``param`` by the same criterion
        (``"holdout"`` and ``"kfold"`` only).
    refit : refit on all m points at the chosen values (the default). ``False`` keeps the
        hold-out rule's model fitted on the first part (``"holdout"`` only; the other rules fit
        on all data anyway).
    fit_fraction : share of the points that fit under ``"holdout"`` (the rest validate).
    n_splits, random_state : the folds of ``"kfold"`` (shuffled).
    apriori : for ``"apriori"``: the rule λ(m), e.g. a fitted
        :class:`~ranking_core.selection.AprioriRule`.
    value : for ``"manual"``: the value of ``param``.
    progress : ``progress(done, total)`` after each fit (per γ, per fold, and the refit).
    criterion : what ``"holdout"`` and ``"kfold"`` minimise on the validation ratings:
        ``"misranking"`` (the paper) or ``"absolute-error"`` (:func:`validation_scores`).
    """
    one_of(rule, "rule", tuple(RULES), "choose")
    one_of(criterion, "criterion", CRITERIA, "choose")
    X, y = check_training_data(X, y, "choose")
    if not refit and rule != "holdout":
        raise ValueError(
            f"choose: refit=False applies to rule='holdout' only; rule={rule!r} fits on all data"
        )
    if gammas is not None and rule not in VALIDATED_RULES:
        raise ValueError(f"choose: gammas are chosen by 'holdout' or 'kfold' only; got {rule!r}")
    computation = RULE_CHOICES.get(rule)
    if computation is None:
        raise ValueError(f"choose: the rule {rule!r} is listed in RULES but not in RULE_CHOICES")
    call = RuleCall(
        _candidates(estimator, gammas),
        X,
        y,
        rule,
        param,
        grid,
        None if gammas is None else tuple(gammas),
        refit,
        fit_fraction,
        n_splits,
        random_state,
        apriori,
        value,
        progress,
        criterion,
    )
    return computation(call)


@dataclass(frozen=True)
class RuleCall:
    """The arguments of :func:`choose` as a rule's computation reads them (``candidates``: one
    unfitted estimator per γ, or the one estimator; ``grid``: the candidates of ``param``, None
    for the default; the rest as :func:`choose` documents them)."""

    candidates: list[BaseEstimator]
    X: NDArray
    y: NDArray
    rule: str
    param: str
    grid: ArrayLike | None
    gammas: tuple | None
    refit: bool
    fit_fraction: float
    n_splits: int
    random_state: int | None
    apriori: Callable[[int], float] | None
    value: float | None
    progress: Progress | None
    criterion: str

    def candidate_grid(self) -> NDArray:
        """The candidates of ``param`` as an array (default for λ: :func:`paper_lambda_grid`)."""
        if self.grid is None:
            if self.param != "lam":
                raise ValueError(f"choose: a grid of {self.param!r} values is needed")
            return paper_lambda_grid()
        return np.atleast_1d(
            np.asarray(self.grid, dtype=np.float64 if self.param == "lam" else None)
        )

    def fit_at(self, value: float, candidate: int = 0) -> BaseEstimator:
        """Candidate ``candidate`` fitted on all m points at ``param = value``."""
        return _fit_at(self.candidates[candidate], self.param, value, self.X, self.y)


def _given_value(call: RuleCall) -> Choice:
    """``"apriori"`` (λ(m) of a fitted rule) and ``"manual"`` (a given value): one fit."""
    if call.rule == "apriori":
        if call.apriori is None:
            raise ValueError("choose: rule='apriori' needs apriori (a rule λ(m))")
        chosen = float(call.apriori(len(call.y)))
    else:
        if call.value is None:
            raise ValueError("choose: rule='manual' needs value")
        chosen = call.value
    model = call.fit_at(chosen)
    _Steps(1, call.progress)()
    return Choice(chosen, call.param, None, None, None, None, model, call.rule, True)


def _quasi_optimality_rule(call: RuleCall) -> Choice:
    """``"quasi-optimality"`` on the candidate grid (:func:`_quasi_optimality`)."""
    grid = call.candidate_grid()
    choice = _quasi_optimality(call.candidates[0], call.param, grid, call.X, call.y)
    _Steps(1, call.progress)()
    return choice


def _validated(call: RuleCall) -> Choice:
    """``"holdout"`` and ``"kfold"``: the validation curve of every candidate (and γ), the first
    near-minimum (:func:`near_minimum`), refitted on all points unless ``refit`` is False."""
    candidates, param, X, y = call.candidates, call.param, call.X, call.y
    rule, gammas, refit, criterion = call.rule, call.gammas, call.refit, call.criterion
    grid = call.candidate_grid()
    per_candidate = 1 if rule == "holdout" else call.n_splits
    step = _Steps(len(candidates) * per_candidate + int(refit), call.progress)
    if rule == "holdout":
        cut = int(call.fit_fraction * len(y))
        if cut < 2 or len(y) - cut < 2:
            raise ValueError(f"choose: {len(y)} points are too few to split at {call.fit_fraction}")
        parts = []
        for candidate in candidates:
            parts.append(
                _validation(candidate, param, grid, X[:cut], y[:cut], X[cut:], y[cut:], criterion)
            )
            step()
        curves = np.vstack([curve for curve, _ in parts])
    else:
        curves = np.vstack(
            [
                kfold_curves(
                    c,
                    X,
                    y,
                    grid,
                    param=param,
                    n_splits=call.n_splits,
                    random_state=call.random_state,
                    criterion=criterion,
                    step=step,
                )[0]
                for c in candidates
            ]
        )
    # the first γ whose best value is a near-tie of the best of all, then its λ by the same rule
    g = (
        0
        if len(curves) == 1
        else near_minimum([np.nan if np.all(np.isnan(c)) else np.nanmin(c) for c in curves])
    )
    j = near_minimum(curves[g])
    chosen = grid[j].item()
    if refit:
        model = _fit_at(candidates[g], param, chosen, X, y)
        step()
    else:
        models = parts[g][1]
        model = (
            models[0].resolve(chosen)
            if len(models) == 1 and param == "lam" and _has_path(models[0])
            else models[j]
        )
    return Choice(
        chosen,
        param,
        None if gammas is None else gammas[g],
        grid,
        gammas,
        curves[0] if gammas is None else curves,
        model,
        rule,
        refit,
    )


# how each rule of RULES is computed (choose dispatches here; a rule added to RULES gets its
# function here: it reads a RuleCall and returns a Choice)
RULE_CHOICES: dict[str, Callable[[RuleCall], Choice]] = {
    "kfold": _validated,
    "holdout": _validated,
    "quasi-optimality": _quasi_optimality_rule,
    "apriori": _given_value,
    "manual": _given_value,
}


def kfold_curves(
    estimator: BaseEstimator,
    X: NDArray,
    y: NDArray,
    grid: NDArray,
    *,
    param: str = "lam",
    n_splits: int = 5,
    random_state: int | None = 0,
    n_folds: int | None = None,
    criterion: str = "misranking",
    views: Views | None = None,
    step: Callable[[], None] | None = None,
    max_train: int | None = None,
) -> NDArray[np.float64]:
    """The k-fold validation criterion per grid value (Kriukova et al. 2014, eq. (1) or the mean
    absolute error), shape (V, L): averaged over the folds whose training part is not constant,
    NaN where no fold could compare. The one k-fold loop of the project: :func:`choose`, the
    fast path (:mod:`ranking_core.learners.direct`) and robust learning
    (:func:`~ranking_core.learners.robust.kfold_robust`) all call it.

    ``n_folds`` validates on the first folds only (None: all k); ``views`` maps a fold's fitted
    model and the grid to the paths scored (default: the model's own λ path, V = 1); ``step``
    is called after each fold; ``max_train`` fits each fold on at most that many of its training
    points (a random subset drawn with ``random_state``; None: all of them).
    """
    curves = []
    for train, test in kfold_splits(X, n_splits, random_state)[:n_folds]:
        if max_train is not None and len(train) > max_train:
            train = np.sort(
                np.random.default_rng(random_state).choice(train, max_train, replace=False)
            )
        if np.ptp(y[train]) > 0:
            scores = _validation(
                estimator, param, grid, X[train], y[train], X[test], y[test], criterion, views
            )[0]
            curves.append(np.atleast_2d(scores))
        if step is not None:
            step()
    return mean_over_folds(curves, len(grid))


def kfold_splits(
    X: NDArray, n_splits: int, random_state: int | None
) -> list[tuple[NDArray[np.intp], NDArray[np.intp]]]:
    """The (train, test) index pairs of ``choose(rule="kfold")``: shuffled folds."""
    return list(KFold(n_splits=n_splits, shuffle=True, random_state=random_state).split(X))


def mean_over_folds(curves: Sequence[NDArray], size: int) -> NDArray[np.float64]:
    """The folds' validation curves ((L,) or (V, L) each) averaged per candidate, NaN where
    every fold is NaN; the folds with constant training ratings are left out by the caller."""
    if not curves:
        raise ValueError("choose: every training fold has constant ratings")
    stacked = np.stack(curves)
    valid = ~np.all(np.isnan(stacked), axis=0)
    curve = np.full(stacked.shape[1:], np.nan)
    curve[valid] = np.nanmean(stacked[:, valid], axis=0)
    return curve


def _quasi_optimality(
    estimator: BaseEstimator, param: str, grid: NDArray, X: NDArray, y: NDArray
) -> Choice:
    """Quasi-optimality (Tikhonov & Glasko 1965; Kriukova et al. 2014, §4.4 and ref. [21]): on a
    geometric grid, λ_j minimising ‖f_{λ_j} − f_{λ_{j+1}}‖_H; the RKHS norms come from the
    spectrum in O(r) per λ."""
    if param != "lam" or not _has_path(estimator):
        raise ValueError("choose: rule='quasi-optimality' needs a learner with a λ path")
    if len(grid) < 2:
        raise ValueError("choose: rule='quasi-optimality' needs at least two values of λ")
    model = clone(estimator).fit(X, y)
    curve = np.r_[model.path(grid).rkhs_norm_differences(), np.nan]
    best = int(np.nanargmin(curve))
    return Choice(
        grid[best].item(),
        param,
        None,
        grid,
        None,
        curve,
        model.resolve(grid[best]),
        "quasi-optimality",
        True,
    )
