"""The SEG-method survey pages (AppTest): the rater's thresholds refused with their rule, the
matrix saved with its consistency note, user text shown as text; the organiser's table with
"—" and a reason for what is missing (never None or nan); creating one on the Surveys page."""

from __future__ import annotations

import numpy as np
from dashboard_support import fresh_machine
from streamlit.testing.v1 import AppTest

from dashboard import APP_PATH
from ranking_core.surveys import SurveySettings, SurveyStore
from ranking_core.surveys.seg_method import CUT_ACTIONS, DEFAULT_SCENARIOS, Scenario
from ranking_core.surveys.seg_storage import (
    create_seg_survey,
    rater_answers,
    save_matrix,
    save_thresholds,
    stored_scenarios,
)

NAME = "seg *panel*"
SCENARIOS = [Scenario("Pump <b>x</b>", "An *adult* [link](http://x)"), Scenario("Diet", "", False)]
DIP = [[1, 2, 4, 3, 9], [2, 1, 2, 4, 8], [5, 2, 1, 2, 6], [7, 5, 3, 1, 2], [9, 8, 6, 4, 1]]


def _open(**params) -> AppTest:
    at = AppTest.from_file(str(APP_PATH), default_timeout=120)
    at.query_params["survey"] = NAME
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def _setup(tmp_path, monkeypatch):
    surveys = SurveyStore(fresh_machine(tmp_path, monkeypatch))
    survey, organiser = create_seg_survey(
        surveys, NAME, SCENARIOS, SurveySettings(unit="mmol/L", checks=0), "Read *this*."
    )
    links = surveys.invite(NAME, ["Dr <i>A</i>", "Dr B"])
    tokens = [link.split("token=")[1] for _, link in links]
    return surveys, survey, organiser, tokens


def test_the_rater_page_checks_thresholds_and_notes_a_falling_matrix(tmp_path, monkeypatch):
    surveys, survey, _, tokens = _setup(tmp_path, monkeypatch)
    access = surveys.rater(NAME, tokens[0])
    first = stored_scenarios(surveys, survey)[0]
    at = _open(token=tokens[0])
    assert at.title[0].value == r"seg \*panel\*"
    assert [t.value for t in at.text] == ["Read *this*.", "An *adult* [link](http://x)"]
    assert at.get("progress")[0].proto.text == "Scenario 1 of 2"
    key = f"seg_cut_{access.rater_id}_{first.id}_"
    for letter, value in zip(CUT_ACTIONS, [3.9, 2.8, 10.0, 13.9], strict=True):
        at.number_input(key=key + letter).set_value(value)
    at.button(
        key=f"FormSubmitter:seg_thresholds_{access.rater_id}_{first.id}-Save thresholds"
    ).click().run()
    assert "must increase strictly from A to D" in at.error[0].value
    assert rater_answers(surveys, access)[first.id].thresholds is None  # nothing stored
    at.number_input(key=key + "A").set_value(2.8)
    at.number_input(key=key + "B").set_value(3.9)
    at.button(
        key=f"FormSubmitter:seg_thresholds_{access.rater_id}_{first.id}-Save thresholds"
    ).click().run()
    assert not at.error
    for i in range(5):
        for j in range(5):
            if i != j:
                at.number_input(key=f"seg_cell_{access.rater_id}_{first.id}_{i}{j}").set_value(
                    DIP[i][j]
                )
    at.button(
        key=f"FormSubmitter:seg_matrix_{access.rater_id}_{first.id}-Save matrix"
    ).click().run()
    assert not at.exception, at.exception
    assert "Please check" in at.warning[0].value and "truth is D: 3" in at.warning[0].value
    assert at.get("progress")[0].proto.text == "Scenario 1 of 2"  # stays, with the note
    at.button(key="seg_next").click().run()
    assert at.get("progress")[0].proto.text == "Scenario 2 of 2"
    assert at.subheader[0].value == "Diet"
    # the thresholds as stored: mmol/L × 18.016 rounded to whole mg/dL
    answers = rater_answers(surveys, access)
    assert answers[first.id].thresholds == tuple(round(v * 18.016) for v in (2.8, 3.9, 10, 13.9))
    assert (answers[first.id].matrix == np.array(DIP)).all()


def test_the_organiser_sees_what_is_done_and_missing_as_a_dash(tmp_path, monkeypatch):
    surveys, survey, organiser, tokens = _setup(tmp_path, monkeypatch)
    first, second = stored_scenarios(surveys, survey)
    access = surveys.rater(NAME, tokens[0])
    save_thresholds(surveys, access, first.id, [2.8, 3.9, 10.0, 13.9])
    save_matrix(surveys, access, first.id, DIP)
    save_thresholds(surveys, access, second.id, [3.0, 4.0, 12.0, 20.0])
    at = _open(organiser=organiser)
    table = at.dataframe[1].value  # the scenarios first, then the raters
    assert table["Rater"].tolist() == ["Dr <i>A</i>"] * 2 + ["Dr B"] * 2
    assert table["Scenario"].tolist() == ["Pump <b>x</b>", "Diet"] * 2
    assert table.iloc[0]["Thresholds"] == "A ≤ 2.8 · B ≤ 3.9 · C ≤ 10.0 · D ≤ 13.9 mmol/L"
    assert table.iloc[0]["Matrix"] == "saved" and table.iloc[0]["Flags"] == "1"
    assert table.iloc[1]["Matrix"] == "— not answered yet"
    assert table.iloc[2]["Matrix"] == "— waits for the thresholds"
    assert table.iloc[3]["Flags"] == "— no matrix yet"
    text = table.astype(str).to_numpy().ravel().tolist()
    assert not any(v in ("None", "nan", "NaN", "<NA>") for v in text)
    flags = at.dataframe[2].value
    assert flags["Flag"].str.contains("truth is D: 3").all()


def test_a_seg_survey_is_created_on_the_surveys_page(tmp_path, monkeypatch):
    store = fresh_machine(tmp_path, monkeypatch)
    at = AppTest.from_file(str(APP_PATH.with_name("views") / "surveys.py"), default_timeout=120)
    at.run()
    at.text_input(key="seg_new_name").set_value("seg <b>2</b>")
    at.selectbox(key="seg_new_unit").set_value("mmol/L")
    at.button(key="FormSubmitter:seg_create-Create").click().run()
    assert not at.exception, at.exception
    link = at.code[0].value
    surveys = SurveyStore(store)
    survey = surveys.organiser("seg <b>2</b>", link.split("organiser=")[1])
    assert survey is not None and survey.method == "seg" and survey.settings.unit == "mmol/L"
    assert [s.scenario for s in stored_scenarios(surveys, survey)] == list(DEFAULT_SCENARIOS)
