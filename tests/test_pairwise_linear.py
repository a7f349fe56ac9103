"""PairwiseLinearRanker's three surrogates (Duchi et al. 2010, §4) against direct minimisation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from ranking_core import PairwiseLinearRanker
from ranking_core.learners.pairwise_linear import weighted_disagreement


def problem(seed: int = 0, n: int = 120, d: int = 4, n_pairs: int = 400):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    truth = rng.normal(size=d)
    score = X @ truth + 0.5 * rng.normal(size=n)
    pairs = rng.integers(0, n, size=(n_pairs, 2))
    pairs = pairs[score[pairs[:, 0]] != score[pairs[:, 1]]]
    swap = score[pairs[:, 0]] < score[pairs[:, 1]]
    pairs[swap] = pairs[swap][:, ::-1]
    weights = score[pairs[:, 0]] - score[pairs[:, 1]]
    return X, pairs, weights, truth


def objective(loss: str, w, X, pairs, a, alpha, eps=1e-4) -> float:
    margin = (X[pairs[:, 0]] - X[pairs[:, 1]]) @ w
    if loss == "value-linear":
        pair_term = -a @ margin / a.sum() + eps * np.mean((X @ w) ** 2)
    elif loss == "hinge":
        pair_term = a @ np.maximum(1 - margin, 0) / a.sum()
    else:
        pair_term = a @ np.logaddexp(0, -margin) / a.sum()
    return float(pair_term + alpha * w @ w)


@pytest.mark.parametrize("loss", ["value-linear", "logistic"])
def test_smooth_losses_match_direct_minimisation(loss: str) -> None:
    X, pairs, a, _ = problem()
    alpha = 0.01
    model = PairwiseLinearRanker(loss, alpha, max_iter=10_000).fit(X, pairs, a)
    direct = minimize(
        lambda w: objective(loss, w, X, pairs, a, alpha),
        np.zeros(X.shape[1]),
        method="BFGS",
        options={"gtol": 1e-10},
    )
    np.testing.assert_allclose(model.coef_, direct.x, rtol=1e-3, atol=1e-5)


def test_hinge_is_a_minimum_of_its_objective() -> None:
    X, pairs, a, _ = problem(1)
    alpha = 0.01
    model = PairwiseLinearRanker("hinge", alpha, max_iter=100_000).fit(X, pairs, a)
    best = objective("hinge", model.coef_, X, pairs, a, alpha)
    rng = np.random.default_rng(0)
    for step in rng.normal(scale=1e-2, size=(200, X.shape[1])):
        assert best <= objective("hinge", model.coef_ + step, X, pairs, a, alpha) + 1e-6
    direct = minimize(
        lambda w: objective("hinge", w, X, pairs, a, alpha),
        np.zeros(X.shape[1]),
        method="Powell",
        options={"xtol": 1e-8, "ftol": 1e-12},
    )
    assert best <= direct.fun + 1e-5


@pytest.mark.parametrize("loss", ["value-linear", "hinge", "logistic"])
def test_recovers_the_ranking_direction(loss: str) -> None:
    X, pairs, a, truth = problem(2, n=400, n_pairs=3000)
    model = PairwiseLinearRanker(loss, 1e-3).fit(X, pairs, a)
    cosine = model.coef_ @ truth / np.linalg.norm(model.coef_) / np.linalg.norm(truth)
    assert cosine > 0.95
    assert model.score(X, pairs, a) > 0.85


def test_weighted_disagreement_by_hand() -> None:
    scores = np.array([3.0, 1.0, 2.0, 2.0])
    pairs = np.array([[0, 1], [1, 2], [2, 3], [0, 3]])
    weights = np.array([1.0, 2.0, 3.0, 4.0])
    # pair 2 ranks wrongly (1 < 2), pair 3 ties (2 = 2, an error): (2 + 3) / 10
    assert weighted_disagreement(scores, pairs, weights) == pytest.approx(0.5)


def test_rejects_bad_input() -> None:
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match="'loss' must be one of"):
        PairwiseLinearRanker("squared").fit(X, [[0, 1]])
    with pytest.raises(ValueError, match="'alpha' must be a positive"):
        PairwiseLinearRanker(alpha=0).fit(X, [[0, 1]])
    with pytest.raises(ValueError, match=r"pairs row 1 refer to rows outside 0\.\.2"):
        PairwiseLinearRanker().fit(X, [[0, 1], [1, 3]])
    with pytest.raises(ValueError, match="weights in row 0 are not positive"):
        PairwiseLinearRanker().fit(X, [[0, 1], [1, 2]], [0.0, 1.0])
