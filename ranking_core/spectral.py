"""One eigendecomposition per training set; every filter and every λ from it (DESIGN §3).

For ranking (Kriukova et al. 2014, eq. (4) and §3) the operator S*DS/m² acts on kernel coefficients
as CK/m and, on the range of C = I − 11ᵀ/m, coincides with the symmetric matrix K̃ = CKC/m. With
K̃ = U diag(σ) Uᵀ and b = Cy/m,

    c(λ) = g_λ(K̃) b = U (g_λ(σ) ⊙ Uᵀb) + g_λ(0) (b − UUᵀb).

The last term is exact when U spans only part of the space and the rest of the spectrum is treated
as 0 (truncated decompositions); it vanishes for a full basis. For the Lavrentiev filters at
λ ≪ σ_max this formula keeps only part of the digits; :func:`refined_lavrentiev` recovers them
by iterative refinement against the original operator. For supervised regression (SLR,
Kriukova et al. 2014, §4.1) the same algebra applies to K/m and b = y/m with no centring.

Three ways to obtain (U, σ):

* ``dense``   — ``scipy.linalg.eigh`` of K̃: O(m³) once.
* ``low-rank``— pivoted Cholesky K ≈ LLᵀ (rank r, residual trace ≤ tol·trace K), then the thin
  SVD of CL/√m: O(m r²). Smooth kernels on low-dimensional inputs (glucose pairs) give r ≪ m.
* ``primal``  — explicit features (linear kernel, d < m; Pahikkala et al. 2009, §3.1): eigh of the d
× d
  covariance X_cᵀX_c/m and coefficients w in feature space, O(d³ + d²m).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, overload

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

from ranking_core.filters import Filter, IteratedLavrentiev, Lavrentiev
from ranking_core.kernels import Kernel

__all__ = [
    "REFINEMENT_STEPS",
    "Spectrum",
    "dense_spectrum",
    "kernel_spectrum",
    "lavrentiev_steps",
    "lowrank_spectrum",
    "pivoted_cholesky",
    "primal_spectrum",
    "refined_lavrentiev",
]

# Iterative refinement of a Lavrentiev solve takes at most this many correction steps.
REFINEMENT_STEPS = 3


@dataclass(frozen=True)
class Spectrum:
    """An immutable eigen-decomposition of the training operator, ready to be filtered.

    Attributes
    ----------
    vectors : (p, r) eigenvectors (p = m training points, or d features for ``primal``).
    values : (r,) eigenvalues σ ≥ 0.
    rhs : (p,) the right-hand side b itself (kept for iterative refinement).
    projection : (r,) Uᵀb, the right-hand side in the eigenbasis.
    residual : (p,) b − UUᵀb, the part of b outside span(U) (zero for a full basis).
    feature_mean : (p,) mean over the training inputs of the feature map (kernel row or x),
        used to put the mean training prediction on the mean rating.
    norm_weights : (r,) w_k such that ‖f_λ‖²_H = Σ_k w_k g_λ(σ_k)² (for quasi-optimality).
    method : ``"dense"``, ``"low-rank"`` or ``"primal"``.
    """

    vectors: NDArray[np.float64]
    values: NDArray[np.float64]
    rhs: NDArray[np.float64]
    projection: NDArray[np.float64]
    residual: NDArray[np.float64]
    feature_mean: NDArray[np.float64]
    norm_weights: NDArray[np.float64]
    method: str

    @property
    def rank(self) -> int:
        return int(self.values.size)

    def factors(self, filter: Filter, lams: NDArray[np.float64]) -> NDArray[np.float64]:
        """g_λ(σ) for every λ, shape (len(lams), r)."""
        return filter.factors(self.values[None, :], np.asarray(lams, dtype=np.float64)[:, None])

    def coefficients(self, filter: Filter, lams: NDArray[np.float64]) -> NDArray[np.float64]:
        """c(λ) for every λ, shape (len(lams), p); O(len(lams)·p·r) flops."""
        lams = np.asarray(lams, dtype=np.float64)
        # one call with σ = 0 appended, so that data-dependent filters (Landweber's step) see
        # the same spectrum for g_λ(σ) and g_λ(0)
        with_zero = filter.factors(np.append(self.values, 0.0)[None, :], lams[:, None])
        coef = (with_zero[:, :-1] * self.projection) @ self.vectors.T
        if self.method != "primal":
            coef += with_zero[:, -1:] * self.residual
        return coef


def lavrentiev_steps(filter: Filter) -> int:
    """k when c(λ) solves k linear systems: k-times iterated Lavrentiev (Kriukova et al. 2014,
    eq. (13)), 1 for Lavrentiev (eq. (4)); 0 for the filters without a linear system (spectral
    cut-off, Landweber, Showalter, ν-method)."""
    if isinstance(filter, IteratedLavrentiev):
        return int(filter.k)
    return 1 if isinstance(filter, Lavrentiev) else 0


def refined_lavrentiev(
    spectrum: Spectrum, operator: Callable[[NDArray], NDArray], lam: float, steps: int
) -> NDArray[np.float64]:
    """c(λ) of ``steps``-times iterated Lavrentiev regularization to working precision.

    With A the operator that ``spectrum`` decomposes in a full basis (``"dense"``: K̃ = CKC/m or
    K/m) and b = ``spectrum.rhs``: c_0 = 0 and (A + λI) c_j = r_j = b + λ c_{j−1} for j = 1..k
    (Kriukova et al. 2014, eq. (13); k = 1 is eq. (4)). The eigendecomposition alone loses
    digits as λ/σ_max falls (A + λI has condition number (σ_max + λ)/λ; about six digits at
    m = 2,000 and λ ≈ 2.5·10⁻⁹, docs/SCALE.md). Each solve therefore starts from
    x = U(σ + λ)⁻¹Uᵀr_j and is refined, x ← x + U(σ + λ)⁻¹Uᵀ(r_j − (A + λI)x), with the
    residual from ``operator`` (v ↦ Av from the original matrix, not from U and σ): at most
    :data:`REFINEMENT_STEPS` steps, a step kept only if it lowers the residual norm, and no
    further step once the norm falls by less than half. Cost per step: one product with A and
    O(m²) flops.
    """
    vectors, shifted = spectrum.vectors, spectrum.values + lam

    def solve(rhs: NDArray) -> NDArray:
        x = vectors @ ((vectors.T @ rhs) / shifted)
        residual = rhs - operator(x) - lam * x
        for _ in range(REFINEMENT_STEPS):
            trial = x + vectors @ ((vectors.T @ residual) / shifted)
            trial_residual = rhs - operator(trial) - lam * trial
            before, after = np.linalg.norm(residual), np.linalg.norm(trial_residual)
            if after < before:
                x, residual = trial, trial_residual
            if after > before / 2:
                break
        return x

    coef = np.zeros_like(spectrum.rhs)
    for _ in range(steps):
        coef = solve(spectrum.rhs + lam * coef)
    return coef


def _center_columns(A: NDArray[np.float64]) -> NDArray[np.float64]:
    return A - A.mean(axis=0)


def kernel_spectrum(
    vectors: NDArray, values: NDArray, b: NDArray, feature_mean: NDArray, method: str
) -> Spectrum:
    """The :class:`Spectrum` of a kernel-coefficient decomposition: b projected on the vectors,
    the part of b outside them, and the weights m·σ·projection² of the RKHS norm."""
    projection = vectors.T @ b
    return Spectrum(
        vectors=vectors,
        values=values,
        rhs=b,
        projection=projection,
        residual=b - vectors @ projection,
        feature_mean=feature_mean,
        norm_weights=len(b) * values * projection**2,
        method=method,
    )


def dense_spectrum(K: NDArray[np.float64], y: NDArray[np.float64], centered: bool) -> Spectrum:
    """Full eigendecomposition of K̃ = CKC/m (``centered``) or K/m; O(m³)."""
    m = len(y)
    if centered:
        operator = _center_columns(_center_columns(K).T) / m  # C K C / m (K symmetric)
        b = (y - y.mean()) / m
    else:
        operator = K / m
        b = y / m
    operator = (operator + operator.T) / 2.0
    values, vectors = scipy.linalg.eigh(operator, driver="evd", overwrite_a=True)
    return kernel_spectrum(vectors, np.maximum(values, 0.0), b, K.mean(axis=0), "dense")


@overload
def pivoted_cholesky(
    kernel: Kernel, X: NDArray[np.float64], tol: float, max_rank: int, *, partial: Literal[True]
) -> tuple[NDArray[np.float64], NDArray[np.intp]]: ...
@overload
def pivoted_cholesky(
    kernel: Kernel, X: NDArray[np.float64], tol: float, max_rank: int, *, partial: bool = False
) -> tuple[NDArray[np.float64], NDArray[np.intp]] | None: ...
def pivoted_cholesky(
    kernel: Kernel, X: NDArray[np.float64], tol: float, max_rank: int, *, partial: bool = False
) -> tuple[NDArray[np.float64], NDArray[np.intp]] | None:
    """Greedy pivoted Cholesky K ≈ LLᵀ of the Gram matrix, evaluating only r kernel columns.

    Stops when the residual trace Σ diag(K − LLᵀ) ≤ tol·trace(K); returns (L (m, r), pivots),
    or ``None`` if that needs more than ``max_rank`` columns (with ``partial=True``: the first
    ``max_rank`` columns and pivots instead, e.g. to pick Nyström centres). Cost O(m r²).
    """
    m = len(X)
    diag = kernel.diagonal(X).astype(np.float64, copy=True)
    target = tol * diag.sum()
    factor_t = np.empty((min(max_rank, m), m))  # row k holds column k of L
    pivots: list[int] = []
    for k in range(min(max_rank, m)):
        if diag.sum() <= target:
            return factor_t[:k].T.copy(), np.asarray(pivots, dtype=np.intp)
        p = int(np.argmax(diag))
        column = kernel(X, X[p : p + 1])[:, 0] - factor_t[:k].T @ factor_t[:k, p]
        factor_t[k] = column / np.sqrt(diag[p])
        diag -= factor_t[k] ** 2
        diag[p] = 0.0
        pivots.append(p)
    if partial or diag.sum() <= target:
        return factor_t.T.copy(), np.asarray(pivots, dtype=np.intp)
    return None


def lowrank_spectrum(L: NDArray[np.float64], y: NDArray[np.float64], centered: bool) -> Spectrum:
    """Spectrum of K̃ ≈ (CL)(CL)ᵀ/m from a factor K ≈ LLᵀ by a thin SVD; O(m r²)."""
    m = len(y)
    Z = (_center_columns(L) if centered else L) / np.sqrt(m)
    vectors, singular, _ = scipy.linalg.svd(Z, full_matrices=False, lapack_driver="gesdd")
    b = (y - y.mean()) / m if centered else y / m
    return kernel_spectrum(vectors, singular**2, b, L @ L.mean(axis=0), "low-rank")


def primal_spectrum(X: NDArray[np.float64], y: NDArray[np.float64], centered: bool) -> Spectrum:
    """Primal form for explicit features (Pahikkala et al. 2009, §3.1): w(λ) = g_λ(X_cᵀX_c/m) X_cᵀ
    y/m.

    Uses g(AᵀA)Aᵀ = Aᵀg(AAᵀ) with A = X_c/√m, so predictions equal the dual solution's.
    Cost O(d²m + d³).
    """
    m = len(y)
    Xc = _center_columns(X) if centered else X
    values, vectors = scipy.linalg.eigh(Xc.T @ Xc / m, driver="evd")
    values = np.maximum(values, 0.0)
    rhs = Xc.T @ y / m
    projection = vectors.T @ rhs
    return Spectrum(
        vectors=vectors,
        values=values,
        rhs=rhs,
        projection=projection,
        residual=np.zeros(X.shape[1]),
        feature_mean=X.mean(axis=0),
        norm_weights=projection**2,
        method="primal",
    )
