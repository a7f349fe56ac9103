"""The organiser's surveys for a signed-in user (shown only when a login is configured): pick a
survey and see its live results, as its organiser link shows them."""

import streamlit as st

from dashboard.common import plain
from dashboard.surveys import organiser_page, survey_store

st.title("Surveys")
surveys = survey_store()
stored = surveys.list_surveys()
if not stored:
    st.info("No survey yet: create one with `riskgrid survey create`.")
else:
    names = [s.name for s in stored]
    chosen = st.selectbox("Survey", names, key="surveys_pick", format_func=plain)
    organiser_page(surveys, next(s for s in stored if s.name == chosen))
