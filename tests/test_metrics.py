"""Metrics against brute-force n × n computations and scikit-learn."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import ndcg_score

from ranking_core.metrics import (
    dcg,
    expected_rank_utility,
    mean_1norm_difference,
    mean_squared_difference,
    mrr,
    ndcg,
    pairwise_misranking,
    pairwise_misranking_margin,
    pairwise_misranking_rows,
    precision_at,
    wta,
)


def brute_misranking(y: np.ndarray, f: np.ndarray) -> float:
    """Kriukova et al. 2014, eq. (1) literally: over ordered pairs with y_i > y_j, count f_i ≤
    f_j."""
    greater = y[:, None] > y[None, :]
    wrong = greater & (f[:, None] <= f[None, :])
    return wrong.sum() / greater.sum()


@pytest.mark.parametrize("seed", range(6))
def test_misranking_matches_brute_force_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 300))
    y = rng.integers(0, 5, n).astype(float)  # many ties in y
    f = np.round(rng.normal(size=n) + 0.3 * y, 1)  # ties in f too
    if np.ptp(y) == 0:
        y[0] += 1
    assert pairwise_misranking(y, f) == pytest.approx(brute_misranking(y, f), abs=1e-15)


@pytest.mark.parametrize("n", [2, 37, 300, 5000])
def test_misranking_rows_equals_per_row_calls(n: int) -> None:
    rng = np.random.default_rng(n)
    y = rng.integers(0, 6, n).astype(float)
    y[0], y[1] = 0.0, 5.0
    F = np.round(rng.normal(size=(7, n)) + 0.2 * y, 1)
    expected = [brute_misranking(y, row) if n <= 300 else pairwise_misranking(y, row) for row in F]
    np.testing.assert_allclose(pairwise_misranking_rows(y, F), expected, atol=1e-14)


def loop_misranking_margin(y: np.ndarray, f: np.ndarray, margin: float) -> float:
    """Eq. (1) over the pairs with y_i − y_j > margin, one pair at a time."""
    pairs = wrong = 0
    for i in range(y.size):
        for j in range(y.size):
            if y[i] - y[j] > margin:
                pairs += 1
                wrong += bool(f[i] <= f[j])
    return wrong / pairs


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("margin", [0.0, 0.05, 0.5, 2.0])
def test_misranking_margin_matches_a_pair_loop(seed: int, margin: float) -> None:
    """Jester-like ratings (−10..10 in steps of 0.05, shifted by 10) and scores with ties."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 120))
    y = np.round(rng.uniform(-10, 10, n) / 0.05) * 0.05 + 10.0
    f = np.round(0.1 * y + rng.normal(size=n), 1)
    assert pairwise_misranking_margin(y, f, margin) == pytest.approx(
        loop_misranking_margin(y, f, margin), abs=1e-15
    )


def test_misranking_margin_edges() -> None:
    y = np.array([1.0, 1.2, 3.0, 3.1])
    f = np.array([1.0, 0.0, 3.0, 2.0])  # both close pairs wrong, the four far pairs right
    assert pairwise_misranking_margin(y, f, 0.0) == pairwise_misranking(y, f) == 2 / 6
    assert pairwise_misranking_margin(y, f, 0.5) == 0.0  # the two close pairs left out
    f[1] = 2.5  # now (3.1, 1.2) is misranked too: 1 of the 4 far pairs
    assert pairwise_misranking_margin(y, f, 0.5) == 1 / 4
    assert np.isnan(pairwise_misranking_margin(y, f, 5.0))  # no pair differs by more than 5
    # whole-number ratings never differ by less than 1: a margin below 1 removes no pair
    z = np.array([1.0, 2, 2, 3, 5])
    g = np.array([0.3, 0.1, 0.2, 0.2, 0.9])
    assert pairwise_misranking_margin(z, g, 0.99) == pairwise_misranking(z, g)
    for bad in (-0.1, np.nan, np.inf):
        with pytest.raises(ValueError, match="margin must be a finite number >= 0"):
            pairwise_misranking_margin(y, f, bad)


def test_misranking_extremes() -> None:
    y = np.array([0.0, 1, 2, 3])
    assert pairwise_misranking(y, y * 2) == 0.0
    assert pairwise_misranking(y, -y) == 1.0
    assert pairwise_misranking(y, np.zeros(4)) == 1.0  # ties in f count as errors
    assert np.isnan(pairwise_misranking(np.ones(4), y))


def test_misranking_runs_on_a_million_points() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 9, 1_000_000).astype(float)
    f = y + rng.normal(scale=2.0, size=y.size)
    value = pairwise_misranking(y, f)
    # check against brute force on a subsample's expectation: same distribution, so close
    sub = rng.choice(y.size, 2000, replace=False)
    assert value == pytest.approx(brute_misranking(y[sub], f[sub]), abs=0.02)


@settings(max_examples=60, deadline=None)
@given(
    y=st.lists(st.integers(0, 4), min_size=2, max_size=40),
    f=st.lists(st.integers(-400, 400), min_size=40, max_size=40),
)
def test_misranking_invariant_under_increasing_transforms(y: list[int], f: list[int]) -> None:
    # scores on a 1/8 grid, so the transforms stay strictly increasing in floating point
    y_arr = np.asarray(y, dtype=float)
    f_arr = np.asarray(f[: len(y)]) / 8.0
    if np.ptp(y_arr) == 0:
        return
    base = pairwise_misranking(y_arr, f_arr)
    assert pairwise_misranking(y_arr, np.exp(f_arr / 25) * 3 - 7) == pytest.approx(base)
    assert pairwise_misranking(y_arr, np.arctan(f_arr)) == pytest.approx(base)
    assert base == pytest.approx(brute_misranking(y_arr, f_arr))


@pytest.mark.parametrize("seed", range(4))
def test_msd_and_m1d_match_double_sums(seed: int) -> None:
    rng = np.random.default_rng(seed)
    y, h = rng.normal(size=57), rng.normal(size=57)
    dh = h[None, :] - h[:, None]
    dy = y[None, :] - y[:, None]
    assert mean_squared_difference(y, h) == pytest.approx(np.mean((dh - dy) ** 2), rel=1e-12)
    assert mean_1norm_difference(y, h) == pytest.approx(np.mean(np.abs(dh - dy)), rel=1e-12)


@pytest.mark.parametrize("k", [None, 1, 5, 10])
def test_ndcg_matches_sklearn_with_ties(k: int | None) -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        y = rng.integers(0, 5, 30).astype(float)
        f = np.round(rng.normal(size=30), 1)
        assert ndcg(y, f, k, gain="linear") == pytest.approx(ndcg_score([y], [f], k=k))
        # exponential gains 2^r − 1 (Le & Smola 2007, eq. 13) = sklearn with transformed relevance
        assert ndcg(y, f, k) == pytest.approx(ndcg_score([2**y - 1], [f], k=k))


def test_dcg_by_hand() -> None:
    y = np.array([3.0, 2, 0])
    f = np.array([0.1, 0.9, 0.5])  # order: item 1 (2), item 2 (0), item 0 (3)
    expected = (2**2 - 1) / np.log2(2) + 0 / np.log2(3) + (2**3 - 1) / np.log2(4)
    assert dcg(y, f) == pytest.approx(expected)
    assert dcg(y, f, k=1) == pytest.approx(3.0)


def test_permutation_measures_by_hand() -> None:
    y = np.array([1.0, 4, 2, 4, 0])
    f = np.array([0.9, 0.5, 0.8, 0.1, 0.0])  # ranking: 0, 2, 1, 3, 4
    assert mrr(y, f) == pytest.approx(1 / 3)  # first relevance-4 item is at rank 3
    assert wta(y, f) == 0.0
    assert wta(y, -np.arange(5.0) + 10 * (y == 4)) == 1.0
    assert precision_at(y, f, n=3, threshold=2) == pytest.approx(2 / 3)  # y of top 3: 1, 2, 4
    utility = np.maximum(y[[0, 2, 1, 3, 4]] - 1, 0)  # neutral vote d = 1
    decay = 2.0 ** (-np.arange(5) / (5 - 1))  # α = 5
    best = np.sort(np.maximum(y - 1, 0))[::-1] @ decay
    assert expected_rank_utility(y, f, neutral=1, halflife=5) == pytest.approx(
        utility @ decay / best
    )


def test_metric_input_errors() -> None:
    with pytest.raises(ValueError, match="3 values"):
        pairwise_misranking([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="finite"):
        mean_squared_difference([1, np.nan], [1, 2])
