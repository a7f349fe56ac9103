"""SEG-method answers to a grid: the mapping against a plain loop over the definition, the
scenario and pooled means by hand, the answer files' refusals and exclusions, the RiskPairData
export read back by the SEG table's own reader, the proposed pairs."""

from __future__ import annotations

import io
import itertools

import numpy as np
import pandas as pd
import pytest

from ranking_core.elicit import (
    ACTIONS,
    RaterMap,
    elicited_files,
    elicited_grids,
    mapped_ratings,
    propose_pairs,
    rater_map,
    read_answers,
    scenario_files,
    seg_table_csv,
    simulate_answers,
)
from ranking_core.grids.seg import load_seg_table
from ranking_core.surveys.pairs_file import read_survey_pairs


def _action_by_definition(maxima, g: int) -> int:
    """The action whose range holds g, read off the ranges as the survey states them:
    A 0..max_A, B max_A+1..max_B, C max_B+1..max_C, D max_C+1..max_D, E max_D+1..600."""
    a, b, c, d = (int(v) for v in maxima)
    ranges = [(0, a), (a + 1, b), (b + 1, c), (c + 1, d), (d + 1, 600)]
    for index, (low, high) in enumerate(ranges):
        if low <= g <= high:
            return index
    raise AssertionError(g)


def _risk_by_definition(maxima, scores, ref: int, bgm: int) -> float:
    measured = _action_by_definition(maxima, bgm)
    actual = _action_by_definition(maxima, ref)
    return (scores[measured][actual] - 1) / 2


def _random_rater(rng):
    maxima = np.sort(rng.choice(np.arange(0, 601), 4, replace=False)).astype(float)
    scores = rng.integers(1, 10, (5, 5)).astype(float)
    np.fill_diagonal(scores, 1)
    return maxima, scores


def test_a_map_equals_the_definition_on_a_lattice_with_every_range_edge():
    rng = np.random.default_rng(7)
    for _ in range(5):
        maxima, scores = _random_rater(rng)
        grid = rater_map(maxima, scores)
        edges = {0, 600} | {int(v) + k for v in maxima for k in (-1, 0, 1)}
        axis = sorted(g for g in edges | set(range(0, 601, 37)) if 0 <= g <= 600)
        for ref, bgm in itertools.product(axis, axis):
            assert grid[ref, bgm] == _risk_by_definition(maxima, scores, ref, bgm), (ref, bgm)


def test_a_map_equals_the_definition_on_every_cell_for_two_raters():
    rng = np.random.default_rng(11)
    for maxima, scores in ([70, 90, 180, 250], None), _random_rater(rng):
        if scores is None:
            scores = np.arange(25, dtype=float).reshape(5, 5) % 9 + 1
            np.fill_diagonal(scores, 1)
        action = [_action_by_definition(maxima, g) for g in range(601)]
        risk = [[(scores[i][j] - 1) / 2 for j in range(5)] for i in range(5)]
        expected = np.array([[risk[action[b]][action[r]] for b in range(601)] for r in range(601)])
        np.testing.assert_array_equal(rater_map(maxima, scores), expected)


def test_rows_are_reference_and_columns_measured():
    # only "meter says A (low), truth is E (high)" scores: the risk sits at low BGM, high REF
    scores = np.ones((5, 5))
    scores[0, 4] = 9
    grid = rater_map([50, 70, 180, 250], scores)
    assert grid[400, 30] == 4 and grid[30, 400] == 0 and grid[400, 100] == 0


def _toy_map(rater, scenario, value):
    scores = np.full((5, 5), value)
    np.fill_diagonal(scores, 1)
    return RaterMap(rater, scenario, np.array([50.0, 70, 180, 250]), scores)


def test_pooled_is_the_mean_of_the_scenario_means_not_of_all_maps():
    # scenario s1: raters scoring 3 and 5 (risk 1 and 2), mean 1.5; s2: one rater scoring 9
    # (risk 4). Pooled off-diagonal risk (1.5 + 4) / 2 = 2.75, not the mean of maps 7/3.
    maps = [_toy_map("a", "s1", 3), _toy_map("b", "s1", 5), _toy_map("a", "s2", 9)]
    grids = elicited_grids(maps)
    ref, bgm = 400, 30  # actual E, measured A
    assert grids.scenarios["s1"][ref, bgm] == 1.5
    assert grids.scenarios["s2"][ref, bgm] == 4.0
    assert grids.pooled[ref, bgm] == 2.75
    assert grids.pooled[100, 100] == 0.0
    # spread: population sd (ddof 0) of 1, 2, 4 over all maps
    assert grids.spread[ref, bgm] == pytest.approx(np.std([1.0, 2.0, 4.0]), abs=1e-12)
    assert (grids.count == 3).all()
    assert grids.raters == {"s1": ("a", "b"), "s2": ("a",)}


def _write(tmp_path, thresholds: pd.DataFrame, matrix: pd.DataFrame):
    t, m = tmp_path / "thresholds.csv", tmp_path / "matrix.csv"
    thresholds.to_csv(t, index=False)
    matrix.to_csv(m, index=False)
    return t, m


def test_the_files_of_a_panel_give_the_mean_of_the_raters_maps(tmp_path):
    thresholds, matrix = simulate_answers(4, seed=3)
    answers = read_answers(*_write(tmp_path, thresholds, matrix))
    assert len(answers.maps) == 16 and not answers.exclusions
    # an independent computation from the frames: per scenario the mean of the maps
    expected = []
    for scenario, group in thresholds.groupby("scenario", sort=False):
        maps = []
        for rater, rows in group.groupby("rater"):
            maxima = rows.set_index("action").loc[list("ABCD"), "max"].to_numpy(float)
            cells = matrix[(matrix.rater == rater) & (matrix.scenario == scenario)]
            scores = np.ones((5, 5))
            for row in cells.itertuples():
                scores[ACTIONS.index(row.measured), ACTIONS.index(row.actual)] = row.score
            action = np.searchsorted(maxima, np.arange(601))
            maps.append((scores[action][:, action].T - 1) / 2)  # [REF, BGM]
        expected.append(np.mean(maps, axis=0))
    grids = elicited_grids(answers.maps)
    np.testing.assert_allclose(grids.pooled, np.mean(expected, axis=0), atol=1e-12, rtol=0)


def test_refused_rows_exclude_their_rater_and_scenario_with_lines(tmp_path):
    thresholds, matrix = simulate_answers(8, scenarios=("s1",), seed=1)
    # thresholds: lines are row index + 2 (header on line 1); each rater has 4 rows
    thresholds.loc[1, "max"] = 40  # r01: B below A (max_A about 50)
    thresholds.loc[0, "max"] = 60
    thresholds["max"] = thresholds["max"].astype(object)
    thresholds.loc[5, "max"] = "70.5"  # r02: not whole
    thresholds = thresholds.drop(index=9)  # r03: no threshold for B (later lines move up)
    thresholds.loc[12, "action"] = "X"  # r04: unknown action
    m = matrix.copy()
    r05 = m.index[(m.rater == "r05") & (m.measured == "C") & (m.actual == "A")][0]
    m.loc[r05, "score"] = 10
    r06 = m.index[(m.rater == "r06") & (m.measured == "B") & (m.actual == "A")][0]
    m = m.drop(index=r06)  # r06: an off-diagonal cell missing
    r07 = m.index[(m.rater == "r07") & (m.measured == "D") & (m.actual == "D")][0]
    m.loc[r07, "score"] = 3  # r07: diagonal not 1
    m = pd.concat([m, m[m.rater == "r08"].iloc[[3]]])  # r08: a cell repeated
    answers = read_answers(*_write(tmp_path, thresholds, m))
    assert [a.rater for a in answers.maps] == []
    by_rater = {e.rater: e for e in answers.exclusions}
    assert set(by_rater) == {f"r0{k}" for k in range(1, 9)}
    assert "thresholds do not increase" in by_rater["r01"].reasons[0]
    assert by_rater["r01"].lines["thresholds.csv"] == (2, 3, 4, 5)
    assert by_rater["r02"].reasons == (
        "max is not a whole number (mg/dL) in line 7 of thresholds.csv",
    )
    assert by_rater["r03"].reasons == ("no threshold for action B in thresholds.csv",)
    assert "action is not one of the actions A, B, C, D, E in line 13" in by_rater["r04"].reasons[0]
    line05 = list(m.index).index(r05) + 2
    assert by_rater["r05"].reasons == (f"score is outside 1..9 in line {line05} of matrix.csv",)
    assert "off-diagonal cell(s) missing" in by_rater["r06"].reasons[0]
    assert "measured/actual B/A" in by_rater["r06"].reasons[0]
    assert "diagonal cell (measured = actual) scores 1" in by_rater["r07"].reasons[0]
    assert "repeats the cell of line" in by_rater["r08"].reasons[0]
    assert "rater 'r05', scenario 's1' excluded: score is outside" in by_rater["r05"].message()


def test_the_valid_part_is_kept_and_names_are_text(tmp_path):
    thresholds, matrix = simulate_answers(3, scenarios=("s1",), seed=2)
    thresholds.loc[thresholds.rater == "r03", "rater"] = "=cmd|[b]"
    matrix.loc[matrix.rater == "r03", "rater"] = "=cmd|[b]"
    thresholds.loc[0, "rater"] = "r01\x1b[31m"  # a control character: the row is refused
    answers = read_answers(*_write(tmp_path, thresholds, matrix))
    assert [m.rater for m in answers.maps] == ["r02", "=cmd|[b]"]
    assert any("control character" in message for message in answers.messages)
    excluded = {e.rater: e for e in answers.exclusions}
    assert "no threshold for action A" in excluded["r01"].reasons[0]


def test_an_e_row_is_ignored_at_600_and_refused_below(tmp_path):
    thresholds, matrix = simulate_answers(2, scenarios=("s1",), seed=2)
    extra = pd.DataFrame(
        [("r01", "s1", "E", 600), ("r02", "s1", "E", 400)], columns=thresholds.columns
    )
    answers = read_answers(*_write(tmp_path, pd.concat([thresholds, extra]), matrix))
    assert [m.rater for m in answers.maps] == ["r01"]
    assert "action E has no threshold" in answers.exclusions[0].reasons[0]


def test_riskpairdata_reads_back_through_the_seg_table_reader(tmp_path):
    rng = np.random.default_rng(5)
    maps = [RaterMap(f"r{k}", "s", *_random_rater(rng)) for k in range(3)]
    grid = elicited_grids(maps).pooled
    path = tmp_path / "RiskPairData.csv"
    path.write_bytes(seg_table_csv(grid))
    table = load_seg_table(path)
    np.testing.assert_allclose(table.absolute, grid, atol=1e-9, rtol=0)
    ref, bgm = np.meshgrid(np.arange(601), np.arange(601), indexing="ij")
    np.testing.assert_array_equal(np.sign(table.signed), np.sign(ref - bgm) * (grid > 0))
    head = pd.read_csv(path, nrows=3)
    assert list(head.columns) == ["RiskPairID", "REF", "BGM", "RiskFactor", "abs_risk"]
    assert head[["RiskPairID", "REF", "BGM"]].to_numpy().tolist() == [
        [1, 0, 0],
        [2, 1, 0],
        [3, 2, 0],
    ]


def test_mapped_ratings_are_the_raters_maps_at_the_drawn_points():
    rng = np.random.default_rng(9)
    maps = [RaterMap(f"r{k}", "s", *_random_rater(rng)) for k in range(4)]
    frame = mapped_ratings(maps, 25, seed=4)
    assert len(frame) == 100 and frame["reference"].between(20, 580).all()
    for k, item in enumerate(maps):
        rows = frame.iloc[25 * k : 25 * (k + 1)]
        assert (rows["rater"] == item.rater).all()
        grid = item.grid()
        expected = grid[rows["reference"].astype(int), rows["estimate"].astype(int)]
        np.testing.assert_array_equal(rows["rating"].to_numpy(), expected)
    again = mapped_ratings(maps, 25, seed=4)
    pd.testing.assert_frame_equal(frame, again)


def test_proposed_pairs_seek_the_spread_and_read_back_as_survey_pairs(tmp_path):
    spread = np.zeros((601, 601))
    spread[100:140, 300:340] = 1.0  # disagreement in one block, a weaker one elsewhere
    spread[400:420, 50:70] = 0.5
    pairs = propose_pairs(spread, 12)
    ref, bgm = pairs["reference"].to_numpy(), pairs["estimate"].to_numpy()
    assert (spread[ref, bgm] > 0).all()
    assert spread[ref[0], bgm[0]] == 1.0
    assert (spread[ref, bgm] == 0.5).any()  # spread over the plane, not all in the top block
    assert len(set(zip(ref, bgm, strict=True))) == len(pairs)
    assert len(propose_pairs(np.zeros((601, 601)), 5)) == 0
    path = tmp_path / "pairs.csv"
    pairs.to_csv(path, index=False)
    read = read_survey_pairs(path, (20.0, 600.0))
    assert read.frame.to_numpy().tolist() == pairs.to_numpy().astype(float).tolist()


def test_scenario_files_are_safe_and_distinct():
    names = scenario_files(["Type 1, insulin", "type 1 insulin", "<script>", "ü/../x", ""])
    assert names == {
        "Type 1, insulin": "scenario-type-1-insulin.npy",
        "type 1 insulin": "scenario-type-1-insulin-2.npy",
        "<script>": "scenario-script.npy",
        "ü/../x": "scenario-u-x.npy",
        "": "scenario-5.npy",
    }


def test_grid_json_records_checksums_and_exclusions(tmp_path):
    import hashlib
    import json

    thresholds, matrix = simulate_answers(3, scenarios=("s1", "s2"), seed=4)
    matrix.loc[0, "score"] = 12
    t, m = _write(tmp_path, thresholds, matrix)
    answers = read_answers(t, m)
    grids = elicited_grids(answers.maps)
    files = elicited_files(
        answers, grids, {"thresholds": (str(t), t.read_bytes()), "matrix": (str(m), m.read_bytes())}
    )
    meta = json.loads(files["grid.json"])
    assert meta["kind"] == "elicited grid" and meta["spread"]["ddof"] == 0
    digest_m = "sha256:" + hashlib.sha256(m.read_bytes()).hexdigest()
    assert meta["inputs"]["matrix"] == {"file": "matrix.csv", "sha256": digest_m}
    for name, digest in meta["outputs"].items():
        assert digest == "sha256:" + hashlib.sha256(files[name]).hexdigest()
    assert meta["exclusions"] == [
        {
            "rater": "r01",
            "scenario": "s1",
            "reasons": ["score is outside 1..9 in line 2 of matrix.csv"],
            "lines": {"matrix.csv": [2]},
        }
    ]
    assert {s["name"]: s["raters"] for s in meta["scenarios"]} == {"s1": 2, "s2": 3}
    second = files[meta["scenarios"][1]["file"]]
    assert np.load(io.BytesIO(second)).shape == (601, 601)
