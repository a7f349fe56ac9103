"""Lavrentiev ranking at one λ solved directly: a dense Cholesky solve, or the glucose lattice.

The Lavrentiev ranker (Kriukova et al. 2014, eq. (4)) has kernel coefficients

    (K̃ + λI) c = Cy/m,   K̃ = CKC/m,   C = I − 11ᵀ/m,

and f(x) = Σ c_i K(x, x_i) + b with b putting the mean training prediction on the mean rating. When
λ is already known (after a model choice), no eigendecomposition is needed:

* ``cholesky`` — one Cholesky factorisation of K̃ + λI, O(m³/3) flops (about a tenth of the time
  of the dense eigendecomposition that :class:`~ranking_core.SpectralRanker` caches for a whole
  λ path) and 8m² bytes. Same solution as the eigendecomposition up to round-off.
* ``lattice`` — for the L1 (Laplacian) kernel exp(−‖t(x) − t(x')‖₁/γ), optionally on warped
  glucose t (:class:`~ranking_core.grids.coordinates.GlucoseTransform`), with the inputs rounded to
  the integer mg/dL lattice 0..600 (step ``lattice_step``). On a sorted 1-D point set the
  exponential (Ornstein–Uhlenbeck) kernel has a tridiagonal inverse T, so the Gram matrix of the
  601 × 601 lattice is K₁ ⊗ K₁ with the sparse inverse Q = T ⊗ T (nine entries a row). With S the
  m × N selection of the training points on the lattice, the ranker's values F on the whole
  lattice minimise (1/m)(y − SF)ᵀC(y − SF) + λFᵀQF, i.e.

      (diag(s)/m − uuᵀ + λQ) F = Sᵀ(y − ȳ)/m,   s = Sᵀ1 (points per node), u = s/m,

  a sparse system of N = 361,201 unknowns whatever m is, solved by one sparse LU factorisation
  (SuperLU) and the Sherman–Morrison formula for uuᵀ. Then c = C(y − SF)/(mλ) (from
  λc = C(y − Kc)/m) and b = ȳ − mean(SF). Memory is that of the sparse factor (about 0.5 GB),
  never an m × m matrix.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ranking_core.grids.coordinates import GlucoseTransform, TransformedKernel
from ranking_core.grids.seg import GLUCOSE_MAX
from ranking_core.kernels import Kernel, LaplacianKernel, make_kernel
from ranking_core.learners.base import (
    CheckedInputsMixin,
    KernelMixin,
    RankingScoreMixin,
    store_params,
)
from ranking_core.validation import (
    check_inputs,
    check_training_data,
    describe_rows,
    one_of,
    positive_float,
)

__all__ = ["LATTICE_FROM", "DirectRanker", "lattice_kernel_parts", "ou_precision"]

SOLVERS = ("auto", "cholesky", "lattice")
# "auto" uses the lattice (when the kernel allows it) from this many training points on; below,
# the dense Cholesky solve is faster (8m² bytes: 288 MB at m = 6,000).
LATTICE_FROM = 6000


def ou_precision(coords: ArrayLike, gamma: float) -> scipy.sparse.csc_matrix:
    """Inverse of the Gram matrix exp(−|u_i − u_j|/γ) on strictly increasing points u (tridiagonal).

    With ρ_i = exp(−(u_{i+1} − u_i)/γ) (the AR(1) form of the Ornstein–Uhlenbeck process):
    T_{i,i+1} = −ρ_i/(1 − ρ_i²) = −1/(2 sinh(Δ_i/γ)) and
    T_ii = 1 + Σ_{neighbour gaps} ρ²/(1 − ρ²), with ρ²/(1 − ρ²) = 1/expm1(2Δ/γ).
    """
    u = np.asarray(coords, dtype=np.float64)
    gaps = np.diff(u)
    if np.any(gaps <= 0):
        raise ValueError("ou_precision: the coordinates must be strictly increasing")
    scaled = gaps / float(gamma)
    ratio = 1.0 / np.expm1(2.0 * scaled)
    main = np.ones(u.size)
    main[:-1] += ratio
    main[1:] += ratio
    off = -0.5 / np.sinh(scaled)
    return scipy.sparse.diags([off, main, off], [-1, 0, 1], format="csc")


def lattice_kernel_parts(kernel: Kernel) -> tuple[float, GlucoseTransform | None] | None:
    """(γ, transform) when ``kernel`` is the L1 kernel, possibly on warped glucose; else None."""
    transform = None
    if isinstance(kernel, TransformedKernel):
        transform, kernel = kernel.transform, kernel.base
    if type(kernel) is not LaplacianKernel:
        return None
    return float(kernel.gamma), transform


def _centered_gram(K: NDArray[np.float64]) -> NDArray[np.float64]:
    """CKC in place (K symmetric)."""
    K -= K.mean(axis=0)
    K -= K.mean(axis=1)[:, None]
    return K


class DirectRanker(KernelMixin, RankingScoreMixin, CheckedInputsMixin, RegressorMixin,
                   BaseEstimator):
    """The Lavrentiev ranker (Kriukova et al. 2014, eq. (4)) at one λ, without a spectrum.

    Same model as ``SpectralRanker(filter="lavrentiev", lam=lam)``; use it once λ is chosen
    (:func:`ranking_core.fast_selection.fast_kfold_lambda` refits with it).

    Parameters
    ----------
    kernel : a kernel name or :class:`~ranking_core.kernels.Kernel` (for the lattice: the
        Laplacian kernel, possibly inside a glucose ``TransformedKernel``).
    gamma : kernel width when ``kernel`` is a name.
    lam : λ > 0.
    solver : ``"cholesky"`` (dense, exact), ``"lattice"`` (L1 kernel on (REF, estimate) in
        0..600 mg/dL; inputs rounded to the lattice) or ``"auto"`` (lattice from
        ``LATTICE_FROM`` training points on when the kernel allows it, Cholesky below).
    lattice_step : lattice spacing in mg/dL (1 = the integer lattice; 600 must be a multiple).

    Attributes
    ----------
    solver_ : the solver used.
    lattice_step_ : mg/dL to which the training inputs were rounded (0.0 for Cholesky).
    relative_residual_ : ‖Ax − b‖/‖b‖ of the solved linear system (the tolerance reached).
    X_fit_ : (m, 2) training inputs (rounded to the lattice for ``"lattice"``).
    coef_ : (m,) kernel coefficients c; intercept_ : b; kernel_ : the resolved kernel.
    surface_ : (n, n) f on the lattice axis × axis (``"lattice"`` only), indexed [REF, estimate].
    lattice_axis_ : (n,) the lattice axis in mg/dL (``"lattice"`` only).
    """

    def __init__(
        self,
        kernel: str | Kernel = "laplacian",
        gamma: float = 1e3,
        lam: float = 1e-3,
        *,
        solver: str = "auto",
        lattice_step: float = 1.0,
    ) -> None:
        store_params(self, locals())

    def fit(self, X: ArrayLike, y: ArrayLike) -> DirectRanker:
        """Solve (K̃ + λI)c = Cy/m once.

        Parameters
        ----------
        X : (m, d) inputs (glucose pairs: REF, estimate in mg/dL); y : (m,) ratings.
        """
        owner = type(self).__name__
        lam = positive_float(self.lam, "lam", owner)
        one_of(self.solver, "solver", SOLVERS, owner)
        X, y = check_training_data(X, y, owner)
        self.kernel_ = make_kernel(self.kernel, gamma=self.gamma)
        self.n_features_in_ = X.shape[1]
        parts = lattice_kernel_parts(self.kernel_) if X.shape[1] == 2 else None
        solver = self.solver
        if solver == "auto":
            solver = "lattice" if parts is not None and len(y) >= LATTICE_FROM else "cholesky"
        if solver == "lattice":
            if parts is None:
                raise ValueError(f"{owner}: solver='lattice' needs the Laplacian (L1) kernel on "
                                 f"2 inputs (REF, estimate); got {self.kernel_!r} on "
                                 f"{X.shape[1]} inputs")
            self._fit_lattice(X, y, lam, *parts)
        else:
            self._fit_cholesky(X, y, lam)
        self.solver_ = solver
        return self

    def _fit_cholesky(self, X: NDArray, y: NDArray, lam: float) -> None:
        m = len(y)
        K = self.kernel_(X, X)
        feature_mean = K.mean(axis=0)
        b = (y - y.mean()) / m
        A = _centered_gram(K.copy()) / m
        A[np.diag_indices(m)] += lam
        coef = scipy.linalg.cho_solve(scipy.linalg.cho_factor(A, overwrite_a=False), b)
        residual = A @ coef - b
        self.relative_residual_ = float(np.linalg.norm(residual) / np.linalg.norm(b))
        coef -= coef.mean()  # round-off drift out of range(C)
        self.coef_ = coef
        self.intercept_ = float(y.mean() - coef @ feature_mean)
        self.X_fit_ = X
        self.lattice_step_ = 0.0

    def _fit_lattice(self, X: NDArray, y: NDArray, lam: float, gamma: float,
                     transform: GlucoseTransform | None) -> None:
        owner = type(self).__name__
        step = positive_float(self.lattice_step, "lattice_step", owner)
        n = round(GLUCOSE_MAX / step) + 1
        if abs((n - 1) * step - GLUCOSE_MAX) > 1e-9:
            raise ValueError(f"{owner}: lattice_step must divide {GLUCOSE_MAX} mg/dL; got {step!r}")
        outside = np.flatnonzero(np.any((X < -step / 2) | (X > GLUCOSE_MAX + step / 2), axis=1))
        if outside.size:
            raise ValueError(f"{owner}: solver='lattice' needs glucose values in 0..{GLUCOSE_MAX} "
                             f"mg/dL; {describe_rows(outside)} lie outside")
        index = np.clip(np.rint(X / step).astype(np.intp), 0, n - 1)
        axis = np.arange(n) * step
        coords = axis if transform is None else transform(axis)
        T = ou_precision(coords, gamma)
        m, N = len(y), n * n
        flat = index[:, 0] * n + index[:, 1]
        counts = np.bincount(flat, minlength=N).astype(np.float64)
        u = counts / m
        rhs = np.bincount(flat, weights=y - y.mean(), minlength=N) / m
        Q = scipy.sparse.kron(T, T, format="csc")
        B = (scipy.sparse.diags(u) + lam * Q).tocsc()
        lu = scipy.sparse.linalg.splu(B, permc_spec="MMD_AT_PLUS_A")
        z, w = lu.solve(rhs), lu.solve(u)
        F = z + w * (u @ z) / (1.0 - u @ w)  # Sherman–Morrison for −uuᵀ
        residual = B @ F - u * (u @ F) - rhs
        self.relative_residual_ = float(np.linalg.norm(residual) / np.linalg.norm(rhs))
        fitted = F[flat]
        coef = ((y - y.mean()) - (fitted - fitted.mean())) / (m * lam)
        self.coef_ = coef - coef.mean()
        self.intercept_ = float(y.mean() - fitted.mean())
        self.X_fit_ = index * step
        self.lattice_step_ = step
        self.lattice_axis_ = axis
        self.surface_ = F.reshape(n, n) + self.intercept_

    def lattice_values(self, X: ArrayLike) -> NDArray[np.float64]:
        """f at the lattice nodes nearest to X (``"lattice"`` only): a lookup, O(n)."""
        check_is_fitted(self, "surface_")
        X = check_inputs(X, type(self).__name__, 2)
        n = len(self.lattice_axis_)
        index = np.clip(np.rint(X / self.lattice_step_).astype(np.intp), 0, n - 1)
        return self.surface_[index[:, 0], index[:, 1]]
