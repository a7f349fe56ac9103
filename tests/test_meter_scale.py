"""The meter report's shortcuts for many pairs give what the direct computations give."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import bootstrap

from ranking_core.grids.registry import report_grids
from ranking_core.meter import meter_report, statistics
from ranking_core.meter.standards.acceptance import (
    AcceptanceData,
    JudgeSettings,
    acceptance_table,
    profile_names,
)
from ranking_core.meter.statistics import (
    BOOTSTRAP_MAX_PAIRS,
    mard_interval,
    pair_points,
    range_statistics,
)


def _pairs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    ref = rng.integers(0, 601, n).astype(np.float64)
    return ref, np.clip(np.rint(ref * (1 + 0.1 * rng.standard_normal(n))), 0, 600)


def test_pairs_grouped_on_the_lattice_give_every_pair_back():
    ref, bgm = _pairs(200_000, 3)
    points = pair_points(ref, bgm)
    assert np.array_equal(points.ref[points.inverse], ref)
    assert np.array_equal(points.bgm[points.inverse], bgm)
    assert points.count.sum() == ref.size and (points.count >= 1).all()
    assert len(set(zip(points.ref, points.bgm, strict=True))) == points.ref.size  # distinct
    for grid in report_grids(1).values():  # zones per point, spread to the pairs
        assert np.array_equal(
            grid.zone_index(points.ref, points.bgm)[points.inverse], grid.zone_index(ref, bgm)
        )
    fractional = pair_points(ref[:500] + 0.5, bgm[:500])  # off the lattice: np.unique
    assert np.array_equal(fractional.ref[fractional.inverse], ref[:500] + 0.5)


def test_statistics_of_grouped_pairs_equal_those_of_the_pairs():
    ref, bgm = _pairs(3 * BOOTSTRAP_MAX_PAIRS * 4, 6)  # every range beyond the bootstrap
    points = pair_points(ref, bgm)
    grouped = range_statistics(points.ref, points.bgm, points.count)
    pd.testing.assert_frame_equal(grouped, range_statistics(ref, bgm), rtol=1e-12)
    names = JudgeSettings(profile_names())
    pd.testing.assert_frame_equal(
        acceptance_table(AcceptanceData(points.ref, points.bgm, weight=points.count), names)[0],
        acceptance_table(AcceptanceData(ref, bgm), names)[0],
    )


def test_report_does_not_depend_on_the_order_of_the_pairs():
    ref, bgm = _pairs(3000, 8)  # small ranges: the bootstrap interval
    order = np.random.default_rng(9).permutation(ref.size)
    first = meter_report(pd.DataFrame({"BGM": bgm, "REF": ref}), None)
    again = meter_report(pd.DataFrame({"BGM": bgm[order], "REF": ref[order]}), None)
    for name, table in first.tables().items():
        pd.testing.assert_frame_equal(table, again.tables()[name], rtol=1e-12, obj=name)
    per_pair = first.pairs.drop(columns="row").iloc[order].reset_index(drop=True)
    pd.testing.assert_frame_equal(per_pair, again.pairs.drop(columns="row"))
    ard = 100 * np.abs(bgm - ref)[ref > 0] / ref[ref > 0]
    assert first.ranges.set_index("range").loc["all", "mard_percent"] == pytest.approx(
        ard.mean(), rel=1e-12
    )


def test_normal_mard_interval_matches_the_bootstrap_beyond_the_limit():
    rng = np.random.default_rng(4)
    n = BOOTSTRAP_MAX_PAIRS + 1
    ref = rng.integers(40, 400, n).astype(np.float64)
    bgm = np.rint(ref * (1 + 0.1 * rng.standard_normal(n)))
    mard, low, high = mard_interval(ref, bgm)
    ard = 100 * np.abs(bgm - ref) / ref
    boot = bootstrap(
        (ard,),
        np.mean,
        n_resamples=2000,
        method="percentile",
        batch=100,
        rng=np.random.default_rng(0),
    ).confidence_interval
    assert mard == pytest.approx(ard.mean(), rel=1e-12)
    width = boot.high - boot.low
    # the bootstrap's own Monte Carlo error is a few % of the width
    assert abs(low - boot.low) < 0.05 * width and abs(high - boot.high) < 0.05 * width
    assert abs((low + high) / 2 - mard) < 1e-9


def test_the_bootstrap_interval_does_not_depend_on_its_batches(monkeypatch):
    """Resamples drawn in batches of 100 pairs' worth or all at once: the same integers in the
    same order, so the same interval to the last bit, equal to scipy's one-call bootstrap."""
    rng = np.random.default_rng(6)
    ref = rng.integers(40, 400, 3000).astype(np.float64)
    bgm = np.rint(ref * (1 + 0.1 * rng.standard_normal(ref.size)))
    ard = 100 * np.abs(bgm - ref) / ref
    one_call = bootstrap(
        (ard,), np.mean, n_resamples=1000, method="percentile", rng=np.random.default_rng(0)
    ).confidence_interval
    monkeypatch.setattr(statistics, "BOOTSTRAP_BATCH_VALUES", 100 * ref.size)
    batched = mard_interval(ref, bgm)
    monkeypatch.setattr(statistics, "BOOTSTRAP_BATCH_VALUES", 10**9)
    whole = mard_interval(ref, bgm)
    assert batched == whole
    assert whole[1:] == (one_call.low, one_call.high)


def test_normal_interval_only_beyond_the_limit(monkeypatch):
    rng = np.random.default_rng(5)
    ref = rng.integers(40, 400, 500).astype(np.float64)
    bgm = np.rint(ref * (1 + 0.1 * rng.standard_normal(500)))
    bootstrapped = mard_interval(ref, bgm)
    monkeypatch.setattr(statistics, "BOOTSTRAP_MAX_PAIRS", 100)
    normal = mard_interval(ref, bgm)
    # the percentile bootstrap is not symmetric about the mean; the normal interval is
    assert bootstrapped != normal
    assert abs((normal[1] + normal[2]) / 2 - normal[0]) < 1e-9


def test_importing_the_meter_loads_no_plotting_pdf_or_learning_library():
    code = (
        "import sys, ranking_core.meter; print(sorted(m for m in ('plotly', 'matplotlib', "
        "'reportlab', 'sklearn', 'streamlit') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert out.stdout.strip() == "[]"
