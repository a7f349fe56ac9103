"""choose(): every rule against brute-force refits and closed forms."""

import itertools

import numpy as np
import pytest

from ranking_core import OnlineMPRank, RankBoost, SpectralRanker
from ranking_core.kernels import GaussianKernel
from ranking_core.metrics import pairwise_misranking
from ranking_core.selection import (
    TIE_TOLERANCE,
    choose,
    fit_apriori_lambda,
    near_minimum,
    paper_lambda_grid,
    validation_scores,
)
from ranking_core.selection.apriori import _fit_power_law


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


def test_near_ties_of_the_minimum_go_to_the_first_candidate() -> None:
    assert near_minimum(np.array([0.1 + 0.2, 0.3])) == 0  # equal counts, summed in two orders
    # values that differ by round-off only: the first (largest λ) wins
    curve = np.array([0.30, 0.012, 0.0100 + TIE_TOLERANCE / 2, np.nan, 0.0100, 0.0101 + 1e-12])
    assert near_minimum(curve) == 2
    assert near_minimum(curve, tolerance=0.0) == 4  # no tolerance: the exact minimum
    # values beyond the tolerance are not ties, however early
    assert near_minimum(np.array([0.0100 + 2 * TIE_TOLERANCE, 0.0100])) == 1
    with pytest.raises(ValueError, match="validation ratings are constant"):
        near_minimum(np.array([np.nan, np.nan]))


def test_holdout_without_refit_matches_brute_force_refits() -> None:
    X, y = data(80)
    lams = paper_lambda_grid(1.0, 0.7, 15)
    ranker = SpectralRanker(gamma=1e4)
    choice = choose(ranker, X, y, rule="holdout", grid=lams, refit=False)
    brute = [
        pairwise_misranking(
            y[40:], SpectralRanker(gamma=1e4, lam=lam).fit(X[:40], y[:40]).predict(X[40:])
        )
        for lam in lams
    ]
    np.testing.assert_allclose(choice.curve, brute, atol=1e-12)
    assert choice.value == lams[int(np.argmin(brute))] and not choice.refit
    np.testing.assert_allclose(
        choice.model.predict(X[40:]),
        SpectralRanker(gamma=1e4, lam=choice.value).fit(X[:40], y[:40]).predict(X[40:]),
        atol=1e-9,
    )


def test_refit_on_all_data_is_the_default_and_recorded() -> None:
    X, y = data(80)
    lams = paper_lambda_grid(1.0, 0.7, 15)
    choice = choose(SpectralRanker(gamma=1e4), X, y, rule="holdout", grid=lams)
    split = choose(SpectralRanker(gamma=1e4), X, y, rule="holdout", grid=lams, refit=False)
    assert choice.refit and choice.value == split.value
    np.testing.assert_allclose(choice.curve, split.curve, atol=1e-15)
    np.testing.assert_allclose(
        choice.model.predict(X),
        SpectralRanker(gamma=1e4, lam=choice.value).fit(X, y).predict(X),
        atol=1e-9,
    )


@pytest.mark.filterwarnings("ignore:OnlineMPRank. not converged")
def test_grid_learner_is_fitted_once_per_value() -> None:
    """A learner without a λ path: one fit per value of ``param`` on the first half."""
    X, y = data(40, seed=5)
    rounds = np.array([1, 3, 10])
    choice = choose(RankBoost(), X, y, rule="holdout", grid=rounds, param="n_rounds", refit=False)
    brute = [
        pairwise_misranking(y[20:], RankBoost(n_rounds=int(n)).fit(X[:20], y[:20]).predict(X[20:]))
        for n in rounds
    ]
    np.testing.assert_allclose(choice.curve, brute, atol=1e-15)
    assert choice.value == rounds[int(np.argmin(brute))] and choice.param == "n_rounds"
    lams = np.array([1e-1, 1e-3])
    online = choose(
        OnlineMPRank(gamma=1e4, max_passes=50, tol=1e-6), X, y, rule="holdout", grid=lams
    )
    assert online.refit and online.model.lam == online.value
    assert online.model.n_features_in_ == 2 and len(online.model.coef_) == len(y)


def test_gamma_and_lambda_chosen_together_by_the_lowest_validation_misranking() -> None:
    X, y = data(60, seed=6)
    lams = paper_lambda_grid(1.0, 0.5, 8)
    gammas = (3e3, 1e4, 5e4)
    choice = choose(SpectralRanker(), X, y, rule="holdout", grid=lams, gammas=gammas, refit=False)
    brute = np.array(
        [
            [
                pairwise_misranking(
                    y[30:], SpectralRanker(gamma=g, lam=lam).fit(X[:30], y[:30]).predict(X[30:])
                )
                for lam in lams
            ]
            for g in gammas
        ]
    )
    np.testing.assert_allclose(choice.curve, brute, atol=1e-12)
    g, j = np.unravel_index(np.argmin(brute), brute.shape)
    assert (choice.gamma, choice.value) == (gammas[g], lams[j])
    factory = choose(
        lambda gamma: SpectralRanker(gamma=gamma),
        X,
        y,
        rule="holdout",
        grid=lams,
        gammas=gammas,
        refit=False,
    )
    assert (factory.gamma, factory.value) == (choice.gamma, choice.value)


def test_kfold_matches_brute_force_refits() -> None:
    from sklearn.model_selection import KFold

    X, y = data(60, seed=1)
    lams = paper_lambda_grid(1.0, 0.6, 8)
    choice = choose(
        SpectralRanker(gamma=1e4), X, y, rule="kfold", grid=lams, n_splits=3, random_state=4
    )
    folds = list(KFold(3, shuffle=True, random_state=4).split(X))
    brute = np.mean(
        [
            [
                pairwise_misranking(
                    y[te], SpectralRanker(gamma=1e4, lam=lam).fit(X[tr], y[tr]).predict(X[te])
                )
                for lam in lams
            ]
            for tr, te in folds
        ],
        axis=0,
    )
    np.testing.assert_allclose(choice.curve, brute, atol=1e-12)
    assert choice.value == lams[int(np.argmin(brute))] and choice.refit
    np.testing.assert_allclose(
        choice.model.coef_, SpectralRanker(gamma=1e4, lam=choice.value).fit(X, y).coef_, atol=1e-9
    )


def test_quasi_optimality_uses_rkhs_norm_of_differences() -> None:
    X, y = data(50, seed=2)
    lams = paper_lambda_grid(1.0, 0.5, 10)
    choice = choose(SpectralRanker(gamma=1e4), X, y, rule="quasi-optimality", grid=lams)
    K = GaussianKernel(1e4)(X, X)
    coefs = [SpectralRanker(gamma=1e4, lam=lam).fit(X, y).coef_ for lam in lams]
    brute = [np.sqrt(max((a - b) @ K @ (a - b), 0.0)) for a, b in itertools.pairwise(coefs)]
    np.testing.assert_allclose(choice.curve[:-1], brute, rtol=1e-6, atol=1e-10)
    assert choice.value == lams[int(np.argmin(brute))]


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
    rule = fit_apriori_lambda(
        SpectralRanker(gamma=1e4),
        X,
        y,
        sizes=(20, 30, 40),
        draws=4,
        lams=paper_lambda_grid(1.0, 0.8, 30),
        random_state=0,
    )
    assert rule.lam_plus.shape == (3, 4)
    assert 0 < rule.beta <= 1
    assert rule(400) == pytest.approx(rule.alpha * 400 ** (-rule.beta / 2))
    assert np.isfinite(rule.alpha_sd) and np.isfinite(rule.beta_sd)
    # the rule is the least-squares fit of the λ₊ it found
    alpha, beta = _fit_power_law(rule.sizes, rule.lam_plus, 1.0)
    assert (alpha, beta) == pytest.approx((rule.alpha, rule.beta))
    choice = choose(SpectralRanker(gamma=1e4), X, y, rule="apriori", apriori=rule)
    assert choice.value == pytest.approx(rule(len(y))) and choice.curve is None
    np.testing.assert_allclose(
        choice.model.coef_, SpectralRanker(gamma=1e4, lam=rule(len(y))).fit(X, y).coef_, atol=1e-12
    )


def test_manual_value_is_fitted_on_all_data() -> None:
    X, y = data(30, seed=7)
    choice = choose(SpectralRanker(gamma=1e4), X, y, rule="manual", value=0.02)
    assert choice.value == 0.02 and choice.model.lam == 0.02 and choice.refit
    np.testing.assert_allclose(
        choice.model.predict(X), SpectralRanker(gamma=1e4, lam=0.02).fit(X, y).predict(X)
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rule": "best"}, "must be one of"),
        ({"rule": "kfold", "refit": False}, "refit=False applies to rule='holdout' only"),
        ({"rule": "manual"}, "needs value"),
        ({"rule": "apriori"}, "needs apriori"),
        ({"rule": "quasi-optimality", "gammas": (1.0, 2.0)}, "gammas are chosen by"),
        ({"rule": "holdout", "param": "n_rounds"}, "grid of 'n_rounds' values"),
    ],
)
def test_choose_refuses_inconsistent_requests(kwargs: dict, message: str) -> None:
    X, y = data(20, seed=8)
    with pytest.raises(ValueError, match=message):
        choose(SpectralRanker(), X, y, **kwargs)


def test_holdout_rejects_constant_validation_half() -> None:
    X, y = data(20, seed=4)
    y[10:] = 1.0
    with pytest.raises(ValueError, match="constant"):
        choose(SpectralRanker(), X, y, rule="holdout")


def test_absolute_error_criterion_matches_brute_force_refits() -> None:
    from sklearn.model_selection import KFold

    X, y = data(60, seed=2)
    lams = paper_lambda_grid(1.0, 0.6, 8)
    choice = choose(
        SpectralRanker(gamma=1e4),
        X,
        y,
        rule="kfold",
        grid=lams,
        n_splits=3,
        random_state=4,
        criterion="absolute-error",
    )
    folds = list(KFold(3, shuffle=True, random_state=4).split(X))
    brute = np.mean(
        [
            [
                np.mean(
                    np.abs(
                        SpectralRanker(gamma=1e4, lam=lam).fit(X[tr], y[tr]).predict(X[te]) - y[te]
                    )
                )
                for lam in lams
            ]
            for tr, te in folds
        ],
        axis=0,
    )
    np.testing.assert_allclose(choice.curve, brute, rtol=1e-10)
    assert choice.value == lams[int(np.argmin(brute))]


def test_absolute_error_criterion_for_learners_without_a_path() -> None:
    X, y = data(50, seed=3)
    rounds = np.array([2, 5, 10])
    choice = choose(
        RankBoost(),
        X,
        y,
        rule="holdout",
        grid=rounds,
        param="n_rounds",
        refit=False,
        criterion="absolute-error",
    )
    brute = [
        np.mean(np.abs(RankBoost(n_rounds=int(n)).fit(X[:25], y[:25]).predict(X[25:]) - y[25:]))
        for n in rounds
    ]
    np.testing.assert_allclose(choice.curve, brute, rtol=1e-10)


def test_validation_scores_by_hand() -> None:
    y = np.array([0.0, 1.0, 2.0])
    predictions = np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0], [0.5, 1.5, 3.0]])
    # misranking: 3 ordered pairs; reversed scores misrank all, a tie counts as an error
    np.testing.assert_allclose(validation_scores(y, predictions), [0.0, 1.0, 0.0])
    np.testing.assert_allclose(
        validation_scores(y, predictions, "absolute-error"), [0.0, 4 / 3, 2 / 3]
    )
    with pytest.raises(ValueError, match="criterion"):
        validation_scores(y, predictions, "squared")
    with pytest.raises(ValueError, match="criterion"):
        choose(SpectralRanker(), *data(20), rule="kfold", criterion="median")
