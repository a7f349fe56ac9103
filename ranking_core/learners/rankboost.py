"""RankBoost with threshold weak rankers (Freund, Iyer, Schapire & Singer, JMLR 4, 2003).

The benchmark of Cortes et al. 2007, §4.5 (Table 2) and Kriukova et al. 2014, Table 2: "as weak
rankers threshold functions over other reviewers' ratings", the number of rounds chosen on a
held-out sample.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ranking_core.learners.base import CheckedInputsMixin, RankingScoreMixin

__all__ = ["RankBoost"]

# |r| this close to 1 means the weak ranker orders every weighted pair: α would be infinite.
PERFECT_R = 1.0 - 1e-10
# |r| below this carries no information: boosting stops.
NULL_R = 1e-12


def _best_threshold(
    order: NDArray[np.intp], values: NDArray[np.float64], potential: NDArray[np.float64]
) -> tuple[int, float, float]:
    """The threshold ranker h(x) = 1{x_f > θ} maximising |r|, r = Σ_x h(x)·π(x).

    All features and all thresholds at once: with each column sorted in decreasing order
    (``order``, ``values``: (m, d)), accumulate π; a cut after position k is the threshold
    θ = (k+1)-th largest value where the values differ. O(m·d) for m items and d features.
    Returns (feature, θ, r).
    """
    r = np.cumsum(potential[order], axis=0)[:-1]
    r[values[:-1] == values[1:]] = 0.0  # no threshold between equal values
    k, f = np.unravel_index(int(np.argmax(np.abs(r))), r.shape)
    return int(f), float(values[k + 1, f]), float(r[k, f])


class RankBoost(RankingScoreMixin, CheckedInputsMixin, RegressorMixin, BaseEstimator):
    """RankBoost (Freund et al. 2003, Fig. 2) with threshold weak rankers h(x) = 1{x_f > θ}.

    The crucial pairs are all (x₀, x₁) of training points with y(x₁) > y(x₀), initially weighted
    uniformly. Round t picks the weak ranker with the largest |r_t|,

    .. math:: r_t = \\sum_{x_0, x_1} D_t(x_0, x_1)\\,(h_t(x_1) - h_t(x_0)),
              \\qquad \\alpha_t = \\tfrac12 \\ln\\frac{1 + r_t}{1 - r_t}

    (Freund et al. §3.2, the {0, 1} weak-ranker choice of α), then
    D_{t+1}(x₀, x₁) ∝ D_t(x₀, x₁)·exp(α_t(h_t(x₀) − h_t(x₁))). The final ranking is
    H(x) = Σ_t α_t h_t(x): a score, not on the rating scale (hence its large MSD in Cortes et al.
    2007 Table 1). Thresholds are taken at observed values; a missing rating coded below the scale
    (−1 in Kriukova et al. 2014, §4.2) is never above a threshold, which is Freund et al.'s q_def =
    0.

    With π(x) = Σ_{x₀} D(x₀, x) − Σ_{x₁} D(x, x₁), r(h) = Σ_x h(x)π(x), so one round costs
    O(m² + m·d) for m training points and d features (after one O(m·d·log m) sort).

    Parameters
    ----------
    n_rounds : maximum number of boosting rounds T; fewer are run when no weak ranker carries
        information (|r| = 0) or one orders every weighted pair (|r| = 1).

    Attributes
    ----------
    features_, thresholds_, alphas_ : (T,) the chosen weak rankers and their weights.
    n_rounds_ : number of rounds run.
    """

    def __init__(self, n_rounds: int = 100) -> None:
        self.n_rounds = n_rounds

    def fit(self, X: ArrayLike, y: ArrayLike) -> RankBoost:
        """Boost on the pairs y_i > y_j of (X, y); X (m, d), y (m,)."""
        if (
            isinstance(self.n_rounds, bool)
            or not isinstance(self.n_rounds, int | np.integer)
            or self.n_rounds < 1
        ):
            raise ValueError(
                f"RankBoost: parameter 'n_rounds' must be a positive integer; got {self.n_rounds!r}"
            )
        X, y = self._check_training_data(X, y)
        above = y[:, None] > y[None, :]  # above[i, j]: i must rank above j
        weights = above / above.sum()
        order = np.argsort(-X, axis=0, kind="stable")
        values = np.take_along_axis(X, order, axis=0)
        features, thresholds, alphas = [], [], []
        for _ in range(int(self.n_rounds)):
            potential = weights.sum(axis=1) - weights.sum(axis=0)
            f, theta, r = _best_threshold(order, values, potential)
            if abs(r) < NULL_R:
                break
            clipped = min(max(r, -PERFECT_R), PERFECT_R)
            alpha = 0.5 * np.log((1.0 + clipped) / (1.0 - clipped))
            features.append(f)
            thresholds.append(theta)
            alphas.append(alpha)
            if abs(r) >= PERFECT_R:
                break
            h = (X[:, f] > theta).astype(np.float64)
            weights = weights * np.exp(alpha * (h[None, :] - h[:, None]))
            weights /= weights.sum()
        self.features_ = np.asarray(features, dtype=np.intp)
        self.thresholds_ = np.asarray(thresholds, dtype=np.float64)
        self.alphas_ = np.asarray(alphas, dtype=np.float64)
        self.n_rounds_ = len(alphas)
        return self

    def staged_predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """H after each round, shape (n_rounds_, n): row t is Σ_{s ≤ t} α_s h_s(x)."""
        check_is_fitted(self, "alphas_")
        X = self._check_prediction_inputs(X)
        votes = X[:, self.features_].T > self.thresholds_[:, None]
        return np.cumsum(self.alphas_[:, None] * votes, axis=0)

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """H(x) = Σ_t α_t h_t(x) over all rounds, shape (n,)."""
        staged = self.staged_predict(X)
        return staged[-1] if len(staged) else np.zeros(staged.shape[1])
