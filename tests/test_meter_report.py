"""The meter accuracy report: each definition on hand-built pair sets with known answers."""

from __future__ import annotations

import json
import math
import os
import statistics
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from ranking_core.grids import GLUCOSE_MAX, MISSING_SEG_MESSAGE, SEGTable, load_seg_table
from ranking_core.meter import binomial_lower_bound, meter_report

SIZE = GLUCOSE_MAX + 1


def _pairs(bgm, ref):
    return pd.DataFrame({"BGM": bgm, "REF": ref})


def _zero_table() -> SEGTable:
    return SEGTable(np.zeros((SIZE, SIZE)), "synthetic")


@pytest.fixture(scope="module")
def seg():
    path = os.environ.get("SEG_TABLE")
    if not path:
        pytest.skip("SEG_TABLE is not set (point it at RiskPairData.csv.gz)")
    return load_seg_table(path)


def test_pair_types_and_exclusions():
    # (BGM, REF): <, =, >, REF > 600, BGM > 600, negative, REF and BGM > 600 (counted as REF)
    report = meter_report(
        _pairs([90, 100, 110, 50, 700, -5, 700], [100, 100, 100, 700, 100, 50, 650]), _zero_table()
    )
    table = report.pair_types.set_index("pair_type")["count"]
    assert table.tolist() == [7, 3, 1, 3, 2, 1, 1, 3]
    assert report.pair_types["percent"].iloc[-1] == pytest.approx(300 / 7)
    assert report.iso_ranges["count"].sum() == 3 and report.zones["clarke"]["count"].sum() == 3
    assert report.pairs["included"].tolist() == [True, True, True, False, False, False, False]
    assert any("REF > 600 mg/dL" in m and "rows 3, 6" in m for m in report.messages)


def test_bias_mard_cv_and_limits_leave_out_ref_zero():
    report = meter_report(_pairs([110, 180, 60, 10], [100, 200, 50, 0]), _zero_table())
    rel = [0.1, -0.1, 0.2]
    sd = statistics.stdev(rel)
    row = report.accuracy.iloc[0]
    assert row["n"] == 3 and row["ref_zero_left_out"] == 1
    assert row["bias_percent"] == pytest.approx(100 * 0.2 / 3)
    assert row["mard_percent"] == pytest.approx(100 * 0.4 / 3)
    assert row["cv_percent"] == pytest.approx(100 * sd)
    assert row["loa_lower_percent"] == pytest.approx(100 * (0.2 / 3 - 1.96 * sd))
    assert row["loa_upper_percent"] == pytest.approx(100 * (0.2 / 3 + 1.96 * sd))
    assert any("REF = 0" in m for m in report.messages)
    # REF = 0 still counts elsewhere: ISO differences 10 %, 10 %, 10 mg/dL and |10 - 0| mg/dL
    assert report.binomial["n"].iloc[0] == 4
    assert report.iso_ranges["count"].tolist() == [0, 4, 0, 0, 0]


def test_risk_grades_and_categories_at_exact_boundaries():
    values = [
        0.5,
        0.50001,
        1.5,
        1.50001,
        2.5,
        3.5,
        3.50001,
        0.49999,
        1.0,
        1.00001,
        2.0,
        3.0,
        -1.0,
        0.0,
    ]
    signed = np.zeros((SIZE, SIZE))
    signed[300, : len(values)] = values
    report = meter_report(_pairs(np.arange(len(values)), 300), SEGTable(signed))
    grades = report.pairs["risk_grade"].tolist()
    assert "".join(grades) == "BBCCDEEABBCDBA"
    categories = report.pairs["risk_category"].tolist()
    assert categories == [
        "None",
        "Slight, lower",
        "Slight, higher",
        "Moderate, lower",
        "Moderate, higher",
        "Severe, higher",
        "Extreme",
        "None",
        "Slight, lower",
        "Slight, higher",
        "Moderate, lower",
        "Severe, lower",
        "Slight, lower",
        "None",
    ]
    assert report.risk_grades["count"].tolist() == [2, 5, 3, 2, 2]
    assert report.risk_categories["count"].tolist() == [3, 3, 2, 2, 1, 1, 1, 1]
    assert report.risk_categories["percent"].sum() == pytest.approx(100)


def test_real_seg_pairs_with_risk_exactly_1_2_3(seg):
    ref, bgm = [69, 50, 60], [21, 100, 221]
    assert seg.risk(ref, bgm).tolist() == [1.0, 2.0, 3.0]
    report = meter_report(_pairs(bgm, ref), seg)
    assert report.pairs["risk_grade"].tolist() == ["B", "C", "D"]
    assert report.pairs["risk_category"].tolist() == [
        "Slight, lower",
        "Moderate, lower",
        "Severe, lower",
    ]


def test_iso_ranges_at_ref_100_and_band_edges():
    # (REF, BGM) -> band id: mg/dL below REF 100, percent from REF 100 on
    cases = [
        (100, 115, 3),
        (99, 114, 3),
        (99, 115, 4),
        (100, 105, 1),
        (200, 210, 1),
        (200, 211, 2),
        (200, 240, 4),
        (200, 241, 5),
        (50, 71, 5),
        (100, 85, 3),
        (0, 5, 1),
        (100, 121, 5),
        (99, 120, 5),
        (99, 119, 4),
    ]
    ref, bgm, band = np.array(cases).T
    report = meter_report(_pairs(bgm, ref), None)
    assert report.iso_ranges["count"].tolist() == np.bincount(band, minlength=6)[1:].tolist()
    compliant = int((band <= 3).sum())
    assert report.binomial["compliant"].iloc[0] == compliant == 7


def _qbinom_exact(n: int) -> int:
    """Smallest k with P(X ≤ k) ≥ 0.05 for X ~ Binomial(n, 0.95), in exact rational arithmetic."""
    p, total = Fraction(95, 100), Fraction(0)
    for k in range(n + 1):
        total += math.comb(n, k) * p**k * (1 - p) ** (n - k)
        if total >= Fraction(5, 100):
            return k
    raise AssertionError


@pytest.mark.parametrize("n", [1, 2, 10, 19, 20, 50, 100, 350, 1000])
def test_binomial_bound_matches_scipy_and_exact_quantile(n):
    # R's qbinom, except that one pair needs one compliant pair (the quantile there is 0)
    assert (
        binomial_lower_bound(n) == max(1, int(binom.ppf(0.05, n, 0.95))) == max(1, _qbinom_exact(n))
    )


def test_binomial_meets_exactly_at_the_bound():
    n = 100
    bound = _qbinom_exact(n)  # 91
    for compliant, meets in ((bound, True), (bound - 1, False)):
        bgm = np.r_[np.full(compliant, 115), np.full(n - compliant, 116)]  # 15 % vs 16 %
        result = meter_report(_pairs(bgm, 100), None).binomial.iloc[0]
        assert result["lower_bound"] == bound and result["compliant"] == compliant
        assert bool(result["meets"]) is meets
        assert result["lower_bound_percent"] == pytest.approx(bound)


def test_clarke_and_parkes_zone_counts():
    clarke = [
        (100, 121),
        (50, 65),
        (50, 75),
        (60, 180),
        (100, 250),
        (150, 40),
        (300, 150),
        (400, 100),
        (200, 60),
    ]  # Clarke worked examples: B A D E C B D D E
    ref, bgm = np.array(clarke).T
    report = meter_report(_pairs(bgm, ref), None)
    assert report.zones["clarke"]["count"].tolist() == [1, 2, 1, 3, 2]
    assert report.zones["clarke"]["percent"].tolist() == pytest.approx(
        [100 * c / 9 for c in [1, 2, 1, 3, 2]]
    )
    # Parkes type 1: A; just above B, C, D upper lines; E corner
    ref, bgm = np.array([(100, 100), (15, 51), (40, 71), (65, 171), (0, 600)]).T
    report = meter_report(_pairs(bgm, ref), None, parkes_type=1)
    assert report.zones["parkes"]["count"].tolist() == [1, 1, 1, 1, 1]
    # type 2 at (420, 110): lower D line bends at (410, 110) -> D; type 1 -> C
    for kind, zone in ((1, "C"), (2, "D")):
        report = meter_report(_pairs([110], [420]), None, parkes_type=kind)
        assert report.zones["parkes"].set_index("zone").loc[zone, "count"] == 1


def test_learned_grid_categories():
    learned = np.zeros((SIZE, SIZE))
    learned[100, 100:104] = [0.5, 0.6, -2.0, 3.9]
    report = meter_report(_pairs([100, 101, 102, 103], 100), None, learned_risk=learned)
    assert report.learned_categories["count"].tolist() == [1, 1, 0, 1, 0, 0, 0, 1]
    with pytest.raises(ValueError, match="601"):
        meter_report(_pairs([100], [100]), None, learned_risk=np.zeros((10, 10)))


def test_without_seg_table_reports_the_rest_and_says_how_to_provide_it():
    report = meter_report(_pairs([110, 120], [100, 100]), None)
    assert report.risk_grades is None and report.risk_categories is None
    assert MISSING_SEG_MESSAGE in report.messages
    data = json.loads(json.dumps(report.to_dict()))
    assert data["seg_table_used"] is False and "risk_grades" not in data
    assert data["pair_types"][0] == {"pair_type": "Total", "count": 2, "percent": 100.0}
    assert set(data) >= {"accuracy", "iso_ranges", "binomial", "clarke", "parkes", "messages"}


def test_to_dict_holds_every_table(seg):
    report = meter_report(
        _pairs([110, 700, 40], [100, 100, 0]), seg, learned_risk=np.zeros((SIZE, SIZE))
    )
    data = json.loads(json.dumps(report.to_dict()))
    tables = report.tables()
    for view in report.views():
        assert set(view.json) <= set(data)
        for name in {t.name for t in view.tables if t.data}:
            if name not in view.json:  # a reader's table of a JSON of its own shape
                continue
            table = tables[name]
            assert [r.get("count") for r in data[name]] == (
                table["count"].tolist() if "count" in table else [None] * len(table)
            )
    assert "method_comparison" in data and "bland_altman_limits" in tables
    assert data["accuracy"][0]["ref_zero_left_out"] == 1


def test_random_pairs_against_a_plain_python_count():
    """Every count recomputed pair by pair with explicit comparisons (no NumPy binning)."""
    rng = np.random.default_rng(3)
    ref = rng.integers(-5, 640, 400)
    bgm = rng.integers(-5, 640, 400)
    risk = np.round(rng.uniform(-4, 4, (SIZE, SIZE)) * 4) / 4  # many values exactly on edges
    report = meter_report(_pairs(bgm, ref), SEGTable(risk))
    grades = dict.fromkeys("ABCDE", 0)
    categories = [0] * 8
    iso = [0] * 5
    included = 0
    for r, b in zip(ref.tolist(), bgm.tolist(), strict=True):
        if r > 600 or b > 600 or r < 0 or b < 0:
            continue
        included += 1
        a = abs(risk[r, b])
        grade = "A" if a < 0.5 else "B" if a < 1.5 else "C" if a < 2.5 else "D" if a < 3.5 else "E"
        grades[grade] += 1
        categories[
            next((i for i, top in enumerate([0.5, 1, 1.5, 2, 2.5, 3, 3.5]) if a <= top), 7)
        ] += 1
        d = abs(b - r) if r < 100 else 100 * abs(b - r) / r
        iso[next((i for i, top in enumerate([5, 10, 15, 20]) if d <= top), 4)] += 1
    assert report.pair_types["count"].iloc[-1] == included
    assert report.risk_grades["count"].tolist() == list(grades.values())
    assert report.risk_categories["count"].tolist() == categories
    assert report.iso_ranges["count"].tolist() == iso
    assert report.binomial["compliant"].iloc[0] == sum(iso[:3])


def test_dts_zone_counts_and_json_key():
    # (REF, BGM): A on the diagonal; just past the B, C, D and E borders of Klonoff et al. 2024
    ref, bgm = np.array([(100, 100), (40, 61), (40, 87), (40, 125), (40, 180), (240, 0)]).T
    report = meter_report(_pairs(bgm, ref), None)
    assert report.zones["dts"]["count"].tolist() == [1, 1, 1, 1, 2]
    assert report.pairs["dts"].tolist() == list("ABCDEE")
    data = json.loads(json.dumps(report.to_dict()))
    assert [r["count"] for r in data["dts"]] == [1, 1, 1, 1, 2]
    assert data["grids"]["dts"]["title"] == "DTS Error Grid" and data["unit"] == "mg/dL"
    assert report.titles()["parkes"] == "Parkes Error Grid, type 1: zones"


def test_per_pair_categories_read_back_as_text_with_their_number():
    """pandas' default missing-value texts ("None", "NA", "null", …) never label a category;
    excluded pairs have empty cells; each pair's category is the one of its risk, by hand."""
    import io

    from pandas._libs.parsers import STR_NA_VALUES

    from ranking_core.grids.risk_scale import RISK_CATEGORIES, RISK_CATEGORY_FILE_LABELS
    from ranking_core.meter.documents.export import pair_results, safe_csv

    assert not set(RISK_CATEGORY_FILE_LABELS) & set(STR_NA_VALUES)
    assert RISK_CATEGORY_FILE_LABELS[1:] == RISK_CATEGORIES[1:]
    # risk = |REF − BGM| / 100 on this table: 0, 0.5, 0.51, 1.2, 3.6 and a pair left out
    table = SEGTable(np.abs(np.subtract.outer(np.arange(SIZE), np.arange(SIZE))) / 100.0, "toy")
    bgm, ref = [100, 150, 151, 220, 460, 700], [100, 100, 100, 100, 100, 100]
    report = meter_report(_pairs(bgm, ref), table)
    read = pd.read_csv(io.StringIO(safe_csv(pair_results(report))))
    assert read["seg_risk_category"].tolist()[:5] == [
        "No risk",  # 0: [0, 0.5]
        "No risk",  # 0.5: the upper bound is inside
        "Slight, lower",  # 0.51
        "Slight, higher",  # 1.2
        "Extreme",  # 3.6 > 3.5
    ]
    assert read["seg_risk_category_id"].tolist()[:5] == [0, 0, 1, 2, 7]
    assert read["included"].tolist() == [True] * 5 + [False]
    left_out = read.iloc[5]
    assert pd.isna(left_out["seg_risk_category"]) and pd.isna(left_out["seg_risk_category_id"])
    assert read["seg_risk_category"].iloc[:5].notna().all()  # no pair of no risk read as missing


def test_provenance_and_every_number_in_the_json_are_numbers(tmp_path):
    from ranking_core.meter.pairs.readings import read_pairs

    path = tmp_path / "pairs.csv"
    rows = "".join(f"{100 + i},{100 + 2 * i}\n" for i in range(1200))
    path.write_text("BGM,REF\n" + rows + "x,1\n")
    report = meter_report(read_pairs(path), None, provenance={"learned grid λ": 0.25})
    data = json.loads(json.dumps(report.to_dict()))
    assert data["provenance"]["pairs read"] == 1201 and data["provenance"]["pairs refused"] == 1
    assert data["provenance"]["learned grid λ"] == 0.25

    def strings(value):
        if isinstance(value, dict):
            return [s for v in value.values() for s in strings(v)]
        if isinstance(value, list):
            return [s for v in value for s in strings(v)]
        return [value] if isinstance(value, str) else []

    number = __import__("re").compile(r"[-+−]?[\d,]*\d(\.\d+)?\s*%?")
    formatted = [s for s in strings(data) if number.fullmatch(s.strip())]
    assert set(formatted) <= {"1", "2"}  # ISO 15197 criterion ids, names not numbers
