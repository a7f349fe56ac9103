"""RankRLS on preference graphs (Pahikkala et al. 2009) against closed forms and the Lavrentiev
ranker."""

from __future__ import annotations

import numpy as np
import pytest

from ranking_core import PreferenceRanker, SpectralRanker
from ranking_core.learners.preference import preference_edges


def _data(m: int, seed: int = 0, d: int = 2) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 10, size=(m, d))
    y = np.round(X[:, 0] - 0.5 * X[:, 1] + rng.normal(0, 1, m))
    return X, y


def _dense_rankrls(K, head, tail, magnitude, lam, cost):
    """Eq. (17) with an explicit m × l incidence matrix (the brute-force reference)."""
    m, n_edges = len(K), len(head)
    w = 1 / magnitude if cost == "relative" else np.ones(n_edges)
    z = np.ones(n_edges) if cost == "unit" else magnitude
    M = np.zeros((m, n_edges))
    M[head, np.arange(n_edges)] = w
    M[tail, np.arange(n_edges)] = -w
    return np.linalg.solve(M @ M.T @ K + lam * np.eye(m), M @ (w * z))


def test_all_pairs_with_cost_21_is_the_lavrentiev_ranker() -> None:
    X, y = _data(40)
    Xt, _ = _data(30, seed=5)
    lam = 1e-3
    exact = SpectralRanker(gamma=20.0, lam=lam, solver="dense").fit(X, y)
    rankrls = PreferenceRanker(gamma=20.0, lam=len(y) ** 2 * lam).fit(X, y)
    np.testing.assert_allclose(rankrls.predict(Xt), exact.predict(Xt), atol=1e-7)
    lams = np.array([1e-1, 1e-2, 1e-4])
    np.testing.assert_allclose(
        rankrls.path(len(y) ** 2 * lams).predict(Xt), exact.path(lams).predict(Xt), atol=1e-6
    )


@pytest.mark.parametrize("cost", ["unit", "magnitude", "relative"])
def test_dual_coefficients_solve_eq_17(cost: str) -> None:
    X, y = _data(25, seed=2)
    model = PreferenceRanker(gamma=5.0, lam=0.5, cost=cost).fit(X, y)
    head, tail, magnitude = preference_edges(y, include_ties=cost == "magnitude")
    expected = _dense_rankrls(model.kernel_(X, X), head, tail, magnitude, 0.5, cost)
    np.testing.assert_allclose(model.coef_, expected, rtol=1e-6, atol=1e-8)
    # the same graph given as an edge list
    from_edges = PreferenceRanker(gamma=5.0, lam=0.5, cost=cost).fit(
        X, edges=(head, tail, magnitude)
    )
    np.testing.assert_allclose(from_edges.coef_, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("cost", ["unit", "magnitude", "relative"])
def test_primal_equals_dual(cost: str) -> None:
    X, y = _data(30, seed=3, d=4)
    groups = np.repeat([0, 1, 2], 10)
    Xt, _ = _data(10, seed=4, d=4)
    primal = PreferenceRanker(kernel="linear", lam=2.0, cost=cost, solver="primal")
    dual = PreferenceRanker(kernel="linear", lam=2.0, cost=cost, solver="dual")
    primal.fit(X, y, groups=groups)
    dual.fit(X, y, groups=groups)
    np.testing.assert_allclose(primal.predict(Xt), dual.predict(Xt), rtol=1e-7, atol=1e-7)


def test_query_groups_see_only_preferences_inside_a_query() -> None:
    X, y = _data(30, seed=6)
    groups = np.repeat([0, 1, 2], 10)
    model = PreferenceRanker(gamma=20.0, lam=1.0).fit(X, y, groups=groups)
    shifted = y + 100.0 * groups  # scores of different queries are never compared
    other = PreferenceRanker(gamma=20.0, lam=1.0).fit(X, shifted, groups=groups)
    np.testing.assert_allclose(other.coef_, model.coef_, atol=1e-9)
    # Laplacian of Pahikkala et al. 2009, §3: L = D − PPᵀ per query
    P = np.eye(3)[groups]
    expected = np.diag(P @ P.sum(axis=0)) - P @ P.T
    np.testing.assert_allclose(model._laplacian.toarray(), expected)


def test_several_outputs_equal_separate_fits() -> None:
    X, y = _data(30, seed=7)
    Y = np.column_stack([y, -y, X[:, 1]])
    Xt, _ = _data(8, seed=8)
    joint = PreferenceRanker(gamma=20.0, lam=3.0).fit(X, Y).predict(Xt)
    for k in range(3):
        single = PreferenceRanker(gamma=20.0, lam=3.0).fit(X, Y[:, k]).predict(Xt)
        np.testing.assert_allclose(joint[:, k], single, atol=1e-8)


def test_bad_edges_are_named() -> None:
    X, _ = _data(5)
    with pytest.raises(ValueError, match="rows 1, 2"):
        PreferenceRanker().fit(X, edges=([0, 3, 4], [1, 3, 9], [1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="row 0"):
        PreferenceRanker(cost="relative").fit(X, edges=([0, 1], [1, 2], [0.0, 1.0]))
