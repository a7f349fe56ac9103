"""SVRank: magnitude-preserving ranking with the ε-insensitive pairwise loss (Cortes et al. 2007,
§2.4).

Cortes et al. 2007, eq. (9) with n = 1, in the scaling of Kriukova et al. 2014 (λ = 1/C):

    min_f λ‖f‖²_H + (1/m²) Σ_{i,j} max(0, |(f(x_j) − f(x_i)) − (y_j − y_i)| − ε).

Each unordered pair p = (i, j) is one example of an ε-insensitive support vector regression with
the pair kernel K'_{pq} = K(x_i, x_k) + K(x_j, x_l) − K(x_i, x_l) − K(x_j, x_k) (Cortes et al. 2007,
§2.4), i.e. K' = EKEᵀ with the pair incidence matrix E, target d_p = y_i − y_j and box C_s =
1/(m²λ). Its dual, min ½βᵀK'β + ε Σ(α_p + α*_p) − dᵀβ over 0 ≤ α, α* ≤ C_s with β = α − α*, is a
box-constrained QP solved here by L-BFGS-B; the ranking function has kernel coefficients Eᵀβ.
There are m(m − 1)/2 pairs, so K' has O(m⁴) entries: small m only (a few hundred points).
"""

from __future__ import annotations

import numpy as np
import scipy.optimize
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, RegressorMixin

from ranking_core.kernels import Kernel
from ranking_core.learners.base import (
    CheckedInputsMixin,
    KernelMixin,
    RankingScoreMixin,
    store_params,
)

__all__ = ["SVRank"]

MAX_PAIRS = 20_000  # K' holds MAX_PAIRS² floats (3.2 GB at the cap)


class SVRank(KernelMixin, RankingScoreMixin, CheckedInputsMixin, RegressorMixin, BaseEstimator):
    """SVRank (Cortes et al. 2007, eq. (9), n = 1; dual of §2.4 with the pair kernel).

    Parameters
    ----------
    kernel, gamma, degree, coef0 : as for :class:`~ranking_core.SpectralRanker`.
    lam : λ = 1/C (Cortes et al.'s C multiplies the empirical cost).
    epsilon : ε ≥ 0, the width of the insensitive zone on the rating scale.
    tol : projected-gradient tolerance of the QP solver.

    Attributes
    ----------
    coef_ : (m,) kernel coefficients Eᵀβ; intercept_ : b (mean prediction = mean y).
    dual_coef_ : (m(m − 1)/2,) β per pair (i < j, in ``numpy.triu_indices`` order).
    objective_ : the primal objective at the solution.
    """

    def __init__(
        self,
        kernel: str | Kernel = "gaussian",
        gamma: float | ArrayLike | None = None,
        lam: float = 1e-3,
        *,
        epsilon: float = 0.1,
        tol: float = 1e-10,
        degree: int | None = None,
        coef0: float | None = None,
    ) -> None:
        store_params(self, locals())

    def fit(self, X: ArrayLike, y: ArrayLike) -> SVRank:
        """Solve the pair-kernel QP; O(P²) memory and time per iteration, P = m(m − 1)/2."""
        lam, _ = self._check_positive_params("lam", "tol")
        owner = type(self).__name__
        if not np.isfinite(self.epsilon) or self.epsilon < 0:
            raise ValueError(
                f"{owner}: parameter 'epsilon' must be a finite number ≥ 0; got {self.epsilon!r}"
            )
        self._resolve_kernel()
        X, y = self._check_training_data(X, y)
        m = len(y)
        first, second = np.triu_indices(m, 1)
        if len(first) > MAX_PAIRS:
            raise ValueError(
                f"{owner}: {m} points give {len(first)} pairs, more than "
                f"{MAX_PAIRS} (rule: the pair kernel is for small m; use "
                "SpectralRanker or NystromRanker for large m)"
            )
        K = self.kernel_(X, X)
        pair_kernel = (
            K[np.ix_(first, first)]
            + K[np.ix_(second, second)]
            - K[np.ix_(first, second)]
            - K[np.ix_(second, first)]
        )
        target = y[first] - y[second]
        box = 1.0 / (m * m * lam)
        n = len(target)

        def dual(z: NDArray) -> tuple[float, NDArray]:
            beta = z[:n] - z[n:]
            kb = pair_kernel @ beta
            value = 0.5 * beta @ kb + self.epsilon * z.sum() - target @ beta
            grad = kb - target
            return value, np.concatenate([grad + self.epsilon, -grad + self.epsilon])

        result = scipy.optimize.minimize(
            dual,
            np.zeros(2 * n),
            jac=True,
            method="L-BFGS-B",
            bounds=[(0.0, box)] * (2 * n),
            options={"maxiter": 50_000, "maxfun": 100_000, "gtol": self.tol, "ftol": 1e-15},
        )
        beta = result.x[:n] - result.x[n:]
        self.dual_coef_ = beta
        # Eᵀβ (float64: the counts are weighted by β)
        self.coef_ = np.asarray(
            np.bincount(first, beta, m) - np.bincount(second, beta, m), dtype=np.float64
        )
        train = K @ self.coef_
        self.intercept_ = float(y.mean() - train.mean())
        residual = np.abs((train[first] - train[second]) - target)
        self.objective_ = float(
            lam * self.coef_ @ train + 2.0 / m**2 * np.maximum(residual - self.epsilon, 0.0).sum()
        )
        self.X_fit_ = X
        self.converged_ = bool(result.success)
        return self
