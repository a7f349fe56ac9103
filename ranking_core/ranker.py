"""Regularized ranking (and regression) estimators on a cached spectral decomposition.

``SpectralRanker`` learns f_z^λ = g_λ(S*DS/m²) S*Dy/m² (Kriukova et al. 2014, eqs. (3)–(4), §3, eq.
(13)),
``SpectralRegressor`` the supervised-regression counterpart g_λ(S*S/m) S*y/m (SLR, Kriukova et al.
2014, §4.1). Both follow scikit-learn's conventions: parameters in ``__init__``, learning in
``fit``, learned state with a trailing underscore. ``fit`` decomposes once; ``path`` and ``resolve``
re-solve for any λ from that decomposition without refactorising.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ranking_core.filters import Filter, make_filter
from ranking_core.kernels import Kernel, LinearKernel, make_kernel
from ranking_core.metrics import pairwise_misranking
from ranking_core.spectral import (
    Spectrum,
    dense_spectrum,
    lowrank_spectrum,
    pivoted_cholesky,
    primal_spectrum,
)
from ranking_core.validation import check_inputs, check_training_data, one_of, positive_float

__all__ = ["RegularizationPath", "SpectralRanker", "SpectralRegressor"]

SOLVERS = ("auto", "dense", "low-rank", "primal")
# Predictions are formed in row blocks of at most this many kernel entries (8 bytes each).
BLOCK_ENTRIES = 1 << 22
# "auto" tries the low-rank factorisation for smooth kernels from this many training points on.
AUTO_LOW_RANK_FROM = 2000


@dataclass(frozen=True)
class RegularizationPath:
    """Solutions for a whole λ grid from one decomposition.

    Attributes
    ----------
    lams : (L,) regularization parameters.
    coef : (L, p) coefficients (kernel coefficients, or feature weights for the primal form).
    intercept : (L,) constants b(λ).
    factors : (L, r) filter factors g_λ(σ).
    """

    lams: NDArray[np.float64]
    coef: NDArray[np.float64]
    intercept: NDArray[np.float64]
    factors: NDArray[np.float64]
    estimator: _SpectralEstimator

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """Predictions for every λ, shape (L, n); O(n·m·L) after one kernel block per row chunk."""
        X = check_inputs(X, type(self.estimator).__name__, self.estimator.n_features_in_)
        out = np.empty((len(self.lams), len(X)))
        for rows, features in self.estimator._feature_blocks(X):
            out[:, rows] = self.coef @ features.T
        return out + self.intercept[:, None]

    def rkhs_norm_differences(self) -> NDArray[np.float64]:
        """‖f_{λ_j} − f_{λ_{j+1}}‖_H for consecutive λ, shape (L − 1,) (quasi-optimality)."""
        weights = self.estimator.spectrum_.norm_weights
        return np.sqrt(np.maximum(np.diff(self.factors, axis=0) ** 2 @ weights, 0.0))


class _SpectralEstimator(RegressorMixin, BaseEstimator):
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
        self.kernel = kernel
        self.gamma = gamma
        self.filter = filter
        self.lam = lam
        self.degree = degree
        self.coef0 = coef0
        self.solver = solver
        self.rank_tol = rank_tol

    # -- fitting ---------------------------------------------------------------------------
    def _check_params(self) -> None:
        owner = type(self).__name__
        positive_float(self.lam, "lam", owner)
        positive_float(self.rank_tol, "rank_tol", owner)
        one_of(self.solver, "solver", SOLVERS, owner)
        self.kernel_ = make_kernel(
            self.kernel, gamma=self.gamma, degree=self.degree, coef0=self.coef0
        )
        self.filter_ = make_filter(self.filter)

    def fit(self, X: ArrayLike, y: ArrayLike) -> _SpectralEstimator:
        """Decompose the training operator once and solve at ``lam``.

        Parameters
        ----------
        X : (m, d) inputs (for glucose pairs: columns REF, estimate in mg/dL).
        y : (m,) ratings.
        """
        self._check_params()
        X, y = check_training_data(X, y, type(self).__name__)
        self.n_features_in_ = X.shape[1]
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

    def _set_solution(self, lam: float) -> None:
        coef, intercept, _ = self._solution(np.array([lam]))
        self.coef_ = coef[0]
        self.intercept_ = float(intercept[0])

    # -- prediction ------------------------------------------------------------------------
    def _feature_blocks(self, X: NDArray[np.float64]) -> Iterator[tuple[slice, NDArray]]:
        """(rows, Φ(X[rows])) with Φ the kernel row K(x, X_fit) or, in the primal form, x."""
        if self.X_fit_ is None:
            yield slice(0, len(X)), X
            return
        step = max(1, BLOCK_ENTRIES // max(len(self.X_fit_), 1))
        for start in range(0, len(X), step):
            rows = slice(start, min(start + step, len(X)))
            yield rows, self.kernel_(X[rows], self.X_fit_)

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """f(x) = Σ c_i K(x, x_i) + b on the rating scale, shape (n,)."""
        check_is_fitted(self, "coef_")
        X = check_inputs(X, type(self).__name__, self.n_features_in_)
        out = np.empty(len(X))
        for rows, features in self._feature_blocks(X):
            out[rows] = features @ self.coef_
        return out + self.intercept_

    def path(self, lams: ArrayLike) -> RegularizationPath:
        """The solutions for every λ in ``lams`` from the cached decomposition (no refactorising);
        O(m·r) per λ."""
        check_is_fitted(self, "spectrum_")
        lams = np.atleast_1d(np.asarray(lams, dtype=np.float64))
        for lam in lams:
            positive_float(lam, "lams", type(self).__name__)
        coef, intercept, factors = self._solution(lams)
        return RegularizationPath(lams, coef, intercept, factors, self)

    def resolve(self, lam: float) -> _SpectralEstimator:
        """A copy solved at another λ from the same decomposition, O(m·r) (for sliders, λ rules)."""
        check_is_fitted(self, "spectrum_")
        lam = positive_float(lam, "lam", type(self).__name__)
        other = copy.copy(self)
        other.lam = lam
        other._set_solution(lam)
        return other

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: Any = None) -> float:
        """1 − pairwise misranking (Kriukova et al. 2014, eq. (1)) on (X, y): higher is better."""
        if sample_weight is not None:
            raise ValueError(f"{type(self).__name__}.score does not support sample_weight")
        return 1.0 - pairwise_misranking(y, self.predict(X))


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
