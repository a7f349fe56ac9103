"""``riskgrid plan-study`` against independent computations: the binomial distribution summed by
hand with statsmodels' Clopper–Pearson bound (ICC 0), and a brute-force simulation of the same
beta-binomial model (ICC > 0)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import binom
from statsmodels.stats.proportion import proportion_confint
from typer.testing import CliRunner

from ranking_core.cli import app

runner = CliRunner()
REQUIRED = {"A": 85.0, "B": 70.0, "G": 87.0}


def _run(tmp_path, *options: str) -> dict:
    out = tmp_path / "plan.json"
    result = runner.invoke(app, ["plan-study", *options, "--json", str(out)])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def _exact(n: int, p: float, required: float) -> float:
    """P(CP lower bound > required) with the count Binomial(n, p), by summing every count."""
    total = 0.0
    for k in range(1, n + 1):
        lower = proportion_confint(k, n, alpha=0.10, method="beta")[0]
        if 100 * lower > required:
            total += binom.pmf(k, n, p)
    return total


def test_independent_pairs_give_the_exact_binomial_probability(tmp_path):
    payload = _run(
        tmp_path, "--agreement", "A=0.90,G=0.92", "--sensors", "8", "--pairs-per-sensor", "15"
    )
    got = {c["id"]: c["probability_pass"] for c in payload["criteria"]}
    for key, p in (("A", 0.90), ("G", 0.92)):
        assert got[key] == pytest.approx(_exact(120, p, REQUIRED[key]), abs=0.01)
    assert payload["all"] == pytest.approx(got["A"] * got["G"], rel=1e-12)
    assert [c["method"] for c in payload["criteria"]] == ["exact", "exact"]


def test_correlated_pairs_match_a_brute_force_simulation(tmp_path):
    sensors, pairs, icc, p = 12, 20, 0.08, 0.91
    payload = _run(
        tmp_path,
        "--agreement",
        f"A={p}",
        "--sensors",
        str(sensors),
        "--pairs-per-sensor",
        str(pairs),
        "--icc",
        str(icc),
        "--bound",
        "cp",
    )
    rng = np.random.default_rng(2024)
    scale = 1 / icc - 1
    draws = 20_000
    p_s = rng.beta(p * scale, (1 - p) * scale, size=(draws, sensors))
    counts = rng.binomial(pairs, p_s).sum(axis=1)
    n = sensors * pairs
    lower = np.array(proportion_confint(counts, n, alpha=0.10, method="beta")[0])
    lower[counts == 0] = 0
    brute = float(np.mean(100 * lower > REQUIRED["A"]))
    assert payload["criteria"][0]["probability_pass"] == pytest.approx(brute, abs=0.03)


def test_sensors_needed_is_the_fewest_that_reach_the_target(tmp_path):
    payload = _run(tmp_path, "--agreement", "A=0.92", "--pairs-per-sensor", "10", "--target", "0.8")
    needed = payload["sensors_needed"]
    assert _exact(10 * needed, 0.92, 85.0) >= 0.8
    assert _exact(10 * (needed - 1), 0.92, 85.0) < 0.8


@pytest.mark.parametrize(
    "options",
    [
        ["--agreement", "Z=0.9"],
        ["--agreement", "A=1.5"],
        ["--agreement", "A"],
        ["--agreement", "A=0.9", "--bound", "bootstrap"],
        ["--agreement", "A=0.9", "--sensors", "0"],
    ],
)
def test_bad_plans_are_refused_in_a_sentence(options):
    result = runner.invoke(app, ["plan-study", *options])
    assert result.exit_code in (1, 2) and "Traceback" not in result.output
