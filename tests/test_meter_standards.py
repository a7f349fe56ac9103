"""Acceptance standards through ``riskgrid meter-report``, as a user runs it: the device's default
standard, the iCGM measuring range on the Ulm institute's public test set, boundaries of each
meter standard worked out by hand, values judged as measured, groups, clusters and rates."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.meter.standards.registry import STANDARDS, within

runner = CliRunner()
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "conformance"
ULM = Path(os.environ.get("RISKGRID_CONFORMANCE", SHARED)) / "ifdtulm-ci" / "Test_Data.csv"


def _report(tmp_path: Path, source: Path, *options: str) -> dict:
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["meter-report", str(source), "--json", str(out), *options])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def _rows(payload: dict, standard: str) -> dict[str, dict]:
    return {r["id"]: r for r in payload["acceptance"] if r["profile"] == standard}


def _write(tmp_path: Path, frame: pd.DataFrame, name: str = "pairs.csv") -> Path:
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


@pytest.mark.skipif(
    not ULM.exists(),
    reason="the Ulm iCGM test set is not at "
    "$RISKGRID_CONFORMANCE/ifdtulm-ci (../shared/data/conformance)",
)
def test_icgm_inside_its_measuring_range_on_the_ulm_test_set(tmp_path):
    # published with the data (conformance README): inside 40–400 mg/dL A is 298/335, CP 85.73 %
    payload = _report(tmp_path, ULM, "--bound", "cp")
    assert payload["device"] == "cgm"  # a SensorID column: a CGM, judged by the iCGM rules
    assert [s["name"] for s in payload["standards"]] == ["icgm"]
    rows = _rows(payload, "icgm")
    assert (rows["A"]["count"], rows["A"]["n"]) == (298, 335)
    assert rows["A"]["lower_bound_percent"] == pytest.approx(85.73, abs=0.01)
    assert rows["A"]["passes"] is True and rows["A"]["pairs_outside_range"] == 39
    assert rows["A"]["measuring_range_low"] == 40 and rows["A"]["measuring_range_high"] == 400
    assert "39 of 3600 pairs left out" in " ".join(payload["acceptance_notes"])
    # every pair, as the publishers computed it: 320/374, CP 82.23 %, and H counts 1 of 374
    every = _rows(_report(tmp_path, ULM, "--bound", "cp", "--measuring-range", "none"), "icgm")
    assert (every["A"]["count"], every["A"]["n"]) == (320, 374)
    assert every["A"]["lower_bound_percent"] == pytest.approx(82.23, abs=0.01)
    assert every["A"]["passes"] is False
    assert (every["H"]["count"], every["H"]["n"]) == (1, 374)


def test_a_meter_file_is_judged_by_iso_15197_only(tmp_path):
    frame = pd.DataFrame({"BGM": [100, 130, 90, 250], "REF": [104, 120, 95, 240]})
    payload = _report(tmp_path, _write(tmp_path, frame))
    assert payload["device"] == "bgm"
    assert {r["profile"] for r in payload["acceptance"]} == {"iso15197"}
    # the same file judged as a CGM on request
    payload = _report(tmp_path, _write(tmp_path, frame), "--device", "cgm")
    assert {r["profile"] for r in payload["acceptance"]} == {"icgm"}
    assert any("without a sensor or subject column" in n for n in payload["acceptance_notes"])


@pytest.mark.parametrize("name", [n for n, s in STANDARDS.items() if s.device == "bgm"])
def test_each_meter_standard_counts_its_boundaries_as_within(tmp_path, name):
    standard = STANDARDS[name]
    rng = np.random.default_rng(7)
    ref = rng.uniform(30, 400, 400).round(1)
    bgm = (ref * rng.normal(1, 0.1, 400)).round(1)
    frame = pd.DataFrame({"BGM": bgm, "REF": ref})
    rows = _rows(_report(tmp_path, _write(tmp_path, frame), "--profile", name), name)
    for criterion in standard.criteria:
        if criterion.label.startswith("in Parkes"):
            continue
        # the limits read from the label by hand, compared pair by pair
        text = criterion.label
        limits = [float(x) for x in pd.Series(text).str.findall(r"±([\d.]+)").iloc[0]]
        cut = (
            float(pd.Series(text).str.findall(r"REF < ([\d.]+)").iloc[0][0])
            if "REF <" in text
            else 0.0
        )
        mgdl, percent = (limits[0], limits[1]) if len(limits) == 2 else (0.0, limits[0])
        hits = sum(
            (abs(b - r) <= mgdl) if r < cut else (100 * abs(b - r) <= percent * r + 1e-9)
            for b, r in zip(bgm, ref, strict=True)
        )
        assert rows[criterion.id]["count"] == hits, (name, criterion.id)
        assert rows[criterion.id]["passes"] is bool(100 * hits / 400 >= criterion.required_percent)


def test_boundaries_are_inclusive():
    ref = np.array([74.0, 75.0, 100.0, 99.0, 200.0])
    bgm = np.array([86.0, 84.0, 112.5, 111.0, 240.0])
    # ±12 mg/dL below 75, ±12 % from 75: 12 ≤ 12; 9 ≤ 9; 12.5 > 12; 12 > 11.88; 40 > 24
    assert within(ref, bgm, 12, 12, 75).tolist() == [True, True, False, False, False]
    # CLSI: ±12 mg/dL below 100, ±12.5 % from 100: 12.5 ≤ 12.5 at REF 100, 40 > 25 at 200
    assert within(ref, bgm, 12, 12.5, 100).tolist() == [True, True, True, True, False]


def test_values_are_judged_as_measured(tmp_path):
    # REF 99.6, BGM 115.0: 15.4 mg/dL off below 100 (outside ±15 mg/dL); rounded to 100 and
    # 115 it would read 15 % (inside)
    frame = pd.DataFrame({"BGM": [115.0, 100.0], "REF": [99.6, 100.0]})
    payload = _report(tmp_path, _write(tmp_path, frame))
    assert _rows(payload, "iso15197")["1"]["count"] == 1
    assert any("judge the values as measured" in m for m in payload["messages"])


def _cgm_study(rng: np.random.Generator, sensors: int, jitter_seconds: float) -> pd.DataFrame:
    """Reference draws every 15 min (± jitter) for each sensor, the sensor read 1 min later."""
    frames = []
    start = np.datetime64("2024-05-01T08:00:00")
    for s in range(sensors):
        minutes = np.arange(0, 15 * 24, 15.0)
        ref = 150 + 80 * np.sin(minutes / 60 + s)
        t_ref = start + (
            minutes * 60 + rng.uniform(-jitter_seconds, jitter_seconds, minutes.size)
        ).astype("timedelta64[s]")
        t_sen = t_ref + np.timedelta64(60, "s")
        frames.append(
            pd.DataFrame(
                {
                    "BGM": (ref * rng.normal(1, 0.08, minutes.size)).round(1),
                    "REF": ref.round(1),
                    "sensor": f"S{s}",
                    "site": "north" if s % 2 else "south",
                    "reference_time": t_ref.astype(str),
                    "sensor_time": t_sen.astype(str),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def test_rates_from_draws_every_15_min_with_clock_jitter(tmp_path):
    study = _cgm_study(np.random.default_rng(3), sensors=4, jitter_seconds=20)
    payload = _report(tmp_path, _write(tmp_path, study), "--measuring-range", "none")
    rows = _rows(payload, "icgm")
    # by hand: every pair but each sensor's first has both rates
    t_ref = pd.to_datetime(study["reference_time"])
    t_sen = pd.to_datetime(study["sensor_time"])
    ref_rate = study.groupby("sensor")["REF"].diff() / (
        t_ref.groupby(study["sensor"]).diff().dt.total_seconds() / 60
    )
    sen_rate = study.groupby("sensor")["BGM"].diff() / (
        t_sen.groupby(study["sensor"]).diff().dt.total_seconds() / 60
    )
    assert ref_rate.notna().sum() == len(study) - 4
    j_n = int((sen_rate > 1).sum())
    j_count = int(((sen_rate > 1) & (ref_rate < -2)).sum())
    k_ref_n = int((ref_rate > 2).sum())
    assert (rows["J"]["count"], rows["J"]["n"]) == (j_count, j_n)
    assert rows["J"]["passes"] is bool(100 * j_count / j_n <= 1)
    assert rows["K"]["reference_n"] == k_ref_n
    assert "4 of 96 pairs have none (first pair of its sensor: 4)" in " ".join(
        payload["acceptance_notes"]
    )


def test_by_gives_the_pooled_verdict_first_then_every_standard_for_each_group(tmp_path):
    study = _cgm_study(np.random.default_rng(5), sensors=4, jitter_seconds=0)
    payload = _report(tmp_path, _write(tmp_path, study), "--by", "site", "--bound", "cp")
    rows = payload["acceptance"]
    assert rows[0]["group"] is None  # the pooled verdict first, group null
    groups_in_order = list(dict.fromkeys(r["group"] for r in rows))
    assert groups_in_order[0] is None and set(groups_in_order[1:]) == {"north", "south"}
    for site in (None, "north", "south"):
        part = study if site is None else study[study["site"] == site]
        g = next(r for r in rows if r["group"] == site and r["id"] == "G")
        inside = part[(part["BGM"] >= 40) & (part["BGM"] <= 400)]
        hits = (100 * (inside["BGM"] - inside["REF"]).abs() <= 20 * inside["REF"]).sum()
        assert (g["count"], g["n"]) == (hits, len(inside))
    for criterion in {r["id"] for r in rows}:  # the groups' counts sum to the pooled counts
        pooled = next(r for r in rows if r["group"] is None and r["id"] == criterion)
        groups = [r for r in rows if r["group"] is not None and r["id"] == criterion]
        assert sum(r["n"] for r in groups) == pooled["n"]
        assert sum(r["count"] for r in groups) == pooled["count"]


def test_blank_sensor_cells_are_refused_by_line(tmp_path):
    path = tmp_path / "blank.csv"
    path.write_text("BGM,REF,sensor\n100,101,a\n120,118,\n130,129,b\n140,150,b\n")
    payload = _report(tmp_path, path)
    assert "sensor is blank in line 3" in " ".join(payload["messages"])
    assert sum(r["n"] for r in payload["acceptance"] if r["id"] == "G") == 3


@pytest.mark.parametrize("span", ["400-40", "a-b", "40", "-5-100"])
def test_a_bad_measuring_range_is_one_sentence(tmp_path, span):
    frame = pd.DataFrame({"BGM": [100, 130], "REF": [104, 120]})
    result = runner.invoke(
        app, ["meter-report", str(_write(tmp_path, frame)), "--measuring-range", span]
    )
    assert result.exit_code == 1 and "--measuring-range" in result.output
    assert "Traceback" not in result.output


def test_trend_agreement_counts_every_rate_pair_by_hand(tmp_path):
    study = _cgm_study(np.random.default_rng(11), sensors=6, jitter_seconds=30)
    payload = _report(tmp_path, _write(tmp_path, study))
    table = payload["trend_agreement"]
    t_ref = pd.to_datetime(study["reference_time"])
    t_sen = pd.to_datetime(study["sensor_time"])
    by = study["sensor"]
    ref_rate = study.groupby(by)["REF"].diff() / (t_ref.groupby(by).diff().dt.total_seconds() / 60)
    sen_rate = study.groupby(by)["BGM"].diff() / (t_sen.groupby(by).diff().dt.total_seconds() / 60)

    def category(rate: float) -> int:  # < −2, [−2, −1), [−1, 1], (1, 2], > 2
        return 0 if rate < -2 else 1 if rate < -1 else 2 if rate <= 1 else 3 if rate <= 2 else 4

    expected = np.zeros((5, 5), dtype=int)
    for s, r in zip(sen_rate, ref_rate, strict=True):
        if np.isfinite(s) and np.isfinite(r):
            expected[category(s), category(r)] += 1
    assert table["counts"] == expected.tolist()
    assert table["pairs_without_rate"] == 6
    assert table["categories"][0] == "< −2" and expected.sum() == len(study) - 6


def test_clinical_trend_concurrence_counts_every_rate_pair_by_hand(tmp_path):
    """CTCA (Eichenlaub, Pleus, Freckmann): seven categories each side and the zones as their
    reference code counts them (``zone_count``: for each sensor-category row, the comparator
    columns of each zone), written out here."""
    study = _cgm_study(np.random.default_rng(12), sensors=8, jitter_seconds=30)
    payload = _report(tmp_path, _write(tmp_path, study))
    ctca = payload["trend_agreement"]["clinical_trend_concurrence"]
    t_ref = pd.to_datetime(study["reference_time"])
    t_sen = pd.to_datetime(study["sensor_time"])
    by = study["sensor"]
    ref_rate = study.groupby(by)["REF"].diff() / (t_ref.groupby(by).diff().dt.total_seconds() / 60)
    sen_rate = study.groupby(by)["BGM"].diff() / (t_sen.groupby(by).diff().dt.total_seconds() / 60)

    def category(rate: float) -> int:  # <−3, [−3,−2), [−2,−1), [−1,1], (1,2], (2,3], >3
        edges = [(-3, "lt"), (-2, "lt"), (-1, "lt"), (1, "le"), (2, "le"), (3, "le")]
        for i, (edge, kind) in enumerate(edges):
            if (rate < edge) if kind == "lt" else (rate <= edge):
                return i
        return 6

    zone_cells = {  # their CTCA.py zone_count for seven categories
        "A": [[0, 1], [0, 1, 2], [1, 2], [3], [4, 5], [4, 5, 6], [5, 6]],
        "B": [[2], [], [0, 3], [2, 4], [3, 6], [], [4]],
        "C": [[3], [3], [4], [1, 5, 6], [2], [3], [3]],
        "D": [[4, 5, 6], [4, 5, 6], [5, 6], [0], [0, 1], [0, 1, 2], [0, 1, 2]],
    }
    counts = np.zeros((7, 7), dtype=int)
    absolute = []
    for s, r in zip(sen_rate, ref_rate, strict=True):
        if np.isfinite(s) and np.isfinite(r):
            counts[category(s), category(r)] += 1
            absolute.append(abs(r))
    assert ctca["counts"] == counts.tolist()
    total = counts.sum()
    for zone, cells in zone_cells.items():
        n = sum(counts[i, cols].sum() for i, cols in enumerate(cells))
        assert ctca["zone_counts"][zone] == n
        assert ctca["zone_percent"][zone] == pytest.approx(100 * n / total)
    assert ctca["maroc"] == pytest.approx(sum(absolute) / len(absolute))
    column = counts[:, 3]
    assert ctca["column_percent"][3][3] == pytest.approx(100 * column[3] / column.sum())
    assert sum(ctca["zone_counts"].values()) == total > 0


def test_ctca_zones_of_every_cell_are_their_zone_count_lists():
    from ranking_core.meter.cgm.trend import ctca_category, trend_concurrence

    sensor, comparator = np.divmod(np.arange(49), 7)  # every cell once
    result = trend_concurrence(sensor, comparator, np.zeros(49))
    # cells per zone in their CTCA.py zone_count (rows of 2+3+2+1+2+3+2 for A, …)
    assert result.zone_counts == {"A": 15, "B": 8, "C": 9, "D": 17}
    shown = result.frame()
    assert shown["pairs"].tolist() == ["15", "8", "9", "17", ""]
    assert shown["value"].tolist() == ["30.6 %", "16.3 %", "18.4 %", "34.7 %", "0.00 mg/dL/min"]
    edges = np.array([-3.0001, -3, -2.0001, -2, -1.0001, -1, 1, 1.0001, 2, 2.0001, 3, 3.0001])
    assert ctca_category(edges).tolist() == [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6]
    assert ctca_category(np.array([np.nan])).tolist() == [-1]
