"""RankBoost against a direct pair-by-pair implementation of Freund et al. (2003), Fig. 2."""

from __future__ import annotations

import numpy as np
import pytest

from ranking_core import RankBoost
from ranking_core.metrics import pairwise_misranking


def naive_rankboost(X: np.ndarray, y: np.ndarray, rounds: int) -> list[tuple[int, float, float]]:
    """Freund et al. Fig. 2 written out: a dict of crucial pairs, every (feature, threshold)
    tried, r summed pair by pair."""
    m, d = X.shape
    pairs = {(j, i): 1.0 for i in range(m) for j in range(m) if y[i] > y[j]}  # (x0, x1)
    total = sum(pairs.values())
    D = {p: w / total for p, w in pairs.items()}
    chosen = []
    for _ in range(rounds):
        best = (0.0, -1, 0.0)
        for f in range(d):
            for theta in np.unique(X[:, f])[:-1]:
                h = (X[:, f] > theta).astype(float)
                r = sum(w * (h[x1] - h[x0]) for (x0, x1), w in D.items())
                if abs(r) > abs(best[0]) + 1e-12:
                    best = (r, f, theta)
        r, f, theta = best
        alpha = 0.5 * np.log((1 + r) / (1 - r))
        chosen.append((f, float(theta), alpha))
        h = (X[:, f] > theta).astype(float)
        D = {(x0, x1): w * np.exp(alpha * (h[x0] - h[x1])) for (x0, x1), w in D.items()}
        z = sum(D.values())
        D = {p: w / z for p, w in D.items()}
    return chosen


def test_rounds_match_the_pair_by_pair_algorithm() -> None:
    rng = np.random.default_rng(0)
    X = rng.integers(-1, 6, size=(14, 4)).astype(float)  # star ratings with −1 = missing
    y = rng.integers(1, 6, size=14).astype(float)
    model = RankBoost(n_rounds=6).fit(X, y)
    expected = naive_rankboost(X, y, 6)
    assert model.n_rounds_ == 6
    np.testing.assert_array_equal(model.features_, [f for f, _, _ in expected])
    np.testing.assert_allclose(model.thresholds_, [t for _, t, _ in expected])
    np.testing.assert_allclose(model.alphas_, [a for _, _, a in expected], rtol=1e-10)


def test_predictions_are_the_weighted_votes() -> None:
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(30, 5)), rng.normal(size=30)
    model = RankBoost(n_rounds=8).fit(X, y)
    X_new = rng.normal(size=(7, 5))
    votes = X_new[:, model.features_] > model.thresholds_
    np.testing.assert_allclose(model.predict(X_new), votes @ model.alphas_)
    staged = model.staged_predict(X_new)
    assert staged.shape == (model.n_rounds_, 7)
    np.testing.assert_allclose(staged[-1], model.predict(X_new))


def test_learns_an_informative_feature_among_noise() -> None:
    rng = np.random.default_rng(2)
    signal = rng.normal(size=200)
    X = np.column_stack([rng.normal(size=(200, 6)), signal])
    y = np.digitize(signal, [-1, 0, 1]).astype(float)
    model = RankBoost(n_rounds=30).fit(X[:100], y[:100])
    assert set(model.features_) == {6}
    assert pairwise_misranking(y[100:], model.predict(X[100:])) < 0.05
    assert model.score(X[100:], y[100:]) > 0.95


def test_stops_when_one_ranker_orders_every_pair() -> None:
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0.0, 0.0, 1.0, 1.0])
    model = RankBoost(n_rounds=50).fit(X, y)
    assert model.n_rounds_ == 1 and model.thresholds_[0] == 1.0
    assert pairwise_misranking(y, model.predict(X)) == 0.0


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "10"])
def test_rejects_bad_n_rounds(bad: object) -> None:
    with pytest.raises(ValueError, match="'n_rounds' must be a positive integer"):
        RankBoost(n_rounds=bad).fit([[0.0], [1.0]], [0.0, 1.0])


def test_rejects_constant_ratings_and_wrong_feature_count() -> None:
    with pytest.raises(ValueError, match="constant"):
        RankBoost().fit([[0.0], [1.0]], [2.0, 2.0])
    model = RankBoost(n_rounds=2).fit([[0.0, 1.0], [1.0, 0.0]], [0.0, 1.0])
    with pytest.raises(ValueError, match="3 features"):
        model.predict([[0.0, 1.0, 2.0]])
