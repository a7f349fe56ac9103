"""Robust learning from panels: the weighted fit it solves, outliers, raters, coarse answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import truncnorm
from sklearn.base import clone
from sklearn.model_selection import KFold

from ranking_core import SpectralRanker
from ranking_core.grids.learned import learned_grid
from ranking_core.grids.monotone import MonotoneRisk, project_monotone
from ranking_core.grids.signed import AbsoluteRisk
from ranking_core.learn import (
    PRESETS,
    learn_grid,
    learn_panel,
    rating_positions,
    with_diagonal_anchors,
)
from ranking_core.learners.panel_answers import truncated_mean
from ranking_core.learners.robust import kfold_robust
from ranking_core.metrics import pairwise_misranking
from ranking_core.panels import RobustRanker, rating_step
from ranking_core.ratings import read_rating_set

ROBUST = PRESETS["robust"]

RNG = np.random.default_rng(0)


def _surface(X):
    """A smooth risk surface on mg/dL inputs (not the SEG): 0..~3.5."""
    return 3.5 * (1 - np.exp(-np.abs(X[:, 0] - X[:, 1]) / 150.0))


def _ranker(lam=1e-2):
    return SpectralRanker(kernel="gaussian", gamma=2e4, lam=lam)


def _panel(m, n_raters=6, noise=0.15, seed=0, outliers=0.0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 600, size=(m, 2))
    truth = _surface(X)
    rater = rng.integers(0, n_raters, size=m)
    bias = np.linspace(-0.3, 0.3, n_raters)
    scale = np.linspace(0.8, 1.2, n_raters)[::-1]
    y = bias[rater] + scale[rater] * truth + noise * rng.standard_normal(m)
    bad = rng.random(m) < outliers
    y[bad] = rng.uniform(0, 4, size=bad.sum())
    return X, y, rater, truth, bad, bias, scale


def test_the_fit_solves_the_weighted_least_squares_problem_it_reports():
    X, y, rater, *_ = _panel(150, outliers=0.1)
    model = RobustRanker(_ranker(), tol=1e-10, max_iter=2000).fit(np.column_stack([X, rater]), y)
    w, target = model.weights_, model.targets_
    assert 0 < w.min() < 0.5 and w.max() == pytest.approx(1.0)
    # direct solve of the weighted problem: (K + mλW⁻¹)c + b1 = ã, 1ᵀc = 0
    m, lam = len(y), model.lam_
    K = model.kernel_(X, X)
    system = np.block(
        [[K + m * lam * np.diag(1 / w), np.ones((m, 1))], [np.ones((1, m)), np.zeros((1, 1))]]
    )
    solution = np.linalg.solve(system, np.r_[target, 0.0])
    direct = K @ solution[:m] + solution[m]
    np.testing.assert_allclose(model.predict(X), direct, atol=1e-6)


def test_huber_weights_resist_outliers_and_flag_them():
    X, y, _, _, bad, *_ = _panel(300, outliers=0.1, seed=1)
    X_test = np.random.default_rng(9).uniform(0, 600, size=(1000, 2))
    truth = _surface(X_test)
    plain, robust = [], []
    for lam in (1e-1, 3e-2, 1e-2, 3e-3, 1e-3):  # each learner at its best λ
        plain.append(pairwise_misranking(truth, _ranker(lam).fit(X, y).predict(X_test)))
        model = RobustRanker(_ranker(lam), raters=False).fit(X, y)
        robust.append(pairwise_misranking(truth, model.predict(X_test)))
    assert min(robust) < 0.85 * min(plain)
    model = RobustRanker(_ranker(3e-3), raters=False).fit(X, y)
    assert model.weights_[bad].mean() < 0.75 * model.weights_[~bad].mean()
    assert model.outlier_[bad].mean() > 0.5  # most gross errors are flagged …
    assert model.outlier_[~bad].mean() < 0.1  # … few good ratings are


def test_rater_offsets_and_scales_are_recovered():
    X, y, rater, _, _, bias, scale = _panel(600, noise=0.1, seed=2)
    model = RobustRanker(_ranker(3e-3), loss="squared", rater_prior=5.0).fit(
        np.column_stack([X, rater]), y
    )
    share = np.bincount(rater) / len(rater)
    true_scale = scale / (share @ scale)  # the learner's convention: mean scale 1, mean offset 0
    true_bias = bias - share @ bias
    np.testing.assert_allclose(model.rater_scale_, true_scale, atol=0.06)
    # an offset is confounded with the scale times the consensus mean; compare the centred
    # consensus-level offsets b + (s − 1)·mean(f)
    mean_f = model.predict(X).mean()
    got = model.rater_bias_ + (model.rater_scale_ - 1) * mean_f
    want = true_bias + (true_scale - 1) * mean_f
    np.testing.assert_allclose(got, want, atol=0.08)


def test_a_careless_rater_gets_the_smallest_weight():
    X, y, rater, *_ = _panel(400, seed=3)
    careless = rater == 5
    y[careless] = RNG.uniform(0, 4, size=careless.sum())
    model = RobustRanker(_ranker()).fit(np.column_stack([X, rater]), y)
    weights = np.array([model.weights_[rater == k].mean() for k in range(6)])
    assert weights.argmin() == 5 and weights[5] < 0.5 * np.delete(weights, 5).min()
    assert model.rater_sd_.argmax() == 5


@pytest.mark.parametrize(
    ("values", "step"),
    [([0, 1, 4, 2], 1.0), ([0, 0.5, 3.5, 4], 0.5), ([0.3, 1.0, 2.0], 0.0), ([], 0.0)],
)
def test_rating_step_detects_the_answer_scale(values, step):
    assert rating_step(values) == step


def test_truncated_mean_matches_scipy():
    rng = np.random.default_rng(4)
    mean, sd = rng.normal(2, 3, 500), rng.uniform(0.05, 1, 500)
    low = rng.uniform(-1, 4, 500)
    high = low + rng.choice([0.5, 1.0, np.inf], 500)
    low[::5] = -np.inf
    want = truncnorm.mean((low - mean) / sd, (high - mean) / sd, loc=mean, scale=sd)
    np.testing.assert_allclose(truncated_mean(low, high, mean, sd), want, atol=1e-9)
    point = np.array([1.5])
    assert truncated_mean(point, point, np.array([3.0]), np.array([1.0]))[0] == 1.5


def test_coarse_answers_stand_for_their_rounding_interval():
    X, y, *_ = _panel(300, noise=0.2, seed=5)
    coarse = np.clip(np.round(y), 0, 4)  # answers on a 0..4 scale of whole numbers
    model = RobustRanker(_ranker(), loss="squared", raters=False).fit(X, coarse)
    assert model.step_ == 1.0
    latent = model.targets_  # no rater model: the expected unrounded answer itself
    interior = (coarse > 0) & (coarse < 4)
    assert np.all(np.abs(latent[interior] - coarse[interior]) <= 0.5 + 1e-12)
    assert np.all(latent[coarse == 0] <= 0.5) and np.all(latent[coarse == 4] >= 3.5)
    # the expectation moves each answer towards the fit, never past the interval
    fitted = model.predict(X)
    moved = latent[interior] - coarse[interior]
    toward = np.sign(fitted[interior] - coarse[interior])
    assert np.all(moved * toward >= -1e-12)
    midpoint = RobustRanker(_ranker(), loss="squared", raters=False, coarse="midpoint")
    np.testing.assert_allclose(midpoint.fit(X, coarse).targets_, coarse)


@pytest.mark.parametrize(("step", "noise"), [(0.5, 0.25), (0.5, 0.3), (1.0, 0.4), (1.0, 0.6)])
def test_the_noise_of_coarse_answers_is_measured_with_the_rounding_removed(step, noise):
    # answers rounded to a scale of step h: the rating noise σ is recovered from the residuals of
    # the answers as given, less the rounding variance h²/12 (Sheppard's correction: approximate,
    # the more so the smaller σ is against h); the expected latent answers alone sit close to
    # the fit and could give a σ at the floor (0.05 for h = 1, σ = 0.4)
    X, y, *_ = _panel(600, n_raters=1, noise=noise, seed=11)
    coarse = np.clip(np.round(y / step) * step, 0, 4)
    model = RobustRanker(_ranker(3e-3), loss="squared", raters=False).fit(X, coarse)
    assert model.step_ == step
    assert 0.6 * noise < model.noise_sd_ < 1.4 * noise


def test_quasi_optimality_measures_the_robust_fits_in_the_kernel_norm():
    # ‖f_j − f_{j+1}‖²_H = Δcᵀ K Δc of the path's own coefficients (brute force), for the robust
    # fits (their pseudo-ratings differ per λ) and for the plain path (path_iter = 0)
    X, y, rater, *_ = _panel(120, outliers=0.1, seed=6)
    inputs = np.column_stack([X, rater])
    lams = np.geomspace(1e-1, 1e-4, 8)
    for path_iter in (30, 0):
        model = RobustRanker(_ranker(), path_iter=path_iter).fit(inputs, y)
        path = model.path(lams)
        K = model.plain_.kernel_(X, X)
        steps = np.diff(path.path.coef, axis=0)
        want = np.sqrt(np.einsum("li,ij,lj->l", steps, K, steps))
        np.testing.assert_allclose(path.rkhs_norm_differences(), want, rtol=1e-6, atol=1e-10)
    plain = model.plain_.path(lams).rkhs_norm_differences()
    np.testing.assert_allclose(path.rkhs_norm_differences(), plain, rtol=1e-12)


def test_bad_inputs_are_named():
    X, y, rater, *_ = _panel(40)
    with pytest.raises(ValueError, match="loss"):
        RobustRanker(_ranker(), loss="cauchy").fit(X, y)
    with pytest.raises(ValueError, match="rater code"):
        RobustRanker(_ranker()).fit(np.column_stack([X, rater + 0.5]), y)
    with pytest.raises(ValueError, match="columns"):
        RobustRanker(_ranker()).fit(np.column_stack([X, rater, rater]), y)


def test_path_and_resolve_reuse_the_decomposition():
    X, y, rater, *_ = _panel(120, outliers=0.1, seed=6)
    inputs = np.column_stack([X, rater])
    model = RobustRanker(_ranker(), path_iter=400, tol=1e-9, max_iter=400).fit(inputs, y)
    lams = np.array([1e-1, 1e-2])
    path = model.path(lams).predict(inputs)
    for row, lam in zip(path, lams, strict=True):
        fresh = clone(model).set_params(ranker=_ranker(lam)).fit(inputs, y)
        np.testing.assert_allclose(row, fresh.predict(X), atol=1e-5)
        np.testing.assert_allclose(model.resolve(lam).predict(X), fresh.predict(X), atol=1e-6)


def _ratings(X, y, rater):
    return read_rating_set(
        pd.DataFrame(
            {
                "reference": X[:, 0],
                "estimate": X[:, 1],
                "rating": y,
                "rater": [f"r{k}" for k in rater],
            }
        )
    )


def test_recipe_with_raters_and_anchor_positions():
    X, y, rater, *_ = _panel(80, seed=7)
    recipe_X, _ = with_diagonal_anchors(ROBUST.anchors, X, y)
    np.testing.assert_array_equal(recipe_X[rating_positions(ROBUST.anchors, len(y))], X)
    learned = learn_grid(_ratings(X, np.clip(y, 0, 4), rater), ROBUST)
    model = learned.risk_model
    assert isinstance(model, MonotoneRisk) and isinstance(model.model, AbsoluteRisk)
    assert isinstance(model.model.signed_model, RobustRanker)
    assert model.model.signed_model.lam_ == learned.lam
    np.testing.assert_allclose(learned_grid(model), project_monotone(learned_grid(model.model)))
    assert np.all(model.predict(X) >= 0)


def test_kfold_robust_keeps_the_lower_absolute_error_of_both_paths():
    X, y, rater, *_ = _panel(90, outliers=0.1, seed=8)
    inputs = np.column_stack([X, rater])
    lams = 0.5 ** np.arange(8)
    robust = RobustRanker(_ranker())
    chosen = kfold_robust(robust, inputs, y, lams, n_splits=3, criterion="absolute-error")
    by_hand = []
    for model in (
        robust,
        clone(robust).set_params(loss="squared", raters=False, coarse="midpoint", path_iter=0),
    ):
        curve = np.zeros(len(lams))
        for train, test in KFold(3, shuffle=True, random_state=0).split(inputs):
            fitted = clone(model).fit(inputs[train], y[train])
            curve += np.mean(np.abs(fitted.path(lams).predict(inputs[test]) - y[test]), axis=1)
        by_hand.append(curve / 3)
    best = min(by_hand, key=np.min)
    np.testing.assert_allclose(chosen.curve, best, rtol=1e-8)
    assert chosen.value == lams[int(np.argmin(best))]
    assert ROBUST.criterion == "absolute-error"


def test_kfold_robust_on_the_first_fold_only_beyond_two_thousand_ratings():
    X, y, rater, *_ = _panel(90, outliers=0.1, seed=8)
    inputs = np.column_stack([X, rater])
    lams = 0.5 ** np.arange(8)
    robust = RobustRanker(_ranker())
    chosen = kfold_robust(robust, inputs, y, lams, n_splits=3, criterion="absolute-error", folds=1)
    train, test = next(KFold(3, shuffle=True, random_state=0).split(inputs))
    by_hand = []
    for model in (
        robust,
        clone(robust).set_params(loss="squared", raters=False, coarse="midpoint", path_iter=0),
    ):
        fitted = clone(model).fit(inputs[train], y[train])
        by_hand.append(np.mean(np.abs(fitted.path(lams).predict(inputs[test]) - y[test]), axis=1))
    np.testing.assert_allclose(chosen.curve, min(by_hand, key=np.min), rtol=1e-8)


def test_robust_learning_pins_the_diagonal_every_six_mg_dl():
    X, y, rater, *_ = _panel(60, seed=9)
    y = np.clip(y, 0, 4)
    inputs = np.column_stack([X, rater])
    recipe_X, recipe_y = with_diagonal_anchors(ROBUST.anchors, inputs, y)
    extra = np.ones(len(recipe_y), dtype=bool)
    extra[rating_positions(ROBUST.anchors, len(y))] = False
    expected = 6.0 * np.arange(101)  # 0, 6, …, 600 mg/dL
    np.testing.assert_allclose(np.sort(recipe_X[extra, 0]), expected, atol=1e-9)
    np.testing.assert_allclose(recipe_X[extra, 1], recipe_X[extra, 0], atol=1e-9)
    assert np.all(recipe_X[extra, 2] == -1) and np.all(recipe_y[extra] == 0)
    assert ROBUST.anchors == expected.size
    frame = pd.DataFrame(
        {"reference": X[:, 0], "estimate": X[:, 1], "rating": y, "rater": [f"r{k}" for k in rater]}
    )
    assert learn_panel(frame).learned.settings.anchors == expected.size  # as the recipe
    # the fit sees every anchor, and its signed surface stays near zero along the whole diagonal
    # (within 0.1; with the best recipe's 41 anchors it reaches 0.18 on this panel)
    signed = learn_grid(read_rating_set(frame), ROBUST).model
    assert signed.X_fit_.shape[0] == len(y) + expected.size
    diagonal = np.repeat(np.arange(0.0, 600.5, 0.5)[:, None], 2, axis=1)
    assert np.abs(signed.predict(diagonal)).max() < 0.1


@pytest.mark.parametrize("kappa", [0.0, 0.5, 1.5])
def test_noise_trend_recovers_a_known_slope(kappa):
    # residuals whose MAD in each of the trend's equal-count risk bins is exactly
    # sd(f) = 0.2·(1 + κ·f) at the bin's median risk (symmetric normal quantiles per bin): the
    # line through the bins is the trend itself, so κ comes back up to the bins' spread of f
    from scipy.stats import norm

    from ranking_core.learners.robust import TREND_BINS, noise_trend

    per_bin = 101
    quantiles = norm.ppf((np.arange(per_bin) + 0.5) / per_bin)
    quantiles *= 1 / (1.4826 * np.median(np.abs(quantiles)))  # MAD_TO_SD·MAD = 1 exactly
    centres = np.linspace(0.2, 3.0, TREND_BINS)
    risk = np.repeat(centres, per_bin)
    residual = np.concatenate([0.2 * (1 + kappa * c) * quantiles for c in centres])
    free = np.ones(risk.size, dtype=bool)
    got = noise_trend(residual[None], np.zeros((1, risk.size)), risk[None], free, 0.05)
    assert got[0] == pytest.approx(kappa, abs=1e-9)
    # the rounding variance is removed first (Sheppard): adding h²/12 to the measured variance
    # and declaring it leaves κ unchanged
    widened = np.concatenate(
        [np.sqrt((0.2 * (1 + kappa * c)) ** 2 + 0.5**2 / 12) * quantiles for c in centres]
    )
    rounding = np.full((1, risk.size), 0.5**2 / 12)
    got = noise_trend(widened[None], rounding, risk[None], free, 0.05)
    assert got[0] == pytest.approx(kappa, abs=1e-9)


@pytest.mark.slow
def test_noise_growing_with_the_risk_is_measured_and_weighted():
    X, *_ = _panel(600, n_raters=1, noise=0.0, seed=12)
    truth, side = _surface(X), np.sign(X[:, 0] - X[:, 1])
    noise = np.random.default_rng(13).standard_normal(len(truth))
    signed = {"loss": "squared", "raters": False, "signed": True, "trend": True}
    model = RobustRanker(_ranker(1e-4), **signed).fit(X, side * (truth + 0.1 * (1 + truth) * noise))
    assert 0.5 < model.noise_trend_ < 1.6  # κ = 1
    # a rating's weight is its precision relative to a rating at risk 0: 1/(1 + κ·|f|)²
    f = np.abs(model.predict(X))
    np.testing.assert_allclose(model.weights_, (1 + model.noise_trend_ * f) ** -2, rtol=1e-2)
    flat = RobustRanker(_ranker(1e-4), **signed).fit(X, side * (truth + 0.3 * noise))
    assert flat.noise_trend_ < 0.25
    off = RobustRanker(_ranker(1e-4), **{**signed, "trend": False}).fit(X, side * truth)
    assert off.noise_trend_ == 0.0 and np.allclose(off.weights_, 1.0)


@pytest.mark.slow
def test_the_defaults_learn_a_rater_effects_panel_better_than_least_squares():
    # a panel unlike the simulator the recipes were tuned on (affine raters, one compressing
    # rater, noise growing with the risk, answers in steps of 0.5, reversed answers), rated
    # against the built-in surface: the defaults (robust for a panel) beat the best recipe's
    # least squares on the same ratings, paired over two draws
    from ranking_core.learn import default_recipe
    from ranking_core.panels import parkes_surface, simulate_rater_effects_panel

    surface = parkes_surface()
    gaps = []
    for seed in (0, 1):
        rng = np.random.default_rng(seed)
        frame = simulate_rater_effects_panel(250, reference=surface, random_state=rng)
        ratings = read_rating_set(frame.drop(columns="outlier"), name="panel")
        assert default_recipe(ratings)[0] == "robust"
        X_test = rng.uniform(0, 600, size=(800, 2))
        truth = surface[np.rint(X_test[:, 0]).astype(int), np.rint(X_test[:, 1]).astype(int)]
        models = [learn_grid(ratings, PRESETS[name]).risk_model for name in ("robust", "best")]
        scores = [pairwise_misranking(truth, model.predict(X_test)) for model in models]
        gaps.append(scores[1] - scores[0])
    assert min(gaps) > 0 and np.mean(gaps) > 0.005  # at least half a point better on average


def test_rater_offsets_are_measured_from_the_diagonal_points():
    # noise-free affine raters a = b_k + s_k·r whose offsets do not average 0, with exact zeros
    # on the diagonal (signed ratings, as the recipes learn them): the diagonal fixes the
    # consensus (0 where the risk is 0), so each offset comes back as the rater's own answer at
    # risk 0 (up to the smooth fit's error next to the diagonal), the scales relative to their
    # mean; without the diagonal points the offsets are centred (mean 0) instead
    rng = np.random.default_rng(21)
    X = rng.uniform(0, 600, size=(800, 2))
    rater = rng.integers(0, 4, size=len(X))
    bias, scale = np.array([0.3, 0.5, 0.1, 0.4]), np.array([0.8, 1.2, 1.0, 0.6])
    y = np.sign(X[:, 0] - X[:, 1]) * (bias[rater] + scale[rater] * _surface(X))
    g = np.linspace(0, 600, 61)
    inputs = np.vstack([np.column_stack([X, rater]), np.column_stack([g, g, -np.ones_like(g)])])
    ratings = np.r_[y, np.zeros_like(g)]
    fit = {"loss": "squared", "rater_prior": 1e-3, "signed": True}
    model = RobustRanker(_ranker(1e-5), **fit, anchored_offsets=True).fit(inputs, ratings)
    share = np.bincount(rater) / len(rater)
    np.testing.assert_allclose(model.rater_scale_, scale / (share @ scale), atol=0.03)
    np.testing.assert_allclose(model.rater_bias_, bias, atol=0.1)
    centred = RobustRanker(_ranker(1e-5), **fit, anchored_offsets=False).fit(inputs, ratings)
    assert centred.rater_bias_ @ share == pytest.approx(0.0, abs=1e-9)


def test_the_defaults_read_a_compressing_rater_from_a_coarse_panel():
    # the rater-effects panel (steps of 0.5, 5 % reversed answers, noise growing with the risk)
    # against the built-in surface: its last rater answers 1 + 0.5·risk. Learned as
    # `riskgrid learn` does (the robust recipe, diagonal points), that rater's scale relative
    # to the panel's mean and its offset relative to the panel's mean offset are those of the
    # simulated answers against the true risk (least squares per rater, the reversed answers
    # left out). The offsets' common level is where the smooth fit puts "no risk" and is not
    # compared.
    from ranking_core.panels import parkes_surface, simulate_rater_effects_panel

    surface = parkes_surface()
    frame = simulate_rater_effects_panel(400, reference=surface, random_state=3)
    model = learn_grid(read_rating_set(frame.drop(columns="outlier")), PRESETS["robust"]).model
    kept = ~frame["outlier"].to_numpy()
    index = np.rint(frame[["reference", "estimate"]].to_numpy()).astype(int)
    risk = surface[index[:, 0], index[:, 1]]
    names, codes = np.unique(frame["rater"], return_inverse=True)
    rows = [kept & (codes == k) for k in range(len(names))]
    scale, bias = np.array([np.polyfit(risk[r], frame["rating"][r], 1) for r in rows]).T
    share = np.bincount(codes) / len(codes)
    appearance = list(pd.factorize(frame["rater"])[1])  # the learner's codes: first seen first
    order = [list(model.raters_).index(appearance.index(name)) for name in names]
    got_bias, got_scale = model.rater_bias_[order], model.rater_scale_[order]
    # the compressing rater, named last
    assert got_scale[-1] == pytest.approx(scale[-1] / (share @ scale), abs=0.1)
    assert got_bias[-1] - share @ got_bias == pytest.approx(bias[-1] - share @ bias, abs=0.15)
