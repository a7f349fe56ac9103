"""On-line / gradient MPRank (Cortes et al. 2007, §2.5) converges to the batch Lavrentiev
solution."""

from __future__ import annotations

import numpy as np
import pytest

from ranking_core import OnlineMPRank, SpectralRanker


def _data(m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 600, size=(m, 2))
    y = np.round(np.clip(np.abs(X[:, 0] - X[:, 1]) / 100 + rng.normal(0, 0.3, m), 0, 4))
    return X, y


@pytest.mark.parametrize("step", [None, 0.1])
def test_converges_to_the_batch_solution(step: float | None) -> None:
    X, y = _data(80)
    Xt, _ = _data(50, seed=1)
    lam = 1e-2
    batch = SpectralRanker(gamma=1e4, lam=lam, solver="dense").fit(X, y)
    online = OnlineMPRank(gamma=1e4, lam=lam, step=step, max_passes=5000).fit(X, y)
    assert online.converged_
    np.testing.assert_allclose(online.coef_, batch.coef_, atol=1e-7 * np.abs(batch.coef_).max())
    np.testing.assert_allclose(online.predict(Xt), batch.predict(Xt), atol=1e-6)


def test_gap_to_the_batch_solution_shrinks_with_the_passes() -> None:
    X, y = _data(60, seed=2)
    batch = SpectralRanker(gamma=1e4, lam=1e-3, solver="dense").fit(X, y)
    gaps = []
    for passes in (1, 5, 25):
        with pytest.warns(UserWarning, match="not converged"):
            model = OnlineMPRank(gamma=1e4, lam=1e-3, max_passes=passes).fit(X, y)
        gaps.append(np.abs(model.coef_ - batch.coef_).max())
    assert gaps[2] < gaps[1] < gaps[0]


def test_too_large_a_step_is_reported() -> None:
    X, y = _data(30)
    with pytest.raises(ValueError, match="diverged"):
        OnlineMPRank(gamma=1e4, lam=1e-2, step=10.0, max_passes=2000).fit(X, y)
