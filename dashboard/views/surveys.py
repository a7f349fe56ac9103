"""The organiser's surveys for a signed-in user (in the navigation only when a login is
configured): create a survey, and see a survey's live results as its organiser link shows them.
Each survey belongs to the one who created it: the page lists, shows and changes the signed-in
user's own surveys only (a rater's link works for its rater whoever owns the survey)."""

import streamlit as st

from dashboard.common import current_user, plain
from dashboard.surveys import organiser_page, survey_store
from ranking_core.panels import start_design
from ranking_core.storage import StorageError
from ranking_core.surveys import SurveySettings
from ranking_core.surveys.design import UNITS, default_instructions

st.title("Surveys")
surveys = survey_store().acting_for(current_user())  # this user's surveys only
with st.expander("Create a survey", expanded=not surveys.list_surveys()):
    with st.form("survey_create"):
        name = st.text_input("Name (shown to raters, part of the links)", key="survey_new_name")
        design_inputs = st.columns(4)
        n = design_inputs[0].number_input("Start design: pairs", 1, 2000, 60, key="survey_new_n")
        low = design_inputs[1].number_input("Range from (mg/dL)", 0, 599, 20, key="survey_new_low")
        high = design_inputs[2].number_input("Range to (mg/dL)", 1, 600, 600, key="survey_new_high")
        unit = design_inputs[3].selectbox("Unit shown", UNITS, key="survey_new_unit")
        rater_inputs = st.columns(5)
        per_rater = rater_inputs[0].number_input(
            "Pairs per rater (0: all)", 0, 2000, 0, key="survey_new_per_rater"
        )
        overlap = rater_inputs[1].number_input(
            "Raters per pair", 1, 50, 2, key="survey_new_overlap"
        )
        repeats = rater_inputs[2].number_input(
            "Share repeated", 0.0, 1.0, 0.1, 0.05, key="survey_new_repeats"
        )
        checks = rater_inputs[3].number_input("Check pairs", 0, 20, 2, key="survey_new_checks")
        batch = rater_inputs[4].number_input(
            "Adaptive batch (0: off)", 0, 500, 20, key="survey_new_batch"
        )
        base_url = st.text_input(
            "Address of this dashboard (for the links)",
            "http://127.0.0.1:8501",
            key="survey_new_url",
        )
        instructions = st.text_area(
            "Instructions for raters (plain text; empty: the default)", key="survey_new_text"
        )
        if st.form_submit_button("Create"):
            try:
                settings = SurveySettings(
                    unit=unit,
                    glucose_range=(low, high),
                    per_rater=per_rater or None,
                    overlap=int(overlap),
                    repeats=float(repeats),
                    checks=int(checks),
                    batch=int(batch),
                    base_url=base_url.strip(),
                )
                design = start_design(int(n), glucose_range=settings.glucose_range)
                survey, token = surveys.create(
                    name, design, settings, instructions or default_instructions(settings)
                )
            except (StorageError, ValueError) as exc:
                st.error(f"Not created: {plain(exc)}")
            else:
                st.success("Created. The organiser's link (shown once; keep it private):")
                st.code(survey.organiser_link(token), language=None)
with st.expander("Create a SEG-method survey (scenarios, thresholds, risk matrices)"):
    from dashboard.seg_organiser import seg_create_form

    seg_create_form(surveys)
stored = surveys.list_surveys()
if not stored:
    st.info("You have no survey yet.")
else:
    chosen = st.selectbox("Survey", [s.name for s in stored], key="surveys_pick")
    organiser_page(surveys, next(s for s in stored if s.name == chosen))
