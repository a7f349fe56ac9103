"""Rules for choosing the regularization parameter λ (Kriukova et al. 2014, §4.1, §4.4; DESIGN §4).

Every rule works on the λ-path of one decomposition per fit: choosing among 200 values of λ costs
one eigendecomposition, not 200.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import lsq_linear
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import KFold

from ranking_core.metrics import pairwise_misranking_rows
from ranking_core.validation import check_training_data

__all__ = [
    "AprioriRule",
    "LambdaChoice",
    "fit_apriori_lambda",
    "holdout_lambda",
    "kfold_lambda",
    "paper_lambda_grid",
    "quasi_optimality_lambda",
]

Progress = Callable[[int, int], None]


def paper_lambda_grid(lam0: float = 1.0, q: float = 0.95, n: int = 200) -> NDArray[np.float64]:
    """λ_j = λ₀·q^j, j = 0..n−1 (Kriukova et al. 2014, §4.1: λ₀ = 1, q = 0.95, n = 200; λ₀ = 15 for
    CF)."""
    return lam0 * q ** np.arange(n, dtype=np.float64)


@dataclass(frozen=True)
class LambdaChoice:
    """A chosen λ with the curve it was chosen from.

    Attributes
    ----------
    lam : the chosen λ.
    lams : (L,) the candidates.
    curve : (L,) the criterion per candidate (validation misranking, or for quasi-optimality
        ‖f_{λ_j} − f_{λ_{j+1}}‖_H with the last entry NaN).
    model : the estimator solved at ``lam`` (fitted as the rule prescribes).
    rule : ``"holdout"``, ``"kfold"`` or ``"quasi-optimality"``.
    """

    lam: float
    lams: NDArray[np.float64]
    curve: NDArray[np.float64]
    model: BaseEstimator
    rule: str


def _validation_curve(model: BaseEstimator, lams: NDArray, X: NDArray, y: NDArray) -> NDArray:
    return pairwise_misranking_rows(y, model.path(lams).predict(X))


def _first_minimum(curve: NDArray, what: str) -> int:
    if np.all(np.isnan(curve)):
        raise ValueError(f"{what}: the validation ratings are constant, so no λ can be compared")
    return int(np.nanargmin(curve))  # first = largest λ on a decreasing grid among ties


def holdout_lambda(
    ranker: BaseEstimator,
    X: ArrayLike,
    y: ArrayLike,
    lams: ArrayLike | None = None,
    *,
    fit_fraction: float = 0.5,
    refit: bool = False,
) -> LambdaChoice:
    """The paper's protocol (Kriukova et al. 2014, §4.1, §4.3): the first ⌊fit_fraction·m⌋ points
    fit, the rest pick λ by pairwise misranking (eq. (1)); one decomposition. The model returned is
    the one fitted on the first part, solved at the chosen λ, or with ``refit`` one fitted on all m
    points at that λ (one more decomposition).
    """
    X, y = check_training_data(X, y, "holdout_lambda")
    lams = paper_lambda_grid() if lams is None else np.asarray(lams, dtype=np.float64)
    cut = int(fit_fraction * len(y))
    if cut < 2 or len(y) - cut < 2:
        raise ValueError(f"holdout_lambda: {len(y)} points are too few to split at {fit_fraction}")
    model = clone(ranker).fit(X[:cut], y[:cut])
    curve = _validation_curve(model, lams, X[cut:], y[cut:])
    best = _first_minimum(curve, "holdout_lambda")
    model = clone(ranker).fit(X, y).resolve(lams[best]) if refit else model.resolve(lams[best])
    return LambdaChoice(float(lams[best]), lams, curve, model, "holdout")


def kfold_lambda(
    ranker: BaseEstimator,
    X: ArrayLike,
    y: ArrayLike,
    lams: ArrayLike | None = None,
    *,
    n_splits: int = 5,
    random_state: int | None = 0,
    progress: Progress | None = None,
) -> LambdaChoice:
    """k-fold cross-validation of pairwise misranking over the λ grid (one decomposition per
    fold); the model returned is refitted on all points and solved at the chosen λ.
    ``progress(done, n_splits + 1)`` is called after each fold and after the refit."""
    X, y = check_training_data(X, y, "kfold_lambda")
    lams = paper_lambda_grid() if lams is None else np.asarray(lams, dtype=np.float64)
    folds = KFold(n_splits=n_splits, shuffle=True, random_state=random_state)
    curves = []
    for done, (train, test) in enumerate(folds.split(X), start=1):
        if np.ptp(y[train]) > 0:
            model = clone(ranker).fit(X[train], y[train])
            curves.append(_validation_curve(model, lams, X[test], y[test]))
        if progress is not None:
            progress(done, n_splits + 1)
    if not curves:
        raise ValueError("kfold_lambda: every training fold has constant ratings")
    stacked = np.vstack(curves)
    valid = ~np.all(np.isnan(stacked), axis=0)
    curve = np.full(len(lams), np.nan)
    curve[valid] = np.nanmean(stacked[:, valid], axis=0)
    best = _first_minimum(curve, "kfold_lambda")
    model = clone(ranker).fit(X, y).resolve(lams[best])
    if progress is not None:
        progress(n_splits + 1, n_splits + 1)
    return LambdaChoice(float(lams[best]), lams, curve, model, "kfold")


def quasi_optimality_lambda(
    ranker: BaseEstimator, X: ArrayLike, y: ArrayLike, lams: ArrayLike | None = None
) -> LambdaChoice:
    """Quasi-optimality criterion (Tikhonov–Glasko; Kriukova et al. 2014, §4.4 and ref. [21]): on a
    geometric grid, λ_j minimising ‖f_{λ_j} − f_{λ_{j+1}}‖_H. Needs no held-out data; the RKHS norms
    come from the spectrum in O(r) per λ."""
    X, y = check_training_data(X, y, "quasi_optimality_lambda")
    lams = paper_lambda_grid() if lams is None else np.asarray(lams, dtype=np.float64)
    if len(lams) < 2:
        raise ValueError("quasi_optimality_lambda needs at least two values of λ")
    model = clone(ranker).fit(X, y)
    curve = np.r_[model.path(lams).rkhs_norm_differences(), np.nan]
    best = int(np.nanargmin(curve))
    return LambdaChoice(float(lams[best]), lams, curve, model.resolve(lams[best]),
                        "quasi-optimality")


@dataclass(frozen=True)
class AprioriRule:
    """λ(m) = α·m^(−β/2), fitted to λ₊ found on small subsets (Kriukova et al. 2014, Corollary 6,
    §4.4).

    Attributes
    ----------
    alpha, beta : the fitted rule (0 < β ≤ 1, β = 1/(r + 1) in the theory).
    alpha_sd, beta_sd : bootstrap standard deviations (draws resampled within each size).
    sizes : (S,) subset sizes m.
    lam_plus : (S, draws) λ₊ found by the hold-out protocol (NaN where a draw failed).
    """

    alpha: float
    beta: float
    alpha_sd: float
    beta_sd: float
    sizes: NDArray[np.int64]
    lam_plus: NDArray[np.float64] = field(repr=False)

    def __call__(self, m: int | ArrayLike) -> NDArray[np.float64] | float:
        lam = self.alpha * np.asarray(m, dtype=np.float64) ** (-self.beta / 2.0)
        return float(lam) if np.ndim(lam) == 0 else lam


def _fit_power_law(sizes: NDArray, lam_plus: NDArray, beta_max: float) -> tuple[float, float]:
    """Least squares log λ₊ = log α − (β/2) log m over all finite draws, with 0 < β ≤ beta_max."""
    m = np.repeat(sizes, lam_plus.shape[1]).astype(np.float64)
    target = np.log(lam_plus.ravel())
    ok = np.isfinite(target)
    design = np.column_stack([np.ones(ok.sum()), -0.5 * np.log(m[ok])])
    solution = lsq_linear(design, target[ok], bounds=([-np.inf, 1e-9], [np.inf, beta_max]))
    log_alpha, beta = solution.x
    return float(np.exp(log_alpha)), float(beta)


def fit_apriori_lambda(
    ranker: BaseEstimator,
    X: ArrayLike,
    y: ArrayLike,
    *,
    sizes: Sequence[int] = (20, 30, 40, 50),
    draws: int = 10,
    lams: ArrayLike | None = None,
    beta_max: float = 1.0,
    n_bootstrap: int = 200,
    random_state: int | None = 0,
    progress: Progress | None = None,
) -> AprioriRule:
    """Fit the a-priori rule λ(m) = α·m^(−β/2) (Kriukova et al. 2014, §4.4).

    For each size m in ``sizes``, ``draws`` random subsets of (X, y) (without replacement) each give
    λ₊(m) by :func:`holdout_lambda`; then log λ₊ = log α − (β/2)·log m is fitted by least squares
    over all draws with 0 < β ≤ ``beta_max``. The paper's plain four-point fit (one draw per size,
    β free) is unstable; several draws and the constraint make it usable. The spread of α and β is
    estimated by resampling the draws within each size.
    """
    X, y = check_training_data(X, y, "fit_apriori_lambda")
    lams = paper_lambda_grid() if lams is None else np.asarray(lams, dtype=np.float64)
    sizes_arr = np.asarray(sizes, dtype=np.int64)
    if sizes_arr.size < 2 or np.any(sizes_arr < 4) or np.any(sizes_arr > len(y)):
        raise ValueError(
            f"fit_apriori_lambda: need at least two sizes between 4 and {len(y)}; got {sizes!r}"
        )
    rng = np.random.default_rng(random_state)
    lam_plus = np.full((sizes_arr.size, draws), np.nan)
    done, total = 0, sizes_arr.size * draws
    for s, m in enumerate(sizes_arr):
        for d in range(draws):
            subset = rng.choice(len(y), size=int(m), replace=False)
            try:
                lam_plus[s, d] = holdout_lambda(ranker, X[subset], y[subset], lams).lam
            except ValueError:  # a half with constant ratings: this draw carries no information
                pass
            done += 1
            if progress is not None:
                progress(done, total)
    if np.isfinite(lam_plus).sum() < 2:
        raise ValueError("fit_apriori_lambda: fewer than two subsets gave a λ₊")
    alpha, beta = _fit_power_law(sizes_arr, lam_plus, beta_max)
    boot = []
    for _ in range(n_bootstrap):
        picks = rng.integers(0, draws, size=lam_plus.shape)
        resampled = np.take_along_axis(lam_plus, picks, axis=1)
        if np.isfinite(resampled).sum() >= 2:
            boot.append(_fit_power_law(sizes_arr, resampled, beta_max))
    spread = np.std(np.asarray(boot), axis=0, ddof=1) if len(boot) > 1 else (np.nan, np.nan)
    return AprioriRule(alpha, beta, float(spread[0]), float(spread[1]), sizes_arr, lam_plus)


# The exact leave-pair-out shortcut lives in its own module (one idea per module).
from ranking_core.lpo import (  # noqa: E402
    leave_pair_out,
    leave_pair_out_differences,
    leave_pair_out_squared,
)

__all__ += ["leave_pair_out", "leave_pair_out_differences", "leave_pair_out_squared"]
