"""riskgrid dashboard entry point: login (when configured), page routing, the shared sidebar, and
errors shown as one plain sentence (details in the server log).

Run with ``riskgrid dashboard`` (or ``streamlit run dashboard/app.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st
from streamlit.logger import get_logger

from dashboard.common import ERROR_SENTENCE, auth_configured, current_user, public_mode
from dashboard.sidebar import seg_sidebar
from dashboard.surveys import survey_link_page

VIEWS = Path(__file__).with_name("views")  # not "pages": that name turns on the old auto-navigation
LOG = get_logger("riskgrid.dashboard")

st.set_page_config(page_title="riskgrid", page_icon="🩸", layout="wide")


def guarded(part: Callable[[], object], name: str) -> None:
    """Run one part of the page; an error becomes one plain sentence on the page and its
    details go to the server log (unless the server shows error details, in development)."""
    try:
        part()
    except Exception:
        if st.get_option("client.showErrorDetails") in (True, "full", "stacktrace"):
            raise  # development: Streamlit shows the traceback
        LOG.exception("the %s failed", name)
        st.error(ERROR_SENTENCE)


# a survey link (a rater's or the organiser's) opens that survey only: no login, no sidebar, no
# navigation, no other page or record
if "survey" in st.query_params:
    guarded(survey_link_page, "survey page")
    st.stop()

if auth_configured() and not st.user.get("is_logged_in", False):
    st.title("riskgrid")
    st.write("Sign in to use this dashboard.")
    st.button("Sign in", on_click=st.login, key="login")
    st.stop()
if current_user() is not None:
    st.sidebar.text(f"Signed in as {current_user()}")
    st.sidebar.button("Sign out", on_click=st.logout, key="logout")
if public_mode():
    st.sidebar.info("Public demo: built-in data only; nothing is stored.")

guarded(seg_sidebar, "sidebar")
records = (
    []
    if public_mode()
    else [st.Page(VIEWS / "records.py", title="Saved records", icon=":material/folder_open:")]
)
if current_user() is not None and not public_mode():  # organisers sign in (or use their link)
    records.append(st.Page(VIEWS / "surveys.py", title="Surveys", icon=":material/how_to_vote:"))
page = st.navigation(
    {
        "Grids": [
            st.Page(
                VIEWS / "learn.py", title="Learn a grid", icon=":material/grid_on:", default=True
            ),
            st.Page(VIEWS / "meter.py", title="Meter report", icon=":material/bloodtype:"),
            st.Page(VIEWS / "compare.py", title="Compare grids", icon=":material/compare:"),
            st.Page(VIEWS / "plan.py", title="Plan a survey", icon=":material/checklist:"),
            *records,
        ],
        "Benchmarks": [
            st.Page(VIEWS / "cf.py", title="Collaborative filtering", icon=":material/movie:"),
        ],
        "Help": [st.Page(VIEWS / "about.py", title="About", icon=":material/menu_book:")],
    }
)
guarded(page.run, f"page {page.title!r}")
