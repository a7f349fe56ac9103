"""The organiser's controls shared by rated-pair and SEG-method surveys: the invitation form (a
number of raters or their names, the links shown once as a table and a CSV download) and
closing the survey."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.common import plain
from ranking_core.inputs.text import safe_csv
from ranking_core.storage import StorageError
from ranking_core.surveys import SurveyStore
from ranking_core.surveys.storage import InviteInterrupted
from ranking_core.surveys.tables import Survey

__all__ = ["close_survey", "invite_raters"]


def invite_raters(surveys: SurveyStore, survey: Survey, prefix: str) -> None:
    """The form inviting raters to ``survey`` and the links given (widget keys ``prefix``_…);
    raters invited before an interrupted invitation keep their links, which are shown."""
    with st.form(f"{prefix}_invite"):
        count = st.number_input("Raters to invite", 1, 500, 1, key=f"{prefix}_invite_n")
        names = st.text_area("Or their names, one per line", key=f"{prefix}_invite_names")
        if st.form_submit_button("Invite"):
            listed = [n.strip() for n in names.splitlines() if n.strip()]
            try:
                st.session_state[f"{prefix}_links"] = surveys.invite(
                    survey.name, listed or int(count)
                )
            except InviteInterrupted as exc:
                st.error(f"Not all invited: {plain(exc)}")
                st.session_state[f"{prefix}_links"] = exc.links
            except StorageError as exc:
                st.error(f"Not invited: {plain(exc)}")
    invited = st.session_state.get(f"{prefix}_links")
    if invited:
        table = pd.DataFrame(invited, columns=["rater", "link"])
        st.dataframe(table, hide_index=True)
        st.download_button(
            "Download the links (CSV)",
            safe_csv(table),
            "links.csv",
            "text/csv",
            key=f"{prefix}_links_csv",
            on_click="ignore",
        )


def close_survey(surveys: SurveyStore, survey: Survey, prefix: str) -> None:
    """Close ``survey`` after a confirming tick (widget keys ``prefix``_close_ok, _close): its
    links stop taking answers."""
    confirm = st.checkbox("Close the survey: links stop taking answers", key=f"{prefix}_close_ok")
    if st.button("Close the survey", key=f"{prefix}_close", disabled=not confirm):
        surveys.close(survey.name)
        st.rerun()
