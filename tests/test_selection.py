"""λ rules against brute-force refits and closed forms."""

import itertools

import numpy as np
import pytest

from ranking_core import SpectralRanker
from ranking_core.kernels import GaussianKernel
from ranking_core.metrics import pairwise_misranking
from ranking_core.selection import (
    _fit_power_law,
    fit_apriori_lambda,
    holdout_lambda,
    kfold_lambda,
    paper_lambda_grid,
    quasi_optimality_lambda,
)


def data(m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 600, size=(m, 2))
    y = np.clip(np.abs(X[:, 0] - X[:, 1]) / 120 + rng.normal(scale=0.3, size=m), 0, 4)
    return X, y


def test_paper_grid() -> None:
    grid = paper_lambda_grid()
    assert grid.shape == (200,) and grid[0] == 1.0
    assert grid[199] == pytest.approx(0.95**199)
    assert paper_lambda_grid(15.0)[3] == pytest.approx(15 * 0.95**3)


def test_holdout_matches_brute_force_refits() -> None:
    X, y = data(80)
    lams = paper_lambda_grid(1.0, 0.7, 15)
    ranker = SpectralRanker(gamma=1e4)
    choice = holdout_lambda(ranker, X, y, lams)
    brute = [
        pairwise_misranking(y[40:], SpectralRanker(gamma=1e4, lam=lam).fit(X[:40], y[:40])
                            .predict(X[40:]))
        for lam in lams
    ]
    np.testing.assert_allclose(choice.curve, brute, atol=1e-12)
    assert choice.lam == lams[int(np.argmin(brute))]
    np.testing.assert_allclose(
        choice.model.predict(X[40:]),
        SpectralRanker(gamma=1e4, lam=choice.lam).fit(X[:40], y[:40]).predict(X[40:]),
        atol=1e-9,
    )


def test_kfold_matches_brute_force_refits() -> None:
    from sklearn.model_selection import KFold

    X, y = data(60, seed=1)
    lams = paper_lambda_grid(1.0, 0.6, 8)
    choice = kfold_lambda(SpectralRanker(gamma=1e4), X, y, lams, n_splits=3, random_state=4)
    folds = list(KFold(3, shuffle=True, random_state=4).split(X))
    brute = np.mean([
        [pairwise_misranking(y[te], SpectralRanker(gamma=1e4, lam=lam).fit(X[tr], y[tr])
                             .predict(X[te])) for lam in lams]
        for tr, te in folds
    ], axis=0)
    np.testing.assert_allclose(choice.curve, brute, atol=1e-12)
    assert choice.lam == lams[int(np.argmin(brute))]


def test_quasi_optimality_uses_rkhs_norm_of_differences() -> None:
    X, y = data(50, seed=2)
    lams = paper_lambda_grid(1.0, 0.5, 10)
    choice = quasi_optimality_lambda(SpectralRanker(gamma=1e4), X, y, lams)
    K = GaussianKernel(1e4)(X, X)
    coefs = [SpectralRanker(gamma=1e4, lam=lam).fit(X, y).coef_ for lam in lams]
    brute = [np.sqrt(max((a - b) @ K @ (a - b), 0.0)) for a, b in itertools.pairwise(coefs)]
    np.testing.assert_allclose(choice.curve[:-1], brute, rtol=1e-6, atol=1e-10)
    assert choice.lam == lams[int(np.argmin(brute))]


def test_power_law_fit_recovers_exact_rule_and_respects_beta_bound() -> None:
    sizes = np.array([20, 30, 40, 50])
    exact = 0.8 * sizes.astype(float) ** (-0.6 / 2)
    alpha, beta = _fit_power_law(sizes, np.tile(exact[:, None], (1, 3)), beta_max=1.0)
    assert alpha == pytest.approx(0.8) and beta == pytest.approx(0.6)
    steep = 2.0 * sizes.astype(float) ** (-3.0 / 2)  # β = 3 is outside (0, 1]
    _, bounded = _fit_power_law(sizes, steep[:, None], beta_max=1.0)
    assert bounded == pytest.approx(1.0)


def test_apriori_rule_end_to_end() -> None:
    X, y = data(300, seed=3)
    rule = fit_apriori_lambda(SpectralRanker(gamma=1e4), X, y, sizes=(20, 30, 40), draws=4,
                              lams=paper_lambda_grid(1.0, 0.8, 30), random_state=0)
    assert rule.lam_plus.shape == (3, 4)
    assert 0 < rule.beta <= 1
    assert rule(400) == pytest.approx(rule.alpha * 400 ** (-rule.beta / 2))
    assert np.isfinite(rule.alpha_sd) and np.isfinite(rule.beta_sd)
    # the rule is the least-squares fit of the λ₊ it found
    alpha, beta = _fit_power_law(rule.sizes, rule.lam_plus, 1.0)
    assert (alpha, beta) == pytest.approx((rule.alpha, rule.beta))


def test_holdout_rejects_constant_validation_half() -> None:
    X, y = data(20, seed=4)
    y[10:] = 1.0
    with pytest.raises(ValueError, match="constant"):
        holdout_lambda(SpectralRanker(), X, y)
