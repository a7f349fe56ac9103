"""Ranking metrics, all vectorised.

* pairwise misranking, Kriukova et al. 2014, eq. (1), in O(n log n);
* magnitude-preserving MSD and M1D, Cortes et al. 2007, eqs. (67)–(68), in O(n) and O(n log n);
* DCG, NDCG, MRR, WTA, Precision@n and expected rank utility, Le & Smola 2007, §3.2 eqs. (9)–(16).
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "Predictor",
    "dcg",
    "expected_rank_utility",
    "mean_1norm_difference",
    "mean_squared_difference",
    "mrr",
    "ndcg",
    "pairwise_misranking",
    "pairwise_misranking_margin",
    "pairwise_misranking_rows",
    "precision_at",
    "wta",
]


class Predictor(Protocol):
    """Anything fitted whose predictions these metrics score: a learner, a view of a λ path, a
    wrapped risk model (:class:`~ranking_core.grids.signed.AbsoluteRisk`)."""

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """Predictions for the rows of X, shape (n,), on the rating scale."""
        ...


def _pair(y_true: ArrayLike, y_score: ArrayLike) -> tuple[NDArray, NDArray]:
    y = np.asarray(y_true, dtype=np.float64).ravel()
    f = np.asarray(y_score, dtype=np.float64).ravel()
    if y.shape != f.shape:
        raise ValueError(f"y_true has {y.size} values but y_score has {f.size}")
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(f))):
        raise ValueError("y_true and y_score must be finite")
    return y, f


def _tied_pairs(*columns: NDArray) -> int:
    """Number of unordered pairs equal in every given column, Σ t(t − 1)/2 over tie groups."""
    order = np.lexsort(columns[::-1])
    sorted_cols = np.stack([c[order] for c in columns])
    starts = np.flatnonzero(np.r_[True, np.any(np.diff(sorted_cols, axis=1) != 0, axis=0)])
    counts = np.diff(np.r_[starts, sorted_cols.shape[1]]).astype(np.int64)
    return int((counts * (counts - 1) // 2).sum())


def pairwise_misranking(y_true: ArrayLike, y_score: ArrayLike) -> float:
    """Share of pairs with y_i > y_j that the scores rank f_i ≤ f_j (Kriukova et al. 2014, eq. (1)).

    .. math:: E_{0-1} = \\frac{\\sum_{i,j} 1\\{y_i > y_j \\wedge f_i \\le f_j\\}}
                              {\\sum_{i,j} 1\\{y_i > y_j\\}}

    Ties in the scores count as errors, ties in y_true are not pairs. Computed in O(n log n)
    from tie counts and Kendall's τ_b (``scipy.stats.kendalltau``, a merge-sort count): with
    n₀ = n(n−1)/2 and t_y, t_f, t_yf the pairs tied in y, in f and in both, the concordant pairs
    are C = ((n₀ − t_y − t_f + t_yf) + τ_b·√((n₀ − t_y)(n₀ − t_f)))/2, and the result is
    1 − C/(n₀ − t_y). Returns NaN when y_true is constant (no pair to rank).
    """
    y, f = _pair(y_true, y_score)
    n = y.size
    total = n * (n - 1) // 2
    tied_y, tied_f = _tied_pairs(y), _tied_pairs(f)
    ordered = total - tied_y
    if ordered == 0:
        return math.nan
    untied = total - tied_y - tied_f + _tied_pairs(y, f)
    concordant = 0
    if untied > 0:
        from scipy.stats import kendalltau  # scipy.stats costs 0.5 s to import: when used

        tau = kendalltau(y, f, variant="b").statistic
        c_minus_d = round(tau * math.sqrt(total - tied_y) * math.sqrt(total - tied_f))
        concordant = (untied + c_minus_d) // 2
    return (ordered - concordant) / ordered


# rows of the pair table handled at once by pairwise_misranking_margin (booleans, so bytes)
_MARGIN_BUDGET = 1 << 24


def pairwise_misranking_margin(y_true: ArrayLike, y_score: ArrayLike, margin: float) -> float:
    """Eq. (1) counted only over pairs whose ratings differ by more than ``margin`` (rating units).

    .. math:: E_t = \\frac{\\sum_{i,j} 1\\{y_i - y_j > t \\wedge f_i \\le f_j\\}}
                           {\\sum_{i,j} 1\\{y_i - y_j > t\\}}

    With t = 0 this is :func:`pairwise_misranking` (Kriukova et al. 2014, eq. (1): only exactly
    equal ratings are not pairs). Continuous ratings (Jester's −10..10 in steps of 0.05) make
    near-equal ratings a pair that eq. (1) asks the scores to order; t > 0 leaves them out, as
    whole-star ratings (MovieLens) do by construction for t < 1. Ties in the scores still count
    as errors. O(n²) time in row blocks of at most 2^24 pairs. Returns NaN when no pair differs by
    more than t.
    """
    if not (math.isfinite(margin) and margin >= 0):
        raise ValueError(f"margin must be a finite number >= 0; got {margin!r}")
    y, f = _pair(y_true, y_score)
    if margin == 0:
        return pairwise_misranking(y, f)
    step = max(1, _MARGIN_BUDGET // max(1, y.size))
    pairs = errors = 0
    for start in range(0, y.size, step):
        ordered = (y[start : start + step, None] - y[None, :]) > margin
        pairs += int(ordered.sum())
        errors += int((ordered & (f[start : start + step, None] <= f[None, :])).sum())
    return errors / pairs if pairs else math.nan


# pairs × rows handled at once by pairwise_misranking_rows (booleans, so bytes)
_ROWS_BUDGET = 1 << 25


def pairwise_misranking_rows(y_true: ArrayLike, y_scores: ArrayLike) -> NDArray[np.float64]:
    """Pairwise misranking (eq. (1)) of every row of ``y_scores`` (L, n) against ``y_true`` (n,).

    For a validation curve over a λ-path: the P ordered pairs y_i > y_j are listed once and all
    rows are compared in vectorised blocks, O(L·P) with P ≤ n²/2, which beats L separate
    O(n log n) calls for the small validation sets of the paper's protocols. Large n falls back to
    :func:`pairwise_misranking` per row.
    """
    y = np.asarray(y_true, dtype=np.float64).ravel()
    F = np.atleast_2d(np.asarray(y_scores, dtype=np.float64))
    if F.shape[1] != y.size:
        raise ValueError(f"y_true has {y.size} values but y_scores has {F.shape[1]} columns")
    upper, lower = np.nonzero(y[:, None] > y[None, :]) if y.size <= 4096 else ((), ())
    if len(upper) == 0 or len(upper) > _ROWS_BUDGET:
        return np.array([pairwise_misranking(y, row) for row in F])
    if not np.all(np.isfinite(F)):
        raise ValueError("y_true and y_score must be finite")
    step = max(1, _ROWS_BUDGET // len(upper))
    out = np.empty(len(F))
    for start in range(0, len(F), step):
        block = F[start : start + step]
        out[start : start + step] = np.mean(block[:, upper] <= block[:, lower], axis=1)
    return out


def mean_squared_difference(y_true: ArrayLike, y_score: ArrayLike) -> float:
    """MSD, Cortes et al. 2007, eq. (67): (1/n²) Σ_i Σ_j ((h_j − h_i) − (y_j − y_i))².

    With d = h − y the double sum equals 2n Σd² − 2(Σd)², so MSD = 2·Var(d) (population
    variance), O(n).
    """
    y, f = _pair(y_true, y_score)
    d = f - y
    return float(2.0 * np.mean((d - d.mean()) ** 2))


def mean_1norm_difference(y_true: ArrayLike, y_score: ArrayLike) -> float:
    """M1D, Cortes et al. 2007, eq. (68): (1/n²) Σ_i Σ_j |(h_j − h_i) − (y_j − y_i)|, O(n log n).

    With d = h − y sorted ascending, Σ_{i<j} (d_(j) − d_(i)) = Σ_k d_(k)(2k − n + 1) (0-based k).
    """
    y, f = _pair(y_true, y_score)
    d = np.sort(f - y)
    n = d.size
    weights = 2.0 * np.arange(n) - n + 1.0
    return float(2.0 * (d @ weights) / n**2)


# --- permutation-based measures (Le & Smola 2007, §3.2)
# --------------------------------------------


def _gains(y: NDArray, gain: str) -> NDArray:
    if gain == "exponential":
        return np.exp2(y) - 1.0
    if gain == "linear":
        return y
    raise ValueError(f"gain must be 'exponential' or 'linear', got {gain!r}")


def dcg(
    y_true: ArrayLike, y_score: ArrayLike, k: int | None = None, gain: str = "exponential"
) -> float:
    """DCG@k, Le & Smola 2007, eq. (11): Σ_{i ≤ k} b_i / log₂(i + 1), b = 2^r − 1
    (``gain="exponential"``) or b = r (``"linear"``), documents ordered by decreasing score.

    Tied scores share the mean gain of their tie group (as ``sklearn.metrics.dcg_score``), so the
    value does not depend on an arbitrary order among ties.
    """
    y, f = _pair(y_true, y_score)
    b = _gains(y, gain)
    n = y.size
    k = n if k is None else min(int(k), n)
    discount = np.zeros(n)
    discount[:k] = 1.0 / np.log2(np.arange(2, k + 2))
    _, inverse, counts = np.unique(-f, return_inverse=True, return_counts=True)
    group_gain = np.bincount(inverse, weights=b) / counts
    cum_discount = np.r_[0.0, np.cumsum(discount)]
    ends = np.cumsum(counts)
    group_discount = cum_discount[ends] - cum_discount[ends - counts]
    return float(group_gain @ group_discount)


def ndcg(
    y_true: ArrayLike, y_score: ArrayLike, k: int | None = None, gain: str = "exponential"
) -> float:
    """NDCG@k = DCG@k(π, y) / DCG@k(ideal, y), Le & Smola 2007, eqs. (12)–(14); 0 if the ideal is
    0."""
    ideal = dcg(y_true, y_true, k, gain)
    return dcg(y_true, y_score, k, gain) / ideal if ideal > 0 else 0.0


def _order(y_score: NDArray) -> NDArray[np.intp]:
    """Documents by decreasing score; ties keep their input order."""
    return np.argsort(-y_score, kind="stable")


def mrr(y_true: ArrayLike, y_score: ArrayLike) -> float:
    """Reciprocal rank of the first most-relevant document (Le & Smola 2007, MRR, a_i = 1/i)."""
    y, f = _pair(y_true, y_score)
    ranked = y[_order(f)]
    return 1.0 / (int(np.argmax(ranked == y.max())) + 1)


def wta(y_true: ArrayLike, y_score: ArrayLike) -> float:
    """Winner takes all, Le & Smola 2007, eq. (9): 1 if the top-scored document is most relevant."""
    y, f = _pair(y_true, y_score)
    return float(y[_order(f)[0]] == y.max())


def precision_at(
    y_true: ArrayLike, y_score: ArrayLike, n: int = 10, threshold: float | None = None
) -> float:
    """Precision@n, Le & Smola 2007, eq. (15): share of the top n documents that are relevant
    (y ≥ ``threshold``; by default the most relevant grade present)."""
    y, f = _pair(y_true, y_score)
    cut = y.max() if threshold is None else threshold
    top = y[_order(f)[: max(int(n), 1)]]
    return float(np.mean(top >= cut))


def expected_rank_utility(
    y_true: ArrayLike,
    y_score: ArrayLike,
    neutral: float = 0.0,
    halflife: float = 5.0,
    normalize: bool = True,
) -> float:
    """Expected rank utility, Le & Smola 2007, eq. (16): Σ_i max(r_i − d, 0)·2^((1 − i)/(α − 1)),
    d = ``neutral`` vote, α = ``halflife``; divided by its ideal value when ``normalize``."""
    if halflife <= 1:
        raise ValueError(f"halflife must be > 1, got {halflife!r}")
    y, f = _pair(y_true, y_score)
    utility = np.maximum(y - neutral, 0.0)
    decay = np.exp2(-np.arange(y.size) / (halflife - 1.0))
    value = float(utility[_order(f)] @ decay)
    if not normalize:
        return value
    best = float(np.sort(utility)[::-1] @ decay)
    return value / best if best > 0 else 0.0
