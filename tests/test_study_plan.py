"""``riskgrid plan-study`` against independent computations: the binomial distribution summed by
hand with statsmodels' Clopper–Pearson bound (ICC 0), and a brute-force simulation of the same
beta-binomial model (ICC > 0)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
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


def _plan_json(tmp_path, *options: str) -> tuple[dict, str, str]:
    out = tmp_path / "plan.json"
    result = CliRunner().invoke(app, ["plan-study", *options, "--json", str(out)])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text()), result.stdout, result.stderr


def test_an_icc_without_a_bound_plans_the_reports_clustered_bound_and_names_it(tmp_path):
    options = ("--agreement", "A=0.92,G=0.93", "--sensors", "15", "--icc", "0.1")
    default, text, warned = _plan_json(tmp_path, *options)
    chosen, _, _ = _plan_json(tmp_path, *options, "--bound", "kg")
    for key in ("criteria", "all", "sensors_needed"):
        assert default[key] == chosen[key]
    assert default["bound"] == "kg" and default["bound_default"] is True
    assert "bound kg (" in text and "Korn–Graubard" in default["bound_label"]
    assert warned == ""
    # the rule is the report's: a clustered file is judged by kg when no bound is chosen
    from ranking_core.meter.standards.bounds import default_bound

    assert default_bound(True) == "kg" and default_bound(False) == "cp"


def test_clopper_pearson_with_an_icc_warns_in_one_sentence(tmp_path):
    payload, _, warned = _plan_json(
        tmp_path, "--agreement", "A=0.92", "--icc", "0.1", "--bound", "cp"
    )
    assert payload["bound"] == "cp" and payload["bound_default"] is False
    assert "Clopper–Pearson ignores the clustering" in warned
    (note,) = payload["notes"]  # one sentence, on stderr as in the JSON
    assert " ".join(warned.split()) == f"warning: {note}"
    assert note.endswith(".") and ". " not in note
    _, _, quiet = _plan_json(tmp_path, "--agreement", "A=0.92")  # ICC 0: cp, no warning
    assert quiet == ""


def test_a_criterion_named_twice_is_refused_by_name():
    result = CliRunner().invoke(app, ["plan-study", "--agreement", "A=0.9,A=0.5"])
    assert result.exit_code == 1
    assert "criterion A is given twice" in result.stderr and "Traceback" not in result.output


def test_an_agreement_against_the_nesting_is_refused():
    # every pair within ±15 mg/dL (A) is within ±40 mg/dL (D): D cannot be expected lower
    result = CliRunner().invoke(app, ["plan-study", "--agreement", "A=0.9,D=0.8"])
    assert result.exit_code == 1
    assert "D=0.8 is below A=0.9" in result.stderr


def test_independent_criteria_simulated_jointly_give_the_product_of_exact_passes():
    from ranking_core.meter.standards.plan_simulation import JointSimulation
    from ranking_core.meter.standards.registry import get_profile

    icgm = {c.id: c for c in get_profile("icgm").criteria}
    sim = JointSimulation((icgm["A"], icgm["G"]), (0.9, 0.92), 15, 0.0, "cp", 20_000, 3)
    assert not sim.structure.shared  # < 70 mg/dL and every reading: different pairs
    each, together = sim.probabilities(8)
    exact = [_exact(120, 0.9, 85.0), _exact(120, 0.92, 87.0)]
    se = np.sqrt(exact[0] * exact[1] * (1 - exact[0] * exact[1]) / 20_000)
    assert together == pytest.approx(exact[0] * exact[1], abs=4 * se)
    for got, want in zip(each, exact, strict=True):
        assert got == pytest.approx(want, abs=4 * np.sqrt(want * (1 - want) / 20_000))


def test_nested_criteria_with_clustering_match_a_plain_monte_carlo(tmp_path):
    """A (within ±15 mg/dL) and D (within ±40 mg/dL) over the same pairs of the same sensors:
    the brute force below draws each sensor's two agreements from one uniform and each pair's
    place from one uniform, as the model states, and judges by Clopper–Pearson."""
    from scipy.stats import beta

    sensors, pairs, icc, p_a, p_d = 6, 10, 0.15, 0.93, 0.995
    payload, _, _ = _plan_json(
        tmp_path,
        "--agreement",
        f"A={p_a},D={p_d}",
        "--sensors",
        str(sensors),
        "--pairs-per-sensor",
        str(pairs),
        "--icc",
        str(icc),
        "--bound",
        "cp",
    )
    rng = np.random.default_rng(77)
    scale = 1 / icc - 1
    studies, both = 4_000, 0
    n = sensors * pairs
    for _ in range(studies):
        u = rng.uniform(size=sensors)
        share_a = beta.ppf(u, p_a * scale, (1 - p_a) * scale)
        share_d = beta.ppf(u, p_d * scale, (1 - p_d) * scale)
        v = rng.uniform(size=(sensors, pairs))
        k_a = int((v < share_a[:, None]).sum())
        k_d = int((v < share_d[:, None]).sum())
        lower_a = proportion_confint(k_a, n, alpha=0.10, method="beta")[0] if k_a else 0
        lower_d = proportion_confint(k_d, n, alpha=0.10, method="beta")[0] if k_d else 0
        both += bool(100 * lower_a > 85.0 and 100 * lower_d > 98.0)
    brute = both / studies
    se = np.sqrt(brute * (1 - brute) * (1 / studies + 1 / 4_000))
    assert payload["all"] == pytest.approx(brute, abs=4 * se)
    assert payload["all_method"].startswith("simulated jointly")


def test_a_tiny_nested_study_has_its_closed_form(tmp_path):
    """One sensor, two pairs, FDA OTC's ±15 % (≥ 95 %) inside ±20 % (≥ 99 %): both pass exactly
    when both pairs are within ±15 %, P = E[p_s²] = p² + R p (1 − p) for a beta-distributed
    sensor agreement of mean p and intra-class correlation R."""
    p, icc = 0.9, 0.2
    payload, _, _ = _plan_json(
        tmp_path,
        "--profile",
        "fda-otc",
        "--agreement",
        f"1={p},2=0.95",
        "--sensors",
        "1",
        "--pairs-per-sensor",
        "2",
        "--icc",
        str(icc),
    )
    closed = p**2 + icc * p * (1 - p)
    se = np.sqrt(closed * (1 - closed) / 4_000)
    assert payload["all"] == pytest.approx(closed, abs=4 * se)
    # at ICC 0 the same nesting gives p² (not p² · 0.95², the product over the criteria)
    payload, _, _ = _plan_json(
        tmp_path,
        "--profile",
        "fda-otc",
        "--agreement",
        f"1={p},2=0.95",
        "--sensors",
        "1",
        "--pairs-per-sensor",
        "2",
    )
    assert payload["all"] == pytest.approx(p**2, abs=4 * np.sqrt(p**2 * (1 - p**2) / 4_000))


def _clustered_study(
    sensors: bool,
) -> tuple[pd.DataFrame, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """CGM pairs of 8 sensors, each with its own error spread, and each iCGM criterion A–G's
    (in range, counted) masks written out from the regulation's words."""
    rng = np.random.default_rng(5)
    spread = np.repeat(rng.uniform(0.04, 0.16, 8), 60)
    ref = rng.uniform(45, 350, spread.size).round(1)
    bgm = (ref * (1 + rng.normal(0, spread))).round(1)
    frame = pd.DataFrame({"REF": ref, "BGM": bgm})
    if sensors:
        frame["sensor"] = np.repeat([f"S{i}" for i in range(8)], 60)
    inside = (bgm >= 40) & (bgm <= 400)
    gap = np.abs(bgm - ref)
    low, mid, high = bgm < 70, (bgm >= 70) & (bgm <= 180), bgm > 180
    masks = {
        "A": (low, gap <= 15),
        "B": (mid, gap <= 0.15 * ref),
        "C": (high, gap <= 0.15 * ref),
        "D": (low, gap <= 40),
        "E": (mid, gap <= 0.40 * ref),
        "F": (high, gap <= 0.40 * ref),
        "G": (np.ones(ref.size, dtype=bool), gap <= 0.20 * ref),
    }
    return frame, {k: (scope & inside, hit) for k, (scope, hit) in masks.items()}


def _anova(hits: np.ndarray, groups: np.ndarray) -> float:
    """The one-way ANOVA intra-class correlation from sums of squares (NaN when every pair or no
    pair is a hit: nothing to estimate)."""
    parts = [hits[groups == g] for g in np.unique(groups)]
    big_n, c, p = hits.size, len(parts), hits.mean()
    if p in (0.0, 1.0):
        return float("nan")
    sizes = np.array([g.size for g in parts])
    bms = sum(g.size * (g.mean() - p) ** 2 for g in parts) / (c - 1)
    wms = sum(((g - g.mean()) ** 2).sum() for g in parts) / (big_n - c)
    n0 = (big_n - (sizes**2).sum() / big_n) / (c - 1)
    return max((bms - wms) / (bms + (n0 - 1) * wms), 0.0)


def test_a_plan_starts_from_the_reports_agreement_icc_and_bound():
    from ranking_core.meter import meter_report
    from ranking_core.meter.standards.study_plan import plan_start

    frame, masks = _clustered_study(sensors=True)
    start = plan_start(meter_report(frame, None, profiles=("icgm",)), "icgm")
    sensor = frame["sensor"].to_numpy()
    weighted, pairs = 0.0, 0
    for key, (scope, hit) in masks.items():
        assert start.agreement[key] == pytest.approx(
            min(max(hit[scope].mean(), 0.001), 0.999), abs=1e-12
        )
        icc = _anova(hit[scope].astype(float), sensor[scope])
        if np.isfinite(icc):
            weighted, pairs = weighted + icc * scope.sum(), pairs + scope.sum()
    assert start.icc == pytest.approx(round(weighted / pairs, 3), abs=1e-9) and start.icc > 0
    assert start.bound == "kg"  # what the report judged this clustered file by
    # without sensors the report judges independent pairs by Clopper–Pearson: so does the plan
    frame, _ = _clustered_study(sensors=False)
    start = plan_start(meter_report(frame, None, profiles=("icgm",)), "icgm")
    assert (start.icc, start.bound) == (0.0, "cp")


def test_a_target_that_a_no_error_criterion_caps_is_not_reached(tmp_path):
    """H allows no error: with 0.99 of pairs free of it, P(pass H) = 0.99^(S·M) falls with every
    sensor and is 0.74 < 0.8 already at one sensor of 30 pairs: no study reaches P(all) ≥ 0.8.
    With 0.999 it is 0.97 at one sensor, and a small study does."""
    options = ("--pairs-per-sensor", "30", "--target", "0.8")
    payload, text, _ = _plan_json(tmp_path, "--agreement", "A=0.95,H=0.99", *options)
    assert payload["sensors_needed"] is None and "not reached" in text
    h = next(c for c in payload["criteria"] if c["id"] == "H")
    assert h["probability_pass"] == pytest.approx(0.99 ** (20 * 30), rel=1e-9)
    payload, _, _ = _plan_json(tmp_path, "--agreement", "A=0.95,H=0.999", *options)
    needed = payload["sensors_needed"]
    assert needed is not None and 0.999 ** (30 * needed) >= 0.8


@pytest.mark.parametrize("bound", ["cp", "kg", "wilson-cc"])
def test_a_study_passes_only_with_its_observed_share_above_the_required(bound):
    """The premise of the Hoeffding limit: every bound a plan simulates lies at or below the
    observed share, so a passing study has observed more than the required share. Brute force
    over every count and every spread of it over the sensors that integers allow."""
    from ranking_core.meter.standards.bounds import equal_clusters_exceed

    for clusters, pairs in ((1, 40), (3, 10), (8, 12), (30, 5)):
        n = clusters * pairs
        for required in (0.7, 0.85, 0.98):
            for k in range(n + 1):
                base, extra = divmod(k, clusters)  # the most even spread of k hits ...
                even = extra * (base + 1) ** 2 + (clusters - extra) * base**2
                full, rest = divmod(k, pairs)  # ... and the most uneven
                uneven = full * pairs**2 + rest**2
                squares = np.arange(even, uneven + 1)
                passed = equal_clusters_exceed(
                    bound, np.full(squares.shape, k), squares, clusters, pairs, required
                )
                assert not passed.any() or k / n > required, (clusters, pairs, k, required)


def test_the_hoeffding_limit_holds_and_changes_no_plan(tmp_path):
    """Past the limit the simulated chance of the criterion below its share is under
    Hoeffding's exp(−2·S·t²), below the target, and the search says no study reaches it; with
    every agreement above its share there is no limit."""
    from ranking_core.meter.standards import study_plan
    from ranking_core.meter.standards.registry import get_profile

    criteria = {c.id: c for c in get_profile("icgm").criteria}
    agreement = {"A": 0.9, "B": 0.66, "G": 0.85}  # B's 66 % is below its 70 %
    limit, which = study_plan.hoeffding_limit(
        tuple(criteria[k] for k in agreement), tuple(agreement.values()), 0.8
    )
    assert (limit, which) == (int(np.log(1 / 0.8) / (2 * (0.70 - 0.66) ** 2)), 1)
    plan = study_plan.plan("icgm", limit + 1, 10, agreement, icc=0.05, target=0.8)
    assert plan.criteria[1].probability_pass <= np.exp(-2 * (limit + 1) * 0.04**2) < 0.8
    assert plan.sensors_needed is None
    assert any(note.startswith("B: the expected agreement 66.0 %") for note in plan.notes)
    reachable = {"A": 0.9, "B": 0.74, "G": 0.9}
    assert (
        study_plan.hoeffding_limit(
            tuple(criteria[k] for k in reachable), tuple(reachable.values()), 0.8
        )
        is None
    )


def test_the_sensors_quality_is_interpolated_as_numpy_does_to_the_last_bit():
    """The simulation reads each criterion's beta quantile at the sensors' qualities through
    one search of the grid per block: equal to np.interp bit for bit, at the grid's points, just
    beside them, past its ends and at random qualities."""
    from ranking_core.meter.standards.plan_simulation import (
        _Z_GRID,
        _quantile_table,
        grid_cells,
        interpolate,
    )

    rng = np.random.default_rng(3)
    z = np.concatenate(
        [
            3 * rng.standard_normal(100_000),
            _Z_GRID,
            np.nextafter(_Z_GRID, 9.0),
            np.nextafter(_Z_GRID, -9.0),
            [-12.0, 12.0],
        ]
    )
    cells = grid_cells(z)
    for agreement, icc in ((0.657, 0.064), (0.999, 0.5), (0.001, 0.9), (0.5, 0.01)):
        table = _quantile_table(agreement, icc)
        assert np.array_equal(interpolate(table, cells), np.interp(z, _Z_GRID, table))
