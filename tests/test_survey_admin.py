"""Survey management: the raters an overlap needs (against brute force over the start chunks),
the warning when fewer are invited, `survey list|delete|link`, and missing figures shown as a
dash with the reason."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.panels import start_design
from ranking_core.panels.missing import MISSING, REASONS, reason_note, shown
from ranking_core.surveys import SurveySettings, SurveyStore
from ranking_core.surveys.admin import (
    delete_survey,
    new_organiser_token,
    survey_coverage,
    survey_summaries,
)
from ranking_core.surveys.coverage import (
    coverage,
    coverage_warning,
    overlap_needs,
    pair_ranges,
    raters_needed,
    start_counts,
)
from ranking_core.surveys.design import start_chunk
from ranking_core.surveys.storage import SurveyError
from ranking_core.surveys.tables import ANSWERS, PAIRS, QUEUE, RATERS, SURVEYS


def _brute_counts(n: int, k: int | None, raters) -> Counter:
    return Counter(p for j in raters for p in start_chunk(n, k, j))


def _brute_needed(n: int, k: int | None, overlap: int) -> int:
    """The fewest raters (in order of invitation) after whom every pair has the overlap."""
    raters = 0
    while True:
        counts = _brute_counts(n, k, range(raters))
        if all(counts[p] >= overlap for p in range(n)):
            return raters
        raters += 1


@pytest.mark.parametrize(
    ("n", "k", "overlap"),
    [(30, 12, 2), (30, 15, 2), (24, 10, 3), (7, 7, 2), (7, None, 3), (10, 3, 1), (9, 20, 2)],
)
def test_the_raters_needed_are_the_fewest_whose_chunks_give_every_pair_its_overlap(n, k, overlap):
    needed = raters_needed(n, k, overlap)
    assert needed == _brute_needed(n, k, overlap)
    counts = _brute_counts(n, k, range(needed))
    assert set(counts) == set(range(n))  # every start pair asked
    if k is None or (n * overlap) % min(k, n) == 0:
        assert set(counts.values()) == {overlap}  # exactly the overlap when the rounds fit
    for j in range(needed):  # no rater gets a pair twice
        chunk = start_chunk(n, k, j)
        assert len(chunk) == len(set(chunk))


@pytest.mark.parametrize("raters", [[], [0], [0, 1], [0, 2, 5], [1, 3, 4, 7, 8], list(range(13))])
@pytest.mark.parametrize(("n", "k"), [(30, 12), (11, 4), (5, 5), (8, None)])
def test_start_counts_equal_the_brute_force_counts(n, k, raters):
    counts = start_counts(n, k, raters)
    brute = _brute_counts(n, k, raters)
    assert counts == [brute[p] for p in range(n)]


def test_two_raters_of_an_overlap_needing_five_are_warned_about_what_is_left_out():
    settings = SurveySettings(per_rater=12, overlap=2)
    needs = overlap_needs(30, settings)
    assert "overlap 2 needs at least 2 raters" in needs and "once 5 raters" in needs
    state = coverage(30, settings, 2)
    brute = _brute_counts(30, 12, range(2))
    assert state.full == sum(brute[p] >= 2 for p in range(30)) == 0
    assert state.not_asked == 30 - len(brute) == 6
    assert state.fewer == 24 and state.more == 3
    warning = coverage_warning(state)
    assert "6 not asked" in warning and "24 rated fewer times" in warning
    missing = sorted(set(range(30)) - set(brute))  # 0-based; the warning counts from 1
    assert missing == list(range(24, 30))
    assert f"not asked at all (pairs {missing[0] + 1}-{missing[-1] + 1})" in warning
    assert "not measurable" in warning and "\n" not in warning
    assert coverage_warning(coverage(30, settings, 5)) is None


def _cli(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    monkeypatch.setenv("RISKGRID_DATABASE_URL", url)
    monkeypatch.chdir(tmp_path)
    return CliRunner(), url


def test_create_and_invite_say_the_raters_needed_and_warn_until_every_pair_has_its_overlap(
    tmp_path, monkeypatch
):
    runner, url = _cli(tmp_path, monkeypatch)
    args = ["survey", "create", "s", "--design", "30", "--per-rater", "12", "--overlap", "2"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "overlap 2 needs at least 2 raters" in result.stdout and "5 raters" in result.stdout
    result = runner.invoke(app, ["survey", "invite", "s", "--raters", "2"])
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning")]
    assert len(warnings) == 1 and "6 not asked" in warnings[0] and "3 more raters" in warnings[0]
    status = runner.invoke(app, ["survey", "status", "s"])
    assert "6 not asked" in status.stderr
    result = runner.invoke(app, ["survey", "invite", "s", "--raters", "3", "-o", "more.csv"])
    assert result.exit_code == 0 and "warning" not in result.stderr
    # independent check in the database: every start pair asked by exactly 2 raters
    frame = SurveyStore(url).answers("s")
    design = frame[frame["expected"].isna() & (frame["role"] == "pair")]
    per_pair = design.groupby("pair_id")["rater"].nunique()
    assert len(per_pair) == 30 and set(per_pair) == {2}
    assert not design.duplicated(["rater", "pair_id"]).any()


def test_a_revoked_rater_no_longer_counts_for_the_overlap(tmp_path):
    surveys = SurveyStore(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    settings = SurveySettings(per_rater=5, overlap=1, checks=0, repeats=0.0)
    surveys.create("s", start_design(10, seed=0), settings)
    surveys.invite("s", 2)
    assert survey_coverage(surveys, "s").complete
    surveys.revoke("s", "rater-2")
    state = survey_coverage(surveys, "s")
    assert (state.raters, state.full, state.not_asked) == (1, 5, 5)
    # the next raters take the next chunks (the revoked rater's index is not given again):
    # the number of further raters the warning names is the number that completes the design
    assert state.more == 2
    surveys.invite("s", 1)
    assert not survey_coverage(surveys, "s").complete
    surveys.invite("s", 1)
    assert survey_coverage(surveys, "s").complete


def test_list_delete_and_link_from_the_command_line(tmp_path, monkeypatch):
    runner, url = _cli(tmp_path, monkeypatch)
    assert runner.invoke(app, ["survey", "create", "one", "--design", "6"]).exit_code == 0
    made = runner.invoke(app, ["survey", "create", "two\u202e", "--design", "6"])
    assert made.exit_code != 0  # a bidi override is refused in a name
    assert runner.invoke(app, ["survey", "create", "two", "--design", "6"]).exit_code == 0
    assert runner.invoke(app, ["survey", "invite", "two", "--raters", "3"]).exit_code == 0
    listed = runner.invoke(app, ["survey", "list", "--json"])
    rows = json.loads(listed.stdout)
    assert [(r["name"], r["raters"], r["answers"], r["open"]) for r in rows] == [
        ("one", 0, 0, True),
        ("two", 3, 0, True),
    ]
    table = runner.invoke(app, ["survey", "list"]).stdout
    assert "one" in table and "operator" in table and "open" in table
    # delete: an unknown name, a wrong confirmation, no confirmation: nothing deleted
    assert runner.invoke(app, ["survey", "delete", "nope", "--yes"]).exit_code == 1
    assert runner.invoke(app, ["survey", "delete", "two"], input="one\n").exit_code == 1
    assert runner.invoke(app, ["survey", "delete", "two"], input="").exit_code == 1
    assert len(SurveyStore(url).list_surveys()) == 2
    done = runner.invoke(app, ["survey", "delete", "two"], input="two\n")
    assert done.exit_code == 0 and "3 raters" in done.stdout
    store = SurveyStore(url)
    one = store.get("one")
    with store.engine.connect() as conn:
        for table_ in (RATERS, QUEUE, ANSWERS):
            assert conn.scalar(select(func.count()).select_from(table_)) == 0
        assert conn.scalar(select(func.count()).select_from(SURVEYS)) == 1
        pairs = conn.scalar(select(func.count()).select_from(PAIRS))
        assert pairs == conn.scalar(select(func.count()).where(PAIRS.c.survey_id == one.id))
    assert [s.name for s in store.list_surveys()] == ["one"]
    # link: a new organiser token, printed once; the old one stops working
    linked = runner.invoke(app, ["survey", "link", "one"])
    assert linked.exit_code == 0 and "no longer works" in linked.stdout
    token = linked.stdout.strip().splitlines()[-1].split("organiser=")[1]
    assert store.organiser("one", token) is not None
    again = runner.invoke(app, ["survey", "link", "one"])
    assert store.organiser("one", token) is None
    assert store.organiser("one", again.stdout.strip().split("organiser=")[1]) is not None
    assert runner.invoke(app, ["survey", "link", "nope"]).exit_code == 1


def test_delete_removes_the_answers_and_the_new_organiser_link_replaces_the_old(database_url):
    surveys = SurveyStore(database_url)
    settings = SurveySettings(checks=0, repeats=0.0)
    _, first = surveys.create("s", start_design(4, seed=1), settings)
    surveys.create("kept", start_design(4, seed=2), settings)
    links = surveys.invite("s", 2)
    access = surveys.rater("s", links[0][1].split("token=")[1])
    surveys.answer(access, 0, 1.0)
    surveys.invite("kept", 1)
    _, second = new_organiser_token(surveys, "s")
    assert surveys.organiser("s", first) is None and surveys.organiser("s", second) is not None
    assert delete_survey(surveys, "s") == {"raters": 2, "answers": 1, "pairs": 4}
    with pytest.raises(SurveyError, match="no survey named"):
        delete_survey(surveys, "s")
    assert [s.name for s in survey_summaries(surveys)] == ["kept"]
    assert len(surveys.answers("kept")) == 4  # the other survey's queue untouched


def test_only_the_owner_or_the_operator_may_delete_or_relink(tmp_path):
    operator = SurveyStore(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    ann, bob = operator.acting_for("ann"), operator.acting_for("bob")
    ann.create("anns", start_design(4, seed=1), SurveySettings(checks=0))
    assert [s.name for s in survey_summaries(bob)] == []
    assert [s.owner for s in survey_summaries(operator)] == ["ann"]
    for action in (delete_survey, new_organiser_token):
        with pytest.raises(SurveyError, match="not yours"):
            action(bob, "anns")
    assert delete_survey(operator, "anns")["pairs"] == 4


def test_status_shows_a_dash_with_the_reason_and_json_keeps_null(tmp_path, monkeypatch):
    runner, _ = _cli(tmp_path, monkeypatch)
    assert runner.invoke(app, ["survey", "create", "s", "--design", "6"]).exit_code == 0
    assert runner.invoke(app, ["survey", "invite", "s", "--raters", "2"]).exit_code == 0
    result = runner.invoke(app, ["survey", "status", "s", "--json", "state.json"])
    assert result.exit_code == 0
    assert MISSING in result.stdout and REASONS["retest_agreement"] in result.stdout
    assert "nan" not in result.stdout.lower() and "None" not in result.stdout
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["raters"][0]["retest_agreement"] is None


def test_missing_figures_are_a_dash_with_their_reason():
    assert shown(float("nan"), "{:+.2f}", "bias") == f"{MISSING} ({REASONS['bias']})"
    assert shown(None, "{:.0%}", "retest_agreement", reason=False) == MISSING
    assert shown(0.25, "{:.1f}", "seconds_per_answer", " s") == "0.2 s"
    assert reason_note({"alpha": "α"}, {"alpha": [0.5]}) is None
    assert REASONS["alpha"] in reason_note({"alpha": "α"}, {"alpha": [0.5, None]})
    frame = pd.DataFrame({"x": [1.0, float("nan")]})
    assert shown(frame["x"].iloc[1], "{:.1f}", "agreement", reason=False) == MISSING


def test_a_batch_shared_by_fewer_raters_than_the_overlap_is_warned_about(tmp_path, monkeypatch):
    runner, url = _cli(tmp_path, monkeypatch)
    args = ["survey", "create", "s", "--design", "6", "--overlap", "3"]
    assert runner.invoke(app, args).exit_code == 0
    invited = runner.invoke(app, ["survey", "invite", "s", "--raters", "2"])
    assert "overlap 3 needs 3" in invited.stderr and "1 more rater " in invited.stderr
    result = runner.invoke(app, ["survey", "next", "s", "--batch", "4"])
    assert result.exit_code == 0, result.output
    assert "each pair of a batch is rated by 2 raters only" in result.stderr
    frame = SurveyStore(url).answers("s")
    batch = frame[frame["batch"] == 1]
    assert set(batch.groupby("pair_id")["rater"].nunique()) == {2}  # as the warning says


@pytest.mark.parametrize("seed", range(5))
def test_pair_ranges_name_exactly_the_given_pairs(seed):
    rng = np.random.default_rng(seed)
    indices = np.flatnonzero(rng.random(40) < 0.5)
    text = pair_ranges(indices, shown=100)
    named_pairs = set()
    for part in text.split(" ", 1)[1].split(", "):
        first, _, last = part.partition("-")
        named_pairs |= set(range(int(first), int(last or first) + 1))
    assert named_pairs == {int(i) + 1 for i in indices}
    assert "more ranges" in pair_ranges(np.array([0, 2, 4, 6, 8]), shown=3)
