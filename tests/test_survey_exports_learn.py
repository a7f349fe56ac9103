"""A survey export read as a rating set keeps a test-retest answer equal to the first one, and
`riskgrid learn` warns when λ lands on the edge of its candidate grid."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.learn import PRESETS, learn_grid, settings_advice
from ranking_core.learn.result import lambda_at_edge
from ranking_core.panels import start_design
from ranking_core.ratings import RETEST_ROLES, read_rating_set
from ranking_core.surveys import SurveySettings, SurveyStore
from ranking_core.surveys.design import ROLES
from ranking_core.surveys.results import export_frame

HEADER = "reference,estimate,rating,rater,answered_at,role\n"
ROWS = [
    "100,100,0.0,ann,2026-01-01T10:00:00Z,pair",
    "100,250,2.0,ann,2026-01-01T10:00:05Z,pair",
    "60,200,2.5,ann,2026-01-01T10:00:09Z,pair",
    "100,250,2.0,ann,2026-01-01T10:00:20Z,repeat",  # the same answer again: evidence
]


def test_the_retest_role_is_the_one_survey_exports_write():
    assert RETEST_ROLES[0] in ROLES and RETEST_ROLES[0] == "repeat"


def test_an_identical_retest_answer_is_kept_and_a_true_duplicate_still_refused(tmp_path):
    source = tmp_path / "export.csv"
    source.write_text(HEADER + "\n".join(ROWS) + "\n")
    read = read_rating_set(source)
    assert len(read.frame) == 4 and not read.problems  # before: line 5 "repeats an earlier row"
    # the same file with the role column dropped: the repeat is refused as before
    plain = tmp_path / "plain.csv"
    pd.read_csv(source).drop(columns="role").to_csv(plain, index=False)
    refused = read_rating_set(plain)
    assert len(refused.frame) == 3
    assert refused.problems[0].lines == (5,) and "repeats an earlier row" in refused.report()
    # a first answer given twice (role pair) and a retest given twice are true duplicates
    doubled = tmp_path / "doubled.csv"
    doubled.write_text(HEADER + "\n".join([*ROWS, ROWS[1], ROWS[3]]) + "\n")
    twice = read_rating_set(doubled)
    assert len(twice.frame) == 4 and twice.problems[0].lines == (6, 7)


def test_a_real_survey_export_with_an_identical_retest_answer_reads_whole(tmp_path):
    surveys = SurveyStore(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    settings = SurveySettings(repeats=1.0, checks=0)  # every pair shown again
    surveys.create("s", start_design(8, seed=3), settings)
    link = surveys.invite("s", 1)[0][1]
    access = surveys.rater("s", link.split("token=")[1])
    for item in surveys.queue(access.rater_id):  # the same answer at the retest
        surveys.answer(access, item.position, 1.0 if item.reference < item.estimate else 0.5)
    frame = export_frame(surveys.answers("s"))
    assert (frame["role"] == "repeat").sum() > 0
    path = tmp_path / "ratings.csv"
    frame.to_csv(path, index=False)
    read = read_rating_set(path)
    assert len(read.frame) == len(frame) and not read.problems


def _ratings(m: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ref = rng.integers(40, 400, m)
    est = (ref * rng.uniform(0.5, 1.8, m)).round()
    rating = np.clip(np.abs(est - ref) / ref * 4, 0, 4).round(1)
    return pd.DataFrame({"reference": ref, "estimate": est, "rating": rating})


@pytest.fixture(scope="module")
def small_fit():
    frame = _ratings(20, 1)
    X = frame[["reference", "estimate"]].to_numpy(float)
    return learn_grid((X, frame["rating"].to_numpy(float)), PRESETS["best"])


def test_lambda_on_the_edge_of_its_grid_is_named_with_the_grid_range(small_fit):
    settings = PRESETS["best"]
    # the candidate grid λ₀·q^j, j < n_lams, computed here from the settings
    smallest = settings.lam0 * settings.q ** (settings.n_lams - 1)
    low = dataclasses.replace(small_fit, lam_chosen=smallest)
    high = dataclasses.replace(small_fit, lam_chosen=settings.lam0)
    inside = dataclasses.replace(small_fit, lam_chosen=settings.lam0 * settings.q**50)
    assert "smallest candidate" in lambda_at_edge(low)
    assert f"{smallest:.3g}" in lambda_at_edge(low) and f"{settings.lam0:.3g}" in lambda_at_edge(
        low
    )
    assert "largest candidate" in lambda_at_edge(high)
    assert lambda_at_edge(inside) is None
    assert lambda_at_edge(low) in settings_advice(low)
    by_hand = dataclasses.replace(low.settings, rule="manual", lam=smallest)
    manual = dataclasses.replace(low, settings=by_hand)
    assert lambda_at_edge(manual) is None


def test_learn_warns_on_standard_error_when_lambda_is_the_smallest_candidate(tmp_path):
    source = tmp_path / "r20.csv"
    _ratings(20, 1).to_csv(source, index=False)
    result = CliRunner().invoke(app, ["learn", str(source), "--out-dir", str(tmp_path / "g")])
    assert result.exit_code == 0, result.output
    settings = PRESETS["best"]
    smallest = settings.lam0 * settings.q ** (settings.n_lams - 1)
    assert f"{smallest:.4g}" in result.stdout  # the λ chosen, in the settings table
    edge = [line for line in result.stderr.splitlines() if "smallest candidate" in line]
    assert len(edge) == 1 and f"{smallest:.3g}" in edge[0]
    assert "smallest candidate" not in result.stdout


def test_the_learn_page_warns_when_lambda_is_the_smallest_candidate(tmp_path, monkeypatch):
    from dashboard_support import fresh_machine, open_app

    fresh_machine(tmp_path, monkeypatch)
    at = open_app(learn_source="Upload a file")
    data = _ratings(20, 1).to_csv(index=False).encode()
    at.file_uploader(key="learn_upload").set_value(("r20.csv", data, "text/csv"))
    at.run()
    assert not at.exception, at.exception
    result = at.session_state["learn_result"]
    assert result.lam_chosen == pytest.approx(float(np.min(result.lams)), rel=1e-12)
    edge = [w.value for w in at.warning if "smallest candidate" in w.value]
    assert len(edge) == 1 and f"{float(np.min(result.lams)):.3g}" in edge[0]
    assert "\n" not in edge[0]
