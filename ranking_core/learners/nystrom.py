"""Nyström / subset-of-regressors ranking for large m (Pahikkala et al. 2009, §3.5, eqs. (40)–(42)).

Only the centres R ⊂ {1..m} carry coefficients, f(x) = Σ_{r∈R} a_r K(x, x_r) (eq. (40)). With the
eigendecomposition K_RR = U diag(κ) Uᵀ (eigenvalues below ``rank_tol``·max κ dropped) and the
Nyström feature map Φ(x) = K(x, X_R) U κ^{-1/2} ∈ ℝ^r, a = U κ^{-1/2} w and ‖f‖²_H = ‖w‖², so the
sparse RankRLS problem (eq. (41)) in the scaling of Kriukova et al. 2014,

    min_w (1/m)(y − Φw)ᵀC(y − Φw) + λ‖w‖²,

is the primal ranker (Pahikkala et al. 2009, §3.1) on the features Φ. Its covariance Φ_cᵀΦ_c/m (r ×
r) is decomposed once, which gives every λ and every spectral filter g_λ at O(r²) each (the λ path
of §3.5 / eq. (42)). Cost: O(m|R|) kernel evaluations and O(m|R|² + |R|³) flops.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray

from ranking_core.filters import Filter, make_filter
from ranking_core.kernels import Kernel
from ranking_core.learners.base import BLOCK_ENTRIES, KernelPathEstimator, store_params
from ranking_core.learners.spectral import SpectralRanker
from ranking_core.spectral import pivoted_cholesky
from ranking_core.validation import one_of, positive_float

__all__ = ["NystromRanker", "nystrom_features"]

CENTER_RULES = ("greedy", "uniform")


def nystrom_features(
    kernel: Kernel, X: NDArray[np.float64], centers: NDArray[np.float64], rank_tol: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(Φ(X), T): Nyström features Φ(X) = K(X, X_R)·T with T = U κ^{-1/2} (m × r, r ≤ |R|).

    K_RR = U diag(κ) Uᵀ; eigenvalues κ < rank_tol·max κ are dropped so that T stays bounded.
    Then Φ(X_R)Φ(X_R)ᵀ = K_RR on the kept eigenspace and ΦΦᵀ = K_XR K_RR⁺ K_RX.
    Cost O(|R|³ + m|R|²).
    """
    kappa, U = scipy.linalg.eigh(kernel(centers, centers), driver="evd")
    keep = kappa > rank_tol * kappa.max()
    transform = U[:, keep] / np.sqrt(kappa[keep])
    features = np.empty((len(X), transform.shape[1]))
    step = max(1, BLOCK_ENTRIES // max(len(centers), 1))
    for start in range(0, len(X), step):
        rows = slice(start, min(start + step, len(X)))
        features[rows] = kernel(X[rows], centers) @ transform
    return features, transform


class NystromRanker(KernelPathEstimator):
    """Regularized ranking with the subset-of-regressors (Nyström) approximation.

    .. math:: f(x) = \\sum_{r \\in R} a_r K(x, x_r), \\quad
              w(\\lambda) = g_\\lambda(\\Phi_c^T\\Phi_c/m)\\,\\Phi_c^T y/m, \\quad a = T w

    (Pahikkala et al. 2009, eqs. (40)–(42); Kriukova et al. 2014, eq. (4) when R is the whole
    training set). By composition: a primal :class:`~ranking_core.SpectralRanker` (linear kernel)
    learns w on the Nyström features Φ, and a = T w. Same API as
    :class:`~ranking_core.SpectralRanker`: ``fit``, ``predict`` (rating scale), ``path``,
    ``resolve``, ``score``. Cost O(m|R|² + |R|³) to fit, O(|R|²) per extra λ, O(|R|) kernel
    evaluations per prediction.

    Parameters
    ----------
    kernel, gamma, filter, lam, degree, coef0 : as for :class:`~ranking_core.SpectralRanker`.
    n_centers : |R|, the number of centres (capped at m).
    centers : ``"greedy"`` (pivots of a greedy pivoted Cholesky of K: each new centre is the
        point worst represented by the previous ones) or ``"uniform"`` (a uniform random subset,
        which Rifkin et al., cited in Pahikkala et al. 2009, §3.5, found no worse in practice).
    rank_tol : eigenvalues of K_RR below rank_tol·max are dropped (and the greedy selection stops
        once the residual trace is below rank_tol·trace K).
    random_state : seed for ``centers="uniform"``.

    Attributes
    ----------
    centers_ : (r_c,) indices of the centres in the training set.
    X_fit_ : (r_c, d) the centres; ``coef_`` (r_c,) are their kernel coefficients a.
    intercept_ : b, so that the mean training prediction is the mean rating.
    spectrum_ : the decomposition of the r × r feature covariance (``method="nystrom"``).
    transform_ : (r_c, r) T, with Φ(x) = K(x, X_R) T.
    feature_ranker_ : the primal :class:`~ranking_core.SpectralRanker` fitted on Φ(X).
    """

    def __init__(
        self,
        kernel: str | Kernel = "gaussian",
        gamma: float | ArrayLike | None = None,
        filter: str | Filter = "lavrentiev",
        lam: float = 1e-3,
        *,
        n_centers: int = 500,
        centers: str = "greedy",
        degree: int | None = None,
        coef0: float | None = None,
        rank_tol: float = 1e-12,
        random_state: int | None = 0,
    ) -> None:
        store_params(self, locals())

    def _check_params(self) -> None:
        self._check_positive_params("lam", "rank_tol")
        owner = type(self).__name__
        one_of(self.centers, "centers", CENTER_RULES, owner)
        if not isinstance(self.n_centers, int | np.integer) or self.n_centers < 1:
            raise ValueError(
                f"{owner}: parameter 'n_centers' must be a positive integer; got {self.n_centers!r}"
            )
        self._resolve_kernel()
        self.filter_ = make_filter(self.filter)

    def _select_centers(self, X: NDArray[np.float64]) -> NDArray[np.intp]:
        size = min(int(self.n_centers), len(X))
        if self.centers == "uniform":
            rng = np.random.default_rng(self.random_state)
            return np.sort(rng.choice(len(X), size=size, replace=False))
        _, pivots = pivoted_cholesky(self.kernel_, X, self.rank_tol, size, partial=True)
        return pivots

    def fit(self, X: ArrayLike, y: ArrayLike) -> NystromRanker:
        """Choose the centres, build the Nyström features and decompose their covariance once.

        Parameters
        ----------
        X : (m, d) inputs (glucose pairs: REF, estimate in mg/dL); y : (m,) ratings.
        """
        self._check_params()
        X, y = self._check_training_data(X, y)
        self.centers_ = self._select_centers(X)
        self.X_fit_ = X[self.centers_]
        features, self.transform_ = nystrom_features(self.kernel_, X, self.X_fit_, self.rank_tol)
        self.feature_ranker_ = SpectralRanker(
            kernel="linear", filter=self.filter_, lam=self.lam, solver="primal"
        ).fit(features, y)
        self.spectrum_ = dataclasses.replace(self.feature_ranker_.spectrum_, method="nystrom")
        self._set_solution(positive_float(self.lam, "lam", type(self).__name__))
        return self

    def _solution(self, lams: NDArray[np.float64]) -> tuple[NDArray, NDArray, NDArray]:
        path = self.feature_ranker_.path(lams)  # w(λ), (L, r), and b(λ)
        return path.coef @ self.transform_.T, path.intercept, path.factors
