"""The a-priori rule λ(m) = α·m^(−β/2) (Kriukova et al. 2014, Corollary 6, §4.4), fitted to λ₊
found by the hold-out rule on small random subsets."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import lsq_linear
from sklearn.base import BaseEstimator

from ranking_core.selection.choose import choose, paper_lambda_grid
from ranking_core.validation import check_training_data

__all__ = ["AprioriRule", "fit_apriori_lambda"]

Progress = Callable[[int, int], None]


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

    @overload
    def __call__(self, m: int) -> float: ...
    @overload
    def __call__(self, m: ArrayLike) -> NDArray[np.float64] | float: ...
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

    For each size m in ``sizes``, ``draws`` random subsets of (X, y) (without replacement) each
    give λ₊(m) by the hold-out rule of :func:`~ranking_core.selection.choose`; then
    log λ₊ = log α − (β/2)·log m is fitted by least squares over all draws with
    0 < β ≤ ``beta_max``. The paper's plain four-point fit (one draw per size, β free) is
    unstable; several draws and the constraint make it usable. The spread of α and β is estimated
    by resampling the draws within each size.
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
                lam_plus[s, d] = choose(
                    ranker, X[subset], y[subset], rule="holdout", grid=lams, refit=False
                ).value
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
