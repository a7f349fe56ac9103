"""DORM (Le & Smola 2007) against brute force over permutations, the metrics module and a full
QP."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.optimize

from ranking_core import DORM
from ranking_core.learners.dorm import MEASURES, loss_augmented_positions, measure_weights
from ranking_core.metrics import expected_rank_utility, mrr, ndcg, precision_at, wta

OPTIONS = {"threshold": None, "neutral": 1.0, "halflife": 3.0}


def _score(a, b, positions):
    return float(a[positions] @ b)


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize("size", [2, 3, 5, 6])
def test_loss_augmented_assignment_equals_brute_force(measure, size):
    rng = np.random.default_rng(size)
    for _ in range(5):
        r = rng.integers(0, 4, size).astype(float)
        r[0] = 3.0  # at least one relevant document
        g = rng.normal(size=size)
        a, b = measure_weights(measure, r, n=3, **OPTIONS)
        c = np.arange(2.0, size + 2.0) ** -0.5
        best = max(c[list(p)] @ g - a[list(p)] @ b for p in itertools.permutations(range(size)))
        positions = loss_augmented_positions(g, a, b, c)
        assert sorted(positions) == list(range(size))
        assert c[positions] @ g - a[positions] @ b == pytest.approx(best, abs=1e-12)


def test_scores_match_the_metrics_module():
    rng = np.random.default_rng(1)
    for _ in range(20):
        r = rng.integers(0, 5, 8).astype(float)
        r[rng.integers(8)] = 5.0  # one document of the top grade (MRR's assumption)
        f = rng.normal(size=8)
        positions = np.argsort(np.argsort(-f))
        cases = {
            "ndcg": ndcg(r, f, k=4),
            "mrr": mrr(r, f),
            "wta": wta(r, f),
            "precision": precision_at(r, f, 4) / precision_at(r, r, 4),
            "eru": expected_rank_utility(r, f, neutral=1.0, halflife=3.0),
        }
        for measure, expected in cases.items():
            a, b = measure_weights(measure, r, n=4, **OPTIONS)
            assert _score(a, b, positions) == pytest.approx(expected, abs=1e-12), measure


def _grouped(rng, queries, docs, features, noise):
    X = rng.normal(size=(queries * docs, features))
    groups = np.repeat(np.arange(queries), docs)
    latent = X @ np.linspace(1.0, -1.0, features) + noise * rng.normal(size=len(X))
    y = np.concatenate([np.argsort(np.argsort(part)) for part in np.split(latent, queries)])
    return X, y.astype(float), groups


@pytest.mark.parametrize("measure", ["ndcg", "eru"])
def test_separable_training_set_is_ranked_perfectly(measure):
    X, y, groups = _grouped(np.random.default_rng(2), queries=10, docs=6, features=3, noise=0)
    model = DORM(measure=measure, n=None, C=100.0, tol=1e-6).fit(X, y, groups)
    assert model.converged_
    scores = model.predict(X)
    per_query = [ndcg(y[groups == q], scores[groups == q]) for q in range(10)]
    assert np.mean(per_query) == pytest.approx(1.0)


def _brute_force_optimum(X, y, groups, C, n):
    """Le & Smola 2007, eq. (5) with every permutation of every query as a constraint, by SLSQP."""
    rows, losses, owners = [], [], []
    for q in np.unique(groups):
        Xq, r = X[groups == q], y[groups == q]
        a, b = measure_weights("ndcg", r, n)
        c = np.arange(2.0, r.size + 2.0) ** -0.5
        reference = np.argsort(np.argsort(-r, kind="stable"))
        for p in itertools.permutations(range(r.size)):
            rows.append((c[reference] - c[list(p)]) @ Xq)
            losses.append(1.0 - a[list(p)] @ b)
            owners.append(q)
    rows, losses, owners = np.array(rows), np.array(losses), np.array(owners)
    p, m = X.shape[1], len(np.unique(groups))

    def objective(z):
        return 0.5 * z[:p] @ z[:p] + C * z[p:].sum()

    result = scipy.optimize.minimize(
        objective,
        np.r_[np.zeros(p), np.ones(m)],
        method="SLSQP",
        jac=lambda z: np.r_[z[:p], C * np.ones(m)],
        bounds=[(None, None)] * p + [(0, None)] * m,
        constraints=[
            {
                "type": "ineq",
                "fun": lambda z: rows @ z[:p] - losses + z[p:][owners],
                "jac": lambda z: np.c_[rows, np.eye(m)[owners]],
            }
        ],
        options={"ftol": 1e-12, "maxiter": 500},
    )
    return result.fun, result.x[:p]


def test_column_generation_reaches_the_full_qp_optimum():
    X, y, groups = _grouped(np.random.default_rng(3), queries=4, docs=4, features=2, noise=1.5)
    C, tol = 0.5, 1e-6
    model = DORM(n=3, C=C, tol=tol).fit(X, y, groups)
    optimum, w = _brute_force_optimum(X, y, groups, C, 3)
    assert model.converged_
    # the dual is a lower bound; the exact primal value is within C·m·tol of it at convergence
    assert model.dual_objective_ <= optimum + 1e-8
    assert model.objective_ - model.dual_objective_ <= C * model.n_queries_ * tol + 1e-8
    assert model.objective_ == pytest.approx(optimum, abs=1e-5)
    np.testing.assert_allclose(model.coef_, w, atol=1e-3)


def test_constraint_violations_are_below_tol_at_convergence():
    X, y, groups = _grouped(np.random.default_rng(4), queries=15, docs=8, features=4, noise=1.0)
    model = DORM(n=5, C=1.0, tol=1e-3).fit(X, y, groups)
    assert model.converged_
    # each query's most violated constraint (exact assignment, checked against brute force
    # above): on average it exceeds the final slack by at most tol (Le & Smola 2007, Algorithm 1)
    w = model.coef_
    excess = []
    for q in range(15):
        Xq, r = X[groups == q], y[groups == q]
        a, b = measure_weights("ndcg", r, 5)
        c = np.arange(2.0, 10.0) ** -0.5
        positions = loss_augmented_positions(Xq @ w, a, b, c)
        reference = np.argsort(np.argsort(-r, kind="stable"))
        excess.append(1.0 - a[positions] @ b - w @ ((c[reference] - c[positions]) @ Xq))
    assert np.mean(excess) <= model.slack_ + 1e-3 + 1e-9


def test_bad_input_is_named():
    X, y, groups = _grouped(np.random.default_rng(5), queries=2, docs=3, features=2, noise=0)
    with pytest.raises(ValueError, match="groups has 5 values but y has 6"):
        DORM().fit(X, y, groups[:5])
    with pytest.raises(ValueError, match="'measure' must be one of"):
        DORM(measure="map").fit(X, y, groups)
    with pytest.raises(ValueError, match="'n' must be a positive integer for measure='precision'"):
        DORM(measure="precision", n=None).fit(X, y, groups)
    with pytest.raises(ValueError, match="no query has two different grades"):
        DORM().fit(X, np.repeat([1.0, 2.0], 3), np.arange(6))
    with pytest.raises(ValueError, match="row 1"):
        DORM().fit(np.array([[0.0], [np.nan], [1.0]]), [0.0, 1.0, 2.0])
