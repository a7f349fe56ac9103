"""DORM: direct optimisation of ranking measures by structured max-margin learning (Le & Smola
2007).

A query q has documents d_1 … d_l with relevance grades r_i and feature rows x_i. A permutation
π puts document i at position π(i) (1 = top). Every measure of Le & Smola 2007, §3.2 is a score

    S(π, y) = ⟨a(π), b(y)⟩ = Σ_i a_{π(i)} b_i            (eqs. (9)–(16)),

with position weights a (decreasing) and document weights b. Here b is divided by the ideal
score, so S(π⁰, y) = 1 for a relevance-sorted π⁰ and the loss (eq. (17)) is Δ(y, π) = 1 − S(π, y).

The joint feature map (eq. (20)) is Φ(x, π) = Σ_i c_{π(i)} x_i with a decreasing sequence
c_j = (j + 1)^(−decay) (Le & Smola 2007, §6), so f(x, π) = ⟨w, Φ(x, π)⟩ is maximised by sorting the
scores g_i = ⟨w, x_i⟩ (Hardy–Littlewood–Pólya, Theorem 2): ``predict`` returns g. Training solves
the structured SVM (eq. (5)) over queries q = 1 … m,

    min_w ½‖w‖² + C Σ_q ξ_q   s.t.  ⟨w, Φ(x_q, π⁰_q) − Φ(x_q, π)⟩ ≥ Δ(y_q, π) − ξ_q  ∀π, q,

by column generation (Le & Smola 2007, Algorithm 1): the most violated permutation of a query
maximises ⟨c(π), g⟩ − ⟨a(π), b⟩ (eqs. (22)–(24)), a linear assignment problem solved by
``scipy.optimize.linear_sum_assignment`` in O(l³). The cutting planes are aggregated over the
queries (the equivalent "one-slack" form of eq. (5), Joachims, Finley and Yu 2009): each round
adds one constraint ⟨w, ψ̄⟩ ≥ Δ̄ − ξ built from every query's most violated permutation, and the
small dual QP (eq. (7)) over the k constraints found so far,

    max_α Σ_k α_k Δ̄_k − ½‖Σ_k α_k ψ̄_k‖²,   α ≥ 0,  Σ_k α_k ≤ C·m,

is solved exactly by SLSQP. Training stops when no query's constraints are violated by more than
``tol`` on average beyond the current slack; a round costs O(Σ_q l_q³ + n·p).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.optimize
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from ranking_core.learners.base import CheckedInputsMixin, store_params
from ranking_core.metrics import ndcg
from ranking_core.validation import one_of, positive_float

__all__ = ["DORM", "MEASURES", "loss_augmented_positions", "measure_weights"]

MEASURES = ("ndcg", "mrr", "wta", "precision", "eru")


def measure_weights(
    measure: str,
    r: NDArray[np.float64],
    n: int | None = None,
    *,
    threshold: float | None = None,
    neutral: float = 0.0,
    halflife: float = 5.0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Position weights a (l,) and document weights b (l,) of a measure, Le & Smola 2007, eqs.
    (9)–(16).

    - ``"ndcg"``: a_j = 1/log₂(j + 1) for j ≤ n (all j when n is None), b_i = 2^{r_i} − 1
      (eqs. (13)–(14));
    - ``"mrr"``: a_j = 1/j, b_i = 1 for the first document of the top grade, else 0;
    - ``"wta"``: a_j = δ(j, 1), b_i = 1 if r_i is the top grade (eq. (9));
    - ``"precision"``: a_j = 1/n for j ≤ n, b_i = 1 if r_i ≥ threshold (default: the top grade)
      (eq. (15));
    - ``"eru"``: a_j = 2^{(1 − j)/(α − 1)}, b_i = max(r_i − d, 0), d = ``neutral``,
      α = ``halflife`` (eq. (16)).

    b is divided by the ideal score Σ_j a_j b_[j] (b sorted decreasingly), so a relevance-sorted
    permutation scores 1; b = 0 when the ideal is 0 (a query without relevant documents).
    """
    r = np.asarray(r, dtype=np.float64)
    size = r.size
    positions = np.arange(1, size + 1, dtype=np.float64)
    cut = size if n is None else min(int(n), size)
    if measure == "ndcg":
        a = np.where(positions <= cut, 1.0 / np.log2(positions + 1.0), 0.0)
        b = np.exp2(r) - 1.0
    elif measure == "mrr":
        a = 1.0 / positions
        b = np.zeros(size)
        b[int(np.argmax(r == r.max()))] = 1.0
    elif measure == "wta":
        a = (positions == 1).astype(np.float64)
        b = (r == r.max()).astype(np.float64)
    elif measure == "precision":
        a = np.where(positions <= cut, 1.0 / cut, 0.0)
        b = (r >= (r.max() if threshold is None else threshold)).astype(np.float64)
    elif measure == "eru":
        a = np.exp2((1.0 - positions) / (halflife - 1.0))
        b = np.maximum(r - neutral, 0.0)
    else:
        raise ValueError(f"measure must be one of {MEASURES}, got {measure!r}")
    ideal = float(a @ np.sort(b)[::-1])
    return a, (b / ideal if ideal > 0 else np.zeros(size))


def loss_augmented_positions(
    g: NDArray[np.float64],
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    c: NDArray[np.float64],
) -> NDArray[np.intp]:
    """The permutation maximising ⟨c(π), g⟩ − ⟨a(π), b⟩ (Le & Smola 2007, eqs. (23)–(24)).

    Document i at position j earns C_ij = c_j g_i − a_j b_i; the best assignment is found by
    ``scipy.optimize.linear_sum_assignment`` in O(l³). Returns π as 0-based positions (l,).
    """
    cost = np.outer(g, c) - np.outer(b, a)
    _, positions = scipy.optimize.linear_sum_assignment(cost, maximize=True)
    return positions.astype(np.intp)


def _solve_dual(gram: NDArray, delta: NDArray, budget: float, start: NDArray) -> NDArray:
    """max_α Δᵀα − ½αᵀHα over α ≥ 0, Σα ≤ budget (Le & Smola 2007, eq. (7)), by SLSQP.

    Solved for β = α/budget (so Σβ ≤ 1) with the objective divided by budget, which keeps the
    numbers of order one for any C. The QP is tiny (k ≤ a few hundred), so BLAS runs on one
    thread: threaded BLAS inside SLSQP's many small calls is 100× slower on a loaded machine.
    """
    scaled = budget * gram
    with threadpool_limits(1, user_api="blas"):
        result = _slsqp(scaled, delta, start / budget)
    return budget * np.clip(result.x, 0.0, 1.0)


def _slsqp(scaled: NDArray, delta: NDArray, start: NDArray) -> scipy.optimize.OptimizeResult:
    def objective(beta: NDArray[np.float64]) -> float:
        return 0.5 * beta @ scaled @ beta - delta @ beta

    def gradient(beta: NDArray[np.float64]) -> NDArray[np.float64]:
        return scaled @ beta - delta

    def budget_left(beta: NDArray[np.float64]) -> float:
        return 1.0 - beta.sum()

    def budget_gradient(beta: NDArray[np.float64]) -> NDArray[np.float64]:
        return -np.ones_like(beta)

    return scipy.optimize.minimize(
        objective,
        start,
        jac=gradient,
        bounds=[(0.0, 1.0)] * delta.size,
        constraints=[{"type": "ineq", "fun": budget_left, "jac": budget_gradient}],
        method="SLSQP",
        options={"ftol": 1e-12, "maxiter": 500},
    )


class _Query:
    """One query's documents with its measure weights, reference order and reference feature."""

    def __init__(self, X: NDArray, r: NDArray, a: NDArray, b: NDArray, c: NDArray) -> None:
        self.X, self.a, self.b, self.c = X, a, b, c
        reference = np.empty(r.size, dtype=np.intp)  # relevance-sorted π⁰ (ties by grade, index)
        reference[np.lexsort((np.arange(r.size), -r, -b))] = np.arange(r.size)
        self.reference_feature = c[reference] @ X  # Φ(x, π⁰), eq. (20)

    def most_violated(self, w: NDArray) -> tuple[NDArray, float]:
        """ψ = Φ(x, π⁰) − Φ(x, π̂) and Δ(y, π̂) for the loss-augmented π̂ (eq. (8))."""
        positions = loss_augmented_positions(self.X @ w, self.a, self.b, self.c)
        psi = self.reference_feature - self.c[positions] @ self.X
        return psi, 1.0 - float(self.a[positions] @ self.b)


class DORM(CheckedInputsMixin, RegressorMixin, BaseEstimator):
    """Structured max-margin ranking that optimises a ranking measure directly (Le & Smola 2007, eq.
    (5)).

    Parameters
    ----------
    measure : "ndcg" | "mrr" | "wta" | "precision" | "eru", the score of Le & Smola 2007, §3.2; the
        loss
        is Δ = 1 − score/ideal (eq. (17)).
    n : truncation level of NDCG@n and Precision@n (None: no truncation for NDCG; Precision
        needs n).
    C : trade-off of eq. (5a), multiplying the sum of the query slacks.
    decay : the feature-map sequence c_j = (j + 1)^(−decay) (Le & Smola 2007, §6 uses 1/4 … 1).
    threshold : grade at which a document counts as relevant for Precision@n (default: the
        query's top grade).
    neutral, halflife : d and α of the expected rank utility (eq. (16)).
    tol : ε of the column generation: stop when the most violated aggregated constraint exceeds
        the current slack by at most ε (loss units, averaged over queries).
    max_iter : maximum number of column-generation rounds.

    Attributes
    ----------
    coef_ : (p,) w; scores g = Xw. intercept_ : 0.0 (a ranking ignores shifts).
    n_iter_ : rounds run. converged_ : whether ``tol`` was met.
    n_queries_ : queries used (those with at least two grades and a relevant document).
    dual_coef_ : (k,) α of the k cutting planes. slack_ : mean query slack ξ̄ at the end.
    objective_ : primal value ½‖w‖² + C Σ_q max_π(Δ_q(π) − ⟨w, ψ_q(π)⟩), each maximum found
        exactly by linear assignment. dual_objective_ : the dual value (≤ the optimum).
    """

    def __init__(
        self,
        measure: str = "ndcg",
        n: int | None = 10,
        *,
        C: float = 1.0,
        decay: float = 0.5,
        threshold: float | None = None,
        neutral: float = 0.0,
        halflife: float = 5.0,
        tol: float = 1e-3,
        max_iter: int = 200,
    ) -> None:
        store_params(self, locals())

    def _check_params(self) -> None:
        owner = type(self).__name__
        one_of(self.measure, "measure", MEASURES, owner)
        if self.n is not None and (int(self.n) != self.n or self.n < 1):
            raise ValueError(
                f"{owner}: parameter 'n' must be a positive integer or None; got {self.n!r}"
            )
        if self.n is None and self.measure == "precision":
            raise ValueError(
                f"{owner}: parameter 'n' must be a positive integer for "
                "measure='precision'; got None"
            )
        if self.measure == "eru" and not float(self.halflife) > 1:
            raise ValueError(f"{owner}: parameter 'halflife' must be > 1; got {self.halflife!r}")
        if not float(self.decay) > 0:
            raise ValueError(f"{owner}: parameter 'decay' must be > 0; got {self.decay!r}")
        if int(self.max_iter) != self.max_iter or self.max_iter < 1:
            raise ValueError(
                f"{owner}: parameter 'max_iter' must be a positive integer; got {self.max_iter!r}"
            )
        positive_float(self.C, "C", owner)
        positive_float(self.tol, "tol", owner)

    def _queries(self, X: NDArray, y: NDArray, groups: ArrayLike | None) -> list[_Query]:
        owner = type(self).__name__
        if groups is None:
            labels = np.zeros(len(y), dtype=np.intp)
        else:
            groups = np.asarray(groups).ravel()
            if groups.size != len(y):
                raise ValueError(f"{owner}: groups has {groups.size} values but y has {len(y)}")
            _, labels = np.unique(groups, return_inverse=True)
        queries = []
        for rows in np.split(
            np.argsort(labels, kind="stable"), np.flatnonzero(np.diff(np.sort(labels))) + 1
        ):
            r = y[rows]
            if rows.size < 2 or np.ptp(r) == 0:
                continue
            a, b = measure_weights(
                self.measure,
                r,
                self.n,
                threshold=self.threshold,
                neutral=self.neutral,
                halflife=self.halflife,
            )
            if not b.any():
                continue
            c = np.arange(2.0, rows.size + 2.0) ** -float(self.decay)
            queries.append(_Query(X[rows], r, a, b, c))
        if not queries:
            raise ValueError(
                f"{owner}: no query has two different grades and a relevant "
                "document, so there is nothing to rank"
            )
        return queries

    def fit(self, X: ArrayLike, y: ArrayLike, groups: ArrayLike | None = None) -> DORM:
        """Column generation over the aggregated constraints of eq. (5); ``groups`` labels the
        query of every row (None: one query)."""
        self._check_params()
        X, y = self._check_training_data(X, y)
        queries = self._queries(X, y, groups)
        m, budget = len(queries), float(self.C) * len(queries)
        w = np.zeros(X.shape[1])
        planes: list[NDArray] = []
        losses: list[float] = []
        alpha = np.zeros(0)
        self.converged_ = False
        for round_ in range(1, int(self.max_iter) + 1):
            self.n_iter_ = round_
            found = [query.most_violated(w) for query in queries]
            psi = np.mean([p for p, _ in found], axis=0)
            loss = float(np.mean([d for _, d in found]))
            slack = max(
                0.0, max((d - w @ p for p, d in zip(planes, losses, strict=True)), default=0.0)
            )
            if loss - w @ psi <= slack + float(self.tol):
                self.converged_ = True
                break
            planes.append(psi)
            losses.append(loss)
            P = np.array(planes)
            alpha = _solve_dual(P @ P.T, np.array(losses), budget, np.r_[alpha, 0.0])
            w = alpha @ P
        if not self.converged_:
            warnings.warn(
                f"DORM: column generation stopped after {self.max_iter} rounds with "
                f"constraints still violated by more than tol={self.tol}",
                RuntimeWarning,
                stacklevel=2,
            )
        self.coef_ = w
        self.intercept_ = 0.0
        self.dual_coef_ = alpha
        self.n_queries_ = m
        self.slack_ = slack
        violations = [max(0.0, d - w @ p) for p, d in (q.most_violated(w) for q in queries)]
        self.objective_ = float(0.5 * w @ w + float(self.C) * sum(violations))
        self.dual_objective_ = float(alpha @ np.array(losses) - 0.5 * w @ w) if losses else 0.0
        return self

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """Scores g = Xw (sort decreasingly within a query to rank its documents)."""
        check_is_fitted(self, "coef_")
        return self._check_prediction_inputs(X) @ self.coef_

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: object = None) -> float:
        """NDCG@n of the predicted order over all rows (one query), Le & Smola 2007, eq. (14)."""
        return ndcg(y, self.predict(X), k=self.n)
