"""riskgrid against public test vectors ($RISKGRID_CONFORMANCE; tests/conftest.py points it at
../shared/data/conformance): the IfDTUlm iCGM bounds, the R package ega's zone counts and the SEG
app's example reports, with every known difference checked pair by pair; and docs/CONFORMANCE.md
equal to what `riskgrid conformance` writes. Skipped, with the reason, without the data."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.conformance import ConformanceDataError, compare_all, left_out_vectors
from ranking_core.conformance.cg_diva import compare_cg_diva, published_results
from ranking_core.conformance.cg_ega import compare_cg_ega, read_example
from ranking_core.conformance.ctca import PUBLISHED as PUBLISHED_CTCA
from ranking_core.conformance.ctca import compare_ctca
from ranking_core.conformance.dgr import compare_dgr, read_dgr_data
from ranking_core.conformance.ega import PUBLISHED_ZONES, differing_pairs, vignette_zones
from ranking_core.conformance.ifdtulm import CELL_CRITERIA, compare_ifdtulm
from ranking_core.conformance.seg_app import PUBLISHED, report_numbers
from ranking_core.grids.registry import get_grid
from ranking_core.meter.standards.bounds import lower_bound

runner = CliRunner()
DOC = Path(__file__).resolve().parents[1] / "docs" / "CONFORMANCE.md"


@pytest.fixture(scope="module")
def vectors() -> Path:
    value = os.environ.get("RISKGRID_CONFORMANCE")
    if not value or not Path(value).is_dir():
        pytest.skip("RISKGRID_CONFORMANCE is not set to the conformance folder (../shared/data)")
    return Path(value)


@pytest.fixture(scope="module")
def seg_table() -> str:
    value = os.environ.get("SEG_TABLE")
    if not value:
        pytest.skip("SEG_TABLE is not set (point it at RiskPairData.csv.gz)")
    return value


# -- ifdtulm-ci ---------------------------------------------------------------------------------


def _reference_cells(data: pd.DataFrame) -> dict[tuple[str, int], tuple[np.ndarray, np.ndarray]]:
    """The vector README's rule, written out here: ranges by CGM, ±xx mg/dL below CGM 70 and
    ±xx % otherwise (Total: ±xx % everywhere), "within" is ≤."""
    cgm, comp = data["CGM"].to_numpy(), data["Comp"].to_numpy()
    relative = np.abs((cgm - comp) / comp * 100)
    absolute = np.abs(cgm - comp)
    ranges = {
        "<70": cgm < 70,
        "70-180": (cgm >= 70) & (cgm <= 180),
        ">180": cgm > 180,
        "Total": np.ones(cgm.size, bool),
    }
    cells = {}
    for name, scope in ranges.items():
        for limit in (15, 20, 40):
            diff = relative if name == "Total" else np.where(cgm < 70, absolute, relative)
            cells[name, limit] = (scope, diff <= limit)
    return cells


def test_ifdtulm_rates_and_bounds_match_the_reference(vectors: Path) -> None:
    folder = vectors / "ifdtulm-ci"
    data = pd.read_csv(folder / "Test_Data.csv")
    python = pd.read_csv(folder / "CI_Results_Python.csv").set_index("Range")
    r_results = pd.read_csv(folder / "CI_Results_R.csv").set_index("Range")
    sensor = data["SensorID"].to_numpy()
    for (name, limit), (scope, hit) in _reference_cells(data).items():
        h, s = hit[scope], sensor[scope]
        k, n = int(h.sum()), int(h.size)
        assert 100 * k / n == pytest.approx(python.at[name, f"AR{limit}"], abs=1e-9)
        cp = lower_bound("cp", h)
        assert cp.lower_percent == pytest.approx(python.at[name, f"CP_CI{limit}"], abs=1e-4)
        statsmodels_cp = 100 * proportion_confint(k, n, alpha=0.10, method="beta")[0]
        assert cp.lower_percent == pytest.approx(statsmodels_cp, abs=1e-9)
        wcc = lower_bound("wilson-cc", h, s)
        assert wcc.lower_percent == pytest.approx(python.at[name, f"WCC_CI{limit}"], abs=1e-4)
        assert wcc.icc == pytest.approx(python.at[name, f"WCC_ICC{limit}"], abs=1e-9)
        bca = lower_bound("bootstrap", h, s, resamples=10_000, seed=1).lower_percent
        for frame in (python, r_results):
            assert abs(bca - frame.at[name, f"BCa_CI{limit}"]) < 0.75, (name, limit)


def test_ifdtulm_rows_agree_and_the_icgm_cells_come_from_the_acceptance_profile(
    vectors: Path,
) -> None:
    rows = compare_ifdtulm(vectors / "ifdtulm-ci")
    assert rows and all(row.status == "agrees" for row in rows), [
        row for row in rows if row.status != "agrees"
    ]
    # 12 cells x (rate, CP, Wilson, ICC, BCa against Python and R), then the README's 7 facts
    assert len(rows) == 12 * 6 + 7
    labelled = {row.statistic.split(":")[0] for row in rows if "(iCGM" in row.statistic}
    assert len(labelled) == len(CELL_CRITERIA) == 7
    facts = {row.statistic: row.ours for row in rows if row.source == "the vector's README"}
    assert facts["criterion A inside 40–400 mg/dL: pairs within ±15 mg/dL"] == 298
    assert facts["criterion A inside 40–400 mg/dL: pairs in range"] == 335
    assert facts["criterion H: pairs with CGM < 70 and comparator > 180"] == 1
    assert facts["criterion H: pairs with CGM < 70"] == 374


# -- ega ----------------------------------------------------------------------------------------


def _glucose(vectors: Path) -> tuple[np.ndarray, np.ndarray]:
    frame = pd.read_csv(vectors / "ega" / "glucose_data.csv")
    return frame["ref"].to_numpy(float), frame["test"].to_numpy(float)


# the vector's README: our counts, and the pairs that differ from the vignette and why
CORRECTED = {"clarke": (3657, 1166, 53, 180, 16), "parkes-type1": (3913, 947, 163, 47, 2)}
CLARKE_20_HIGH = [(155, 186), (360, 432), (95, 114), (90, 108), (105, 126)]
PARKES_AB_BORDER = [
    (168, 212),
    (198, 257),
    (107, 134),
    (107, 134),
    (85, 110),
    (174, 221),
    (144, 176),
]
PARKES_BC_BORDER = [(47, 77), (44, 74), (58, 92)]
PARKES_VERTEX = [(541, 147)]


def test_ega_zone_counts_are_the_corrected_ones(vectors: Path) -> None:
    ref, test = _glucose(vectors)
    assert ref.size == 5072
    for grid, corrected in CORRECTED.items():
        counts = np.bincount(get_grid(grid).zone_index(ref, test), minlength=5)
        assert tuple(counts) == corrected, grid


def test_ega_differences_are_exactly_the_listed_pairs(vectors: Path) -> None:
    ref, test = _glucose(vectors)
    clarke = list(differing_pairs("clarke", ref, test).values())
    assert [sorted(p) for p in clarke] == [sorted(CLARKE_20_HIGH)]
    parkes = differing_pairs("parkes-type1", ref, test)
    by_cause = {cause.split(":")[0]: sorted(pairs) for cause, pairs in parkes.items()}
    assert by_cause == {
        "on the upper A/B border": sorted(PARKES_AB_BORDER),
        "on the upper B/C border": sorted(PARKES_BC_BORDER),
        "in ega's lower D polygon, which uses the type-2 vertex (410, 110)": PARKES_VERTEX,
    }
    # with exactly those pairs where ega has them, the vignette's counts come back
    for grid, published in PUBLISHED_ZONES.items():
        ours, theirs, causes = vignette_zones(grid, ref, test)
        moved = np.logical_or.reduce(list(causes.values()))
        assert np.array_equal(ours != theirs, moved)
        assert tuple(np.bincount(theirs, minlength=5)) == published
    # the vertex pair: C by the published type-1 grid, as the README says
    assert get_grid("parkes-type1").zone_index([541.0], [147.0])[0] == 2


# -- seg-app ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(PUBLISHED))
def test_seg_app_examples_through_the_command_line(
    name: str, vectors: Path, seg_table: str, tmp_path: Path
) -> None:
    out = tmp_path / "out.json"
    result = runner.invoke(
        app,
        [
            "meter-report",
            str(vectors / "seg-app" / name),
            "--seg-table",
            seg_table,
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    ours = report_numbers(json.loads(out.read_text()))
    published = PUBLISHED[name]
    for statistic, (expected, _, tolerance) in published.items():
        if statistic == "pairs included" and name == "No_Interference_Dogs.csv":
            continue  # below: the app's own tables count fewer pairs than its pair-type table
        assert abs(ours[statistic] - expected) <= tolerance + 1e-9, statistic
    if name == "No_Interference_Dogs.csv":
        levels = sum(v[0] for k, v in published.items() if k.startswith("risk level"))
        assert levels == 181 == ours["pairs included"]
        assert (
            published["pairs included"][0]
            == 184
            == levels + ours["pairs excluded, BGM > 600 mg/dL"]
        )


# -- cg-diva (optional: only when the data folder has it) ---------------------------------------


def test_cg_diva_matches_the_reference_python_exactly_and_r_within_monte_carlo(
    vectors: Path,
) -> None:
    folder = vectors / "cg-diva"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent (the CG-DIVA test data and results of IfDTUlm)")
    rows = compare_cg_diva(folder)
    assert len(rows) == 2 * (4 * 9 - 2)  # 9 numbers per range, no outer interval for total
    assert all(row.agrees for row in rows), [r for r in rows if not r.agrees]
    python = [r for r in rows if "Python" in r.source and "smallest" not in r.statistic]
    python = [r for r in python if "largest" not in r.statistic]
    # their Python draws the same resamples from the same seed: the same numbers
    assert max(abs(r.difference) for r in python) < 1e-9


def test_cg_diva_results_reader_takes_the_r_files_stray_quote_apart(tmp_path: Path) -> None:
    header = (
        '"Range","Median","DI1_Upper","DI1_Lower","DI1_Range","DI2_Upper","DI2_Lower",'
        '"DI2_Range","BSV_Min_Max","BSV_Range","WSV_90%Range","Info"'
    )
    body = [
        f'"{r}",1.5,10,-10,20,"30","-30",60,"[-2.00 - 3.50]",5.5,20,"x"'
        for r in ("<70", "70-180", ">180")
    ]
    body.append('"Total",0.5,12,-12,24,"-","-","-,"[-1.25 - 2.75]",4,22,NA')
    path = tmp_path / "CG-DIVA_R.csv"
    path.write_text("\n".join([header, *body]) + "\n")
    results = published_results(path)
    assert results["Total"] == {
        "Median": 0.5,
        "DI1_Lower": -12.0,
        "DI1_Upper": 12.0,
        "BSV_Range": 4.0,
        "WSV_90%Range": 22.0,
        "BSV_Min": -1.25,
        "BSV_Max": 2.75,
    }
    assert results["<70"]["DI2_Lower"] == -30.0
    path.write_text("\n".join([header, *body[:3], body[3].replace("[-1.25", "(-1.25")]) + "\n")
    with pytest.raises(ConformanceDataError, match="line 5: 11 cells"):
        published_results(path)


def test_absent_optional_folders_are_left_out_with_a_sentence(tmp_path: Path) -> None:
    assert left_out_vectors(tmp_path).endswith("folder: cg-diva, ctca, cg-ega, dgr.")
    assert compare_all(tmp_path, vectors=("cg-diva", "ctca", "cg-ega", "dgr")) == {}
    (tmp_path / "cg-diva").mkdir()
    assert left_out_vectors(tmp_path).endswith("folder: ctca, cg-ega, dgr.")
    (tmp_path / "ctca").mkdir()
    (tmp_path / "cg-ega").mkdir()
    (tmp_path / "dgr").mkdir()
    assert left_out_vectors(tmp_path) == ""
    with pytest.raises(ConformanceDataError, match=r"Test_Data\.csv: missing"):
        compare_all(tmp_path, vectors=("cg-diva",))


def test_ctca_matches_their_published_figure(vectors: Path) -> None:
    folder = vectors / "ctca"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent (the trend concurrence test data of IfDTUlm)")
    rows = compare_ctca(folder)
    assert all(row.agrees for row in rows), [r for r in rows if not r.agrees]
    assert rows[0].ours == 0.0  # every comparator category as theirs, edges included
    assert len(rows) == 1 + 7 * 8 + len(PUBLISHED_CTCA)


# -- dgr (optional) ------------------------------------------------------------------------------


def test_dgr_counts_equal_their_codes(vectors: Path) -> None:
    folder = vectors / "dgr"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent (the DGR test data of IfDTUlm)")
    rows = compare_dgr(folder)
    assert all(row.agrees for row in rows), [r for r in rows if not r.agrees]
    assert len(rows) == 2 * 6 + 2


def test_dgr_reader_names_the_line_of_a_bad_value(tmp_path: Path) -> None:
    folder = tmp_path / "dgr"
    folder.mkdir()
    (folder / "Test_Data.csv").write_text("BG,ROC\n100,0.5\n120,abc\n")
    with pytest.raises(ConformanceDataError, match="line 3: ROC must be a number"):
        read_dgr_data(folder)


# -- cg-ega (optional) ---------------------------------------------------------------------------


def test_cg_ega_matches_the_reference_examples_published_shares(vectors: Path) -> None:
    """dotXem/CG-EGA's README: AP, BE, EP = 205, 31, 9 of 245 pairs. Ours equal for accurate
    readings; 2 hyperglycaemic lD pairs move from benign to erroneous (the published matrix),
    and with those 2 counted as their filters count them all three are theirs."""
    folder = vectors / "cg-ega"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent (example.npy of github dotXem/CG-EGA, commit d4a8898)")
    rows = compare_cg_ega(folder)
    assert [row.status for row in rows] == ["agrees", "explained", "explained", *["agrees"] * 3]
    assert rows[1].ours == pytest.approx(100 * 29 / 245)
    assert rows[2].ours == pytest.approx(100 * 11 / 245)
    assert "2 pairs" in rows[1].explanation and "(183.1, 139.5)" in rows[1].explanation


def test_cg_ega_example_reader_refuses_other_arrays(tmp_path: Path) -> None:
    folder = tmp_path / "cg-ega"
    folder.mkdir()
    with pytest.raises(ConformanceDataError, match=r"example\.npy: missing"):
        read_example(folder)
    np.save(folder / "example.npy", np.zeros((3, 5)))
    with pytest.raises(ConformanceDataError, match=r"shape \(2, 1, n\)"):
        read_example(folder)
    np.save(folder / "example.npy", np.array([[1.0, np.nan], [2.0, 3.0]]))
    with pytest.raises(ConformanceDataError, match="finite"):
        read_example(folder)
    (folder / "example.npy").write_bytes(b"not an array")
    with pytest.raises(ConformanceDataError, match="not a NumPy array file"):
        read_example(folder)
    np.save(folder / "example.npy", np.array([[100.0, 110.0, 125.0], [104.0, 112.0, 130.0]]))
    reference, estimate = read_example(folder)
    assert reference.tolist() == [100.0, 110.0, 125.0] and estimate[-1] == 130.0


# -- the command and the committed document -----------------------------------------------------


def test_committed_document_is_what_the_command_writes(
    vectors: Path, seg_table: str, tmp_path: Path
) -> None:
    out = tmp_path / "CONFORMANCE.md"
    result = runner.invoke(
        app, ["conformance", "--data", str(vectors), "--seg-table", seg_table, "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "0 differ without one" in result.output
    assert DOC.read_text(encoding="utf-8") == out.read_text(encoding="utf-8"), (
        "docs/CONFORMANCE.md is out of date: run riskgrid conformance --out docs/CONFORMANCE.md"
    )


def test_command_refuses_a_missing_folder_and_a_broken_vector(
    vectors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RISKGRID_CONFORMANCE", raising=False)
    monkeypatch.delenv("SEG_TABLE", raising=False)
    result = runner.invoke(app, ["conformance"])
    assert result.exit_code == 2 and "set $RISKGRID_CONFORMANCE" in result.output
    result = runner.invoke(app, ["conformance", "--data", str(tmp_path / "none")])
    assert result.exit_code == 1 and "is not a folder" in result.output
    broken = tmp_path / "vectors"
    shutil.copytree(vectors, broken)
    data = broken / "ifdtulm-ci" / "Test_Data.csv"
    lines = data.read_text().splitlines()
    lines[5] = "S1,abc,100"
    data.write_text("\n".join(lines) + "\n")
    out = tmp_path / "doc.md"
    result = runner.invoke(app, ["conformance", "--data", str(broken), "--out", str(out)])
    assert result.exit_code == 1 and "line 6: Comp must be a positive number" in result.output
    assert "Traceback" not in result.output and not out.exists()


def test_command_without_a_seg_table_prints_the_other_vectors(
    vectors: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SEG_TABLE", raising=False)
    monkeypatch.setenv("RISKGRID_CONFORMANCE", str(vectors))
    result = runner.invoke(app, ["conformance"])
    assert result.exit_code == 0, result.output
    assert "The seg-app vector was left out" in result.output
    assert "## ifdtulm-ci:" in result.output and "## ega:" in result.output
    assert "## seg-app:" not in result.output
