"""The meter report's shortcuts for many pairs give what the direct computations give."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from scipy.stats import bootstrap

from ranking_core.grids.registry import report_grids
from ranking_core.meter import statistics
from ranking_core.meter.report import _zone_index
from ranking_core.meter.statistics import BOOTSTRAP_MAX_PAIRS, mard_interval


def test_zones_looked_up_on_the_lattice_match_the_grids():
    rng = np.random.default_rng(3)
    n = 400_000  # more pairs than the 601 × 601 lattice has points
    ref = rng.integers(0, 601, n).astype(np.float64)
    bgm = rng.integers(0, 601, n).astype(np.float64)
    for grid in report_grids(1).values():
        assert np.array_equal(_zone_index(grid, ref, bgm), grid.zone_index(ref, bgm))


def test_normal_mard_interval_matches_the_bootstrap_beyond_the_limit():
    rng = np.random.default_rng(4)
    n = BOOTSTRAP_MAX_PAIRS + 1
    ref = rng.integers(40, 400, n).astype(np.float64)
    bgm = np.rint(ref * (1 + 0.1 * rng.standard_normal(n)))
    mard, low, high = mard_interval(ref, bgm)
    ard = 100 * np.abs(bgm - ref) / ref
    boot = bootstrap((ard,), np.mean, n_resamples=2000, method="percentile", batch=100,
                     rng=np.random.default_rng(0)).confidence_interval
    assert mard == ard.mean()
    width = boot.high - boot.low
    # the bootstrap's own Monte Carlo error is a few % of the width
    assert abs(low - boot.low) < 0.05 * width and abs(high - boot.high) < 0.05 * width
    assert abs((low + high) / 2 - mard) < 1e-9


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
    code = ("import sys, ranking_core.meter; print(sorted(m for m in ('plotly', 'matplotlib', "
            "'reportlab', 'sklearn', 'streamlit') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "[]"
