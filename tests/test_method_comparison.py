"""Passing–Bablok, Deming, bias at decision levels and Bland–Altman limits against their
definitions computed independently: every pairwise slope by Python loops, every leave-one-out
Deming fit refitted explicitly, the formulas of Bland & Altman written out.

No published worked example could be checked here: the stored copies of the Passing–Bablok paper's
and mcr's examples give the method, not their data with results, so these tests rest on brute
force, closed forms and invariances (hypothesis)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtri
from scipy.stats import t as student_t

import ranking_core.meter.comparison.passing_bablok as pb_module
from ranking_core.meter.comparison.bland_altman import bland_altman_limits
from ranking_core.meter.comparison.decision_levels import (
    deming_bias,
    parse_levels,
    passing_bablok_bias,
)
from ranking_core.meter.comparison.deming import deming
from ranking_core.meter.comparison.passing_bablok import passing_bablok
from ranking_core.meter.comparison.summary import method_comparison


def brute_passing_bablok(x, y, confidence=0.95):
    """The paper's definition with Python loops: every S_ij, i < j in read order."""
    slopes = []
    n = len(x)
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0 and dy == 0:
                continue
            if dy == -dx:  # a slope of exactly −1
                continue
            if dx == 0:
                slopes.append(math.inf if dy > 0 else -math.inf)
            else:
                slopes.append(dy / dx)
    slopes.sort()
    big_n = len(slopes)
    k = sum(s < -1 for s in slopes)
    if big_n % 2:
        b = slopes[(big_n + 1) // 2 + k - 1]
    else:
        b = 0.5 * (slopes[big_n // 2 + k - 1] + slopes[big_n // 2 + k])
    c = float(ndtri(0.5 + confidence / 2)) * math.sqrt(n * (n - 1) * (2 * n + 5) / 18)
    m1 = math.floor((big_n - c) / 2 + 0.5)
    m2 = big_n - m1 + 1

    def at(rank):
        return slopes[rank - 1] if 1 <= rank <= big_n else math.nan

    lower, upper = at(m1 + k), at(m2 + k)
    a = float(np.median([yi - b * xi for xi, yi in zip(x, y, strict=True)]))
    a_low = float(np.median([yi - upper * xi for xi, yi in zip(x, y, strict=True)]))
    a_high = float(np.median([yi - lower * xi for xi, yi in zip(x, y, strict=True)]))
    return b, lower, upper, a, a_low, a_high, big_n, k


def meter_like(n, seed, slope=1.03, ties=True):
    rng = np.random.default_rng(seed)
    x = rng.uniform(40, 400, n)
    y = slope * x + rng.normal(0, 0.06 * x + 3)
    return (np.round(x), np.round(y)) if ties else (x, y)


@pytest.mark.parametrize(("n", "seed", "ties"), [(40, 1, True), (41, 2, True), (60, 3, False)])
def test_passing_bablok_equals_the_papers_definition(n, seed, ties):
    x, y = meter_like(n, seed, ties=ties)
    fit = passing_bablok(x, y)
    expected = brute_passing_bablok(list(x), list(y))
    ours = (
        fit.slope,
        fit.slope_lower,
        fit.slope_upper,
        fit.intercept,
        fit.intercept_lower,
        fit.intercept_upper,
        fit.slopes,
        fit.shift,
    )
    assert ours == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_vertical_pairs_take_the_sign_of_y_i_minus_y_j_and_minus_one_slopes_are_left_out():
    x = [1.0, 1.0, 2.0, 4.0, 4.0, 5.0, 5.0]
    y = [1.0, 3.0, 2.0, 4.0, 4.0, 6.0, 4.0]
    # (1,1)-(1,3): vertical with y_i < y_j → −∞; (5,6)-(5,4): y_i > y_j → +∞;
    # (4,4)-(4,4): 0/0; (1,3)-(2,2): exactly −1
    minus_one = sum(
        y[i] - y[j] == -(x[i] - x[j]) and x[i] != x[j] for i in range(7) for j in range(i + 1, 7)
    )
    assert minus_one >= 1
    fit = passing_bablok(x, y, confidence=0.5)
    expected = brute_passing_bablok(x, y, confidence=0.5)
    assert fit.slopes == 21 - 1 - minus_one == expected[6]
    assert (fit.slope, fit.slope_lower, fit.slope_upper, fit.shift) == pytest.approx(
        (expected[0], expected[1], expected[2], expected[7])
    )
    held = pb_module._select_direct(np.array(x), np.array(y), 100)[2]
    assert np.isneginf(held).sum() == 1 and np.isposinf(held).sum() == 1


def test_the_bracketed_selection_equals_holding_every_slope(monkeypatch):
    x, y = meter_like(700, 5)
    held = passing_bablok(x, y)
    monkeypatch.setattr(pb_module, "DIRECT_SLOPES", 0)
    monkeypatch.setattr(pb_module, "SAMPLE_SLOPES", 2000)  # wide brackets, misses widen them
    bracketed = passing_bablok(x, y, block_slopes=10_000)
    assert bracketed == held


def test_a_bracket_that_misses_is_widened(monkeypatch):
    x, y = meter_like(300, 8)
    held = passing_bablok(x, y)
    monkeypatch.setattr(pb_module, "DIRECT_SLOPES", 0)
    monkeypatch.setattr(pb_module, "BRACKET_SDS", 0.0)  # brackets of width 0: they miss first
    passes = []
    original = pb_module._bracket_pass

    def counting(*args):
        passes.append(args[2:4])
        return original(*args)

    monkeypatch.setattr(pb_module, "_bracket_pass", counting)
    assert passing_bablok(x, y) == held
    assert len(passes) >= 2


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    scale=st.sampled_from([0.5, 2.0, 1 / 18.016, 7.0]),
)
def test_passing_bablok_is_equivariant(seed, scale):
    x, y = meter_like(30, seed, ties=False)
    fit = passing_bablok(x, y)
    scaled = passing_bablok(scale * x, scale * y)
    assert scaled.slope == pytest.approx(fit.slope, rel=1e-9)
    assert scaled.intercept == pytest.approx(scale * fit.intercept, rel=1e-9, abs=1e-9)
    swapped = passing_bablok(y, x)  # the roles swapped: the slope inverted
    assert swapped.slope == pytest.approx(1.0 / fit.slope, rel=1e-9)
    assert swapped.slope_lower == pytest.approx(1.0 / fit.slope_upper, rel=1e-9)


def test_cusum_flags_a_curved_relation_and_passes_a_straight_one():
    rng = np.random.default_rng(4)
    x = rng.uniform(40, 400, 300)
    straight = passing_bablok(x, 1.02 * x + rng.normal(0, 5, x.size)).linearity
    curved = passing_bablok(x, 0.004 * x**2 + 20 + rng.normal(0, 5, x.size)).linearity
    assert straight.linear and not curved.linear
    assert straight.critical == 1.36
    assert straight.above + straight.below <= 300


def brute_deming(x, y, ratio):
    mx, my = np.mean(x), np.mean(y)
    u = sum((xi - mx) ** 2 for xi in x)
    q = sum((yi - my) ** 2 for yi in y)
    p = sum((xi - mx) * (yi - my) for xi, yi in zip(x, y, strict=True))
    b = (ratio * q - u + math.sqrt((u - ratio * q) ** 2 + 4 * ratio * p * p)) / (2 * ratio * p)
    return b, my - b * mx


@pytest.mark.parametrize("ratio", [1.0, 0.25, 4.0])
def test_deming_equals_the_closed_form_and_leave_one_out_refits(ratio):
    x, y = meter_like(35, 7, ties=False)
    fit = deming(x, y, error_ratio=ratio)
    b, a = brute_deming(list(x), list(y), ratio)
    assert (fit.slope, fit.intercept) == pytest.approx((b, a), rel=1e-10)
    n = x.size
    refits = [brute_deming(list(np.delete(x, i)), list(np.delete(y, i)), ratio) for i in range(n)]
    t = student_t.ppf(0.975, n - 1)
    for k, (estimate, lower, upper) in enumerate(
        ((b, fit.slope_lower, fit.slope_upper), (a, fit.intercept_lower, fit.intercept_upper))
    ):
        loo = np.array([r[k] for r in refits])
        se = math.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2))
        assert (lower, upper) == pytest.approx((estimate - t * se, estimate + t * se), rel=1e-8)


def test_deming_with_equal_errors_is_the_orthogonal_fit():
    x, y = meter_like(50, 9, ties=False)
    fit = deming(x, y)
    centred = np.column_stack([x - x.mean(), y - y.mean()])
    direction = np.linalg.svd(centred, full_matrices=False)[2][0]  # first principal axis
    assert fit.slope == pytest.approx(direction[1] / direction[0], rel=1e-10)


def test_bias_at_levels_from_each_regression():
    x, y = meter_like(45, 11)
    pb = passing_bablok(x, y)
    rows = passing_bablok_bias(x, y, pb, [0.0, 70.0, 180.0])
    zero = rows[0]  # at 0: the paper's intercept and its limits
    assert (zero.bias, zero.bias_lower, zero.bias_upper) == pytest.approx(
        (pb.intercept, pb.intercept_lower, pb.intercept_upper)
    )
    for row in rows[1:]:  # the shifted fit's intercept, computed by brute force
        shifted = brute_passing_bablok(list(x - row.level), list(y))
        assert row.bias == pytest.approx(shifted[3] - row.level)
        assert (row.bias_lower, row.bias_upper) == pytest.approx(
            sorted((shifted[4] - row.level, shifted[5] - row.level))
        )
    dem = deming(x, y, 2.0)
    for row in deming_bias(x, y, dem, [70.0, 250.0]):
        n = x.size
        loo = []
        for i in range(n):
            b, a = brute_deming(list(np.delete(x, i)), list(np.delete(y, i)), 2.0)
            loo.append(a + (b - 1) * row.level)
        loo = np.array(loo)
        se = math.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2))
        half = student_t.ppf(0.975, n - 1) * se
        bias = dem.intercept + (dem.slope - 1) * row.level
        assert (row.bias, row.bias_lower, row.bias_upper) == pytest.approx(
            (bias, bias - half, bias + half)
        )


def test_levels_are_parsed_with_a_sentence_for_bad_items():
    assert parse_levels("70, 180,250") == (70.0, 180.0, 250.0)
    with pytest.raises(ValueError, match="decision level 2"):
        parse_levels("70,abc")
    with pytest.raises(ValueError, match="positive"):
        parse_levels("70,-1")


def test_bland_altman_limits_and_their_intervals():
    x, y = meter_like(200, 12, ties=False)
    result = bland_altman_limits(x, y)
    low, high = result.parts
    below = x < 100
    for part, d in ((low, (y - x)[below]), (high, (100 * (y - x) / x)[~below])):
        n, mean, sd = d.size, d.mean(), d.std(ddof=1)
        t = student_t.ppf(0.975, n - 1)
        assert part.n == n
        assert (part.bias, part.sd) == pytest.approx((mean, sd))
        assert part.lower_limit == pytest.approx(mean - 1.96 * sd)
        assert part.upper_limit_upper == pytest.approx(
            mean + 1.96 * sd + t * math.sqrt(3 * sd**2 / n)
        )
        assert part.bias_lower == pytest.approx(mean - t * sd / math.sqrt(n))
    assert low.unit == "mg/dL" and high.unit == "%"


def test_method_comparison_json_has_the_contract_keys():
    x, y = meter_like(120, 13)
    result = method_comparison(x, y, error_ratio=2.0)
    data = json.loads(json.dumps(result.to_dict()))
    for name in ("passing_bablok", "deming"):
        for key in (
            "slope",
            "slope_lower",
            "slope_upper",
            "intercept",
            "intercept_lower",
            "intercept_upper",
            "n",
            "bias_at",
        ):
            assert key in data[name]
        assert data[name]["n"] == 120
        assert [row["level"] for row in data[name]["bias_at"]] == [70.0, 180.0, 250.0]
    assert data["deming"]["error_ratio"] == 2.0
    assert data["deming"]["interval_method"] == "jackknife"
    assert data["passing_bablok"]["linearity_cusum"]["critical_value"] == 1.36
    assert data["bland_altman"]["cut"] == 100.0
    tables = result.tables()
    assert "Bias at the decision levels" in tables
    assert len(tables["Bias at the decision levels"]) == 6


def test_bad_pairs_are_refused_with_the_pair_named():
    with pytest.raises(ValueError, match="pair 2"):
        passing_bablok([1.0, math.nan, 3.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="error ratio"):
        deming([1.0, 2.0, 3.0], [1.0, 2.0, 4.0], error_ratio=0.0)


def test_plots_draw_both_fits_and_the_bands_of_the_limits():
    from ranking_core.meter.comparison.plots import bland_altman_limits_plot, regression_plot

    x, y = meter_like(150, 14)
    result = method_comparison(x, y)
    fig = regression_plot(x, y, result)
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert labels[0].startswith("identity")
    assert any(label.startswith("Passing–Bablok") for label in labels)
    assert any(label.startswith("Deming") for label in labels)
    fig = bland_altman_limits_plot(result.bland_altman)
    assert len(fig.axes) == 2
    assert all(len(ax.patches) == 3 for ax in fig.axes)  # bias and both limits, each a band


def test_figures_have_the_reports_size():
    from ranking_core.meter.comparison import plots
    from ranking_core.meter.drawing import grid_plots

    assert (plots.FIGURE_INCHES, plots.SHOWN_WIDTH_PX) == (
        grid_plots.FIGURE_INCHES,
        grid_plots.SHOWN_WIDTH_PX,
    )


def test_the_estimate_does_not_depend_on_the_order_the_pairs_were_read():
    """Vertical pairs take ±∞ by the order of their two readings, yet b and its limits do not
    move: shuffling the pairs, or giving every vertical pair +∞ as R mcr does (brute force),
    gives the same estimates (many tied references, so many vertical pairs)."""
    x, y = meter_like(300, 7)
    first = passing_bablok(x, y)
    rng = np.random.default_rng(0)
    for _ in range(3):
        order = rng.permutation(x.size)
        again = passing_bablok(x[order], y[order])
        assert (again.slope, again.slope_lower, again.slope_upper, again.intercept) == (
            first.slope,
            first.slope_lower,
            first.slope_upper,
            first.intercept,
        )
    # mcr's convention written out: every vertical pair +∞, the paper's shift otherwise
    slopes = []
    for i in range(x.size):
        for j in range(i + 1, x.size):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if (dx == 0 and dy == 0) or (dx != 0 and dy == -dx):
                continue
            slopes.append(math.inf if dx == 0 else dy / dx)
    slopes.sort()
    k = sum(s < -1 for s in slopes)
    n = len(slopes)
    b = slopes[(n + 1) // 2 - 1 + k] if n % 2 else (slopes[n // 2 - 1 + k] + slopes[n // 2 + k]) / 2
    assert first.slopes == n and b == pytest.approx(first.slope, rel=1e-12)
