"""The lattice system at many λ from one factorisation: Lanczos for shifted systems.

The glucose-lattice solve of :class:`~ranking_core.learners.direct.DirectRanker` is

    M(λ) F = r,   M(λ) = diag(u) − uuᵀ + λQ,   Q = T₀ ⊗ T₁,

with M(λ) symmetric positive definite for λ > 0. A search for λ (the validation curve of
:func:`~ranking_core.learners.direct.fast_kfold_lambda`) needs F at many λ; each factorisation
costs about ten solves with a kept factor. Near a λ₀ whose factor is at hand,

    M(λ) = P (I + σB),   P = M(λ₀),   B = P⁻¹Q,   σ = λ − λ₀,

and B is self-adjoint and positive semi-definite in the P inner product ⟨x, y⟩_P = xᵀPy (PB = Q
is symmetric). So F(λ) = (I + σB)⁻¹P⁻¹r for every λ lies in the one Krylov space of B started
at b = P⁻¹r: k steps of the Lanczos process (Lanczos 1952) in the P inner product give
V_k = [v₁ … v_k] and the tridiagonal T_k = V_kᵀQV_k with BV_k = V_kT_k + β_{k+1}v_{k+1}e_kᵀ, and

    F_k(σ) = V_k y(σ),   (I + σT_k) y(σ) = β₁e₁,   β₁ = ‖b‖_P,

the conjugate-gradient iterate of every shifted system at once (Jegerlehner 1996, "Krylov space
solvers for shifted linear systems"). Each step costs one solve with P's factor and one product
with Q, whatever the number of λ. The residual of each system is σβ_{k+1}(e_kᵀy(σ))·v_{k+1},
whose P⁻¹-norm |σβ_{k+1}e_kᵀy(σ)| is known without forming F; the process stops when it is
below ``tolerance``·β₁ for every λ. The eigenvalues of I + σB lie between 1 and λ/λ₀, so a
bracket of λ within a factor R of λ₀ converges like conjugate gradients at condition number
R: about 15–25 steps for R ≈ 4 at 10⁻¹¹ (``tests/test_lattice_shifted.py`` checks every λ
against a factorisation at that λ).

Only a few linear functionals of F are needed (the values at the validation nodes and the
weighted mean that sets the intercept), so the process keeps ``read(v_j)`` of each Lanczos
vector, not the vectors: memory is that of five vectors of the lattice.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

__all__ = ["SHIFT_TOLERANCE", "shifted_solutions"]

# relative residual (P⁻¹-norm) reached by every shifted system: on 20,000 and 100,000 clean SEG
# ratings the validation values then lie within 3·10⁻¹¹ of those at 10⁻¹² (risk units, 0–4),
# well inside the 10⁻⁹ by which the λ rule ties scores (selection.near_minimum), in 15 and 16
# steps instead of 17 (10⁻¹⁰ saved two more steps but moved them by up to 4·10⁻¹⁰)
SHIFT_TOLERANCE = 1e-11
MAX_STEPS = 300  # Lanczos steps at most (the ratio of a bracket bounds what is needed)


def shifted_solutions(
    precondition: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    q_mul: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    rhs: NDArray[np.float64],
    shifts: NDArray[np.float64],
    read: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    *,
    tolerance: float = SHIFT_TOLERANCE,
    max_steps: int = MAX_STEPS,
) -> tuple[NDArray[np.float64], int]:
    """``read`` of the solutions of (P + σQ)F = r for every σ in ``shifts`` (module doc).

    Parameters
    ----------
    precondition : v ↦ P⁻¹v (P symmetric positive definite: a kept factorisation).
    q_mul : v ↦ Qv (Q symmetric positive semi-definite).
    rhs : (N,) r.
    shifts : (s,) σ with P + σQ positive definite (σ > −λ₀ on the lattice).
    read : v ↦ (k,) linear functionals of a vector (values at some nodes, a weighted sum).

    Returns
    -------
    ((s, k) ``read(F(σ))`` for each σ, the number of Lanczos steps taken).

    Raises ValueError when ``max_steps`` steps leave a residual above ``tolerance``.
    """
    shifts = np.asarray(shifts, dtype=np.float64)
    b = precondition(rhs)
    beta1 = float(np.sqrt(b @ rhs))  # ‖b‖_P = √(bᵀPb) = √(bᵀr)
    if beta1 == 0.0:
        return np.zeros((len(shifts), len(read(b)))), 0
    v, pv = b / beta1, rhs / beta1  # v_j and Pv_j (no product with P is ever formed)
    v_old = pv_old = np.zeros_like(b)
    alphas: list[float] = []
    betas: list[float] = []  # β₂, β₃, …
    reads = []
    for step in range(1, max_steps + 1):
        reads.append(read(v))
        q = q_mul(v)
        alpha = float(v @ q)
        previous = betas[-1] if betas else 0.0
        w = precondition(q) - alpha * v - previous * v_old
        pw = q - alpha * pv - previous * pv_old
        beta = float(np.sqrt(max(float(w @ pw), 0.0)))
        alphas.append(alpha)
        betas.append(beta)
        coefficients = _tridiagonal_solutions(np.array(alphas), np.array(betas[:-1]), shifts)
        residual = np.abs(shifts * beta * coefficients[:, -1]) * beta1
        if beta == 0.0 or np.all(residual <= tolerance * beta1):
            return beta1 * coefficients @ np.array(reads), step
        v_old, pv_old, v, pv = v, pv, w / beta, pw / beta
    raise ValueError(
        f"shifted_solutions: {max_steps} Lanczos steps left a relative residual of "
        f"{float(np.max(residual)) / beta1:.1e} (> {tolerance:.0e}); the λ lie too far from "
        "the factor's"
    )


def _tridiagonal_solutions(
    alphas: NDArray[np.float64], offdiagonal: NDArray[np.float64], shifts: NDArray[np.float64]
) -> NDArray[np.float64]:
    """(s, k) y(σ) with (I + σT) y = e₁ for T = tridiag(β, α, β), one banded solve per σ."""
    k = len(alphas)
    out = np.empty((len(shifts), k))
    e1 = np.zeros(k)
    e1[0] = 1.0
    for i, sigma in enumerate(shifts):
        bands = np.zeros((3, k))
        bands[0, 1:] = sigma * offdiagonal
        bands[1] = 1.0 + sigma * alphas
        bands[2, :-1] = sigma * offdiagonal
        out[i] = scipy.linalg.solve_banded((1, 1), bands, e1)
    return out
