"""Matrix-free conjugate gradients for the Lavrentiev ranking system (DESIGN §3 "Large m").

The exact Lavrentiev ranker (Kriukova et al. 2014, eq. (4); MPRank, Cortes et al. 2007, eq. (13))
has coefficients

    (K̃ + λI) c = Cy/m,   K̃ = CKC/m,   C = I − 11ᵀ/m.

K̃ + λI is symmetric positive definite, so conjugate gradients apply; each iteration needs one
product with K, formed in row blocks of the kernel (O(m²) time, O(m·block) memory), so m = 20,000
needs no 3.2 GB Gram matrix. Started from 0, every iterate stays in range(C), where the system is
the ranker's. An optional Nyström preconditioner (K ≈ LLᵀ from a greedy pivoted Cholesky with r
columns) applies (Z Zᵀ + λI)⁻¹, Z = CL/√m, by the Woodbury identity in O(m r); it clusters the
spectrum so that few iterations are needed (the idea of FALKON).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray
from scipy.sparse.linalg import LinearOperator, cg

from ranking_core.kernels import Kernel
from ranking_core.spectral import pivoted_cholesky
from ranking_core.validation import check_training_data, positive_float

__all__ = ["CGOptions", "CGSolution", "lavrentiev_cg"]


@dataclass(frozen=True)
class CGOptions:
    """Knobs that do not change the solution (only time and memory).

    Attributes
    ----------
    cache_bytes : keep the whole Gram matrix in memory when it fits in this many bytes
        (8·m² bytes); otherwise recompute kernel blocks in every product.
    block_entries : kernel entries per row block of a matrix-free product (8 bytes each).
    """

    cache_bytes: int = 1 << 28
    block_entries: int = 1 << 22


@dataclass(frozen=True)
class CGSolution:
    """Coefficients of the Lavrentiev ranker found by conjugate gradients.

    Attributes
    ----------
    coef : (m,) kernel coefficients c; f(x) = Σ c_i K(x, x_i) + intercept.
    intercept : b, so that the mean training prediction equals the mean rating.
    iterations : CG iterations used.
    converged : whether ‖r‖ ≤ tol·‖Cy/m‖ was reached within ``maxiter``.
    """

    coef: NDArray[np.float64]
    intercept: float
    iterations: int
    converged: bool


def _gram_product(kernel: Kernel, X: NDArray, options: CGOptions):
    m = len(X)
    if 8 * m * m <= options.cache_bytes:
        K = kernel(X, X)
        return lambda v: K @ v
    step = max(1, options.block_entries // m)

    def product(v: NDArray) -> NDArray:
        out = np.empty(m)
        for start in range(0, m, step):
            rows = slice(start, min(start + step, m))
            out[rows] = kernel(X[rows], X) @ v
        return out

    return product


def _nystrom_preconditioner(kernel: Kernel, X: NDArray, lam: float, rank: int) -> LinearOperator:
    """(ZZᵀ + λI)⁻¹ with Z = CL/√m, K ≈ LLᵀ (greedy pivoted Cholesky, r = ``rank``); O(m r)."""
    m = len(X)
    L, _ = pivoted_cholesky(kernel, X, 1e-14, min(rank, m), partial=True)
    Z = (L - L.mean(axis=0)) / np.sqrt(m)
    inner = scipy.linalg.cho_factor(Z.T @ Z + lam * np.eye(Z.shape[1]))

    def apply(v: NDArray) -> NDArray:
        v = np.ravel(v)
        return (v - Z @ scipy.linalg.cho_solve(inner, Z.T @ v)) / lam

    return LinearOperator((m, m), matvec=apply, dtype=np.float64)


def lavrentiev_cg(
    kernel: Kernel,
    X: ArrayLike,
    y: ArrayLike,
    lam: float,
    *,
    tol: float = 1e-8,
    maxiter: int | None = None,
    preconditioner_rank: int = 0,
    options: CGOptions = CGOptions(),
) -> CGSolution:
    """Solve (K̃ + λI)c = Cy/m (Kriukova et al. 2014, eq. (4), Lavrentiev) by conjugate gradients.

    Parameters
    ----------
    kernel : a :class:`~ranking_core.kernels.Kernel` (e.g. ``GaussianKernel(1e4)``).
    X : (m, d) inputs (mg/dL for glucose pairs); y : (m,) ratings.
    lam : λ > 0.
    tol : relative residual ‖(K̃ + λI)c − Cy/m‖ ≤ tol·‖Cy/m‖.
    maxiter : iteration cap (default 10·m).
    preconditioner_rank : r > 0 adds the Nyström preconditioner of rank r (O(m r²) to build).
    options : :class:`CGOptions` (memory only).

    Cost O(m²) kernel evaluations (or one Gram matrix when it fits ``options.cache_bytes``) and
    O(m²) flops per iteration; memory O(m·block) when matrix-free.
    """
    owner = "lavrentiev_cg"
    lam = positive_float(lam, "lam", owner)
    X, y = check_training_data(X, y, owner)
    m = len(y)
    product = _gram_product(kernel, X, options)

    def operator(v: NDArray) -> NDArray:
        v = np.ravel(v)
        kv = product(v - v.mean())
        return (kv - kv.mean()) / m + lam * v

    A = LinearOperator((m, m), matvec=operator, dtype=np.float64)
    b = (y - y.mean()) / m
    M = None
    if preconditioner_rank > 0:
        M = _nystrom_preconditioner(kernel, X, lam, preconditioner_rank)
    iterations = 0

    def count(_: NDArray) -> None:
        nonlocal iterations
        iterations += 1

    coef, info = cg(A, b, rtol=tol, atol=0.0, maxiter=maxiter or 10 * m, M=M, callback=count)
    coef -= coef.mean()  # remove round-off drift out of range(C)
    intercept = float(y.mean() - product(coef).mean())
    return CGSolution(coef=coef, intercept=intercept, iterations=iterations, converged=info == 0)
