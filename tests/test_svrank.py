"""SVRank (Cortes et al. 2007, §2.4) against brute-force minimisation of its primal objective."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

from ranking_core import SpectralRanker, SVRank


def _primal(w: np.ndarray, X: np.ndarray, y: np.ndarray, lam: float, eps: float) -> float:
    """Cortes et al. 2007, eq. (9), n = 1, λ = 1/C, with a linear f(x) = x·w (all ordered pairs)."""
    f = X @ w
    gap = np.abs((f[None, :] - f[:, None]) - (y[None, :] - y[:, None]))
    return lam * w @ w + np.maximum(gap - eps, 0.0).sum() / len(y) ** 2


@pytest.mark.parametrize("eps", [0.0, 0.3])
def test_matches_brute_force_minimisation(eps: float) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(9, 2))
    y = np.round(2 * X[:, 0] - X[:, 1] + rng.normal(0, 0.5, 9))
    lam = 0.05
    model = SVRank(kernel="linear", lam=lam, epsilon=eps).fit(X, y)
    w = X.T @ model.coef_
    best = min(
        (
            scipy.optimize.minimize(
                _primal,
                start,
                args=(X, y, lam, eps),
                method="Nelder-Mead",
                options={"xatol": 1e-10, "fatol": 1e-13, "maxiter": 20000},
            )
            for start in (np.zeros(2), np.ones(2), -np.ones(2))
        ),
        key=lambda r: r.fun,
    )
    assert model.objective_ == pytest.approx(_primal(w, X, y, lam, eps), rel=1e-9)
    assert model.objective_ <= best.fun + 1e-8
    np.testing.assert_allclose(w, best.x, atol=1e-4)


@pytest.mark.slow
def test_ranks_like_the_least_squares_ranker_on_clean_data() -> None:
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 10, size=(20, 1))
    y = np.floor(X[:, 0])
    Xt = np.linspace(0, 10, 200)[:, None]
    svrank = SVRank(gamma=10.0, lam=1e-3, epsilon=0.1, tol=1e-6).fit(X, y)
    lsq = SpectralRanker(gamma=10.0, lam=1e-3).fit(X, y)
    assert svrank.score(Xt, np.floor(Xt[:, 0])) > 0.95
    assert svrank.score(Xt, np.floor(Xt[:, 0])) == pytest.approx(
        lsq.score(Xt, np.floor(Xt[:, 0])), abs=0.05
    )


def test_refuses_too_many_pairs() -> None:
    X = np.arange(400.0)[:, None]
    with pytest.raises(ValueError, match="small m"):
        SVRank().fit(X, X[:, 0] % 7)
