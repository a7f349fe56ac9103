"""Exact leave-pair-out shortcut against brute-force refits (Pahikkala et al. 2009, §3.4, Cortes et
al. 2007, §2.6)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ranking_core import SpectralRanker
from ranking_core.selection import (
    leave_pair_out,
    leave_pair_out_differences,
    leave_pair_out_squared,
)


def _data(m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 10, size=(m, 2))
    y = np.round(X[:, 0] - 0.5 * X[:, 1] + rng.normal(0, 1.0, m))
    return X, y


def _brute_force(ranker: SpectralRanker, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    rows = []
    for i, j in itertools.combinations(range(len(y)), 2):
        keep = np.setdiff1d(np.arange(len(y)), [i, j])
        model = SpectralRanker(**{**ranker.get_params(), "solver": "dense"})
        model.fit(X[keep], y[keep])
        rows.append(model.predict(X[[i, j]]))
    return np.asarray(rows)


@pytest.mark.parametrize(
    ("m", "lam", "kernel"), [(12, 1e-2, "gaussian"), (17, 1e-3, "gaussian"), (14, 1e-1, "linear")]
)
def test_held_out_predictions_equal_refits(m: int, lam: float, kernel: str) -> None:
    X, y = _data(m, seed=m)
    ranker = SpectralRanker(kernel=kernel, gamma=20.0, lam=lam)
    i, j, fast = leave_pair_out_differences(ranker, X, y)
    slow = _brute_force(ranker, X, y)
    np.testing.assert_array_equal(
        np.column_stack([i, j]), list(itertools.combinations(range(m), 2))
    )
    # the shortcut fixes no constant: compare differences f(x_i) − f(x_j)
    np.testing.assert_allclose(
        fast[:, 0] - fast[:, 1], slow[:, 0] - slow[:, 1], rtol=1e-7, atol=1e-9
    )


def test_misranking_and_squared_match_refits() -> None:
    X, y = _data(18, seed=3)
    ranker = SpectralRanker(gamma=30.0, lam=3e-3)
    slow = _brute_force(ranker, X, y)
    pairs = list(itertools.combinations(range(len(y)), 2))
    wrong = total = 0
    squared = 0.0
    for (i, j), (fi, fj) in zip(pairs, slow, strict=True):
        squared += 2 * ((fj - fi) - (y[j] - y[i])) ** 2
        if y[i] != y[j]:
            total += 1
            wrong += (fi - fj) * np.sign(y[i] - y[j]) <= 0
    assert leave_pair_out(ranker, X, y) == pytest.approx(wrong / total, abs=1e-12)
    m = len(y)
    assert leave_pair_out_squared(ranker, X, y) == pytest.approx(squared / (m * (m - 1)), rel=1e-8)


def test_rejects_filters_without_the_shortcut() -> None:
    X, y = _data(10, seed=1)
    with pytest.raises(ValueError, match="Lavrentiev"):
        leave_pair_out(SpectralRanker(filter="spectral-cutoff"), X, y)


def test_rejects_too_few_points() -> None:
    with pytest.raises(ValueError, match="at least 4"):
        leave_pair_out(SpectralRanker(), [[0.0], [1.0], [2.0]], [0.0, 1.0, 2.0])
