"""SEG-method surveys: the consistency flags against a brute-force check, the thresholds' rules and
units, storage (answers saved and updated in place, owners, closed surveys, scenarios fixed by
the first answer), the upgrade from the previous schema keeping existing surveys, and the CLI
(create, status, export with its exact columns)."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import create_engine, text
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.elicit.answers import read_answers
from ranking_core.inputs import InputError
from ranking_core.surveys import SurveySettings, SurveyStore
from ranking_core.surveys.scenarios_file import read_scenarios
from ranking_core.surveys.seg_method import (
    ACTIONS,
    DEFAULT_SCENARIOS,
    MAX_SCENARIOS,
    Scenario,
    action_ranges,
    check_matrix,
    check_scenarios,
    check_thresholds,
    consistency_flags,
)
from ranking_core.surveys.seg_storage import (
    create_seg_survey,
    rater_answers,
    save_matrix,
    save_thresholds,
    seg_export,
    seg_status,
    set_scenarios,
    stored_scenarios,
)
from ranking_core.surveys.storage import SurveyError

SMOOTH = np.array(
    [[1, 3, 5, 7, 9], [3, 1, 3, 5, 7], [6, 3, 1, 2, 5], [8, 6, 2, 1, 3], [9, 8, 5, 3, 1]]
)


# -- consistency flags -----------------------------------------------------------------------
def _brute_force_flags(m: np.ndarray) -> dict[tuple[int, int], int]:
    """Every off-diagonal cell with some cell strictly nearer the diagonal on the same side, in
    its row or its column, scored higher; → the highest such score."""
    found: dict[tuple[int, int], int] = {}
    for i, j in itertools.product(range(5), range(5)):
        if i == j:
            continue
        nearer = []
        for k in range(5):  # the same row: (i, k) between the diagonal (i, i) and (i, j)
            if abs(k - i) < abs(j - i) and (k - i) * (j - i) > 0:
                nearer.append(m[i, k])
        for k in range(5):  # the same column: (k, j) between (j, j) and (i, j)
            if abs(k - j) < abs(i - j) and (k - j) * (i - j) > 0:
                nearer.append(m[k, j])
        higher = [v for v in nearer if v > m[i, j]]
        if higher:
            found[(i, j)] = int(max(higher))
    return found


def test_consistency_flags_match_a_brute_force_check_on_random_matrices():
    rng = np.random.default_rng(7)
    flagged_any = 0
    distance = np.abs(np.subtract.outer(np.arange(5), np.arange(5)))
    for draw in range(3000):
        if draw % 2:  # any scores
            m = rng.integers(1, 10, size=(5, 5))
        else:  # rising away from the diagonal, one cell nudged by -1..1
            m = np.minimum(9, 1 + distance * rng.integers(1, 3))
            i, j = rng.integers(0, 5, size=2)
            m[i, j] = np.clip(m[i, j] + rng.integers(-1, 2), 1, 9)
        np.fill_diagonal(m, 1)
        flags = consistency_flags(m)
        got = {(f.measured, f.actual): f.nearer_score for f in flags}
        assert got == _brute_force_flags(m)
        for f in flags:  # the nearer cell named carries that score, and is in line
            assert m[f.nearer] == f.nearer_score and f.score == m[f.measured, f.actual]
            assert f.nearer[0] == f.measured or f.nearer[1] == f.actual
        flagged_any += bool(flags)
    assert 0 < flagged_any < 3000


def test_a_matrix_rising_away_from_the_diagonal_has_no_flag_and_one_dip_has_one():
    assert consistency_flags(SMOOTH) == []
    dip = SMOOTH.copy()
    dip[0, 3] = 4  # meter says A, truth is D: lower than A/C (5), nearer the diagonal
    flags = consistency_flags(dip)
    assert [(f.measured, f.actual, f.nearer, f.nearer_score) for f in flags] == [(0, 3, (0, 2), 5)]


# -- thresholds and matrices -----------------------------------------------------------------
def test_thresholds_in_mmol_are_whole_mg_dl_by_the_projects_factor():
    values = [2.8, 3.9, 10.0, 13.9]
    assert check_thresholds(values, "mmol/L") == tuple(round(v * 18.016) for v in values)
    assert check_thresholds([50, 70, 180, 250]) == (50, 70, 180, 250)
    assert check_thresholds([0, 1, 2, 599]) == (0, 1, 2, 599)
    ranges = action_ranges((50, 70, 180, 250))
    assert ranges["A"] == "up to 50 mg/dL" and ranges["E"] == "above 250 mg/dL"


@pytest.mark.parametrize(
    ("values", "unit", "rule"),
    [
        ([70, 50, 180, 250], "mg/dL", "must increase strictly from A to D; B's"),
        ([50, 70, 180, 180], "mg/dL", "must increase strictly from A to D; D's"),
        ([50, 70, 180, 600], "mg/dL", "inside the whole range 0-600 mg/dL"),
        ([-5, 70, 180, 250], "mg/dL", "inside the whole range 0-600 mg/dL"),
        ([50, 70.5, 180, 250], "mg/dL", "whole number of mg/dL"),
        ([2.8, 3.95, 10, 13.9], "mmol/L", "mmol/L to one decimal"),
        ([2.8, 3.9, 10, 33.4], "mmol/L", "below 33.3 mmol/L"),
        ([50, None, 180, 250], "mg/dL", "B's is missing"),
    ],
)
def test_bad_thresholds_are_refused_with_the_rule(values, unit, rule):
    with pytest.raises(ValueError, match=rule.replace("(", r"\(").replace(".", r"\.")):
        check_thresholds(values, unit)


def test_a_matrix_needs_every_cell_whole_and_inside_1_to_9():
    cells = SMOOTH.astype(object)
    cells[1, 0] = None
    with pytest.raises(ValueError, match="1 empty: meter says B, truth is A"):
        check_matrix(cells.tolist())
    cells[1, 0] = 10
    with pytest.raises(ValueError, match=r"whole numbers 1-9; not so: meter says B, truth is A"):
        check_matrix(cells.tolist())
    cells[1, 0], cells[2, 2] = 3, 4
    with pytest.raises(ValueError, match="on the diagonal"):
        check_matrix(cells.tolist())
    cells[2, 2] = None  # an empty diagonal cell means 1
    assert (check_matrix(cells.tolist()) == SMOOTH).all()


def test_scenarios_are_bounded_and_plain(tmp_path):
    assert len(check_scenarios(DEFAULT_SCENARIOS)) == 4
    assert [s.insulin for s in DEFAULT_SCENARIOS] == [True, True, False, True]
    with pytest.raises(ValueError, match=rf"1\.\.{MAX_SCENARIOS} scenarios"):
        check_scenarios([Scenario(f"s{i}") for i in range(MAX_SCENARIOS + 1)])
    with pytest.raises(ValueError, match=r"scenario 2: a name of 1\.\.80"):
        check_scenarios([Scenario("a"), Scenario("x" * 81)])
    with pytest.raises(ValueError, match="U\\+001B"):
        check_scenarios([Scenario("a", "bad \x1b[31m")])
    many = tmp_path / "many.csv"
    many.write_text("name\n" + "".join(f"s{i}\n" for i in range(MAX_SCENARIOS + 1)))
    with pytest.raises(InputError, match=str(MAX_SCENARIOS)):
        read_scenarios(many)
    twice = tmp_path / "twice.csv"
    twice.write_text("name,description,insulin\nA,one,yes\nB,two,maybe\n")
    with pytest.raises(InputError, match="line 3: insulin is yes or no"):
        read_scenarios(twice)
    twice.write_text("name,description\nA,one\na,two\n")
    with pytest.raises(InputError, match="line 3: the name 'a' is taken"):
        read_scenarios(twice)


# -- storage ---------------------------------------------------------------------------------
def _seg_survey(database_url, unit="mg/dL", by=None):
    surveys = SurveyStore(database_url, by=by)
    survey, _token = create_seg_survey(
        surveys, "seg", DEFAULT_SCENARIOS[:2], SurveySettings(unit=unit, checks=0)
    )
    links = surveys.invite("seg", ["ann", "bo"])
    access = [surveys.rater("seg", link.split("token=")[1]) for _, link in links]
    return surveys, survey, access


def test_answers_are_saved_updated_in_place_and_exported(database_url, tmp_path):
    surveys, survey, (ann, bo) = _seg_survey(database_url, unit="mmol/L")
    assert survey.method == "seg" and surveys.answers("seg").empty  # no pair queued
    first, second = stored_scenarios(surveys, survey)
    assert first.name == DEFAULT_SCENARIOS[0].name
    save_thresholds(surveys, ann, first.id, [2.8, 3.9, 10.0, 13.9])
    save_thresholds(surveys, ann, first.id, [3.0, 3.9, 10.0, 13.9])  # changed: one row
    save_matrix(surveys, ann, first.id, SMOOTH.tolist())
    save_thresholds(surveys, bo, second.id, [50, 70, 180, 250], unit="mg/dL")
    with pytest.raises(ValueError, match="increase strictly"):
        save_thresholds(surveys, bo, first.id, [5.0, 4.0, 10.0, 13.9])
    answers = rater_answers(surveys, ann)
    assert answers[first.id].done and answers[second.id].thresholds is None
    thresholds, matrix = seg_export(surveys, "seg")
    assert thresholds.columns.tolist() == ["rater", "scenario", "action", "max"]
    assert matrix.columns.tolist() == ["rater", "scenario", "measured", "actual", "score"]
    assert thresholds["max"].tolist() == [54, 70, 180, 250, 50, 70, 180, 250]
    assert thresholds["action"].tolist() == list("ABCD") * 2
    assert len(matrix) == 25 and (matrix["rater"] == "ann").all()
    cell = matrix.set_index(["measured", "actual"])["score"]
    for i, j in itertools.product(range(5), range(5)):  # rows measured, columns actual
        assert cell[(ACTIONS[i], ACTIONS[j])] == SMOOTH[i, j]
    # riskgrid elicit uses ann's complete answer and leaves out bo's, which has no matrix yet
    thresholds.to_csv(tmp_path / "t.csv", index=False)
    matrix.to_csv(tmp_path / "m.csv", index=False)
    read = read_answers(tmp_path / "t.csv", tmp_path / "m.csv")
    assert [(m.rater, m.scenario) for m in read.maps] == [("ann", first.name)]
    assert [(e.rater, e.scenario) for e in read.exclusions] == [("bo", second.name)]
    state = seg_status(surveys, "seg")
    assert [(r["thresholds"], r["matrices"], r["complete"]) for r in state["raters"]] == [
        (1, 1, 1),
        (1, 0, 0),
    ]
    # the scenarios are fixed once an answer is in
    with pytest.raises(SurveyError, match="before the first answer"):
        set_scenarios(surveys, "seg", DEFAULT_SCENARIOS)
    # a revoked link, a closed survey: no answer taken, nothing lost
    surveys.revoke("seg", "bo")
    with pytest.raises(SurveyError, match="no longer open"):
        save_matrix(surveys, bo, second.id, SMOOTH.tolist())
    surveys.close("seg")
    with pytest.raises(SurveyError, match="no longer open"):
        save_thresholds(surveys, ann, second.id, [3.0, 3.9, 10.0, 13.9])
    assert seg_export(surveys, "seg")[0].equals(thresholds)


def test_scenarios_can_be_edited_before_the_first_answer_and_owners_are_kept(database_url):
    surveys, survey, (ann, _) = _seg_survey(database_url, by="ann@example.org")
    set_scenarios(surveys, "seg", [Scenario("ICU", "Intensive care"), Scenario("Ward")])
    assert [s.name for s in stored_scenarios(surveys, survey)] == ["ICU", "Ward"]
    other = surveys.acting_for("bo@example.org")
    with pytest.raises(SurveyError, match="not yours"):
        seg_export(other, "seg")
    with pytest.raises(SurveyError, match="not yours"):
        set_scenarios(other, "seg", [Scenario("X")])
    # a rater's link works whoever owns the survey; a scenario of another survey does not
    create_seg_survey(other, "theirs", [Scenario("Z")], SurveySettings(checks=0))
    foreign = stored_scenarios(other, other.get("theirs"))[0]
    with pytest.raises(SurveyError, match="not in this rater's survey"):
        save_thresholds(surveys, ann, foreign.id, [50, 70, 180, 250])


# -- the upgrade from the previous schema ----------------------------------------------------
def test_upgrade_from_the_previous_revision_keeps_existing_surveys(tmp_path, monkeypatch):
    from alembic import command
    from alembic.config import Config

    from ranking_core.storage.engine import MIGRATIONS

    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    engine = create_engine(url)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    now = datetime(2026, 1, 2, tzinfo=UTC)
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "survey_owner")
        conn.execute(
            text(
                "insert into surveys (id, name, created_at, organiser_hash, settings, "
                "instructions, batches, owner) values (1, 'old', :t, :h, :s, 'Rate.', 1, 'ann')"
            ),
            {"t": now, "h": "0" * 64, "s": json.dumps(SurveySettings().to_dict())},
        )
        conn.execute(
            text(
                "insert into survey_pairs (id, survey_id, batch, reference, estimate) "
                "values (1, 1, 0, 100, 150)"
            )
        )
        conn.execute(
            text(
                "insert into survey_raters (id, survey_id, name, token_hash, invited, "
                "created_at) values (1, 1, 'r1', :h, 0, :t)"
            ),
            {"h": "1" * 64, "t": now},
        )
        conn.execute(
            text(
                "insert into survey_queue (rater_id, position, pair_id, role, batch) "
                "values (1, 0, 1, 'pair', 0)"
            )
        )
        conn.execute(
            text(
                "insert into survey_answers (rater_id, position, rating, first_answered_at, "
                "answered_at) values (1, 0, 2.5, :t, :t)"
            ),
            {"t": now},
        )
    engine.dispose()
    monkeypatch.setenv("RISKGRID_DATABASE_URL", url)
    result = CliRunner().invoke(app, ["db", "upgrade"])
    assert result.exit_code == 0, result.output
    surveys = SurveyStore(url, by="ann")
    survey = surveys.get("old")
    assert survey.method == "pairs" and survey.owner == "ann"
    answers = surveys.answers("old")
    assert answers[["reference", "estimate", "rating"]].values.tolist() == [[100, 150, 2.5]]
    with pytest.raises(SurveyError, match="not yours"):
        surveys.acting_for("bo").get("old")
    with pytest.raises(SurveyError, match="asks for rated pairs"):
        seg_export(surveys, "old")
    with create_engine(url).connect() as conn:
        assert conn.execute(text("select version_num from alembic_version")).scalar() == (
            "seg_method"
        )


# -- the command line ------------------------------------------------------------------------
def test_cli_create_status_and_export_of_a_seg_survey(tmp_path, monkeypatch):
    monkeypatch.setenv("RISKGRID_DATABASE_URL", f"sqlite:///{tmp_path / 'db.sqlite3'}")
    runner = CliRunner()
    result = runner.invoke(app, ["survey", "create", "seg", "--method", "seg", "--unit", "mmol/L"])
    assert result.exit_code == 0, result.output
    assert "SEG method, 4 scenarios" in result.output and "organiser=" in result.output
    result = runner.invoke(app, ["survey", "create", "x", "--method", "grid"])
    assert result.exit_code == 2 and "--method is pairs or seg" in result.output
    result = runner.invoke(app, ["survey", "create", "x", "--method", "seg", "--design", "5"])
    assert result.exit_code == 2 and "--pairs and --design are for --method pairs" in result.output
    bad = tmp_path / "bad.csv"
    bad.write_text("name,description\nA,one\nA,two\n")
    result = runner.invoke(app, ["survey", "create", "x", "--method", "seg", "--scenarios", bad])
    assert result.exit_code == 1 and "line 3: the name 'A' is taken" in result.output
    result = runner.invoke(app, ["survey", "create", "x", "--design", "5", "--scenarios", bad])
    assert result.exit_code == 2 and "--scenarios is for --method seg" in result.output
    links = tmp_path / "links.csv"
    result = runner.invoke(app, ["survey", "invite", "seg", "--raters", "2", "-o", str(links)])
    assert result.exit_code == 0, result.output
    surveys = SurveyStore()
    survey = surveys.get("seg")
    access = surveys.rater("seg", pd.read_csv(links)["link"][0].split("token=")[1])
    scenario = stored_scenarios(surveys, survey)[2]  # without insulin
    save_thresholds(surveys, access, scenario.id, [3.9, 4.4, 7.8, 10.0])
    save_matrix(surveys, access, scenario.id, SMOOTH.tolist())
    result = runner.invoke(app, ["survey", "status", "seg", "--json", str(tmp_path / "s.json")])
    assert result.exit_code == 0 and "1 of 8 scenario answers complete" in result.output
    assert "— (no matrix yet)" in result.output and "None" not in result.output
    folder = tmp_path / "out"
    result = runner.invoke(app, ["survey", "export", "seg", "-o", str(folder)])
    assert result.exit_code == 0, result.output
    thresholds = pd.read_csv(folder / "thresholds.csv")
    matrix = pd.read_csv(folder / "matrix.csv")
    assert thresholds.columns.tolist() == ["rater", "scenario", "action", "max"]
    assert matrix.columns.tolist() == ["rater", "scenario", "measured", "actual", "score"]
    assert thresholds["max"].tolist() == [round(v * 18.016) for v in (3.9, 4.4, 7.8, 10.0)]
    assert (thresholds["scenario"] == "Type 2 diabetes, no insulin").all()
    assert matrix["score"].tolist() == SMOOTH.ravel().tolist()
    # the export is riskgrid elicit's input: risk(REF, BGM) = (S[action(BGM), action(REF)] − 1)/2
    answers = read_answers(folder / "thresholds.csv", folder / "matrix.csv")
    assert not answers.exclusions and len(answers.maps) == 1
    cuts = np.array([round(v * 18.016) for v in (3.9, 4.4, 7.8, 10.0)])
    action = (np.arange(601)[:, None] > cuts[None, :]).sum(axis=1)  # A: g <= max_A, …, E
    expected = (SMOOTH[action[None, :], action[:, None]] - 1) / 2  # [REF, BGM]
    assert np.array_equal(answers.maps[0].grid(), expected)
    file = tmp_path / "file.csv"
    file.write_text("keep")
    result = runner.invoke(app, ["survey", "export", "seg", "-o", str(file)])
    assert result.exit_code == 1 and "is a file" in result.output and file.read_text() == "keep"
    result = runner.invoke(app, ["survey", "next", "seg"])
    assert result.exit_code == 1 and "batches of pairs are for pairs surveys" in result.output


def test_a_seg_survey_is_listed_by_its_method_and_deleted_with_its_answers(database_url):
    from sqlalchemy import func, select

    from ranking_core.surveys.admin import delete_survey, survey_summaries
    from ranking_core.surveys.seg_tables import SCENARIOS, SEG_MATRICES, SEG_THRESHOLDS

    surveys, survey, (ann, bo) = _seg_survey(database_url)
    first, second = stored_scenarios(surveys, survey)
    save_thresholds(surveys, ann, first.id, [50, 70, 180, 250], unit="mg/dL")
    save_matrix(surveys, ann, first.id, SMOOTH.tolist())
    save_thresholds(surveys, bo, second.id, [55, 75, 170, 260], unit="mg/dL")
    (listed,) = survey_summaries(surveys)
    assert (listed.name, listed.method, listed.raters, listed.answers) == ("seg", "seg", 2, 3)
    assert delete_survey(surveys, "seg") == {"raters": 2, "answers": 3, "pairs": 0}
    with surveys._read("counting") as conn:
        for table in (SCENARIOS, SEG_THRESHOLDS, SEG_MATRICES):
            assert conn.scalar(select(func.count()).select_from(table)) == 0
    assert survey_summaries(surveys) == []
