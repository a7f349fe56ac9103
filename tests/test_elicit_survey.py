"""``riskgrid elicit --survey NAME``: a SEG-method survey answered through the calls the rater's
page makes gives, without an export, the grid its answers define (an independent NumPy oracle
built here, block by block from the typed answers) and the very files of the export; the survey
and ``elicit`` refuse the same answers (one rule set); sizes are bounded and fast; the owner's
rules; the linked rated-pair survey; the small-panel warning."""

from __future__ import annotations

import json
import time
import tracemalloc

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.elicit import read_answers
from ranking_core.elicit.comparison import grid_differences, raters_apart
from ranking_core.elicit.mapping import RaterMap, elicited_grids
from ranking_core.elicit.pipeline import OPEN_WARNING, open_warning
from ranking_core.storage import StorageError
from ranking_core.surveys import SurveySettings, SurveyStore
from ranking_core.surveys.seg_grid import answers_from_survey
from ranking_core.surveys.seg_linked import create_linked_survey, linked_pairs_name
from ranking_core.surveys.seg_method import Scenario, check_matrix, check_thresholds
from ranking_core.surveys.seg_storage import (
    create_seg_survey,
    save_matrix,
    save_thresholds,
    stored_scenarios,
)

SCENARIOS = [Scenario("Pump"), Scenario("Diet", "", False)]


def _random_answer(rng) -> tuple[list[int], list[list[int]]]:
    cuts = np.sort(rng.choice(np.arange(0, 600), 4, replace=False)).tolist()
    scores = rng.integers(1, 10, (5, 5))
    np.fill_diagonal(scores, 1)
    return cuts, scores.tolist()


def _answered_survey(url: str, n_raters: int = 5, seed: int = 3, owner: str | None = None):
    """A SEG-method survey whose raters answered every scenario through the rater page's calls;
    the answers typed by (rater name, scenario position)."""
    surveys = SurveyStore(url, by=owner)
    survey, _ = create_seg_survey(surveys, "ward", SCENARIOS, SurveySettings(checks=0))
    links = surveys.invite("ward", n_raters)
    rng = np.random.default_rng(seed)
    typed = {}
    for rater, link in links:
        access = surveys.rater("ward", link.split("token=")[1])
        for position, scenario in enumerate(stored_scenarios(surveys, survey)):
            cuts, scores = _random_answer(rng)
            save_thresholds(surveys, access, scenario.id, cuts)
            save_matrix(surveys, access, scenario.id, scores)
            typed[(rater, position)] = (cuts, scores)
    return surveys, typed


def _oracle(typed: dict, n_scenarios: int):
    """The grids by the definition, block by block: A 0..max_A, B max_A+1..max_B, …,
    E max_D+1..600; risk[REF, BGM] = (score[measured = action(BGM), actual = action(REF)] - 1)/2;
    scenario mean over raters, pooled mean over scenarios, spread the SD over all maps."""
    glucose = np.arange(601)
    means, every = [], []
    for s in range(n_scenarios):
        maps = []
        for (_, position), (cuts, scores) in typed.items():
            if position != s:
                continue
            edges = [-1, *cuts, 600]
            risk = np.empty((601, 601))
            for i in range(5):
                bgm = (glucose > edges[i]) & (glucose <= edges[i + 1])
                for j in range(5):
                    ref = (glucose > edges[j]) & (glucose <= edges[j + 1])
                    risk[np.ix_(ref, bgm)] = (scores[i][j] - 1) / 2
            maps.append(risk)
        means.append(np.mean(maps, axis=0))
        every += maps
    return np.mean(means, axis=0), means, np.std(every, axis=0)


def test_elicit_survey_gives_the_grid_the_answers_define_without_an_export(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    monkeypatch.setenv("RISKGRID_DATABASE_URL", url)
    _, typed = _answered_survey(url, owner="alice")  # the command line acts as the operator
    runner = CliRunner()
    out = tmp_path / "grid"
    result = runner.invoke(app, ["elicit", "--survey", "ward", "--out-dir", str(out), "--no-learn"])
    assert result.exit_code == 0, result.output
    assert "5 raters, 2 scenarios, 10 rater maps used, 0 excluded" in result.output
    pooled, means, spread = _oracle(typed, len(SCENARIOS))
    np.testing.assert_allclose(np.load(out / "grid.npy"), pooled, atol=1e-9, rtol=0)
    np.testing.assert_allclose(np.load(out / "scenario-pump.npy"), means[0], atol=1e-9, rtol=0)
    np.testing.assert_allclose(np.load(out / "scenario-diet.npy"), means[1], atol=1e-9, rtol=0)
    np.testing.assert_allclose(np.load(out / "spread.npy"), spread, atol=1e-9, rtol=0)
    # the same files, byte for byte, as from the export
    export = tmp_path / "export"
    assert runner.invoke(app, ["survey", "export", "ward", "-o", str(export)]).exit_code == 0
    out2 = tmp_path / "from-files"
    result = runner.invoke(
        app,
        ["elicit", str(export / "thresholds.csv"), str(export / "matrix.csv"),
         "--out-dir", str(out2), "--no-learn"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    for name in ("grid.npy", "spread.npy", "count.npy", "RiskPairData.csv", "scenario-pump.npy"):
        assert (out / name).read_bytes() == (out2 / name).read_bytes(), name
    meta, meta2 = (json.loads((d / "grid.json").read_text()) for d in (out, out2))
    assert meta["inputs"]["thresholds"]["sha256"] == meta2["inputs"]["thresholds"]["sha256"]
    assert meta["inputs"]["matrix"]["sha256"] == meta2["inputs"]["matrix"]["sha256"]
    # usage: files and --survey together, or neither
    both = runner.invoke(
        app, ["elicit", str(export / "thresholds.csv"), str(export / "matrix.csv"),
              "--survey", "ward", "--out-dir", str(out)],
    )  # fmt: skip
    assert both.exit_code == 2 and "either the two answer files" in both.output


def test_only_the_owner_or_the_operator_reads_the_answers(tmp_path):
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    _answered_survey(url, n_raters=2, owner="alice")
    assert len(answers_from_survey(SurveyStore(url, by="alice"), "ward").answers.maps) == 4
    assert len(answers_from_survey(SurveyStore(url), "ward").answers.maps) == 4
    with pytest.raises(StorageError):
        answers_from_survey(SurveyStore(url, by="bob"), "ward")


# -- one rule set ----------------------------------------------------------------------------
CUTS = [
    [50, 70, 180, 250],
    [0, 1, 2, 599],
    [50, 70, 180, 600],  # E would be empty
    [-1, 70, 180, 250],
    [50, 70.5, 180, 250],
    [70, 50, 180, 250],
    [50, 70, 180, 180],
    [True, 70, 180, 250],  # a boolean is not 1 mg/dL
    [50, 70, 180, float("inf")],
]
SCORES = [3, 9, 1, 0, 10, 2.5, True, float("nan")]


def _survey_takes(check, *args) -> bool:
    try:
        check(*args)
    except ValueError:
        return False
    return True


def _elicit_takes(tmp_path, cuts, score) -> bool:
    thresholds = pd.DataFrame(
        {"rater": "r", "scenario": "s", "action": list("ABCD"), "max": [str(c) for c in cuts]}
    )
    cells = [(a, b) for a in "ABCDE" for b in "ABCDE" if a != b]
    matrix = pd.DataFrame(
        {
            "rater": "r",
            "scenario": "s",
            "measured": [a for a, _ in cells],
            "actual": [b for _, b in cells],
            "score": [str(score)] + ["5"] * (len(cells) - 1),
        }
    )
    t, m = tmp_path / "t.csv", tmp_path / "m.csv"
    thresholds.to_csv(t, index=False)
    matrix.to_csv(m, index=False)
    return len(read_answers(t, m).maps) == 1


@pytest.mark.parametrize("cuts", CUTS)
def test_the_survey_and_elicit_take_the_same_cut_points(tmp_path, cuts):
    assert _survey_takes(check_thresholds, cuts) == _elicit_takes(tmp_path, cuts, 3)


@pytest.mark.parametrize("score", SCORES)
def test_the_survey_and_elicit_take_the_same_scores(tmp_path, score):
    scores = np.full((5, 5), 5, dtype=object)
    np.fill_diagonal(scores, 1)
    scores[0, 1] = score
    assert _survey_takes(check_matrix, scores.tolist()) == _elicit_takes(
        tmp_path, [50, 70, 180, 250], score
    )


def test_the_rules_refuse_what_they_should():
    assert not _survey_takes(check_thresholds, [50, 70, 180, 600])
    assert not _survey_takes(check_thresholds, [True, 70, 180, 250])
    assert not _survey_takes(check_thresholds, ["50", 70, 180, 250])
    with pytest.raises(ValueError, match="must be a number; got true/false"):
        check_thresholds([True, 70, 180, 250])


# -- sizes -----------------------------------------------------------------------------------
def test_ten_thousand_maps_in_seconds_at_bounded_memory_equal_to_cell_sums():
    rng = np.random.default_rng(0)
    maps = []
    for k in range(10_000):
        cuts, scores = _random_answer(rng)
        maps.append(RaterMap(f"r{k}", f"s{k % 4}", np.array(cuts, float), np.array(scores, float)))
    calls = []
    tracemalloc.start()
    start = time.perf_counter()
    grids = elicited_grids(maps, progress=lambda done, total: calls.append((done, total)))
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert seconds < 60 and peak < 400 * 2**20, (seconds, peak)
    assert calls[-1] == (10_000, 10_000) and len(calls) >= 4
    # against the cell-by-cell sum of the maps of one scenario (brute force)
    first = [m for m in maps if m.scenario == "s0"][:300]
    small = elicited_grids(first)
    stack = np.stack([m.grid() for m in first])
    np.testing.assert_allclose(small.pooled, stack.mean(axis=0), atol=1e-12, rtol=0)
    np.testing.assert_allclose(small.spread, stack.std(axis=0), atol=1e-9, rtol=0)
    distance = np.sqrt(((stack - stack.mean(axis=0)) ** 2).mean(axis=(1, 2)))
    got = np.array([small.distances[(m.rater, "s0")] for m in first])
    np.testing.assert_allclose(got, distance, atol=1e-9, rtol=0)
    assert grids.n_maps == 10_000


# -- the grid so far: raters apart, SEG and DTS ----------------------------------------------
def test_a_rater_whose_maps_differ_is_flagged_and_kept():
    base = np.array([[1, 3, 5, 7, 9], [3, 1, 3, 5, 7], [6, 3, 1, 2, 5], [8, 6, 2, 1, 3],
                     [9, 8, 5, 3, 1]], dtype=float)  # fmt: skip
    maps = [RaterMap(f"r{k}", "s", np.array([50, 70, 180, 250.0 + k]), base) for k in range(5)]
    odd = np.where(base > 1, 10 - base, 1)
    maps.append(RaterMap("odd", "s", np.array([50, 70, 180, 250.0]), odd))
    grids = elicited_grids(maps)
    apart = raters_apart(grids).set_index("rater")
    assert apart.loc["odd", "apart"] and not apart.drop("odd")["apart"].any()
    assert grids.n_maps == 6  # flagged, not dropped


def test_differences_and_category_changes_against_seg_and_dts():
    from ranking_core.grids.risk_scale import risk_category, risk_grade
    from ranking_core.grids.zone_codes import zone_grid

    rng = np.random.default_rng(2)
    grid = rng.uniform(0, 4, (601, 601))
    seg = rng.uniform(0, 4, (601, 601))
    against_seg, against_dts = grid_differences(grid, seg)
    np.testing.assert_array_equal(against_seg.difference, grid - seg)
    assert against_seg.changed_share == np.mean(risk_category(grid) != risk_category(seg))
    assert against_dts.changed_share == np.mean(risk_grade(grid) != zone_grid("dts"))


# -- the hybrid and the small panel ----------------------------------------------------------
def test_the_linked_pairs_survey_has_the_owner_and_its_answers_are_learned_with(tmp_path):
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    surveys, _ = _answered_survey(url, n_raters=3, owner="alice")
    made = create_linked_survey(surveys, "ward", 12, invite_again=True)
    assert made.survey.name == linked_pairs_name("ward") and made.survey.owner == "alice"
    assert len(made.pairs) == 12 and len(made.links) == 3
    spread = elicited_grids(answers_from_survey(surveys, "ward").answers.maps).spread
    chosen = spread[made.pairs["reference"], made.pairs["estimate"]]
    assert chosen.min() > 0 and chosen.max() == spread[20:581, 20:581][::5, ::5].max()
    assert answers_from_survey(surveys, "ward").ratings is None  # no answers yet
    access = surveys.rater(made.survey.name, made.links[0][1].split("token=")[1])
    surveys.answer(access, 0, 2.5)
    given = answers_from_survey(surveys, "ward")
    assert given.ratings is not None and given.ratings["rating"].tolist() == [2.5]
    with pytest.raises(StorageError):  # made once
        create_linked_survey(surveys, "ward", 12)


def test_the_open_band_warning_names_what_would_narrow_it():
    assert open_warning(OPEN_WARNING, 3) is None
    said = open_warning(1.0, 3)
    assert said is not None and "100%" in said and "more raters" in said
    assert "pair ratings" in said


@pytest.mark.slow
def test_a_small_panel_learns_from_points_sized_from_its_answers(tmp_path):
    from ranking_core.elicit import simulate_answers

    thresholds, matrix = simulate_answers(3, scenarios=("s1",), seed=0)
    t, m = tmp_path / "t.csv", tmp_path / "m.csv"
    thresholds.to_csv(t, index=False)
    matrix.to_csv(m, index=False)
    runner = CliRunner()
    result = runner.invoke(app, ["elicit", str(t), str(m), "--out-dir", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    assert (
        "200 per map, sized from the answers"
        in json.loads((tmp_path / "a" / "learned" / "grid.json").read_text())["rating_set"]
    )
    few = runner.invoke(
        app, ["elicit", str(t), str(m), "--out-dir", str(tmp_path / "b"),
              "--ratings-per-rater", "3"],
    )  # fmt: skip
    assert few.exit_code == 0, few.output
    share = float(few.output.split("open on ")[1].split("%")[0]) / 100
    assert (share > OPEN_WARNING) == ("warning: the 95 % band leaves" in few.output)
