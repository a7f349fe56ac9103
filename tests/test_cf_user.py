"""One reviewer's learned ranking (experiments.cf_user) against hand-built rating matrices."""

from __future__ import annotations

import numpy as np
import pytest

try:
    from ranking_core.cf import RatingMatrix, synthetic_ratings
    from ranking_core.cf.per_user import PerUserConfig, reference_inputs
    from ranking_core.experiments.cf_user import user_ranking
    from ranking_core.learners.spectral import SpectralRanker
except ModuleNotFoundError as exc:  # needs the cf branch's modules
    pytest.skip(f"{exc.name} is missing (cf branch not merged)", allow_module_level=True)


def _brute_misranking(y: np.ndarray, f: np.ndarray) -> float:
    pairs = [(i, j) for i in range(len(y)) for j in range(len(y)) if y[i] > y[j]]
    return sum(f[i] <= f[j] for i, j in pairs) / len(pairs)


def test_a_reviewer_copied_by_a_reference_reviewer_is_ranked_almost_perfectly():
    rng = np.random.default_rng(0)
    items = np.arange(40)
    taste = rng.integers(1, 6, size=40).astype(float)
    other_items = rng.choice(200, size=30, replace=False) + 100
    users = np.r_[np.zeros(40), np.ones(40), np.full(30, 2)]
    data = RatingMatrix.from_triples(
        users,
        np.r_[items, items, other_items],
        np.r_[taste, taste, rng.integers(1, 6, size=30)],
        (1.0, 5.0),
        "hand-built",
    )
    config = PerUserConfig(group=(20, 40), test_range=(40, 300), gammas=(25.0,))
    result = user_ranking(data, 0, config, filter="lavrentiev")
    assert result.user == 0 and result.n_reference == 2 and result.true.size == 20
    np.testing.assert_array_equal(result.true, taste[result.items])  # item id = column here
    assert result.misranking == pytest.approx(_brute_misranking(result.true, result.predicted))
    # the only informative input is an exact copy of the ratings: every tie-free pair is right
    assert result.misranking == 0.0


def test_synthetic_reviewer_matches_its_ratings_and_the_brute_force_measure():
    data = synthetic_ratings(n_users=200, n_items=300, seed=1)
    config = PerUserConfig(group=(40, 60))
    user = int(data.users_in(50, 300)[0])
    result = user_ranking(data, user, config, filter="iterated-lavrentiev")
    rated_items, rated = data.user_ratings(user)
    lookup = dict(zip(data.item_ids[rated_items].tolist(), rated.tolist(), strict=True))
    assert result.true.tolist() == [lookup[i] for i in result.items.tolist()]
    assert result.true.size == rated.size - rated.size // 2
    assert result.misranking == pytest.approx(_brute_misranking(result.true, result.predicted))
    assert result.lam in config.lams()
    again = user_ranking(data, user, config, filter="iterated-lavrentiev")
    np.testing.assert_array_equal(again.predicted, result.predicted)  # seeded


def test_bad_requests_name_the_rule():
    data = synthetic_ratings(n_users=100, n_items=200, seed=2)
    with pytest.raises(ValueError, match="'filter' must be one of"):
        user_ranking(data, 0, PerUserConfig(), filter="rankboost")
    with pytest.raises(ValueError, match="fewer than two other users"):
        user_ranking(data, 0, PerUserConfig(group=(190, 200)))


def test_the_two_readings_share_lambda_and_differ_in_the_tested_function():
    """Both readings choose the same λ on the training half; "refit" tests a ranker refitted
    on the whole training half at that λ (brute force: a fresh fit), "split" the one fitted on
    its first half."""
    data = synthetic_ratings(n_users=200, n_items=300, seed=1)
    user = int(data.users_in(50, 300)[0])
    split = user_ranking(data, user, PerUserConfig(group=(40, 60), protocol="split"))
    refit = user_ranking(data, user, PerUserConfig(group=(40, 60), protocol="refit"))
    assert split.lam == refit.lam and np.array_equal(split.items, refit.items)
    assert not np.allclose(split.predicted, refit.predicted)
    # the training half is the complement of the held-out items, in the order drawn
    config = PerUserConfig(group=(40, 60))
    rng = np.random.default_rng(np.random.SeedSequence((config.seed, 0, user)))
    others = data.users_in(*config.group)
    others = others[others != user]
    reference = rng.choice(others, size=min(config.n_reference, others.size), replace=False)
    items, y = data.user_ratings(user)
    X = reference_inputs(data, reference, items, config.missing, config.shift)
    order = rng.permutation(y.size)
    train, test = order[: y.size // 2], order[y.size // 2 :]
    ranker = SpectralRanker(
        kernel="gaussian", gamma=1e4, filter="iterated-lavrentiev", solver="dense", lam=refit.lam
    ).fit(X[train], y[train])
    np.testing.assert_allclose(refit.predicted, ranker.predict(X[test]), rtol=1e-8, atol=1e-10)
    half = train[: train.size // 2]
    first = SpectralRanker(
        kernel="gaussian", gamma=1e4, filter="iterated-lavrentiev", solver="dense", lam=split.lam
    ).fit(X[half], y[half])
    np.testing.assert_allclose(split.predicted, first.predict(X[test]), rtol=1e-8, atol=1e-10)
