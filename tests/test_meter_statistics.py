"""Intervals and statistics by glucose range against reference values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from ranking_core.meter import meter_report
from ranking_core.meter.statistics import (
    caveats,
    mard_interval,
    proportion_interval,
    range_statistics,
    within,
)


@pytest.mark.parametrize(("count", "n"), [(0, 5), (3, 7), (95, 100), (100, 100), (9990, 10000)])
def test_wilson_interval_matches_statsmodels(count, n):
    low, high = proportion_confint(count, n, alpha=0.05, method="wilson")
    assert proportion_interval(count, n) == pytest.approx((100 * low, 100 * high), abs=1e-9)


def test_every_count_table_carries_its_interval():
    rng = np.random.default_rng(2)
    ref = rng.integers(40, 400, 250)
    bgm = np.rint(ref * rng.lognormal(0, 0.15, 250))
    report = meter_report(pd.DataFrame({"BGM": bgm, "REF": ref}), None)
    n = 250
    for name in ("dts", "clarke", "parkes", "iso_ranges", "binomial"):
        table = report.tables()[name]
        count_column = "compliant" if name == "binomial" else "count"
        for count, low, high in zip(
            table[count_column], table["ci_lower_percent"], table["ci_upper_percent"], strict=True
        ):
            ref_low, ref_high = proportion_confint(count, n, alpha=0.05, method="wilson")
            assert (low, high) == pytest.approx((100 * ref_low, 100 * ref_high), abs=1e-9)


def test_within_limits_switch_from_mg_dl_to_percent_at_100():
    ref = np.array([99, 99, 100, 100, 200, 200, 60])
    bgm = np.array([114, 115, 115, 116, 230, 231, 80])
    assert within(ref, bgm, 15).tolist() == [True, False, True, False, True, False, False]
    assert within(ref, bgm, 20).tolist() == [True] * 7


def test_statistics_by_range_against_explicit_loops():
    rng = np.random.default_rng(4)
    ref = rng.integers(30, 450, 600).astype(float)
    ref[:3] = [69, 70, 180]  # edges: 70 and 180 belong to the middle range
    bgm = np.rint(ref * rng.lognormal(0.02, 0.12, 600))
    table = range_statistics(ref, bgm).set_index("range")
    for label, low, high in (
        ("< 70 mg/dL", 0, 69),
        ("70–180 mg/dL", 70, 180),
        ("> 180 mg/dL", 181, 600),
        ("all", 0, 600),
    ):
        pairs = [(r, b) for r, b in zip(ref, bgm, strict=True) if low <= r <= high]
        row = table.loc[label]
        assert row["n"] == len(pairs)
        ard = [abs(b - r) / r * 100 for r, b in pairs]
        assert row["mard_percent"] == pytest.approx(sum(ard) / len(ard))
        assert row["bias_mg_dl"] == pytest.approx(sum(b - r for r, b in pairs) / len(pairs))
        assert row["bias_percent"] == pytest.approx(
            sum((b - r) / r * 100 for r, b in pairs) / len(pairs)
        )
        for limit in (15, 20):
            inside = sum(
                (abs(b - r) <= limit) if r < 100 else (abs(b - r) / r * 100 <= limit)
                for r, b in pairs
            )
            assert row[f"within_{limit}_count"] == inside
        # the bootstrap interval of a mean is close to mean ± 1.96 standard errors
        se = np.std(ard, ddof=1) / np.sqrt(len(ard))
        assert row["mard_ci_lower_percent"] == pytest.approx(
            row["mard_percent"] - 1.96 * se, abs=0.35 * se + 1e-9
        )
        assert row["mard_ci_upper_percent"] == pytest.approx(
            row["mard_percent"] + 1.96 * se, abs=0.35 * se + 1e-9
        )


def test_mard_interval_is_reproducible_and_degenerate_cases():
    ref = np.array([100.0, 120, 150, 200, 90])
    bgm = np.array([110.0, 100, 160, 180, 99])
    assert mard_interval(ref, bgm) == mard_interval(ref, bgm)
    assert mard_interval(np.array([100.0]), np.array([110.0])) == pytest.approx((10, 10, 10))
    assert np.isnan(mard_interval(np.array([0.0]), np.array([5.0]))).all()


def test_small_samples_raise_visible_caveats():
    ref = np.r_[np.full(10, 60.0), np.full(50, 120.0), np.full(30, 250.0)]
    notes = caveats(range_statistics(ref, ref))
    assert len(notes) == 2
    assert "Only 90 pairs" in notes[0] and "< 70 mg/dL has only 10 pairs" in notes[1]
    ref = np.r_[np.full(20, 60.0), np.full(60, 120.0), np.full(20, 250.0)]
    assert caveats(range_statistics(ref, ref)) == ()
    report = meter_report(pd.DataFrame({"BGM": [100], "REF": [100]}), None)
    assert any("no pairs" in c for c in report.caveats)
    assert report.to_dict()["caveats"] == list(report.caveats)
