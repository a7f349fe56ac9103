"""CG-EGA (Kovatchev et al., Diabetes Care 2004;27:1922–1928): the point grid's borders at each
reference rate, the rate grid's zones, the error matrix by glycaemic state, and the block of
``riskgrid meter-report --json``. Expected values are written out from the published description
(*Glucose Monitoring Devices*, ch. 8, pp. 160–165, Figs. 8.2–8.5), point by point on and either
side of each border; the reference implementation's documented example is the optional
conformance vector ``cg-ega`` (tests/test_conformance.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.grids.clarke import clarke_zone
from ranking_core.meter.cgm.cg_ega import (
    CLASSES,
    POINT_ZONES,
    RATE_ZONES,
    STATES,
    cg_ega,
    error_class,
    glycaemic_state,
    point_zone,
    rate_zone,
)

runner = CliRunner()


@pytest.mark.parametrize("rate", [0.0, 1.0, -1.0, 0.5, np.nan])
def test_point_grid_is_clarkes_while_the_reference_moves_at_most_1_per_minute(rate):
    ref, est = np.meshgrid(np.arange(0, 401, 1.0), np.arange(0, 401, 1.0), indexing="ij")
    ours = point_zone(ref, est, np.full(ref.shape, rate))
    assert np.array_equal(ours, clarke_zone(ref, est))


# (reference mg/dL, sensor mg/dL, reference rate mg/dL/min, zone): each border on and beside
BORDER_POINTS = [
    # upper A/B border 1.2·REF: +10 falling at −2 ≤ r < −1, +20 falling faster
    (100, 120, 0.0, "A"),
    (100, 121, 0.0, "B"),
    (100, 121, -1.0, "B"),  # exactly −1: not moved
    (100, 130, -1.5, "A"),
    (100, 130.5, -1.5, "B"),
    (100, 130, -2.0, "A"),  # exactly −2: the 10 mg/dL grid
    (100, 131, -2.0, "B"),
    (100, 140, -2.01, "A"),
    (100, 141, -2.01, "B"),
    (100, 79, -3.0, "B"),  # falling: the lower border stays
    # lower A/B border 0.8·REF: −10 rising at 1 < r ≤ 2, −20 rising faster
    (100, 80, 0.0, "A"),
    (100, 79, 1.0, "B"),  # exactly +1: not moved
    (100, 70, 1.5, "A"),
    (100, 69.5, 1.5, "B"),
    (100, 70, 2.0, "A"),
    (100, 69, 2.0, "B"),
    (100, 60, 2.5, "A"),
    (100, 59, 2.5, "B"),
    (100, 121, 3.0, "B"),  # rising: the upper border stays
    # hypoglycaemic A (REF < 70, sensor < 70): its upper border moves with A's
    (50, 69.9, 0.0, "A"),
    (50, 70, 0.0, "D"),
    (50, 79.9, -1.5, "A"),
    (50, 80, -1.5, "D"),
    # upper D/E border at 180: moved only falling faster than 2 (A, B and D, p. 161)
    (50, 179, 0.0, "D"),
    (50, 180, 0.0, "E"),
    (50, 180, -1.5, "E"),
    (50, 199, -3.0, "D"),
    (50, 200, -3.0, "E"),
    # upper B/C border REF + 110
    (100, 210, 0.0, "B"),
    (100, 211, 0.0, "C"),
    (100, 220, -1.5, "B"),
    (100, 221, -1.5, "C"),
    (100, 230, -3.0, "B"),
    (100, 231, -3.0, "C"),
    # lower B/C border 1.4·(REF − 130)
    (160, 42, 0.0, "B"),
    (160, 41.9, 0.0, "C"),
    (160, 22, 3.0, "B"),
    (160, 21.9, 3.0, "C"),
    # lower D (REF > 240): 70 ≤ sensor < 180, both borders lowered rising
    (300, 180, 0.0, "B"),
    (300, 179, 0.0, "D"),
    (300, 71, 0.0, "D"),
    (300, 70, 0.0, "D"),
    (300, 69, 0.0, "E"),
    (300, 170, 1.5, "B"),
    (300, 169, 1.5, "D"),
    (300, 60, 1.5, "D"),
    (300, 59, 1.5, "E"),
    (300, 160, 3.0, "B"),
    (300, 159, 3.0, "D"),
    (300, 50, 3.0, "D"),
    (300, 49, 3.0, "E"),
    # lower E (REF ≥ 180, sensor ≤ 70) between 180 and 240: B above its moved border
    (200, 70, 0.0, "E"),
    (200, 70, 3.0, "B"),
    (200, 50, 3.0, "E"),
]


@pytest.mark.parametrize(("ref", "est", "rate", "zone"), BORDER_POINTS)
def test_point_grid_borders_by_hand(ref, est, rate, zone):
    assert point_zone([ref], [est], [rate])[0] == zone


# (reference rate, sensor rate, zone), mg/dL/min
RATE_POINTS = [
    (0, 1, "A"),
    (0, -1, "A"),
    (0, 1.01, "B"),
    (0, 2, "B"),
    (0, 2.01, "uC"),
    (0, -2.01, "lC"),
    (-4, -2, "A"),  # A widens to ±2 at ±4 (s = r/2)
    (-4, -8, "A"),  # s = 2r
    (4, 2, "A"),
    (4, 1.99, "B"),  # both ≥ 1 would make B; s < 1 is not
    (-4, -1.99, "B"),
    (-4, -0.99, "uD"),
    (-4, 1, "uD"),
    (-4, 1.01, "uE"),
    (3, 1, "B"),  # d = −2
    (3, 0.99, "lD"),
    (3, -1, "lD"),
    (3, -1.01, "lE"),
    (1, 3.01, "B"),  # r = 1: both rising
    (0.99, 3.01, "uC"),
    (-1, 1.01, "uC"),  # r = −1 is still C's
    (-1.01, 1.0, "uD"),
    (-1.01, 1.01, "uE"),
    (-1, -3.01, "B"),
    (-0.99, -3.01, "lC"),
    (1, -1.01, "lC"),
    (1.01, -1.0, "lD"),
    (1.01, -1.01, "lE"),
]


@pytest.mark.parametrize(("r", "s", "zone"), RATE_POINTS)
def test_rate_grid_zones_by_hand(r, s, zone):
    assert rate_zone([r], [s])[0] == zone


def test_rate_grid_zones_partition_the_plane():
    """The eight zones' own inequalities (written here from Fig. 8.4) hold for exactly one zone
    at every point of a fine grid, and :func:`rate_zone` names that zone."""
    r, s = np.meshgrid(np.arange(-5, 5.001, 0.05), np.arange(-5, 5.001, 0.05), indexing="ij")
    r, s = np.round(r, 2).ravel(), np.round(s, 2).ravel()
    d = s - r
    a = (np.abs(d) <= 1) | ((s - 2 * r) * (s - r / 2) <= 0)
    b = ~a & ((np.abs(d) <= 2) | ((r <= -1) & (s <= -1)) | ((r >= 1) & (s >= 1)))
    rest = ~a & ~b
    own = {
        "A": a,
        "B": b,
        "uC": rest & (r >= -1) & (r < 1) & (d > 0),
        "lC": rest & (r > -1) & (r <= 1) & (d < 0),
        "uD": rest & (r < -1) & (np.abs(s) <= 1),
        "lD": rest & (r > 1) & (np.abs(s) <= 1),
        "uE": rest & (r < -1) & (s > 1),
        "lE": rest & (r > 1) & (s < -1),
    }
    hits = np.sum([v for v in own.values()], axis=0)
    assert (hits == 1).all()
    zone = rate_zone(r, s)
    for name, mask in own.items():
        assert (zone[mask] == name).all(), name
    assert rate_zone([np.nan], [0.0])[0] == ""


def _expected_class(state: str, p: str, r: str) -> str:
    """Fig. 8.5 and its text (p. 164), written out."""
    if p not in ("A", "B"):
        return "error"
    if r in ("A", "B"):
        return "accurate"
    wrong = {
        "hypoglycaemia": {"uD", "uE"},
        "euglycaemia": {"uE", "lE"},
        "hyperglycaemia": {"lD", "uE", "lE"},
    }[state]
    return "error" if r in wrong else "benign"


def test_error_matrix_every_cell():
    cells = [(s, p, r) for s in range(3) for p in POINT_ZONES for r in RATE_ZONES]
    state = np.array([c[0] for c in cells])
    got = error_class(state, np.array([c[1] for c in cells]), np.array([c[2] for c in cells]))
    for (s, p, r), k in zip(cells, got, strict=True):
        assert CLASSES[k] == _expected_class(STATES[s], p, r), (STATES[s], p, r)


def test_glycaemic_states_at_their_borders():
    assert list(glycaemic_state([70, 70.01, 180, 180.01])) == [0, 1, 1, 2]


def test_cg_ega_counts_states_and_pairs_without_rates():
    ref = np.array([60, 65, 100, 150, 250, 300, 120])
    est = np.array([62, 100, 101, 145, 240, 290, 118])
    ref_rate = np.array([0.0, 0.0, 0.0, 0.0, 3.0, 0.0, np.nan])
    est_rate = np.array([0.0, 0.0, 4.0, 0.5, 0.0, 3.0, 0.0])
    result = cg_ega(ref, est, ref_rate, est_rate)
    # 1: A×A hypo accurate; 2: D hypo error; 3: A×uC eu benign; 4: A×A eu accurate;
    # 5: A×lD hyper error (r 3, s 0); 6: A×uC hyper benign (r 0, s 3); 7: no reference rate
    assert result.without_rate == 1 and result.n == 6
    assert result.point == {"A": 5, "B": 0, "C": 0, "D": 1, "E": 0}
    assert result.rate == {"A": 3, "B": 0, "uC": 2, "lC": 0, "uD": 0, "lD": 1, "uE": 0, "lE": 0}
    assert result.matrix.tolist() == [[1, 0, 1], [1, 1, 0], [0, 1, 1]]
    rows = {row["state"]: row for row in result.states()}
    assert rows["hypoglycaemia"]["error_percent"] == 50.0
    assert rows["all"]["n"] == 6 and rows["all"]["accurate"] == 2
    empty = cg_ega([], [], [], [])
    assert empty.n == 0 and empty.states()[0]["accurate_percent"] is None


def _study(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    start = pd.Timestamp("2024-03-01 08:00")
    for sensor in ("s1", "s2"):
        level = 40 + np.cumsum(rng.normal(0, 20, 30)) + 100
        for i, value in enumerate(np.clip(level, 40, 380)):
            t = start + pd.Timedelta(minutes=15 * i)
            rows.append(
                {
                    "sensor": sensor,
                    "reference_time": t.isoformat(),
                    "sensor_time": (t + pd.Timedelta(seconds=40)).isoformat(),
                    "REF": round(value),
                    "BGM": round(value * rng.normal(1.0, 0.15)),
                }
            )
    return pd.DataFrame(rows)


def test_meter_report_json_has_the_cg_ega_block(tmp_path: Path):
    study = _study(5)
    source = tmp_path / "cgm.csv"
    study.to_csv(source, index=False)
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["meter-report", str(source), "--json", str(out)])
    assert result.exit_code == 0, result.output
    block = json.loads(out.read_text())["cg_ega"]
    # expected: rates by hand (consecutive readings of one sensor, each over its own times)
    by = study["sensor"]
    t_ref = pd.to_datetime(study["reference_time"])
    t_sen = pd.to_datetime(study["sensor_time"])
    ref_rate = study.groupby(by)["REF"].diff() / (t_ref.groupby(by).diff().dt.total_seconds() / 60)
    sen_rate = study.groupby(by)["BGM"].diff() / (t_sen.groupby(by).diff().dt.total_seconds() / 60)
    expected = cg_ega(study["REF"], study["BGM"], ref_rate, sen_rate)
    assert block["pairs"] == expected.n == len(study) - 2
    assert block["pairs_without_rate"] == 2
    assert block["point_zones"] == expected.point
    assert block["rate_zones"] == expected.rate
    states = {row["state"]: row for row in block["states"]}
    for i, name in enumerate(STATES):
        row = states[name]
        assert [row[c] for c in CLASSES] == expected.matrix[i].tolist()
        if row["n"]:
            assert row["accurate_percent"] == pytest.approx(100 * row["accurate"] / row["n"])
    assert states["all"]["n"] == expected.n


def test_meter_report_without_times_has_no_cg_ega(tmp_path: Path):
    source = tmp_path / "bgm.csv"
    source.write_text("BGM,REF\n100,104\n130,120\n200,190\n")
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["meter-report", str(source), "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "cg_ega" not in json.loads(out.read_text())
