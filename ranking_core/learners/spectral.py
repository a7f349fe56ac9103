"""Regularized ranking (and regression) estimators on a cached spectral decomposition.

``SpectralRanker`` learns f_z^λ = g_λ(S*DS/m²) S*Dy/m² (Kriukova et al. 2014, eqs. (3)–(4), §3,
eq. (13)), ``SpectralRegressor`` the supervised-regression counterpart g_λ(S*S/m) S*y/m (SLR,
Kriukova et al. 2014, §4.1). Both follow scikit-learn's conventions: parameters in ``__init__``,
learning in ``fit``, learned state with a trailing underscore. ``fit`` decomposes once; ``path``
and ``resolve`` re-solve for any λ from that decomposition without refactorising.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, RegressorMixin

from ranking_core.filters import Filter, make_filter
from ranking_core.kernels import Kernel, LinearKernel
from ranking_core.learners.base import (
    CheckedInputsMixin,
    KernelMixin,
    LambdaPathMixin,
    RankingScoreMixin,
    store_params,
)
from ranking_core.spectral import (
    Spectrum,
    dense_spectrum,
    lowrank_spectrum,
    pivoted_cholesky,
    primal_spectrum,
)
from ranking_core.validation import one_of, positive_float

__all__ = ["SpectralRanker", "SpectralRegressor"]

SOLVERS = ("auto", "dense", "low-rank", "primal")
# "auto" tries the low-rank factorisation for smooth kernels from this many training points on.
AUTO_LOW_RANK_FROM = 2000


class _SpectralEstimator(KernelMixin, LambdaPathMixin, RankingScoreMixin, CheckedInputsMixin,
                         RegressorMixin, BaseEstimator):
    """Shared machinery; subclasses fix whether the operator is centred (ranking) or not."""

    _centered: bool = True

    def __init__(
        self,
        kernel: str | Kernel = "gaussian",
        gamma: float | ArrayLike | None = None,
        filter: str | Filter = "lavrentiev",
        lam: float = 1e-3,
        *,
        degree: int | None = None,
        coef0: float | None = None,
        solver: str = "auto",
        rank_tol: float = 1e-14,
    ) -> None:
        store_params(self, locals())

    # -- fitting ---------------------------------------------------------------------------
    def _check_params(self) -> None:
        self._check_positive_params("lam", "rank_tol")
        one_of(self.solver, "solver", SOLVERS, type(self).__name__)
        self._resolve_kernel()
        self.filter_ = make_filter(self.filter)

    def fit(self, X: ArrayLike, y: ArrayLike) -> _SpectralEstimator:
        """Decompose the training operator once and solve at ``lam``.

        Parameters
        ----------
        X : (m, d) inputs (for glucose pairs: columns REF, estimate in mg/dL).
        y : (m,) ratings.
        """
        self._check_params()
        X, y = self._check_training_data(X, y)
        self.y_mean_ = float(y.mean()) if self._centered else 0.0
        self.spectrum_ = self._decompose(X, y)
        self.X_fit_ = None if self.spectrum_.method == "primal" else X
        self._set_solution(positive_float(self.lam, "lam", type(self).__name__))
        return self

    def _decompose(self, X: NDArray[np.float64], y: NDArray[np.float64]) -> Spectrum:
        m, d = X.shape
        linear = isinstance(self.kernel_, LinearKernel)
        solver = self.solver
        if solver == "primal" and not linear:
            raise ValueError(
                f"{type(self).__name__}: solver='primal' needs kernel='linear'; "
                f"got kernel={self.kernel!r}"
            )
        if solver == "auto":
            if linear and d < m:
                solver = "primal"
            elif self.kernel_.smooth and m >= AUTO_LOW_RANK_FROM:
                solver = "low-rank"
            else:
                solver = "dense"
        if solver == "primal":
            return primal_spectrum(X, y, self._centered)
        if solver == "low-rank":
            factor = pivoted_cholesky(self.kernel_, X, self.rank_tol, max_rank=max(m // 3, 1))
            if factor is not None:
                return lowrank_spectrum(factor[0], y, self._centered)
            if self.solver == "low-rank":
                warnings.warn(
                    f"{type(self).__name__}: the Gram matrix is not numerically low-rank "
                    f"(rank > m/3 = {m // 3} at rank_tol={self.rank_tol}); using the dense "
                    "eigendecomposition instead",
                    stacklevel=3,
                )
        return dense_spectrum(self.kernel_(X, X), y, self._centered)

    def _solution(self, lams: NDArray[np.float64]) -> tuple[NDArray, NDArray, NDArray]:
        coef = self.spectrum_.coefficients(self.filter_, lams)
        intercept = self.y_mean_ - coef @ self.spectrum_.feature_mean
        if not self._centered:
            intercept = np.zeros(len(lams))
        return coef, intercept, self.spectrum_.factors(self.filter_, lams)


class SpectralRanker(_SpectralEstimator):
    """Regularized ranking with the magnitude-preserving least-squares loss in an RKHS.

    .. math:: f_z^\\lambda = g_\\lambda\\bigl(\\tfrac{1}{m^2}S_x^*DS_x\\bigr)\\,
              \\tfrac{1}{m^2}S_x^*D\\mathbf{y}, \\qquad D = mI - \\mathbf{1}\\mathbf{1}^T

    (Kriukova et al. 2014, eq. (4) and §3). In kernel coefficients, c(λ) = g_λ(K̃)·Cy/m with K̃ =
    CKC/m, and f(x) = Σ c_i K(x, x_i) + b, with b chosen so that the mean prediction on the training
    inputs equals the mean rating (the loss only sees differences; this puts f on the rating
    scale).

    Parameters
    ----------
    kernel : ``"gaussian"`` (K = exp(−‖x − x'‖²/γ)), ``"laplacian"``, ``"linear"``,
        ``"polynomial"`` or a :class:`~ranking_core.kernels.Kernel`.
    gamma : γ of the kernel; for the Gaussian a squared length scale in squared input units, e.g.
        (mg/dL)², one value per input coordinate giving an anisotropic kernel. ``None`` takes the
        kernel class's default (:func:`~ranking_core.kernels.make_kernel`).
    filter : ``"lavrentiev"`` (eq. (4)), ``"iterated-lavrentiev"`` (k = 2, eq. (13)),
        ``"spectral-cutoff"``, ``"landweber"``, ``"showalter"`` or a
        :class:`~ranking_core.filters.Filter` (e.g. ``IteratedLavrentiev(k=3)``).
    lam : regularization parameter λ > 0.
    degree, coef0 : polynomial kernel parameters (``None``: the kernel class's defaults).
    solver : ``"auto"``, ``"dense"`` (full eigh, O(m³)), ``"low-rank"`` (pivoted Cholesky,
        O(m r²); falls back to dense with a warning when r would exceed m/3) or ``"primal"``
        (linear kernel, O(d³ + d²m)). ``"auto"`` picks primal for a linear kernel with d < m,
        low-rank for a smooth kernel with m ≥ 2000, dense otherwise.
    rank_tol : relative residual trace at which the low-rank factorisation stops.

    Attributes
    ----------
    spectrum_ : :class:`~ranking_core.spectral.Spectrum`, the cached decomposition
        (``spectrum_.method`` says which solver ran, ``spectrum_.rank`` its rank).
    coef_ : (m,) kernel coefficients c (or (d,) weights for the primal form).
    intercept_ : b.
    kernel_, filter_ : the resolved kernel and filter objects.
    """


class SpectralRegressor(_SpectralEstimator):
    """Supervised learning regression (SLR, kernel ridge regression for Lavrentiev).

    .. math:: f_z^\\lambda = g_\\lambda(S_x^*S_x/m)\\, S_x^*\\mathbf{y}/m

    the comparison learner of Kriukova et al. 2014, §4.1 (Smale–Zhou regularized least squares:
    c = (K + mλI)⁻¹y for Lavrentiev). Same parameters and attributes as :class:`SpectralRanker`;
    no intercept.
    """

    _centered = False
