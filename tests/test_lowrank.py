"""The low-rank engine (ranking_core.learners.lowrank) against dense and brute-force references,
and the fit plan's choice of it. No timing here: benchmarks/lowrank_scale.py measures speed."""

from __future__ import annotations

import numpy as np
import pytest

from ranking_core import SpectralRanker
from ranking_core.filters import FILTERS
from ranking_core.grids.files import grid_metadata
from ranking_core.learn import LearnSettings, learn_grid, plan_fit
from ranking_core.learn.plan import LOW_RANK_FROM
from ranking_core.learners import lowrank
from ranking_core.learners.lowrank import (
    LOW_RANK_TOL,
    FeatureMoments,
    LowRankRanker,
    kernel_factor,
    lowrank_kfold,
)
from ranking_core.selection import kfold_splits, near_minimum, paper_lambda_grid
from tests.synthetic_seg import synthetic_risk

GLUCOSE_GAUSSIAN = LearnSettings(kernel="gaussian").glucose_kernel()  # γ = 10⁴, log coordinates


def glucose_data(m: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 600.0, (m, 2))
    return X, np.abs(synthetic_risk(X[:, 0], X[:, 1])) + 0.2 * np.sin(X[:, 0] / 60)


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_low_rank_path_equals_dense_path_for_every_filter(name: str) -> None:
    """Predictions at new points over the λ ≥ 3.7·10⁻⁵ part of the paper's grid (0.95^j,
    j < 200) agree with the dense eigendecomposition's to 10⁻⁶ relative at ε = 10⁻¹⁴ (below
    that λ both carry the dense formula's own round-off, docs/SCALE.md)."""
    X, y = glucose_data(300)
    X_new = np.random.default_rng(2).uniform(0.0, 600.0, (200, 2))
    lams = paper_lambda_grid(n=200)
    dense = SpectralRanker(kernel=GLUCOSE_GAUSSIAN, filter=name, solver="dense").fit(X, y)
    low = LowRankRanker(kernel=GLUCOSE_GAUSSIAN, filter=name, rank_tol=1e-14).fit(X, y)
    expected = dense.path(lams).predict(X_new)
    got = low.path(lams).predict(X_new)
    relative = np.abs(got - expected).max(axis=1) / np.abs(expected).max(axis=1)
    assert relative.max() < 1e-6
    assert low.factor_.rank < len(X)  # a factor, not the whole matrix


def test_factor_reaches_its_tolerance_on_every_point(monkeypatch: pytest.MonkeyPatch) -> None:
    """The residual trace is checked on all points even when the pivots are searched in a
    sample first: trace(K − ΦΦᵀ)/trace(K) from the Gram matrix itself is ≤ ε and equals the
    reported value; Φ(x) = K(x, X_P)·T reproduces the features."""
    monkeypatch.setattr(lowrank, "PIVOT_SAMPLE", 100)  # pivots from 100 of 600 points first
    X, _ = glucose_data(600)
    factor = kernel_factor(GLUCOSE_GAUSSIAN, X, 1e-8)
    gram = GLUCOSE_GAUSSIAN(X, X)
    residual = np.trace(gram - factor.features @ factor.features.T) / np.trace(gram)
    assert residual <= 1e-8
    assert residual == pytest.approx(factor.residual, rel=1e-3, abs=1e-14)
    rebuilt = GLUCOSE_GAUSSIAN(X, X[factor.pivots]) @ factor.transform
    np.testing.assert_allclose(rebuilt, factor.features, atol=1e-8)


def test_a_kernel_that_is_not_low_rank_is_refused() -> None:
    X, _ = glucose_data(400)
    laplacian = LearnSettings().glucose_kernel()
    with pytest.raises(ValueError, match="not low rank"):
        kernel_factor(laplacian, X, 1e-10, max_rank=50)


def test_fold_moments_by_downdate_equal_the_fold_itself() -> None:
    rng = np.random.default_rng(3)
    features, y = rng.standard_normal((50, 4)), rng.standard_normal(50)
    test = np.arange(10)
    fold = FeatureMoments.of(features, y) - FeatureMoments.of(features[test], y[test])
    direct = FeatureMoments.of(features[10:], y[10:])
    np.testing.assert_allclose(fold.gram, direct.gram, atol=1e-12)
    np.testing.assert_allclose(fold.cross, direct.cross, atol=1e-12)
    assert fold.count == 40 and fold.y_sum == pytest.approx(direct.y_sum)


def test_kfold_on_one_factor_equals_primal_refits_per_fold() -> None:
    """The validation curve of lowrank_kfold equals, fold by fold, a primal ranker
    (SpectralRanker, linear kernel) fitted on that fold's rows of the same features."""
    X, y = glucose_data(300)
    lams = paper_lambda_grid(n=120)
    ranker = LowRankRanker(kernel=GLUCOSE_GAUSSIAN, rank_tol=1e-10)
    choice = lowrank_kfold(ranker, X, y, lams, n_splits=4, criterion="absolute-error")
    features = kernel_factor(GLUCOSE_GAUSSIAN, X, 1e-10).features
    curves = []
    for train, test in kfold_splits(X, 4, 0):
        primal = SpectralRanker(kernel="linear", solver="primal").fit(features[train], y[train])
        curves.append(np.abs(primal.path(lams).predict(features[test]) - y[test]).mean(axis=1))
    expected = np.mean(curves, axis=0)
    np.testing.assert_allclose(choice.curve, expected, rtol=1e-7, atol=1e-10)
    assert choice.value == lams[near_minimum(expected)]
    assert choice.model.n_fit_ == len(y)


def test_plan_picks_low_rank_for_a_smooth_kernel_above_its_size() -> None:
    gaussian = LearnSettings(kernel="gaussian")
    plan = plan_fit(gaussian, 20_000)
    assert (plan.method, plan.engine, plan.rank_tol) == ("low-rank", "low-rank", LOW_RANK_TOL)
    assert isinstance(plan.ranker, LowRankRanker)
    assert plan_fit(gaussian, LOW_RANK_FROM - gaussian.anchors - 1).method != "low-rank"
    assert plan_fit(gaussian, LOW_RANK_FROM - gaussian.anchors).method == "low-rank"
    # the Laplacian kernel is far from low rank: the glucose lattice stays its engine
    assert plan_fit(LearnSettings(), 20_000).method == "lattice"
    # robust learning needs the dense decomposition's rows: not on the factor
    assert plan_fit(LearnSettings(kernel="gaussian", robust="huber"), 3000).method != "low-rank"
    with pytest.raises(ValueError, match="least squares only"):
        plan_fit(LearnSettings(kernel="gaussian", robust="huber", method="low-rank"), 3000)


@pytest.mark.parametrize("rule", ["kfold", "holdout", "quasi-optimality", "manual", "apriori"])
def test_every_rule_runs_on_the_factor_and_states_it(rule: str) -> None:
    """Each λ rule on the low-rank engine: the grid equals the dense engine's grid at the same
    λ (re-solved there) to 5·10⁻⁴ risk units at the default ε = 10⁻¹⁰ (at the smallest λ the
    discarded kernel mass shows, most in the corners the ratings do not reach), and the rank
    and tolerance are in the result and in grid.json's provenance."""
    X, y = glucose_data(250)
    lam = 1e-4 if rule == "manual" else None
    settings = LearnSettings(kernel="gaussian", rule=rule, lam=lam, method="low-rank")
    result = learn_grid((X, y), settings)
    assert result.method == "low-rank"
    low_rank = grid_metadata(result)["low_rank"]
    assert low_rank == result.low_rank
    assert low_rank["tolerance"] == LOW_RANK_TOL
    assert 0 < low_rank["residual_trace"] <= LOW_RANK_TOL
    assert 0 < low_rank["rank"] < len(result.X)  # pivots of all inputs (hold-out too)
    assert f"rank-{low_rank['rank']}" in result.computed_by
    dense_settings = LearnSettings(
        kernel="gaussian", rule="manual", lam=result.lam, refit_all=True, method="exact"
    )
    dense = learn_grid((X, y), dense_settings)
    if rule != "holdout":  # the paper's hold-out keeps the half fit, the dense one all points
        assert np.abs(result.grid - dense.grid).max() < 5e-4
