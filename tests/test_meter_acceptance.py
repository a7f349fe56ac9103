"""Acceptance standards (ISO 15197:2013, FDA iCGM) against an independent recomputation: loops
over the pairs and statsmodels' Clopper–Pearson interval."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from ranking_core.meter import meter_report, read_pairs
from ranking_core.meter.seg_tool import binomial_lower_bound
from ranking_core.meter.standards.acceptance import (
    AcceptanceData,
    JudgeSettings,
    acceptance_table,
    rates_of_change,
)
from ranking_core.meter.standards.bounds import lower_bound

SAMPLE = "data/sample_meter_pairs.csv"


def _icgm_by_loops(bgm, ref):
    """Criteria A–I written out pair by pair, from the text of 21 CFR 862.1355(b)(1)(iii)."""
    out = {}
    specs = {
        "A": ("low", 15, False, 85),
        "B": ("mid", 15, True, 70),
        "C": ("high", 15, True, 80),
        "D": ("low", 40, False, 98),
        "E": ("mid", 40, True, 99),
        "F": ("high", 40, True, 99),
        "G": ("all", 20, True, 87),
    }
    for key, (where, limit, relative, required) in specs.items():
        inside = hits = 0
        for b, r in zip(bgm, ref, strict=True):
            in_range = {"low": b < 70, "mid": 70 <= b <= 180, "high": b > 180, "all": True}[where]
            if not in_range:
                continue
            inside += 1
            allowed = limit * r / 100 if relative else limit
            hits += abs(b - r) <= allowed + 1e-9
        lower = proportion_confint(hits, inside, alpha=0.10, method="beta")[0] if hits else 0.0
        out[key] = (hits, inside, 100 * hits / inside, 100 * lower, 100 * lower > required)
    out["H"] = sum(b < 70 and r > 180 for b, r in zip(bgm, ref, strict=True))
    out["I"] = sum(b > 250 and r < 70 for b, r in zip(bgm, ref, strict=True))
    return out


def test_icgm_criteria_equal_an_independent_recomputation():
    pairs = read_pairs(SAMPLE)
    judge = JudgeSettings(("icgm",), measuring_range=None, bound="cp")
    report = meter_report(pairs, None, judge=judge)
    expected = _icgm_by_loops(pairs.bgm.tolist(), pairs.ref.tolist())
    table = report.acceptance.set_index("id")
    assert set(table["profile"]) == {"icgm"}
    for key in "ABCDEFG":
        count, n, percent, lower, passes = expected[key]
        row = table.loc[key]
        assert (row["count"], row["n"]) == (count, n), key
        assert row["percent"] == pytest.approx(percent, abs=0.05)
        assert row["lower_bound_percent"] == pytest.approx(lower, abs=0.3)
        assert row["passes"] is passes
    for key in "HI":
        assert table.loc[key, "count"] == expected[key]
        assert table.loc[key, "passes"] is (expected[key] == 0)
    assert "J" not in table.index  # no times: rate-of-change criteria left out, with a note
    assert any("J: left out" in note for note in report.acceptance_notes)


def test_icgm_boundaries_and_violations():
    # iCGM 69 vs 70 and 180 vs 181 change range; 15 % of 120 is exactly 18 (within)
    bgm = np.array([69, 70, 180, 181, 138, 60, 260, 100.0])
    ref = np.array([84, 50, 200, 150, 120, 190, 60, 100.0])
    table = acceptance_table(AcceptanceData(ref, bgm), JudgeSettings(("icgm",)))[0]
    table = table.set_index("id")
    assert table.loc["A", "n"] == 2 and table.loc["A", "count"] == 1  # 69/84: 15 within
    assert table.loc["B", "n"] == 4  # 70, 180, 138, 100
    assert table.loc["B", "count"] == 3  # 70/50 is 40 % off; 180/200, 138/120, 100/100 within
    assert table.loc["C", "n"] == 2 and table.loc["C", "count"] == 0  # 181/150, 260/60
    assert table.loc["H", "count"] == 1 and table.loc["H", "passes"] is False
    assert table.loc["I", "count"] == 1 and table.loc["I", "passes"] is False


@pytest.mark.parametrize(("k", "n"), [(0, 10), (1, 1), (17, 20), (95, 100), (9990, 10000)])
def test_clopper_pearson_lower_bound_matches_statsmodels(k, n):
    expected = proportion_confint(k, n, alpha=0.10, method="beta")[0] if k else 0.0
    hits = np.arange(n) < k
    assert lower_bound("cp", hits, None).lower_percent == pytest.approx(100 * expected, abs=1e-10)


def test_clustered_bound_is_wider_when_subjects_differ():
    # 10 subjects of 20 pairs: half the subjects always within, half at 70 %: strong clustering
    ref = np.full(200, 150.0)
    within = np.r_[np.ones(100), np.tile(np.r_[np.ones(14), np.zeros(6)], 5)].astype(bool)
    bgm = np.where(within, 150.0, 250.0)
    subject = np.repeat(np.arange(10), 20)
    plain, plain_notes = acceptance_table(AcceptanceData(ref, bgm), JudgeSettings(("icgm",)))
    plain = plain.set_index("id")
    clustered, notes = acceptance_table(
        AcceptanceData(ref, bgm, cluster=subject, cluster_name="subject"), JudgeSettings(("icgm",))
    )
    clustered = clustered.set_index("id")
    assert clustered.loc["G", "percent"] == plain.loc["G", "percent"] == 85.0
    assert clustered.loc["G", "bound"] == "kg" and plain.loc["G", "bound"] == "cp"
    assert clustered.loc["G", "lower_bound_percent"] < plain.loc["G", "lower_bound_percent"] - 2
    assert any("Korn–Graubard" in note and "subject" in note for note in notes)
    # a CGM standard judged without clusters says what that means; with them it does not
    assert any("without a sensor or subject column" in note for note in plain_notes)
    assert not any("without a sensor or subject column" in note for note in notes)


def test_rate_of_change_criteria_from_paired_times(tmp_path):
    start = np.datetime64("2024-05-01T08:00")
    minutes = np.arange(0, 60, 5)
    times = start + minutes.astype("timedelta64[m]")
    ref = 200.0 - 3 * minutes  # falling 3 mg/dL/min
    bgm = ref.copy()
    bgm[4] = bgm[3] + 10  # the sensor rises 2 mg/dL/min once while the reference falls
    rows = pd.DataFrame(
        {
            "BGM": bgm,
            "REF": ref,
            "reference_time": times.astype(str),
            "sensor_time": (times + np.timedelta64(1, "m")).astype(str),
        }
    )
    path = tmp_path / "paired.csv"
    rows.to_csv(path, index=False)
    every_pair = JudgeSettings(("icgm",), measuring_range=None)
    report = meter_report(read_pairs(path), None, judge=every_pair)
    table = report.acceptance.set_index("id")
    # J over the pairs whose sensor rises > 1 mg/dL/min: the one, while the reference falls
    assert (table.loc["J", "count"], table.loc["J", "n"]) == (1, 1)
    assert table.loc["J", "passes"] is False
    # beside it, over the 11 pairs whose reference falls > 2 mg/dL/min
    assert (table.loc["J", "reference_count"], table.loc["J", "reference_n"]) == (1, 11)
    # K over the 10 falling sensor rates (the one after the jump falls 13 mg/dL in 5 min)
    assert (table.loc["K", "count"], table.loc["K", "n"]) == (0, 10)
    assert table.loc["K", "passes"] is True
    assert table.loc["K", "reference_n"] == 0
    rates = rates_of_change(ref, bgm, times, times)
    assert np.isnan(rates.ref_rate[0]) and rates.ref_rate[1] == pytest.approx(-3.0)
    assert rates.sensor_rate[4] == pytest.approx(2.0)
    assert rates.missing["first pair of the file"] == 1


def test_iso_profile_keeps_the_standards_rule():
    ref = np.full(100, 200.0)
    bgm = np.r_[np.full(95, 230.0), np.full(5, 231.0)]  # 95 % within 15 %: passes exactly
    iso = JudgeSettings(("iso15197",))
    table = acceptance_table(AcceptanceData(ref, bgm), iso)[0].set_index("id")
    assert table.loc["1", "count"] == 95 and table.loc["1", "passes"] is True
    # Parkes type 1: A, just above the B upper line (B), just above C (C), D, E corner
    ref, bgm = np.array([(100, 100), (15, 51), (40, 71), (65, 171), (0, 600)], float).T
    row = acceptance_table(AcceptanceData(ref, bgm), iso)[0].iloc[1]
    assert row["count"] == 2 and row["n"] == 5 and row["passes"] is False


def test_binomial_test_never_meets_without_a_compliant_pair():
    assert binomial_lower_bound(1) == 1
    report = meter_report(pd.DataFrame({"BGM": [300.0], "REF": [100.0]}), None)
    assert not report.binomial["meets"].iloc[0]
    report = meter_report(pd.DataFrame({"BGM": [100.0], "REF": [100.0]}), None)
    assert report.binomial["meets"].iloc[0]


def test_acceptance_in_the_json(tmp_path):
    report = meter_report(read_pairs(SAMPLE), None, profiles=("iso15197", "icgm"))
    records = json.loads(json.dumps(report.to_dict()))["acceptance"]
    assert {r["profile"] for r in records} == {"iso15197", "icgm"}
    keys = set(
        "profile criterion count n percent lower_bound_percent required_percent passes".split()
    )
    assert all(keys <= set(r) for r in records)
