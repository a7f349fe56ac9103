"""Nyström / subset-of-regressors ranking (Pahikkala et al. 2009, §3.5) against the exact solver."""

from __future__ import annotations

import numpy as np
import pytest

from ranking_core import NystromRanker, SpectralRanker
from ranking_core.metrics import pairwise_misranking
from ranking_core.spectral import pivoted_cholesky


def _data(m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 600, size=(m, 2))
    y = np.clip(np.abs(X[:, 0] - X[:, 1]) / 100, 0, 4)
    return X, y


@pytest.mark.parametrize("filter_name", ["lavrentiev", "iterated-lavrentiev", "spectral-cutoff"])
def test_all_points_as_centres_equals_the_exact_ranker(filter_name: str) -> None:
    X, y = _data(60)
    Xt, _ = _data(40, seed=1)
    lams = np.array([1e-1, 1e-2, 1e-3])
    # γ small enough that the 60 × 60 Gram matrix is well conditioned
    exact = SpectralRanker(gamma=2e3, filter=filter_name, solver="dense").fit(X, y)
    nystrom = NystromRanker(gamma=2e3, filter=filter_name, n_centers=60, centers="uniform").fit(
        X, y
    )
    assert nystrom.spectrum_.rank == 60
    np.testing.assert_allclose(
        nystrom.path(lams).predict(Xt), exact.path(lams).predict(Xt), atol=1e-8
    )
    np.testing.assert_allclose(nystrom.predict(Xt), exact.predict(Xt), atol=1e-8)
    np.testing.assert_allclose(
        nystrom.resolve(1e-2).predict(Xt), exact.resolve(1e-2).predict(Xt), atol=1e-8
    )


def test_coefficients_solve_the_subset_of_regressors_equations() -> None:
    """Pahikkala et al. 2009, eq. (41) in the scaling of Kriukova et al. 2014: (K_RX C K_XR/m +
    λK_RR) a = K_RX C y/m."""
    X, y = _data(200)
    lam = 1e-3
    model = NystromRanker(gamma=1e4, lam=lam, n_centers=25, centers="uniform").fit(X, y)
    K_xr = model.kernel_(X, model.X_fit_)
    K_rr = model.kernel_(model.X_fit_, model.X_fit_)
    centred = K_xr - K_xr.mean(axis=0)
    lhs = centred.T @ centred / len(y) + lam * K_rr
    rhs = centred.T @ (y - y.mean()) / len(y)
    np.testing.assert_allclose(lhs @ model.coef_, rhs, atol=1e-10 * np.abs(rhs).max())
    # mean training prediction on the rating scale
    assert model.predict(X).mean() == pytest.approx(y.mean(), abs=1e-10)


def test_greedy_centres_are_the_pivoted_cholesky_pivots_and_approach_the_exact_ranker() -> None:
    X, y = _data(800)
    Xt, yt = _data(500, seed=2)
    exact = SpectralRanker(gamma=1e4, lam=1e-4, solver="dense").fit(X, y)
    errors = []
    for n in (10, 40, 160):
        model = NystromRanker(gamma=1e4, lam=1e-4, n_centers=n).fit(X, y)
        pivots = pivoted_cholesky(model.kernel_, X, 1e-12, n, partial=True)[1]
        np.testing.assert_array_equal(model.centers_, pivots)
        errors.append(np.abs(model.predict(Xt) - exact.predict(Xt)).max())
    assert errors[2] < errors[1] < errors[0]
    assert errors[2] < 1e-2  # ratings 0..4
    assert (
        abs(pairwise_misranking(yt, model.predict(Xt)) - pairwise_misranking(yt, exact.predict(Xt)))
        < 1e-3
    )


def test_bad_parameters_are_named() -> None:
    X, y = _data(20)
    with pytest.raises(ValueError, match="'centers'"):
        NystromRanker(centers="random").fit(X, y)
    with pytest.raises(ValueError, match="'n_centers'"):
        NystromRanker(n_centers=0).fit(X, y)
