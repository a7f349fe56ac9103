"""learn_grid: one settings object in, a grid that carries it out; λ re-solves; advice on poor
choices; and 400 clean SEG ratings give a grid within 2.5 % misranking of the SEG."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest
from sklearn.base import clone

from ranking_core.experiments.seg import draw_seg_ratings
from ranking_core.grids.compare import compare_grids
from ranking_core.grids.learned import learned_grid
from ranking_core.grids.monotone import monotone_violations, project_monotone
from ranking_core.grids.signed import AbsoluteRisk
from ranking_core.learn import (
    PRESETS,
    LearnSettings,
    default_recipe,
    describe_settings,
    fit_method,
    learn_grid,
    ratings_checksum,
    settings_advice,
)
from ranking_core.panels import simulate_panel
from ranking_core.ratings import read_rating_set


@pytest.fixture(scope="module")
def panel():
    return read_rating_set(simulate_panel(120, random_state=1))


BEST = LearnSettings()
MANUAL = LearnSettings(rule="manual", lam=1e-3)


def test_presets_are_the_documented_recipes():
    """best = the defaults (docs/LIBRARY.md, docs/RESULTS.md); paper = Kriukova et al. 2014 §4.3;
    robust = best with Tukey weights, λ by absolute error, a monotone grid."""
    best, paper, robust = PRESETS["best"], PRESETS["paper"], PRESETS["robust"]
    assert best == LearnSettings()
    assert (
        best.kernel,
        best.gamma,
        best.scale,
        best.log_offset,
        best.signed,
        best.anchors,
        best.rule,
        best.n_splits,
        best.criterion,
        best.n_lams,
        best.robust,
    ) == ("laplacian", 1e3, "log", 50.0, True, 101, "kfold", 5, "absolute-error", 400, None)
    assert (
        paper.kernel,
        paper.gamma,
        paper.scale,
        paper.filter,
        paper.signed,
        paper.anchors,
        paper.rule,
        paper.refit_all,
        paper.criterion,
    ) == ("gaussian", 1e4, "linear", "lavrentiev", False, 0, "holdout", False, "misranking")
    np.testing.assert_allclose(paper.lams(), 0.95 ** np.arange(200), rtol=1e-15)
    assert dataclasses.replace(robust, robust=None, monotone=False) == best
    assert (robust.robust, robust.monotone) == ("tukey", True)
    np.testing.assert_allclose(robust.lams(), 0.95 ** (4 * np.arange(100)), rtol=1e-12)


def _brute_force_kfold_lambda(X, y, lams, settings, n_folds):
    """λ chosen by k-fold validation computed independently: every fold and every λ solved by
    numpy.linalg.solve of (CKC/m + λI)c = Cy/m (Kriukova et al. 2014, eq. (4)); score the mean
    absolute validation error; the largest λ within 1e-9 of the smallest score."""
    from sklearn.model_selection import KFold

    kernel = settings.ranker().kernel
    scores = []
    for train, test in list(KFold(5, shuffle=True, random_state=0).split(X))[:n_folds]:
        Xt, yt = X[train], y[train]
        m = len(yt)
        K = kernel(Xt, Xt)
        C = np.eye(m) - 1.0 / m
        A = C @ K @ C / m
        row = []
        for lam in lams:
            c = np.linalg.solve(A + lam * np.eye(m), C @ yt / m)
            b = yt.mean() - (K @ c).mean()
            row.append(np.abs(kernel(X[test], Xt) @ c + b - y[test]).mean())
        scores.append(row)
    curve = np.mean(scores, axis=0)
    return lams[np.flatnonzero(curve <= curve.min() + 1e-9)[0]]


@pytest.mark.parametrize("method,n_folds", [("auto", 5), ("one-fold", 1)])
def test_the_dispatch_chooses_the_lambda_of_a_brute_force_kfold(method, n_folds):
    """At small m the default (auto → every fold) and the one-fold path choose the λ of an
    independent k-fold computation on the same training points (ratings + anchors, signed)."""
    from ranking_core.learn import with_diagonal_anchors

    rng = np.random.default_rng(3)
    X = rng.uniform(0, 600, (70, 2))
    y = np.clip(np.abs(X[:, 0] - X[:, 1]) / 100 + rng.normal(0, 0.2, 70), 0, 4)
    settings = LearnSettings(anchors=11, n_lams=60, q=0.8, method=method)
    result = learn_grid((X, y), settings)
    assert result.method == ("exact" if method == "auto" else "one-fold")
    X_fit, y_fit = with_diagonal_anchors(11, X, y)
    signed = np.sign(X_fit[:, 0] - X_fit[:, 1]) * y_fit
    np.testing.assert_array_equal(result.y, signed)
    expected = _brute_force_kfold_lambda(X_fit, signed, settings.lams(), settings, n_folds)
    assert result.lam == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "ratings,reason",
    [
        ([1.0, 2.0, 3.0], "3 ratings cannot make a grid: at least 5"),
        ([2.0] * 12, "every rating is 2: a grid needs at least two different ratings"),
    ],
)
def test_degenerate_rating_sets_are_refused_with_a_sentence(ratings, reason):
    X = np.column_stack([np.linspace(40, 400, len(ratings)), np.linspace(60, 300, len(ratings))])
    with pytest.raises(ValueError, match=reason):
        learn_grid((X, np.array(ratings)))


def test_sizes_beyond_the_memory_budget_are_refused_at_once_naming_the_limit():
    with pytest.raises(ValueError, match="at most 7,000 points"):
        fit_method(LearnSettings(filter="showalter"), 8000)
    with pytest.raises(ValueError, match="at most 9,000 points"):
        fit_method(LearnSettings(kernel="gaussian", method="one-fold"), 9500)
    with pytest.raises(ValueError, match="at most 1,000,000 points"):
        fit_method(LearnSettings(kernel="gaussian"), 1_000_000)  # and 101 diagonal points
    assert fit_method(LearnSettings(kernel="gaussian"), 9500) == "low-rank"
    assert fit_method(LearnSettings(), 1_000_000) == "lattice"
    assert fit_method(LearnSettings(), 4000) == "one-fold"
    assert fit_method(LearnSettings(), 2000) == "exact"
    assert fit_method(PRESETS["robust"], 8420) == "lattice"


def test_panels_default_to_the_robust_recipe_and_clean_ratings_to_the_best(panel):
    assert default_recipe(panel)[0] == "robust" and "10 raters" in default_recipe(panel)[1]
    unrated = read_rating_set(panel.frame.drop(columns="rater"))
    assert default_recipe(unrated)[0] == "best"
    coarse = read_rating_set(unrated.frame.assign(rating=(unrated.frame["rating"] * 2).round() / 2))
    assert default_recipe(coarse) == (
        "robust",
        "the ratings come from a panel (answers in steps of 0.5)",
    )
    assert learn_grid(panel, progress=None).settings == PRESETS["robust"]


def test_the_manual_lambda_is_part_of_the_settings_only_for_the_manual_rule():
    assert "lam" not in LearnSettings().to_dict()
    assert LearnSettings(rule="manual", lam=0.02).to_dict()["lam"] == 0.02
    assert LearnSettings(rule="kfold", lam=0.5).lam is None  # a stray λ is dropped
    with pytest.raises(ValueError, match="manual rule needs λ"):
        LearnSettings(rule="manual")


def test_each_kernel_has_its_own_default_width():
    assert LearnSettings(kernel="gaussian").gamma == 1e4
    assert LearnSettings(kernel="laplacian").gamma == 1e3


def test_absolute_error_criterion_is_described(panel):
    settings = LearnSettings(criterion="absolute-error")
    assert describe_settings(settings)["How λ is chosen"] == (
        "5-fold cross-validation, by mean absolute validation error"
    )
    with pytest.raises(ValueError, match="criterion"):
        LearnSettings(criterion="squared")


def test_monotone_setting_projects_the_grid_and_predicts_from_it(panel):
    plain = learn_grid(panel, BEST)
    result = learn_grid(panel, LearnSettings(monotone=True))
    assert result.lam == plain.lam
    np.testing.assert_allclose(result.grid, project_monotone(plain.grid), atol=1e-9)
    assert monotone_violations(result.grid)["largest"] <= 1e-3
    X = np.array([[100.2, 180.7], [350.0, 20.0]])
    np.testing.assert_allclose(result.risk_model.predict(X), result.grid[[100, 350], [181, 20]])
    assert "Shape" in describe_settings(result.settings)
    assert "Shape" not in describe_settings(plain.settings)
    stepped = result.at(result.lams[60])
    np.testing.assert_allclose(
        stepped.grid, project_monotone(plain.at(plain.lams[60]).grid), atol=1e-9
    )


def test_a_lambda_step_equals_a_refit_at_that_lambda_and_keeps_the_settings(panel):
    result = learn_grid(panel, BEST)
    lam = float(result.lams[60])
    stepped = result.at(lam)
    refit = clone(result.model).set_params(lam=lam).fit(result.X, result.y)
    np.testing.assert_allclose(stepped.grid, learned_grid(AbsoluteRisk(refit)), atol=1e-8)
    assert stepped.settings is result.settings and stepped.lam == lam
    assert stepped.lam_chosen == result.lam_chosen
    assert stepped.points_fitted == result.points_fitted


def test_hold_out_fits_half_and_refit_all_fits_every_point(panel):
    half = learn_grid(panel, LearnSettings(rule="holdout"))
    m = len(panel.y) + BEST.anchors
    assert half.points_fitted == m // 2
    assert any("half of the ratings" in a for a in settings_advice(half))
    full = learn_grid(panel, LearnSettings(rule="holdout", refit_all=True))
    assert full.points_fitted == m and full.lam == half.lam
    assert not any("half of the ratings" in a for a in settings_advice(full))


def test_the_curve_is_shown_in_the_units_of_its_criterion(panel):
    """Hold-out without anchors and unsigned: the shown absolute-error curve at the chosen λ is
    the mean |f − y| of the second half under the half fit, in risk units; the misranking
    curve is shown in %."""
    settings = LearnSettings(rule="holdout", anchors=0, signed=False)
    result = learn_grid(panel, settings)
    label, values = result.curve_in_words
    half = len(result.y) // 2
    held_out = np.abs(result.model.predict(result.X[half:]) - result.y[half:]).mean()
    assert label == "mean absolute error (risk units)"
    assert values[np.flatnonzero(result.lams == result.lam_chosen)[0]] == pytest.approx(held_out)
    ranked = learn_grid(panel, dataclasses.replace(settings, criterion="misranking"))
    label, values = ranked.curve_in_words
    assert label.endswith("(%)")
    np.testing.assert_allclose(values, 100 * ranked.curve)
    assert learn_grid(panel, MANUAL).curve_in_words is None


def test_manual_and_apriori_rules(panel):
    manual = learn_grid(panel, LearnSettings(rule="manual", lam=0.02))
    assert manual.lam == 0.02 and manual.curve is None
    apriori = learn_grid(panel, LearnSettings(rule="apriori", apriori_draws=2))
    rule = apriori.apriori
    assert apriori.lam == pytest.approx(rule.alpha * len(apriori.y) ** (-rule.beta / 2), rel=1e-12)
    at_bound = rule.beta >= 1 - 1e-6 or rule.beta <= 1e-6
    assert at_bound == any("bound" in a for a in settings_advice(apriori))


def test_a_width_not_suited_to_the_kernel_is_named(panel):
    robust = dataclasses.replace(MANUAL, robust="huber")  # no advice for the panel itself
    poor = learn_grid(panel, dataclasses.replace(robust, kernel="gaussian", gamma=1e3))
    advice = settings_advice(poor)
    assert len(advice) == 1 and "Gaussian".lower() in advice[0].lower()
    assert settings_advice(learn_grid(panel, robust)) == []


def test_a_panel_learned_by_least_squares_is_pointed_to_robust_learning(panel):
    plain = learn_grid(panel, MANUAL)
    assert (plain.n_raters, plain.answer_step) == (panel.frame["rater"].nunique(), 0.0)
    (advice,) = settings_advice(plain)
    assert "10 raters" in advice and "steps" not in advice
    coarse = panel.frame.assign(rating=panel.frame["rating"].round()).drop(columns="rater")
    whole = learn_grid(read_rating_set(coarse), MANUAL)
    (advice,) = settings_advice(whole)
    assert (whole.n_raters, whole.answer_step) == (0, 1.0) and "steps of 1" in advice
    unrated = panel.frame.drop(columns="rater")
    assert settings_advice(learn_grid(read_rating_set(unrated), MANUAL)) == []


@pytest.mark.parametrize("rule", ["kfold", "holdout", "quasi-optimality", "apriori", "manual"])
def test_every_rule_learns_robustly(panel, rule):
    result = learn_grid(
        panel,
        LearnSettings(
            rule=rule, robust="huber", monotone=True, lam=1e-3 if rule == "manual" else None
        ),
    )
    assert result.settings.rule == rule and np.isfinite(result.grid).all()
    fitted = result.points_fitted
    assert 0 <= result.n_flagged <= (fitted if rule == "holdout" else result.n_ratings)
    other = result.at(float(result.lams[5]))
    assert other.n_flagged is not None and np.isfinite(other.grid).all()


def test_checksum_names_the_data_not_the_file(panel):
    import hashlib

    X, y = panel.X, panel.y
    expected = hashlib.sha256(X.astype(np.float64).tobytes() + y.astype(np.float64).tobytes())
    assert ratings_checksum(X, y) == "sha256:" + expected.hexdigest()
    assert learn_grid(panel, MANUAL).checksum == ratings_checksum(X, y)
    y2 = y.copy()
    y2[0] += 0.25
    assert ratings_checksum(X, y2) != ratings_checksum(X, y)


@pytest.mark.parametrize(
    "bad",
    [
        {"kernel": "cosine"},
        {"gamma": -1.0},
        {"rule": "best"},
        {"anchors": 1.5},
        {"filter": "tikhonov"},
        {"q": 1.5},
    ],
)
def test_bad_settings_are_refused_with_the_field_named(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        LearnSettings(**bad)


def test_progress_advances_through_the_folds(panel):
    calls = []
    learn_grid(panel, LearnSettings(n_splits=4), progress=lambda d, t: calls.append((d, t)))
    assert calls == [(k, 5) for k in range(1, 6)]


def test_settings_round_trip_through_their_dict():
    settings = dataclasses.replace(LearnSettings(), kernel="gaussian", gamma=1e4, rule="holdout")
    assert LearnSettings(**settings.to_dict()) == settings


def test_four_hundred_clean_seg_ratings_give_a_grid_within_the_target():
    seg_path = os.environ.get("SEG_TABLE")
    if not seg_path:
        pytest.skip("SEG_TABLE is not set: this test needs the official SEG risk table")
    from ranking_core.grids.seg import load_seg_table

    table = load_seg_table(seg_path)
    X, y = draw_seg_ratings(table, 400, np.random.default_rng(2))
    result = learn_grid((X, y))
    assert result.settings == PRESETS["best"]  # continuous ratings, no raters
    misranking = compare_grids(table.absolute, result.grid).misranking
    assert misranking <= 0.025
    assert compare_grids(table.absolute, np.clip(result.grid, 0, 4)).misranking <= 0.025


def test_settings_are_described_in_plain_words():
    words = describe_settings(
        LearnSettings(
            kernel="gaussian",
            gamma=1e4,
            rule="holdout",
            refit_all=True,
            filter="iterated-lavrentiev",
            order=3,
            criterion="misranking",
        )
    )
    assert words["Kernel width γ"] == "10,000 (mg/dL)²"
    assert words["How λ is chosen"] == (
        "hold-out (half fits, half chooses), by validation misranking, then refitted on all ratings"
    )
    assert words["Spectral filter"] == "iterated Lavrentiev, order 3"
    assert describe_settings(LearnSettings())["How λ is chosen"] == (
        "5-fold cross-validation, by mean absolute validation error"
    )


def test_robust_learning_beyond_one_fold_refits_the_first_folds_choice_on_the_lattice(panel):
    """The largest robust fits choose λ as one fold does (the robust and least-squares curves
    of the first fold) and only refit on the glucose lattice: the same λ, and a grid within
    rounding of the inputs to whole mg/dL of the Cholesky refit's."""
    one = learn_grid(panel, dataclasses.replace(PRESETS["robust"], method="one-fold"))
    lattice = learn_grid(panel, dataclasses.replace(PRESETS["robust"], method="lattice"))
    assert lattice.lam == one.lam
    assert "lattice refit" in lattice.computed_by and "direct refit" in one.computed_by
    assert np.max(np.abs(lattice.grid - one.grid)) < 0.05
