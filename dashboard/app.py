"""riskgrid dashboard entry point: login (when configured), page routing (the pages are
``dashboard.pages.PAGES``), the shared sidebar, and errors shown as one plain sentence (details
in the server log).

Run with ``riskgrid dashboard`` (or ``streamlit run dashboard/app.py``).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from streamlit.logger import get_logger

from dashboard import pages
from dashboard.common import ERROR_SENTENCE, auth_configured, current_user, public_mode
from dashboard.sidebar import seg_sidebar
from dashboard.surveys import survey_link_page

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
shown = pages.shown_pages(public_mode(), current_user() is not None, pages.PAGES)
page = st.navigation(
    {
        section: [st.Page(p.script, title=p.title, icon=p.icon, default=p.default) for p in listed]
        for section, listed in pages.sections(shown).items()
    }
)
guarded(page.run, f"page {page.title!r}")
