"""Reference solutions of the kernel ranker with residuals in extended precision, for tests.

The Lavrentiev ranker's coefficients solve (K̃ + λI)c = Cy/m with K̃ = CKC/m and C = I − 11ᵀ/m
(Kriukova et al. 2014, eq. (4)). Here they come from a Cholesky solve and four steps of iterative
refinement with residuals in ``np.longdouble``, independently of the spectral and direct solvers
under test.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg


def refined_solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x with Ax = b (A symmetric positive definite): Cholesky, then four refinement steps with the
    residual b − Ax formed in extended precision."""
    factor = scipy.linalg.cho_factor(A)
    x = scipy.linalg.cho_solve(factor, b)
    wide_A, wide_b = A.astype(np.longdouble), b.astype(np.longdouble)
    for _ in range(4):
        residual = (wide_b - wide_A @ x.astype(np.longdouble)).astype(np.float64)
        x += scipy.linalg.cho_solve(factor, residual)
    return x


def refined_predictions(
    kernel, X: np.ndarray, y: np.ndarray, lam: float, X_new: np.ndarray, k: int = 1
) -> np.ndarray:
    """Predictions at ``X_new`` of the centred kernel ranker with k-times iterated Lavrentiev
    (Kriukova et al. 2014, eq. (13); k = 1 is eq. (4)), from the closed form
    g_λ(σ) = (1 − (λ/(σ + λ))^k)/σ = Σ_{j=1..k} λ^{j−1}/(σ + λ)^j, i.e.
    c = Σ_j λ^{j−1} x_j with (K̃ + λI) x_j = x_{j−1}, x_0 = Cy/m, each solve by
    :func:`refined_solve`."""
    m = len(y)
    K = kernel(X, X)
    A = (K - K.mean(axis=0) - K.mean(axis=1)[:, None] + K.mean()) / m + lam * np.eye(m)
    x = (y - y.mean()) / m
    coef = np.zeros(m)
    for j in range(k):
        x = refined_solve(A, x)
        coef += lam**j * x
    coef -= coef.mean()
    return kernel(X_new, X) @ coef + y.mean() - K.mean(axis=0) @ coef
