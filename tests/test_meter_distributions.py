"""The report's distribution functions (ranking_core/meter/distributions.py) against scipy.stats
itself, over grids of arguments with the edge values (0, 1, NaN, shapes ≤ 0): the same numbers,
to the last bit; and the report's modules load without scipy.stats."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ranking_core.meter.distributions import (
    beta_cdf,
    beta_quantile,
    binomial_quantile,
    normal_cdf,
    normal_quantile,
    percentile_bootstrap_mean,
    t_quantile,
)

ROOT = Path(__file__).resolve().parents[1]
RNG = np.random.default_rng(11)
LEVELS = np.r_[0.0, 1.0, np.nan, -0.1, 1.1, 0.5, 0.025, 0.975, 0.05, 1e-12, RNG.random(200)]


def same(found, expected):
    np.testing.assert_array_equal(np.asarray(found), np.asarray(expected))
    assert np.shape(found) == np.shape(expected)


@pytest.mark.parametrize("df", [0.0, -1.0, 0.5, 1.0, 2.0, 9.0, 49.0, 9999.0, np.inf, np.nan])
def test_t_quantile_is_scipys(df):
    same(t_quantile(LEVELS, df), stats.t.ppf(LEVELS, df))
    same(t_quantile(0.975, df), stats.t.ppf(0.975, df))


def test_normal_quantile_and_distribution_are_scipys():
    same(normal_quantile(LEVELS), stats.norm.ppf(LEVELS))
    same(normal_quantile(0.3), stats.norm.ppf(0.3))
    x = np.r_[-np.inf, np.inf, np.nan, 0.0, -0.0, 40.0, -40.0, RNG.normal(0, 3, 200)]
    same(normal_cdf(x), stats.norm.cdf(x))
    same(normal_cdf(1.7), stats.norm.cdf(1.7))


def test_beta_quantile_and_distribution_are_scipys():
    k = RNG.integers(1, 5000, 2000).astype(np.float64)
    n = k + RNG.integers(0, 5000, k.size)
    q = RNG.choice([0.025, 0.05, 0.1, 0.9, 0.95, 0.975], k.size)
    same(beta_quantile(q, k, n - k + 1), stats.beta.ppf(q, k, n - k + 1))
    a = np.r_[0.0, -1.0, np.nan, 0.3, RNG.uniform(0.01, 300, 50)]
    b = np.r_[1.0, 2.0, 3.0, np.nan, RNG.uniform(0.01, 300, 50)]
    for level in LEVELS[:12]:
        same(beta_quantile(level, a, b), stats.beta.ppf(level, a, b))
    x = np.r_[-0.5, 0.0, 1.0, 1.5, np.nan, RNG.random(49)]
    same(beta_cdf(x, a, b), stats.beta.cdf(x, a, b))
    same(beta_quantile(0.05, 3.0, 8.0), stats.beta.ppf(0.05, 3.0, 8.0))


@pytest.mark.parametrize(("q", "p"), [(0.05, 0.95), (0.05, 0.9), (0.025, 0.5), (0.95, 0.99)])
def test_binomial_quantile_is_scipys(q, p):
    sizes = np.r_[0:3001, RNG.integers(3001, 10**7, 300)]
    expected = stats.binom.ppf(q, sizes, p)
    assert [binomial_quantile(q, int(n), p) for n in sizes] == expected.astype(int).tolist()


def test_binomial_quantile_refuses_what_it_does_not_define():
    for args in ((0.0, 10, 0.5), (1.0, 10, 0.5), (0.5, -1, 0.5), (0.5, 10, 1.5)):
        with pytest.raises(ValueError, match="binomial quantile"):
            binomial_quantile(*args)


@pytest.mark.parametrize(
    ("n", "batch", "confidence"), [(2, 1000, 0.95), (37, 7, 0.9), (500, 64, 0.95)]
)
def test_the_percentile_bootstrap_is_scipys(n, batch, confidence):
    sample = np.round(RNG.lognormal(2, 0.8, n), 1)
    low, high = percentile_bootstrap_mean(sample, confidence, 1000, batch, np.random.default_rng(3))
    expected = stats.bootstrap(
        (sample,),
        np.mean,
        confidence_level=confidence,
        n_resamples=1000,
        method="percentile",
        batch=batch,
        rng=np.random.default_rng(3),
    ).confidence_interval
    assert (low, high) == (expected.low, expected.high)


def test_the_report_loads_without_scipy_stats():
    """The meter report's modules and the command's import none of scipy.stats (half a second
    at every start), matplotlib or openpyxl (loaded when a figure is drawn, a workbook read)."""
    code = (
        "import sys\n"
        "import ranking_core.cli.meter, ranking_core.meter.pipeline, ranking_core.grids\n"
        "print(sorted(m for m in ('scipy.stats', 'matplotlib', 'openpyxl', 'scipy.optimize',\n"
        "    'scipy.spatial') if m in sys.modules))\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.strip() == "[]"
