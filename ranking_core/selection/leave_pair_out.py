"""Exact leave-pair-out cross-validation of the least-squares ranker (Pahikkala et al. 2009, §3.4,
Cortes et al. 2007, §2.6).

For the Lavrentiev ranker (MPRank / RankRLS with the magnitude-preserving cost) the model trained
on all points but a pair U = {h₁, h₂} has, on the m inputs, the predictions (Pahikkala et al. 2009,
eq. (36))

    f_Ū(X) = (L̃ + λ'K⁻¹)⁻¹ L̃ y,   λ' = (m − 2)²·λ,

where L̃ = (m − 2)I − BBᵀ is the Laplacian of the complete graph on the m − 2 kept points (eq. (37),
B ∈ ℝ^{m×3}) and λ is the ranker's λ (the scaling of Kriukova et al. 2014: the objective of a fit on
m − 2 points is (m − 2)⁻²·(y − f)ᵀL̃(y − f) + λ‖f‖²). With
Q = (D̃ + λ'K⁻¹)⁻¹ = V diag(σ/(λ' + (m − 2)σ)) Vᵀ from one eigendecomposition K = V diag(σ) Vᵀ,
the Sherman–Morrison–Woodbury formula (eq. (38)) gives the two held-out predictions from a 3 × 3
system per pair:

    f_Ū(X_U) = (QL̃y)_U − (QB)_U (BᵀQB − I)⁻¹ BᵀQL̃y.

Every entry of BᵀQB, (QB)_U and BᵀQL̃y is a combination of Q_UU, (Q1)_U, (Qy)_U, 1ᵀQ1, 1ᵀQy
and y_U, so after the O(m³) decomposition all m(m − 1)/2 pairs cost O(m²) in total (vectorised
over pairs here). K⁻¹ never has to exist: Q is well defined for a singular Gram matrix.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator

from ranking_core.filters import Lavrentiev, make_filter
from ranking_core.kernels import Kernel, make_kernel
from ranking_core.validation import check_training_data, positive_float

__all__ = ["leave_pair_out", "leave_pair_out_differences", "leave_pair_out_squared"]

# pairs handled per vectorised block (each pair holds a few 3 × 3 matrices)
PAIR_BLOCK = 1 << 16


def _lavrentiev_setup(ranker: BaseEstimator, owner: str) -> tuple[Kernel, float]:
    params = ranker.get_params()
    if not isinstance(make_filter(params.get("filter", "lavrentiev")), Lavrentiev):
        raise ValueError(
            f"{owner}: the exact shortcut holds for the least-squares (Lavrentiev) ranker only; "
            f"got filter={params.get('filter')!r}"
        )
    kernel = make_kernel(
        params.get("kernel", "gaussian"),
        gamma=params.get("gamma"),
        degree=params.get("degree"),
        coef0=params.get("coef0"),
    )
    return kernel, positive_float(params.get("lam"), "lam", owner)


def _pair_blocks(m: int) -> Iterator[tuple[NDArray[np.intp], NDArray[np.intp]]]:
    first, second = np.triu_indices(m, 1)
    for start in range(0, len(first), PAIR_BLOCK):
        yield first[start : start + PAIR_BLOCK], second[start : start + PAIR_BLOCK]


def _held_out_predictions(
    K: NDArray[np.float64], y: NDArray[np.float64], lam: float
) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float64]]:
    """(i, j, F) for every pair i < j: F[:, 0] = f_ij(x_i), F[:, 1] = f_ij(x_j), where f_ij is
    the Lavrentiev ranker fitted without i and j (up to its constant); Pahikkala et al. 2009, eq.
    (38)."""
    m = len(y)
    kept = m - 2
    sigma, V = scipy.linalg.eigh((K + K.T) / 2.0, driver="evd")
    sigma = np.maximum(sigma, 0.0)
    Q = (V * (sigma / (kept**2 * lam + kept * sigma))) @ V.T
    s = np.sqrt(kept)
    y = y - y.mean()  # L̃ annihilates constants, so the shift changes nothing but round-off
    q1, u = Q.sum(axis=1), Q @ y
    q11, u1, total = q1.sum(), u.sum(), y.sum()
    diag = np.diag(Q)
    firsts, seconds, predictions = [], [], []
    for i, j in _pair_blocks(m):
        Qii, Qjj, Qij = diag[i], diag[j], Q[i, j]
        a_i = q1[i] - Qii - Qij  # (Q(1 − e_i − e_j))_i
        a_j = q1[j] - Qij - Qjj
        n = len(i)
        G = np.empty((n, 3, 3))  # BᵀQB
        G[:, 0, 0] = q11 - 2.0 * q1[i] - 2.0 * q1[j] + Qii + Qjj + 2.0 * Qij
        G[:, 0, 1] = G[:, 1, 0] = s * a_i
        G[:, 0, 2] = G[:, 2, 0] = s * a_j
        G[:, 1, 1] = kept * Qii
        G[:, 1, 2] = G[:, 2, 1] = kept * Qij
        G[:, 2, 2] = kept * Qjj
        By = np.column_stack([total - y[i] - y[j], s * y[i], s * y[j]])  # Bᵀy
        BQy = np.column_stack([u1 - u[i] - u[j], s * u[i], s * u[j]])  # BᵀQy
        QB_U = np.empty((n, 2, 3))  # rows i and j of QB
        QB_U[:, 0] = np.column_stack([a_i, s * Qii, s * Qij])
        QB_U[:, 1] = np.column_stack([a_j, s * Qij, s * Qjj])
        BQLy = kept * BQy - np.einsum("pab,pb->pa", G, By)  # BᵀQL̃y, L̃ = D̃ − BBᵀ
        QLy_U = kept * np.column_stack([u[i], u[j]]) - np.einsum("pab,pb->pa", QB_U, By)
        G[:, [0, 1, 2], [0, 1, 2]] -= 1.0
        correction = np.linalg.solve(G, BQLy[:, :, None])[:, :, 0]
        predictions.append(QLy_U - np.einsum("pab,pb->pa", QB_U, correction))
        firsts.append(i)
        seconds.append(j)
    return np.concatenate(firsts), np.concatenate(seconds), np.concatenate(predictions)


def leave_pair_out_differences(
    ranker: BaseEstimator, X: ArrayLike, y: ArrayLike
) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float64]]:
    """Held-out predictions of every leave-pair-out round, without refitting.

    Parameters
    ----------
    ranker : an (unfitted or fitted) ranker with the Lavrentiev filter, e.g.
        ``SpectralRanker(filter="lavrentiev")``; its kernel parameters and ``lam`` are used.
    X : (m, d) inputs; y : (m,) ratings.

    Returns
    -------
    i, j : (m(m − 1)/2,) the pairs i < j.
    predictions : (m(m − 1)/2, 2) f_ij(x_i) and f_ij(x_j), f_ij trained on all points but i and
        j (exact up to the additive constant, which no pairwise comparison sees).

    Cost O(m³) for one eigendecomposition of the Gram matrix plus O(m²) for all pairs (Pahikkala et
    al. 2009 §3.4), instead of m(m − 1)/2 refits.
    """
    owner = "leave_pair_out"
    kernel, lam = _lavrentiev_setup(ranker, owner)
    X, y = check_training_data(X, y, owner)
    if len(y) < 4:
        raise ValueError(f"{owner}: need at least 4 points (2 held out, 2 to train); got {len(y)}")
    return _held_out_predictions(kernel(X, X), y, lam)


def leave_pair_out(ranker: BaseEstimator, X: ArrayLike, y: ArrayLike) -> float:
    """Exact leave-pair-out estimate of pairwise misranking (Pahikkala et al. 2009, §3.4; Kriukova
    et al. 2014, eq. (1)).

    The share of pairs (i, j) with y_i > y_j for which the ranker trained on all points but i and
    j scores f(x_i) ≤ f(x_j). O(m³ + m²) instead of m(m − 1)/2 refits; exact for the
    Lavrentiev (least-squares) ranker.
    """
    i, j, predictions = leave_pair_out_differences(ranker, X, y)
    y = np.asarray(y, dtype=np.float64).ravel()
    direction = np.sign(y[i] - y[j])
    comparable = direction != 0
    wrong = direction[comparable] * (predictions[comparable, 0] - predictions[comparable, 1]) <= 0
    return float(wrong.mean())


def leave_pair_out_squared(ranker: BaseEstimator, X: ArrayLike, y: ArrayLike) -> float:
    """Leave-one-pair-out error of MPRank with the squared magnitude-preserving cost (Cortes et al.
    2007 eq. (17) with c²_MP of eq. (5)):

        LOO = 1/(m(m − 1)) Σ_{i≠j} [(f_ij(x_j) − f_ij(x_i)) − (y_j − y_i)]².

    Cortes et al. 2007, Proposition 2 approximates this with h̄' ≈ h̄; here the held-out predictions
    are exact (Pahikkala et al. 2009, eq. (38)), so no approximation is made. Cost O(m³ + m²).
    """
    i, j, predictions = leave_pair_out_differences(ranker, X, y)
    y = np.asarray(y, dtype=np.float64).ravel()
    residual = (predictions[:, 1] - predictions[:, 0]) - (y[j] - y[i])
    return float(np.mean(residual**2))  # each unordered pair counts for (i, j) and (j, i)
