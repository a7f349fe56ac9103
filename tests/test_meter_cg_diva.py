"""CG-DIVA (ranking_core.meter.cgm.cg_diva) against a plain re-implementation of the published
method written here with loops (Eichenlaub et al., J Diabetes Sci Technol 2022; the IfDTUlm
reference code): the same seeded resamples of sensors, quantiles of the resampled pairs taken one
resample
at a time, the jackknife one sensor at a time and the BCa formula with the standard library's
normal distribution. Then the report's wiring (JSON, tables, notes) and the figure."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from ranking_core.meter.cgm.cg_diva import (
    CG_DIVA_RANGES,
    INNER_SIZES,
    OUTER_SIZES,
    cg_diva,
    cg_diva_notes,
    deviations,
    resampled_quantiles,
)
from ranking_core.meter.drawing.grid_plots import cg_diva_plot, figure_png
from ranking_core.meter.report import meter_report

JSON_KEYS = {
    "range",
    "median",
    "di1_lower",
    "di1_upper",
    "di2_lower",
    "di2_upper",
    "between_sensor_min",
    "between_sensor_max",
    "within_sensor_90",
}


def _synthetic(
    sensors: int = 9, per_sensor: int = 60, seed: int = 7, numbered: bool = False
) -> pd.DataFrame:
    """Pairs of sensors with their own bias and noise, comparator from 40 to 350 mg/dL; sensor
    ids "S00", "S01", … or, ``numbered``, the numbers 1, 2, …"""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(sensors):
        comp = rng.uniform(40, 350, per_sensor)
        bias, noise = rng.normal(0, 6), rng.uniform(4, 14)
        cgm = comp * (1 + (bias + rng.normal(0, noise, per_sensor)) / 100) + rng.normal(0, 4)
        name: object = s + 1 if numbered else f"S{s:02d}"
        rows += [(name, c, max(g, 5.0)) for c, g in zip(comp, cgm, strict=True)]
    return pd.DataFrame(rows, columns=["sensor", "comp", "cgm"])


def _plain_cg_diva(frame: pd.DataFrame, resamples: int, seed: int) -> list[dict]:
    """The method written out: loops over resamples, ranges, sensors."""
    per_range: list[dict[str, list[float]]] = [{}, {}, {}, {}]
    for s, c, g in frame[["sensor", "comp", "cgm"]].itertuples(index=False):
        rel = (g - c) / c * 100
        r = 0 if c < 70 else (1 if c <= 180 else 2)
        per_range[r].setdefault(s, []).append(g - c if c < 70 else rel)
        per_range[3].setdefault(s, []).append(rel)
    sensors = sorted(set(frame["sensor"]))
    qs = []
    for r in range(4):
        q = [(1 - INNER_SIZES[r]) / 2, (1 + INNER_SIZES[r]) / 2]
        outer = OUTER_SIZES[r]
        if outer is not None:
            q += [(1 - outer) / 2, (1 + outer) / 2]
        qs.append(q)
    boot: list[list[list[float]]] = [[[] for _ in qs[r]] for r in range(4)]
    rng = np.random.RandomState(seed)
    for _ in range(resamples):
        chosen = rng.choice(np.array(sensors), size=len(sensors), replace=True)
        for r in range(4):
            pooled = [v for s in chosen for v in per_range[r].get(s, [])]
            for j, q in enumerate(qs[r]):
                boot[r][j].append(float(np.quantile(pooled, q)) if pooled else math.nan)
    normal = NormalDist()
    out = []
    for r in range(4):
        values = [v for s in sorted(per_range[r]) for v in per_range[r][s]]
        limits = []
        for j, q in enumerate(qs[r]):
            estimate = float(np.quantile(values, q))
            jack = []
            for left_out in sorted(per_range[r]):
                rest = [v for s in sorted(per_range[r]) if s != left_out for v in per_range[r][s]]
                jack.append(float(np.quantile(rest, q)))
            mean = sum(jack) / len(jack)
            u = [mean - x for x in jack]
            a = sum(x**3 for x in u) / (6 * sum(x**2 for x in u) ** 1.5)
            level = 0.025 if j % 2 == 0 else 0.975
            data = [x for x in boot[r][j] if not math.isnan(x)]
            if min(data) >= estimate or max(data) <= estimate:
                limits.append(float(np.quantile(data, level)))
                continue
            z0 = normal.inv_cdf(sum(x < estimate for x in data) / len(data))
            z = z0 + normal.inv_cdf(level)
            limits.append(float(np.quantile(data, normal.cdf(z0 + z / (1 - a * z)))))
        medians, spreads = [], []
        for s in per_range[r]:
            dev = per_range[r][s]
            if len(dev) >= 3:
                medians.append(float(np.median(dev)))
            if len(dev) >= 10:
                spreads.append(float(np.quantile(dev, 0.95) - np.quantile(dev, 0.05)))
        out.append(
            {
                "median": float(np.median(values)),
                "di1_lower": limits[0],
                "di1_upper": limits[1],
                "di2_lower": limits[2] if len(limits) > 2 else None,
                "di2_upper": limits[3] if len(limits) > 2 else None,
                "between_sensor_min": min(medians),
                "between_sensor_max": max(medians),
                "within_sensor_90": float(np.median(spreads)),
            }
        )
    return out


@pytest.mark.parametrize(("seed", "numbered"), [(1, False), (20260101, False), (5, True)])
def test_cg_diva_equals_the_method_written_out_with_loops(seed: int, numbered: bool) -> None:
    # numbered: 12 sensors 1 … 12, resampled in numeric order (2 before 10) as pandas sorts them
    frame = _synthetic(sensors=12 if numbered else 9, numbered=numbered)
    ours = cg_diva(frame["comp"], frame["cgm"], frame["sensor"], resamples=150, seed=seed)
    plain = _plain_cg_diva(frame, resamples=150, seed=seed)
    assert [r.range for r in ours] == list(CG_DIVA_RANGES)
    for mine, theirs in zip(ours, plain, strict=True):
        for key, expected in theirs.items():
            value = getattr(mine, key)
            if expected is None:
                assert value is None, key
            else:
                assert value == pytest.approx(expected, abs=1e-9), (mine.range, key)


def test_resampled_quantiles_equal_numpy_on_the_repeated_pairs() -> None:
    rng = np.random.default_rng(3)
    values = rng.normal(size=200).round(1)  # ties on purpose
    cluster = rng.integers(0, 12, size=200)
    counts = rng.integers(0, 3, size=(40, 12))
    counts[5] = 0  # a resample without pairs
    q = [0.0, 0.01, 0.075, 0.5, 0.925, 0.995, 1.0]
    got = resampled_quantiles(values, cluster, counts, q)
    for b in range(counts.shape[0]):
        pooled = np.concatenate([np.repeat(values[cluster == c], counts[b, c]) for c in range(12)])
        if pooled.size == 0:
            assert np.isnan(got[b]).all()
        else:
            np.testing.assert_allclose(got[b], np.quantile(pooled, q), rtol=0, atol=1e-12)


def test_deviation_units_and_range_edges_follow_the_comparator() -> None:
    comp = np.array([69.9, 70.0, 180.0, 180.5, 50.0])
    cgm = np.array([79.9, 77.0, 171.0, 180.5, 200.0])
    index, dev, rel = deviations(comp, cgm)
    assert index.tolist() == [0, 1, 1, 2, 0]  # by the comparator, not the CGM value
    np.testing.assert_allclose(dev, [10.0, 10.0, -5.0, 0.0, 150.0])  # mg/dL below 70, else %
    np.testing.assert_allclose(rel[[0, 4]], [100 * 10 / 69.9, 300.0])


def test_cg_diva_refuses_bad_input_with_a_sentence() -> None:
    with pytest.raises(ValueError, match="one length"):
        cg_diva([100.0, 120.0], [100.0], ["a", "b"])
    with pytest.raises(ValueError, match="comp must be positive"):
        cg_diva([0.0], [100.0], ["a"])
    with pytest.raises(ValueError, match="resamples must be 1 to"):
        cg_diva([100.0], [100.0], ["a"], resamples=0)
    with pytest.raises(ValueError, match="one sensor per pair"):
        cg_diva([100.0, 90.0], [100.0, 95.0], ["a"])


def test_meter_report_carries_cg_diva_for_pairs_with_sensors() -> None:
    frame = _synthetic(sensors=6, per_sensor=40)
    pairs = pd.DataFrame({"REF": frame["comp"], "BGM": frame["cgm"], "sensor": frame["sensor"]})
    report = meter_report(pairs, None)
    assert report.cg_diva is not None and len(report.cg_diva) == 4
    entries = report.to_dict()["cg_diva"]
    assert [e["range"] for e in entries] == list(CG_DIVA_RANGES)
    assert all(JSON_KEYS <= set(e) for e in entries)
    assert entries[3]["di2_lower"] is None and entries[0]["unit"] == "mg/dL"
    assert "cg_diva" in report.tables()
    # the report's numbers are those of the values as measured, with 10,000 resamples, seed 1
    direct = cg_diva(frame["comp"], frame["cgm"], frame["sensor"])
    assert entries[1]["di1_lower"] == pytest.approx(direct[1].di1_lower, abs=1e-12)
    # the <70 range has fewer than 100 pairs here: the report says so
    assert any("CG-DIVA range <70" in m and "fewer than the 100" in m for m in report.messages)
    plain = meter_report(pairs.drop(columns="sensor"), None)
    assert plain.cg_diva is None and "cg_diva" not in plain.to_dict()


def test_subject_column_is_resampled_when_there_is_no_sensor() -> None:
    frame = _synthetic(sensors=5, per_sensor=30)
    pairs = pd.DataFrame({"REF": frame["comp"], "BGM": frame["cgm"], "subject": frame["sensor"]})
    report = meter_report(pairs, None)
    assert report.cg_diva is not None and report.cg_diva[3].sensors == 5


def test_notes_name_each_range_short_of_pairs() -> None:
    frame = _synthetic(sensors=4, per_sensor=30)
    notes = cg_diva_notes(cg_diva(frame["comp"], frame["cgm"], frame["sensor"], resamples=50))
    # 120 pairs in total: only the three comparator ranges are short of 100
    assert len(notes) == 3 and notes[0].startswith("CG-DIVA range <70:")
    assert not any("range total" in n for n in notes)


def test_figure_draws_both_intervals_of_three_ranges_and_the_inner_of_total() -> None:
    frame = _synthetic()
    fig = cg_diva_plot(cg_diva(frame["comp"], frame["cgm"], frame["sensor"], resamples=50))
    assert isinstance(fig, Figure)
    boxes = [p for p in fig.axes[0].patches if p.get_width() == 0.5]
    assert len(boxes) == 7
    assert figure_png(fig, dpi=40).startswith(b"\x89PNG")


def test_too_many_sensors_leave_cg_diva_out_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    import ranking_core.meter.standards.verdicts as verdicts

    monkeypatch.setattr(verdicts, "CG_DIVA_MAX_SENSORS", 3)
    frame = _synthetic(sensors=4, per_sensor=10)
    pairs = pd.DataFrame({"REF": frame["comp"], "BGM": frame["cgm"], "sensor": frame["sensor"]})
    report = meter_report(pairs, None)
    assert report.cg_diva is None and "cg_diva" not in report.to_dict()
    assert any(m.startswith("CG-DIVA left out: 4 sensors and 40 pairs") for m in report.messages)
