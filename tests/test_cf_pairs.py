"""The pair-sampling experiment of Duchi et al. 2010, §4: features, pair sampling, end to end
(small)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from ranking_core.cf import RatingMatrix, read_movielens_100k, synthetic_ratings
from ranking_core.cf.pairs import (
    MovieInfo,
    PairsConfig,
    movie_features,
    read_movie_info,
    run_pairs,
    sample_pairs,
    synthetic_movie_info,
)


def test_pairs_config_refuses_an_empty_alpha_grid() -> None:
    with pytest.raises(ValueError, match="alphas must list at least one"):
        PairsConfig(alphas=())
    assert PairsConfig(alphas=(1.0,)).alphas == (1.0,)


def test_sample_pairs_same_user_preferred_first() -> None:
    rng = np.random.default_rng(0)
    users = rng.integers(0, 20, size=500)
    ratings = rng.integers(1, 6, size=500).astype(float)
    pairs, weights = sample_pairs(users, ratings, 2000, np.random.default_rng(1))
    assert pairs.shape == (2000, 2)
    np.testing.assert_array_equal(users[pairs[:, 0]], users[pairs[:, 1]])
    np.testing.assert_array_equal(weights, ratings[pairs[:, 0]] - ratings[pairs[:, 1]])
    assert weights.min() > 0
    again, _ = sample_pairs(users, ratings, 2000, np.random.default_rng(1))
    np.testing.assert_array_equal(pairs, again)


def test_features_by_hand() -> None:
    # 3 users × 3 movies; movie 0 genre A, movie 1 genre B, movie 2 genres A and B
    data = RatingMatrix.from_triples(
        [0, 0, 1, 1, 2, 2], [0, 1, 0, 2, 1, 2], [5.0, 1.0, 4.0, 2.0, 2.0, 4.0], (1.0, 5.0), "test"
    )
    info = MovieInfo(
        np.array([1990.0, np.nan, 1980.0]), np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    )
    X = movie_features(np.array([0, 2]), np.array([2, 0]), data, info)
    assert X.shape == (2, 1 + 2 + 4)
    # age (1998 − year), genres
    np.testing.assert_allclose(X[:, 0], [18.0, 8.0])
    np.testing.assert_allclose(X[:, 1:3], [[1, 1], [1, 0]])
    # user 0 on movie 2 (genres A, B): mean of its genre means (A: 5, B: 1) = 3;
    # user 2 on movie 0 (genre A): its only A-rating is movie 2's 4
    np.testing.assert_allclose(X[:, 3], [3.0, 4.0])
    # movie means: movie 2 → (2 + 4)/2 = 3, movie 0 → (5 + 4)/2 = 4.5
    np.testing.assert_allclose(X[:, 4], [3.0, 4.5])
    # similarity: cosines of the mean-centred ratings u0 (2, −2, ·), u1 (1, ·, −1), u2 (·, −1, 1)
    centred = np.array([[2.0, -2.0, 0.0], [1.0, 0.0, -1.0], [0.0, -1.0, 1.0]])
    unit = centred / np.linalg.norm(centred, axis=1, keepdims=True)
    sim = unit @ unit.T
    rated = np.array([[1, 1, 0], [1, 0, 1], [0, 1, 1]], dtype=float)
    R = np.array([[5.0, 1.0, 0.0], [4.0, 0.0, 2.0], [0.0, 2.0, 4.0]])
    for row, (u, i) in enumerate(((0, 2), (2, 0))):
        for column, w in ((5, np.maximum(sim[u], 0)), (6, np.maximum(-sim[u], 0))):
            w[u] = 0.0
            den = w @ rated[:, i]
            expected = w @ R[:, i] / den if den > 0 else X[row, 4]
            assert X[row, column] == pytest.approx(expected)


def test_read_movie_info(tmp_path: Path) -> None:
    flags = "|".join(["0"] * 18)
    (tmp_path / "u.item").write_text(
        f"1|Toy Story (1995)|01-Jan-1995||http://x|1|{flags}\n2|Unknown||||0|{flags}\n",
        encoding="latin-1",
    )
    info = read_movie_info(tmp_path, np.array([2, 1]))
    assert np.isnan(info.year[0]) and info.year[1] == 1995.0
    np.testing.assert_array_equal(info.genres[:, 0], [0.0, 1.0])
    with pytest.raises(ValueError, match=r"no metadata for movie id\(s\) \[7\]"):
        read_movie_info(tmp_path, np.array([1, 7]))


def test_run_pairs_small_synthetic() -> None:
    data = synthetic_ratings(n_users=150, n_items=200, seed=5)
    info = synthetic_movie_info(200)
    config = PairsConfig(
        train_pairs=(300, 1200),
        test_pairs=2000,
        validation_pairs=800,
        experiments=2,
        alphas=(1e-3, 1.0),
    )
    calls = []
    result = run_pairs(data, info, config, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(1, 2), (2, 2)]
    assert len({tuple(r) for r in result["runs"]}) == 2
    for loss in ("value-linear", "hinge", "logistic"):
        for n in ("300", "1200"):
            stats = result["test_loss"][loss][n]
            assert len(stats["per_run"]) == 2
            assert 0.1 < stats["mean"] < 0.45  # the features carry the item's quality
            assert stats["se"] == pytest.approx(stats["sd"] / np.sqrt(2))
    assert result == run_pairs(data, info, config)


def test_real_movie_info() -> None:
    root = os.environ.get("MOVIELENS_100K")
    if not root:
        pytest.skip("MOVIELENS_100K is not set (path to the ml-100k directory)")
    data = read_movielens_100k(root)
    info = read_movie_info(root, data.item_ids)
    assert info.genres.shape == (1682, 19)
    assert info.year[0] == 1995.0 and np.isnan(info.year).sum() == 1
    assert info.genres[0, [3, 4, 5]].tolist() == [1.0, 1.0, 1.0]  # Toy Story: animation etc.
