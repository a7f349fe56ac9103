"""Linear scoring functions learned from weighted preference pairs (Duchi et al. 2010, §4, Table 1).

Training data is a preference graph: rows of X are (item, query) feature vectors d(x_i, u),
each edge (i, j) with weight a_ij > 0 says "row i should score above row j". Three surrogates of the
weighted disagreement error (Duchi et al. 2010, eq. (7)), each with ℓ2 regularization α‖w‖²:

* ``"value-linear"`` (Duchi et al. 2010, eq. (14) with r(s) = s², the loss its analysis recommends):
  Σ a_ij wᵀ(d_j − d_i) + ε Σ_i (wᵀd_i)², closed form;
* ``"hinge"`` (Herbrich et al. 2000): Σ a_ij [1 − wᵀ(d_i − d_j)]₊;
* ``"logistic"`` (Dekel et al. 2004): Σ a_ij log(1 + exp(wᵀ(d_j − d_i))).

The pair sums are divided by Σ a_ij (and the value term by the number of rows), so α does not
scale with the number of pairs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC
from sklearn.utils.validation import check_is_fitted

from ranking_core.learners.base import CheckedInputsMixin, store_params
from ranking_core.learners.choices import PAIRWISE_LOSSES
from ranking_core.validation import check_inputs, describe_rows, one_of, positive_float

__all__ = ["LOSSES", "PairwiseLinearRanker", "weighted_disagreement"]

LOSSES = PAIRWISE_LOSSES


def weighted_disagreement(scores: ArrayLike, pairs: ArrayLike, weights: ArrayLike) -> float:
    """Duchi et al. 2010, eq. (7), averaged: Σ a_ij 1{f_i ≤ f_j} / Σ a_ij over edges (i, j) =
    (preferred, other); a tie counts as an error."""
    f = np.asarray(scores, dtype=np.float64)
    pairs = np.asarray(pairs)
    a = np.asarray(weights, dtype=np.float64)
    return float(a @ (f[pairs[:, 0]] <= f[pairs[:, 1]]) / a.sum())


class PairwiseLinearRanker(CheckedInputsMixin, BaseEstimator):
    """A linear score f(d) = wᵀd from weighted preference pairs (Duchi et al. 2010, §4).

    Parameters
    ----------
    loss : ``"value-linear"``, ``"hinge"`` or ``"logistic"`` (see the module docstring).
    alpha : ℓ2 regularization α > 0.
    epsilon : ε of the value-linear loss's value term (Duchi et al. 2010 uses 10⁻⁴).
    max_iter : iterations of the hinge / logistic solvers (liblinear, L-BFGS).

    Attributes
    ----------
    coef_ : (d,) the weights w.

    Notes
    -----
    ``fit(X, pairs, weights)`` takes the preference graph rather than (X, y): pairs (n, 2) of row
    indices (preferred, other) and their weights. The value-linear solution is
    w = (2(ε/N·XᵀX + αI))⁻¹ Σ a_ij (d_i − d_j)/Σ a_ij with N rows, O(d²N + d³). Hinge and
    logistic are solved as weighted binary problems (liblinear, L-BFGS) on the differences
    ±(d_i − d_j) with label ±1 (alternating, so both classes occur) and C = 1/(2α): the same
    objective.
    """

    def __init__(
        self,
        loss: str = "value-linear",
        alpha: float = 1e-3,
        *,
        epsilon: float = 1e-4,
        max_iter: int = 20_000,
    ) -> None:
        store_params(self, locals())

    def _check(
        self, X: ArrayLike, pairs: ArrayLike, weights: ArrayLike | None
    ) -> tuple[NDArray, NDArray, NDArray]:
        owner = type(self).__name__
        one_of(self.loss, "loss", LOSSES, owner)
        positive_float(self.alpha, "alpha", owner)
        positive_float(self.epsilon, "epsilon", owner)
        X = check_inputs(X, owner)
        pairs = np.asarray(pairs)
        if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.shape[0] == 0:
            raise ValueError(
                f"{owner}: pairs must have shape (n_pairs, 2) with n_pairs ≥ 1; got {pairs.shape}"
            )
        bad = np.flatnonzero(((pairs < 0) | (pairs >= len(X))).any(axis=1))
        if bad.size:
            raise ValueError(
                f"{owner}: pairs {describe_rows(bad)} refer to rows outside "
                f"0..{len(X) - 1} (rule: a pair holds two row indices of X)"
            )
        a = np.ones(len(pairs)) if weights is None else np.asarray(weights, dtype=np.float64)
        if a.shape != (len(pairs),):
            raise ValueError(f"{owner}: {len(pairs)} pairs but {a.size} weights")
        bad = np.flatnonzero(~(np.isfinite(a) & (a > 0)))
        if bad.size:
            raise ValueError(
                f"{owner}: weights in {describe_rows(bad)} are not positive "
                "finite numbers (rule: a pair's weight a_ij > 0)"
            )
        return X, pairs.astype(np.intp), a

    def fit(
        self, X: ArrayLike, pairs: ArrayLike, weights: ArrayLike | None = None
    ) -> PairwiseLinearRanker:
        """Learn w from rows X (N, d) and weighted edges ``pairs`` (n, 2) = (preferred, other)."""
        X, pairs, a = self._check(X, pairs, weights)
        self.n_features_in_ = X.shape[1]
        diff = X[pairs[:, 0]] - X[pairs[:, 1]]
        if self.loss == "value-linear":
            gradient = a @ diff / a.sum()
            gram = self.epsilon * (X.T @ X) / len(X) + self.alpha * np.eye(X.shape[1])
            self.coef_ = np.linalg.solve(2.0 * gram, gradient)
            return self
        # every other pair is presented flipped, (d_j − d_i, −1): the same loss term, and two
        # classes for the binary solvers
        labels = np.where(np.arange(len(diff)) % 2 == 0, 1.0, -1.0)
        c = 1.0 / (2.0 * self.alpha)
        if self.loss == "hinge":
            model = LinearSVC(
                loss="hinge", C=c, fit_intercept=False, dual=True, max_iter=self.max_iter
            )
        else:
            model = LogisticRegression(C=c, fit_intercept=False, max_iter=self.max_iter)
        model.fit(diff * labels[:, None], labels, sample_weight=a / a.sum())
        self.coef_ = model.coef_.ravel().copy()
        return self

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """Scores wᵀd, shape (n,)."""
        check_is_fitted(self, "coef_")
        return self._check_prediction_inputs(X) @ self.coef_

    def score(
        self,
        X: ArrayLike,
        pairs: ArrayLike,
        weights: ArrayLike | None = None,
        sample_weight: Any = None,
    ) -> float:
        """1 − weighted disagreement (Duchi et al. 2010, eq. (7)) on the pairs: higher is better."""
        X, pairs, a = self._check(X, pairs, weights)
        return 1.0 - weighted_disagreement(self.predict(X), pairs, a)
