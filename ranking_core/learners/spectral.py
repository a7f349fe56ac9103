"""Regularized ranking (and regression) estimators on a cached spectral decomposition.

``SpectralRanker`` learns f_z^λ = g_λ(S*DS/m²) S*Dy/m² (Kriukova et al. 2014, eqs. (3)–(4), §3,
eq. (13)), ``SpectralRegressor`` the supervised-regression counterpart g_λ(S*S/m) S*y/m (SLR,
Kriukova et al. 2014, §4.1). Both follow scikit-learn's conventions: parameters in ``__init__``,
learning in ``fit``, learned state with a trailing underscore. ``fit`` decomposes once; ``path``
and ``resolve`` re-solve for any λ from that decomposition without refactorising.

The one solution a fitted learner holds (``coef_`` after ``fit`` and after ``resolve``) is, for the
Lavrentiev filters on the dense eigendecomposition, refined to working precision against the
kernel matrix (:func:`~ranking_core.spectral.refined_lavrentiev`); ``path`` (hundreds of λ for a
choice of λ) keeps the plain spectral formula.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.filters import Filter, make_filter
from ranking_core.kernels import Kernel, LinearKernel
from ranking_core.learners.base import BLOCK_ENTRIES, KernelPathEstimator, store_params
from ranking_core.spectral import (
    Spectrum,
    dense_spectrum,
    lavrentiev_steps,
    lowrank_spectrum,
    pivoted_cholesky,
    primal_spectrum,
    refined_lavrentiev,
)
from ranking_core.validation import one_of, positive_float

__all__ = ["SpectralRanker", "SpectralRegressor"]

SOLVERS = ("auto", "dense", "low-rank", "primal")
# "auto" tries the low-rank factorisation for smooth kernels from this many training points on.
AUTO_LOW_RANK_FROM = 2000
# (iterated) Lavrentiev up to this order is solved and refined against the kernel matrix
# (Kriukova et al. 2014, eqs. (4), (13)): k solves of a few O(m²) products each; higher orders
# take the filter's closed form (one filter whatever k, with the digits the eigendecomposition
# keeps: about six at m = 2,000 and λ ≈ 2.5·10⁻⁹, docs/SCALE.md)
REFINED_ORDER = 8


class _SpectralEstimator(KernelPathEstimator):
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
        self.gram_: NDArray[np.float64] | None = None
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
        gram = self.kernel_(X, X)
        if gram.size <= BLOCK_ENTRIES:  # kept for refining the solution (no larger than a block)
            self.gram_ = gram
        return dense_spectrum(gram, y, self._centered)

    def _intercept(self, coef: NDArray[np.float64]) -> NDArray[np.float64]:
        """b for coefficients ``coef`` ((p,) or (L, p)): the mean training prediction on the mean
        rating (ranking), 0 (regression)."""
        if not self._centered:
            return np.zeros(coef.shape[:-1])
        return self.y_mean_ - coef @ self.spectrum_.feature_mean

    def _solution(self, lams: NDArray[np.float64]) -> tuple[NDArray, NDArray, NDArray]:
        coef = self.spectrum_.coefficients(self.filter_, lams)
        return coef, self._intercept(coef), self.spectrum_.factors(self.filter_, lams)

    def _operator_product(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """K̃v = CKCv/m (ranking) or Kv/m (regression), O(m²): with ``gram_`` when it was kept,
        else the kernel matrix recomputed from ``X_fit_`` in row blocks of bounded memory, as in
        ``predict``."""
        if self._centered:
            v = v - v.mean()
        out = np.empty(len(v))
        blocks: Iterable[tuple[slice, NDArray]]
        if self.gram_ is not None:
            blocks = [(slice(None), self.gram_)]
        else:
            assert self.X_fit_ is not None, "the dense solution keeps its training inputs"
            blocks = self._feature_blocks(self.X_fit_)
        for rows, features in blocks:
            out[rows] = features @ v
        if self._centered:
            out -= out.mean()
        return out / len(v)

    def _set_solution(self, lam: float) -> None:
        """The solution at λ; for (iterated) Lavrentiev on the dense eigendecomposition refined to
        working precision against the kernel matrix (:func:`~ranking_core.spectral.
        refined_lavrentiev`; Kriukova et al. 2014, eqs. (4), (13)). The other filters solve no
        linear system and the low-rank and primal forms approximate or replace K: their solution
        is the spectral formula's, as on the λ path; so is iterated Lavrentiev of an order above
        :data:`REFINED_ORDER` (its closed form, :class:`~ranking_core.filters.IteratedLavrentiev`,
        instead of k refined solves)."""
        steps = lavrentiev_steps(self.filter_)
        # orders above REFINED_ORDER take the filter's closed form (one filter, not k solves)
        if self.spectrum_.method != "dense" or not steps or steps > REFINED_ORDER:
            super()._set_solution(lam)
            return
        coef = refined_lavrentiev(self.spectrum_, self._operator_product, lam, steps)
        if self._centered:
            coef -= coef.mean()  # c lies in the range of C; drop the round-off along 1
        self.coef_ = coef
        self.intercept_ = float(self._intercept(coef))


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
    gram_ : (m, m) kernel matrix K on the training inputs, kept by the dense solver for the
        refinement of ``coef_`` when it has at most ``BLOCK_ENTRIES`` (2²², m ≤ 2,048)
        entries; otherwise ``None`` and recomputed in row blocks.
    coef_ : (m,) kernel coefficients c (or (d,) weights for the primal form); for (iterated)
        Lavrentiev on the dense solver refined to working precision, the other filters and
        solvers as the spectral formula gives them.
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
