"""Rating surveys: the pure logic (answer scale, overlap, repeats, checks, tokens) against brute
counts, and the stored survey on SQLite and PostgreSQL (links, idempotent answers, revoking,
closing, batches, export read back as a rating set)."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.panels import start_design
from ranking_core.ratings import read_rating_set
from ranking_core.surveys import SurveySettings, SurveyStore, risk_label, token_hash, tokens_match
from ranking_core.surveys.design import (
    RISK_OPTIONS,
    batch_chunk,
    check_pairs,
    check_passed,
    new_token,
    queue_order,
    start_chunk,
)
from ranking_core.surveys.results import (
    EXPORT_COLUMNS,
    batch_answered,
    export_frame,
    next_batch,
    rater_progress,
)
from ranking_core.surveys.storage import SurveyError


def test_answer_scale_has_halves_and_the_seg_words_at_whole_numbers():
    labels = [risk_label(v) for v in RISK_OPTIONS]
    assert labels == [
        "0 none",
        "0.5",
        "1 slight",
        "1.5",
        "2 moderate",
        "2.5",
        "3 great",
        "3.5",
        "4 extreme",
    ]
    assert risk_label(-0.0) == "0 none"  # a clipped negative answer is 0


@pytest.mark.parametrize(("n", "k", "overlap"), [(30, 15, 2), (24, 10, 3), (7, 7, 2)])
def test_start_chunks_give_every_pair_its_overlap_and_no_rater_a_pair_twice(n, k, overlap):
    raters = -(-n * overlap // k)  # ⌈n·R/K⌉ raters are needed
    chunks = [start_chunk(n, k, j) for j in range(raters)]
    assert all(len(c) == len(set(c)) == k for c in chunks)
    counts = Counter(p for c in chunks for p in c)
    assert set(counts) == set(range(n)) and min(counts.values()) >= overlap
    assert max(counts.values()) <= overlap + 1  # the last rater's chunk may wrap once


def test_batch_chunks_keep_the_overlap_among_the_active_raters():
    for pairs, overlap, raters in [(10, 2, 3), (20, 2, 8), (5, 3, 2)]:
        chunks = [batch_chunk(pairs, overlap, raters, j) for j in range(raters)]
        counts = Counter(p for c in chunks for p in c)
        assert set(counts) == set(range(pairs))
        assert min(counts.values()) >= min(overlap, raters)
        assert all(len(c) == len(set(c)) for c in chunks)


def test_queue_hides_repeats_after_their_first_showing_and_places_every_check():
    rng = np.random.default_rng(0)
    pairs, checks = list(range(100, 140)), [1, 2, 3]
    order = queue_order(pairs, checks, 0.25, rng)
    roles = Counter(role for _, role in order)
    assert roles == {"pair": 40, "repeat": 10, "check": 3}
    assert sorted(p for p, r in order if r == "pair") == pairs
    for place, (pair, role) in enumerate(order):
        if role == "repeat":
            assert place - order.index((pair, "pair")) > 3


def test_check_pairs_are_obvious_and_inside_the_range():
    checks = check_pairs(4, (20, 600))
    assert checks["expected"].tolist() == ["none", "extreme", "none", "extreme"]
    diagonal = checks[checks["expected"] == "none"]
    assert (diagonal["reference"] == diagonal["estimate"]).all()
    extreme = checks[checks["expected"] == "extreme"]
    assert (extreme["reference"] <= 60).all() and (extreme["estimate"] >= 400).all()
    inside = check_pairs(6, (70, 250))
    assert inside[["reference", "estimate"]].stack().between(70, 250).all()
    assert check_passed("none", 0.5) and not check_passed("none", 1)
    assert check_passed("extreme", 3) and not check_passed("extreme", 2.5)


def test_tokens_have_256_bits_and_are_compared_by_their_hash():
    tokens = {new_token() for _ in range(200)}
    assert len(tokens) == 200 and all(len(t) >= 43 for t in tokens)  # 32 bytes, base64
    token = tokens.pop()
    assert tokens_match(token, token_hash(token)) and not tokens_match(
        token + "x", token_hash(token)
    )
    assert len(token_hash(token)) == 64 and token not in token_hash(token)


def test_settings_refuse_bad_values():
    for bad in (
        {"unit": "g/L"},
        {"glucose_range": (500, 100)},
        {"overlap": 0},
        {"repeats": 1.5},
        {"base_url": "ftp://x"},
    ):
        with pytest.raises(ValueError):
            SurveySettings(**bad)


# -- the stored survey -------------------------------------------------------------------------
def _survey(database_url, **settings) -> tuple[SurveyStore, str]:
    surveys = SurveyStore(database_url)
    values = {"per_rater": 6, "overlap": 2, "repeats": 0.34, "checks": 2, "batch": 4, **settings}
    chosen = SurveySettings(**values)
    surveys.create(
        "study",
        start_design(12, seed=1, glucose_range=chosen.glucose_range),
        chosen,
        "Rate each pair.",
    )
    return surveys, "study"


def _token(link: str) -> str:
    return link.split("token=")[1]


def test_links_answers_revoke_and_close(database_url):
    surveys, name = _survey(database_url)
    with pytest.raises(SurveyError, match="already exists"):
        surveys.create(name, start_design(3), SurveySettings())
    links = surveys.invite(name, ["Dr A", "Dr B", "Dr C"])
    assert [r for r, _ in links] == ["Dr A", "Dr B", "Dr C"]
    # no token is stored, only its hash
    with surveys.engine.connect() as conn:
        dump = json.dumps(
            [
                list(map(str, row))
                for table in ("surveys", "survey_raters")
                for row in conn.execute(text(f"SELECT * FROM {table}"))
            ]
        )
    assert not any(_token(link) in dump for _, link in links)
    a = surveys.rater(name, _token(links[0][1]))
    assert a is not None and a.rater == "Dr A"
    assert surveys.rater(name, "not-a-token") is None
    assert surveys.rater("other", _token(links[0][1])) is None
    assert surveys.organiser(name, _token(links[0][1])) is None
    queue = surveys.queue(a.rater_id)
    assert Counter(q.role for q in queue) == {"pair": 6, "repeat": 2, "check": 2}
    # the same place saved twice (double click, reload) is one answer; going back changes it
    surveys.answer(a, 0, 1.5)
    surveys.answer(a, 0, 1.5)
    surveys.answer(a, 0, 2.0)
    surveys.answer(a, 1, 0.0)
    frame = surveys.answers(name)
    done = frame[frame["rating"].notna()]
    assert done[["rater", "position", "rating"]].values.tolist() == [
        ["Dr A", 0, 2.0],
        ["Dr A", 1, 0.0],
    ]
    with pytest.raises(SurveyError, match="not in this rater's queue"):
        surveys.answer(a, 99, 1.0)
    with pytest.raises(SurveyError, match=r"one of 0, 0\.5"):
        surveys.answer(a, 2, 1.25)
    surveys.revoke(name, "Dr B")
    assert surveys.rater(name, _token(links[1][1])) is None
    b = a.__class__(a.survey, a.rater_id + 1, "Dr B")
    with pytest.raises(SurveyError, match="no longer open"):
        surveys.answer(b, 0, 1.0)
    surveys.close(name)
    assert surveys.rater(name, _token(links[0][1])) is None
    with pytest.raises(SurveyError, match="no longer open"):
        surveys.answer(a, 2, 1.0)
    assert len(export_frame(surveys.answers(name))) == 2  # export still works


def test_export_reads_back_as_a_rating_set_and_progress_counts_retests(database_url, tmp_path):
    surveys, name = _survey(database_url)
    ((_, link),) = surveys.invite(name, 1)
    access = surveys.rater(name, _token(link))
    queue = surveys.queue(access.rater_id)
    first: dict[int, float] = {}
    for item in queue:  # a rater who answers |ref − meter| / 100, and 0.5 more on repeats
        rating = min(4.0, round(abs(item.reference - item.estimate) / 50) / 2)
        if item.role == "repeat":
            rating = min(4.0, first[(item.reference, item.estimate)] + 1.0)
        first.setdefault((item.reference, item.estimate), rating)
        surveys.answer(access, item.position, rating)
    frame = surveys.answers(name)
    progress = rater_progress(frame).iloc[0]
    repeats = sum(q.role == "repeat" for q in queue)
    assert progress["answered"] == len(queue) and progress["repeats"] == repeats
    expected_agreement = np.mean(
        [first[(q.reference, q.estimate)] == 4.0 for q in queue if q.role == "repeat"]
    )
    assert progress["retest_agreement"] == pytest.approx(expected_agreement)
    assert batch_answered(frame, 0) and not batch_answered(frame, 1)
    out = export_frame(frame)
    assert tuple(out.columns) == EXPORT_COLUMNS and len(out) == len(queue)
    path = tmp_path / "ratings.csv"
    out.to_csv(path, index=False)
    read = read_rating_set(path)
    assert not read.problems and len(read.frame) == len(queue)
    assert read.frame["rater"].unique().tolist() == ["rater-1"]


def test_a_batch_is_added_once_and_shared_with_the_overlap(database_url):
    surveys, name = _survey(database_url, overlap=2)
    surveys.invite(name, 3)
    pairs = pd.DataFrame({"reference": [100, 200, 300, 400], "estimate": [90, 260, 150, 420]})
    assert surveys.append_batch(name, pairs, after_batches=1) == 2
    assert surveys.append_batch(name, pairs, after_batches=1) == 2  # proposed twice: added once
    frame = surveys.answers(name)
    batch = frame[frame["batch"] == 1]
    assert batch.groupby("pair_id")["rater"].nunique().min() >= 2
    assert set(map(tuple, batch[["reference", "estimate"]].to_numpy().tolist())) == set(
        map(tuple, pairs.to_numpy().tolist())
    )
    with pytest.raises(SurveyError, match="inside the survey's range"):
        surveys.append_batch(name, pd.DataFrame({"reference": [5], "estimate": [100]}), 2)


@pytest.mark.slow
def test_next_batch_is_planned_inside_the_range_from_the_answers(tmp_path):
    surveys, name = _survey(
        f"sqlite:///{tmp_path / 'db.sqlite3'}", glucose_range=(40, 400), per_rater=None, batch=6
    )
    links = surveys.invite(name, 3)
    assert next_batch(surveys, name) is None  # nothing answered yet
    for _, link in links:
        access = surveys.rater(name, _token(link))
        for item in surveys.queue(access.rater_id):
            rating = min(4.0, round(abs(item.reference - item.estimate) / 40) / 2)
            surveys.answer(access, item.position, rating)
    assert next_batch(surveys, name) == 2
    frame = surveys.answers(name)
    new = frame[frame["batch"] == 1]
    assert new["pair_id"].nunique() == 6
    assert new[["reference", "estimate"]].stack().between(40, 400).all()
    old = set(
        map(tuple, frame.loc[frame["batch"] == 0, ["reference", "estimate"]].to_numpy().tolist())
    )
    assert not old & set(map(tuple, new[["reference", "estimate"]].to_numpy().tolist()))
    assert new.groupby("pair_id")["rater"].nunique().min() >= 2


def test_cli_contract(tmp_path, monkeypatch):
    monkeypatch.setenv("RISKGRID_DATABASE_URL", f"sqlite:///{tmp_path / 'db.sqlite3'}")
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "survey",
            "create",
            "trial",
            "--design",
            "10",
            "--range",
            "40",
            "300",
            "--unit",
            "mmol/L",
            "--base-url",
            "https://x.org/rg",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "https://x.org/rg/?survey=trial&organiser=" in result.output
    names = tmp_path / "names.txt"
    names.write_text("Dr Ann\n=cmd()\n", encoding="utf-8")
    links = tmp_path / "links.csv"
    result = runner.invoke(
        app, ["survey", "invite", "trial", "--names", str(names), "-o", str(links)]
    )
    assert result.exit_code == 0, result.output
    table = pd.read_csv(links)
    assert table.columns.tolist() == ["rater", "link"]
    assert table["rater"].tolist() == ["Dr Ann", "'=cmd()"]  # no spreadsheet formula
    assert table["link"].str.startswith("https://x.org/rg/?survey=trial&token=").all()
    assert runner.invoke(app, ["survey", "revoke", "trial", "Dr Ann"]).exit_code == 0
    assert runner.invoke(app, ["survey", "revoke", "trial", "nobody"]).exit_code == 1
    state = tmp_path / "status.json"
    assert runner.invoke(app, ["survey", "status", "trial", "--json", str(state)]).exit_code == 0
    data = json.loads(state.read_text())
    assert [r["revoked"] for r in data["raters"]] == [True, False] and data["answers"] == 0
    # a batch by hand: with fewer than 10 answers, more of the space-filling design
    result = runner.invoke(app, ["survey", "next", "trial", "--batch", "3"])
    assert result.exit_code == 0 and "batch 2 added: 3 pairs" in result.output, result.output
    added = SurveyStore().answers("trial")
    assert added.loc[added["batch"] == 1, ["reference", "estimate"]].stack().between(40, 300).all()
    out = tmp_path / "ratings.csv"
    assert runner.invoke(app, ["survey", "close", "trial"]).exit_code == 0
    result = runner.invoke(app, ["survey", "export", "trial", "-o", str(out)])
    assert result.exit_code == 0 and pd.read_csv(out).columns.tolist() == list(EXPORT_COLUMNS)
    result = runner.invoke(app, ["survey", "create", "bad", "--design", "5", "--pairs", "x.csv"])
    assert result.exit_code == 1 and "either --pairs" in result.output
