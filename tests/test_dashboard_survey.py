"""The survey pages (AppTest): a rater's link shows their pairs one at a time and nothing else,
answers are stored once per place, going back changes an answer; wrong, revoked and closed links
show one sentence; the organiser's link shows progress and the grid learned so far."""

from __future__ import annotations

import pytest
from dashboard_support import fresh_machine
from streamlit.testing.v1 import AppTest

from dashboard import APP_PATH
from dashboard.surveys import LINK_SENTENCE, PUBLIC_SENTENCE
from ranking_core.panels import start_design
from ranking_core.surveys import SurveySettings, SurveyStore

INSTRUCTIONS = "Rate **each** pair.\n<b>not HTML</b> [a link](http://x)"


def _survey(store, **settings) -> tuple[SurveyStore, str, list[tuple[str, str]]]:
    surveys = SurveyStore(store)
    values = {"checks": 1, "repeats": 0.0, "batch": 0, **settings}
    _, organiser = surveys.create(
        "ward *7*", start_design(4, seed=2), SurveySettings(**values), INSTRUCTIONS
    )
    return surveys, organiser, surveys.invite("ward *7*", ["Dr <i>A</i>", "Dr B"])


def _open(survey: str, **params) -> AppTest:
    at = AppTest.from_file(str(APP_PATH), default_timeout=120)
    at.query_params["survey"] = survey
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def _token(link: str) -> str:
    return link.split("token=")[1]


def _progress_text(at: AppTest) -> str:
    return at.get("progress")[0].proto.text


def test_a_rater_answers_goes_back_and_finishes(tmp_path, monkeypatch):
    surveys, _, links = _survey(fresh_machine(tmp_path, monkeypatch), unit="mmol/L")
    at = _open("ward *7*", token=_token(links[0][1]))
    assert [t.value for t in at.text] == [INSTRUCTIONS]  # as text, not Markdown or HTML
    assert len(at.sidebar.children) == 0  # no navigation, no sidebar
    access = surveys.rater("ward *7*", _token(links[0][1]))
    queue = surveys.queue(access.rater_id)
    n = len(queue)
    assert _progress_text(at) == f"1 of {n}"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {
        "Reference": f"{queue[0].reference / 18.016:.1f} mmol/L",
        "Meter": f"{queue[0].estimate / 18.016:.1f} mmol/L",
    }
    risk = at.radio(key=f"survey_risk_{access.rater_id}_0")
    assert risk.label == "Risk" and risk.value is None
    assert risk.options[:3] == ["0 none", "0.5", "1 slight"] and risk.options[-1] == "4 extreme"
    at.button[0].click().run()  # nothing chosen: nothing stored, the same pair again
    assert "Choose a risk" in at.warning[0].value and _progress_text(at) == f"1 of {n}"
    answers = [0.5, 2.0, 3.5, 1.0, 4.0]
    for position in range(n):
        at.radio(key=f"survey_risk_{access.rater_id}_{position}").set_value(answers[position])
        at.button(
            key=f"FormSubmitter:survey_form_{access.rater_id}_{position}-Save and next"
        ).click().run()
        assert not at.exception, at.exception
        if position == 1:  # back one pair, change it, on again
            assert _progress_text(at) == f"3 of {n}"
            at.button(key="survey_back").click().run()
            assert _progress_text(at) == f"2 of {n}"
            assert at.radio(key=f"survey_risk_{access.rater_id}_1").value == 2.0
            at.radio(key=f"survey_risk_{access.rater_id}_1").set_value(2.5)
            at.button(
                key=f"FormSubmitter:survey_form_{access.rater_id}_1-Save and next"
            ).click().run()
            answers[1] = 2.5
    assert any("All pairs rated" in s.value for s in at.success)
    frame = surveys.answers("ward *7*")
    mine = frame[frame["rater"] == "Dr <i>A</i>"]
    assert mine["rating"].tolist() == answers[:n]  # one answer per place, the changed one kept
    # the link resumes on a fresh session (another device)
    again = _open("ward *7*", token=_token(links[0][1]))
    assert any("All pairs rated" in s.value for s in again.success)


@pytest.mark.parametrize("case", ["wrong", "revoked", "closed", "no token", "organiser as rater"])
def test_a_bad_link_shows_one_sentence_and_nothing_else(tmp_path, monkeypatch, case):
    surveys, organiser, links = _survey(fresh_machine(tmp_path, monkeypatch))
    token = {"wrong": "x" * 43, "no token": ""}.get(case, _token(links[0][1]))
    if case == "revoked":
        surveys.revoke("ward *7*", "Dr <i>A</i>")
    if case == "closed":
        surveys.close("ward *7*")
    if case == "organiser as rater":
        token = organiser
    at = _open("ward *7*", token=token)
    assert [e.value for e in at.error] == [LINK_SENTENCE]
    assert len(at.main.children) == 1 and len(at.sidebar.children) == 0
    # a rater's token never opens the organiser's page
    at = _open("ward *7*", organiser=_token(links[1][1]))
    assert [e.value for e in at.error] == [LINK_SENTENCE]


def test_the_public_demo_shows_no_survey(tmp_path, monkeypatch):
    _, organiser, links = _survey(fresh_machine(tmp_path, monkeypatch))
    monkeypatch.setenv("RISKGRID_PUBLIC", "1")
    for params in ({"token": _token(links[0][1])}, {"organiser": organiser}):
        at = _open("ward *7*", **params)
        assert [e.value for e in at.error] == [PUBLIC_SENTENCE] and len(at.main.children) == 1


@pytest.mark.slow
def test_the_organiser_sees_progress_and_the_grid_so_far(tmp_path, monkeypatch):
    surveys = SurveyStore(fresh_machine(tmp_path, monkeypatch))
    _, organiser = surveys.create(
        "trial", start_design(14, seed=3), SurveySettings(checks=2, repeats=0.2, batch=0), ""
    )
    at = _open("trial", organiser=organiser)
    assert "No raters yet" in at.info[0].value
    for _, link in surveys.invite("trial", 3):
        access = surveys.rater("trial", _token(link))
        for item in surveys.queue(access.rater_id):
            surveys.answer(
                access, item.position, min(4.0, round(abs(item.reference - item.estimate) / 60) / 2)
            )
    at = _open("trial", organiser=organiser)
    table = at.dataframe[0].value
    assert table["Rater"].tolist() == ["rater-1", "rater-2", "rater-3"]
    assert (table["Answered"] == table["Queued"]).all()
    assert table["Check pairs as expected"].str.endswith("of 2").all()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Answers learned from"] == str(int(table["Answered"].sum()))
    assert metrics["Still uncertain"].endswith("%")
    assert not metrics["Krippendorff's α"].startswith("—")  # every pair rated by 3 raters
    assert len(at.get("image")) == 1  # the grid learned so far, its open categories pale


def test_a_signed_in_organiser_creates_a_survey_on_the_surveys_page(tmp_path, monkeypatch):
    store = fresh_machine(tmp_path, monkeypatch)
    at = AppTest.from_file(str(APP_PATH.with_name("views") / "surveys.py"), default_timeout=120)
    at.run()
    at.text_input(key="survey_new_name").set_value("pilot <b>1</b>")
    at.number_input(key="survey_new_n").set_value(12)
    at.number_input(key="survey_new_low").set_value(40)
    at.button(key="FormSubmitter:survey_create-Create").click().run()
    assert not at.exception, at.exception
    link = at.code[0].value
    assert link.startswith("http://127.0.0.1:8501/?survey=pilot+%3Cb%3E1%3C%2Fb%3E&organiser=")
    survey = SurveyStore(store).get("pilot <b>1</b>")
    assert survey.settings.glucose_range == (40.0, 600.0)
    assert SurveyStore(store).organiser("pilot <b>1</b>", link.split("organiser=")[1])


def test_the_organiser_is_told_what_the_overlap_needs_and_sees_dashes_not_none(
    tmp_path, monkeypatch
):
    surveys = SurveyStore(fresh_machine(tmp_path, monkeypatch))
    settings = SurveySettings(per_rater=6, overlap=2, checks=0, repeats=0.0, batch=0)
    _, organiser = surveys.create("short", start_design(14, seed=3), settings, "")
    for _, link in surveys.invite("short", 2):  # 2 raters; the overlap needs ⌈14·2/6⌉ = 5
        access = surveys.rater("short", _token(link))
        for item in surveys.queue(access.rater_id):
            surveys.answer(
                access, item.position, min(4.0, round(abs(item.reference - item.estimate) / 60) / 2)
            )
    at = _open("short", organiser=organiser)
    captions = " ".join(c.value for c in at.caption)
    assert "needs at least 2 raters" in captions and "5 raters are invited" in captions
    warning = " ".join(w.value for w in at.warning)
    assert "2 not asked" in warning and "not measurable" in warning
    table = at.dataframe[0].value
    assert table["Retest agreement (within 0.5)"].tolist() == ["—", "—"]
    assert "None" not in table.astype(str).to_numpy().ravel().tolist()
    assert "no pair rated twice" in captions
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Krippendorff's α"] == "—"  # no pair rated by two raters
    assert "no pair rated by two raters" in captions


@pytest.mark.slow
def test_the_next_batch_is_planned_in_a_worker_once_the_last_is_answered(tmp_path, monkeypatch):
    """Adaptive batches: the organiser's page answers at once while a job of the server's runner
    plans the next batch in a worker process; the batch is added once, to every rater's queue."""
    import time

    surveys = SurveyStore(fresh_machine(tmp_path, monkeypatch))
    _, organiser = surveys.create(
        "trial", start_design(14, seed=3), SurveySettings(checks=0, repeats=0.0, batch=4), ""
    )
    links = surveys.invite("trial", 3)
    for _, link in links:
        access = surveys.rater("trial", _token(link))
        for item in surveys.queue(access.rater_id):
            surveys.answer(
                access, item.position, min(4.0, round(abs(item.reference - item.estimate) / 60) / 2)
            )
    queued = {
        rater: len(surveys.queue(surveys.rater("trial", _token(link)).rater_id))
        for rater, link in links
    }
    at = _open("trial", organiser=organiser)
    deadline = time.monotonic() + 300
    while surveys.get("trial").batches < 2 and time.monotonic() < deadline:
        assert any("being planned" in i.value for i in at.info) or not at.info
        time.sleep(1)
        at.run()
        assert not at.exception, at.exception
    assert surveys.get("trial").batches == 2
    for rater, link in links:
        queue = surveys.queue(surveys.rater("trial", _token(link)).rater_id)
        assert len(queue) > queued[rater]  # the new pairs are in every rater's queue
    at.run()  # a second look starts no second batch
    time.sleep(2)
    assert surveys.get("trial").batches == 2
