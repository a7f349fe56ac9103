"""``riskgrid elicit`` end to end: the files it writes, the warnings of excluded answers, usage
errors, the proposed pairs, meter-report on the elicited grid, and the learned grid."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.elicit import simulate_answers
from ranking_core.grids.files import read_grid_file
from ranking_core.grids.seg import load_seg_table
from ranking_core.learn import PRESETS

ROOT = Path(__file__).resolve().parents[1]


def _files(tmp_path, n_raters=3, scenarios=("s1", "s2"), seed=0, damage=None):
    thresholds, matrix = simulate_answers(n_raters, scenarios=scenarios, seed=seed)
    if damage is not None:
        damage(thresholds, matrix)
    t, m = tmp_path / "thresholds.csv", tmp_path / "matrix.csv"
    thresholds.to_csv(t, index=False)
    matrix.to_csv(m, index=False)
    return t, m


def _run(*args: str):
    return CliRunner().invoke(app, ["elicit", *map(str, args)])


def test_the_grids_and_their_json_are_written(tmp_path):
    t, m = _files(tmp_path)
    out = tmp_path / "out"
    result = _run(t, m, "--out-dir", out, "--no-learn")
    assert result.exit_code == 0, result.output
    assert "3 raters, 2 scenarios, 6 rater maps used, 0 excluded" in result.output
    pooled = read_grid_file(out / "grid.npy")
    s1, s2 = np.load(out / "scenario-s1.npy"), np.load(out / "scenario-s2.npy")
    np.testing.assert_allclose(pooled, (s1 + s2) / 2, atol=1e-12, rtol=0)
    assert np.load(out / "count.npy").max() == 6 and np.load(out / "spread.npy").shape == (601, 601)
    meta = json.loads((out / "grid.json").read_text())
    assert meta["raters"] == ["r01", "r02", "r03"] and meta["spread"]["ddof"] == 0
    np.testing.assert_allclose(load_seg_table(out / "RiskPairData.csv").absolute, pooled, atol=1e-9)
    assert not (out / "learned").exists()


def test_an_excluded_rater_is_a_warning_and_the_rest_is_used(tmp_path):
    def damage(thresholds, matrix):
        matrix.loc[(matrix.rater == "r02") & (matrix.scenario == "s1"), "score"] = 0

    t, m = _files(tmp_path, damage=damage)
    result = _run(t, m, "--out-dir", tmp_path / "out", "--no-learn")
    assert result.exit_code == 0, result.output
    assert "warning: rater 'r02', scenario 's1' excluded: score is outside 1..9 in lines" in (
        result.output
    )
    assert "5 rater maps used, 1 excluded" in result.output
    meta = json.loads((tmp_path / "out" / "grid.json").read_text())
    assert meta["exclusions"][0]["rater"] == "r02" and meta["exclusions"][0]["lines"]["matrix.csv"]


def test_nothing_usable_is_refused_with_a_sentence(tmp_path):
    def damage(thresholds, matrix):
        thresholds["max"] = 700

    t, m = _files(tmp_path, damage=damage)
    result = _run(t, m, "--out-dir", tmp_path / "out", "--no-learn")
    assert result.exit_code == 1
    assert "no rater × scenario can be used: all 6 are excluded" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


def test_usage_errors_exit_2(tmp_path):
    t, m = _files(tmp_path)
    result = _run(t, m, "--out-dir", tmp_path / "out", "--no-learn", "--ratings", t)
    assert result.exit_code == 2 and "--ratings and --save need learning" in result.output
    result = _run(t, m, "--out-dir", tmp_path / "out", "-o", tmp_path / "p.csv")
    assert result.exit_code == 2 and "give --propose" in result.output
    result = _run(t, m, "--out-dir", tmp_path / "out", "--ratings-per-rater", "0")
    assert result.exit_code == 2


def test_an_unknown_scenario_is_named(tmp_path):
    t, m = _files(tmp_path)
    result = _run(t, m, "--out-dir", tmp_path / "out", "--no-learn", "--scenario", "s\x1b9")
    assert result.exit_code == 1
    assert "--scenario 's\\x1b9' is none of the scenarios with valid answers: 's1', 's2'" in (
        result.output
    )


def test_proposed_pairs_are_a_survey_pair_file(tmp_path):
    from ranking_core.surveys.pairs_file import read_survey_pairs

    t, m = _files(tmp_path, n_raters=4)
    pairs = tmp_path / "pairs.csv"
    result = _run(t, m, "--out-dir", tmp_path / "out", "--no-learn", "--propose", "15", "-o", pairs)
    assert result.exit_code == 0, result.output
    read = read_survey_pairs(pairs, (20.0, 600.0))
    assert len(read.frame) == 15
    spread = np.load(tmp_path / "out" / "spread.npy")
    ref, bgm = read.frame.to_numpy(dtype=int).T
    assert (spread[ref, bgm] > 0).all()


def test_meter_report_reads_the_elicited_grid_and_names_it(tmp_path):
    t, m = _files(tmp_path)
    out = tmp_path / "out"
    assert _run(t, m, "--out-dir", out, "--no-learn").exit_code == 0
    report = tmp_path / "report.json"
    result = CliRunner().invoke(
        app,
        [
            "meter-report",
            str(ROOT / "data" / "sample_meter_pairs.csv"),
            "--learned-grid",
            str(out / "grid.npy"),
            "--json",
            str(report),
        ],
    )
    assert result.exit_code == 0, result.output
    provenance = json.loads(report.read_text())["provenance"]
    assert provenance["learned grid λ"] == "none (elicited by the SEG method, not learned)"
    assert provenance["learned grid raters"] == 3


@pytest.mark.slow
def test_the_learned_grid_and_its_band_are_written(tmp_path):
    t, m = _files(tmp_path, n_raters=3, scenarios=("s1",))
    ratings = tmp_path / "extra.csv"
    pd.DataFrame(
        {"reference": [60, 300], "estimate": [200, 80], "rating": [3.0, 2.5], "rater": ["x", "x"]}
    ).to_csv(ratings, index=False)
    out = tmp_path / "out"
    result = _run(t, m, "--out-dir", out, "--ratings-per-rater", "12", "--ratings", ratings)
    assert result.exit_code == 0, result.output
    assert "learning from 38 ratings: recipe robust" in result.output
    learned = read_grid_file(out / "learned" / "grid.npy")
    meta = json.loads((out / "learned" / "grid.json").read_text())
    assert meta["ratings"] == 38
    assert meta["settings"]["robust"] == PRESETS["robust"].robust  # the robust recipe's loss
    assert "extra.csv" in meta["rating_set"]
    assert (out / "learned" / "band_upper.npy").exists()
    elicited = read_grid_file(out / "grid.npy")
    # the smooth grid follows the mapped answers: far closer to them than a flat grid
    flat = np.full_like(elicited, elicited.mean())
    assert np.abs(learned - elicited).mean() < 0.6 * np.abs(flat - elicited).mean()


def test_an_output_through_a_link_is_refused_before_reading(tmp_path):
    t, m = _files(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "grid.npy").symlink_to(tmp_path / "elsewhere.npy")
    result = _run(t, m, "--out-dir", out, "--no-learn")
    assert result.exit_code == 1 and "is a symbolic link" in result.output
    assert not (tmp_path / "elsewhere.npy").exists() and not (out / "grid.json").exists()
    (out / "grid.npy").unlink()
    (out / "grid.npy").symlink_to(t)  # the input itself: refused, never overwritten
    before = t.read_bytes()
    result = _run(t, m, "--out-dir", out, "--no-learn")
    assert result.exit_code == 1 and "is the input file" in result.output
    assert t.read_bytes() == before
