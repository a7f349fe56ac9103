"""riskgrid dashboard entry point: login (when configured), page routing, the shared sidebar, and
errors shown as one plain sentence (details in the server log).

Run with ``riskgrid dashboard`` (or ``streamlit run dashboard/app.py``).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.logger import get_logger

from dashboard.common import auth_configured, current_user, public_mode
from dashboard.sidebar import seg_sidebar

VIEWS = Path(__file__).with_name("views")  # not "pages": that name turns on the old auto-navigation
ERROR_SENTENCE = ("Something went wrong on this page. Please try again; if it keeps happening, "
                  "tell the person who runs this server (the details are in its log).")
LOG = get_logger("riskgrid.dashboard")

st.set_page_config(page_title="riskgrid", page_icon="🩸", layout="wide")

if auth_configured() and not st.user.is_logged_in:
    st.title("riskgrid")
    st.write("Sign in to use this dashboard.")
    st.button("Sign in", on_click=st.login, key="login")
    st.stop()
if current_user() is not None:
    st.sidebar.text(f"Signed in as {current_user()}")
    st.sidebar.button("Sign out", on_click=st.logout, key="logout")
if public_mode():
    st.sidebar.info("Public demo: built-in data only; nothing is stored.")

seg_sidebar()
records = [] if public_mode() else [
    st.Page(VIEWS / "records.py", title="Saved records", icon=":material/folder_open:")]
page = st.navigation(
    {
        "Grids": [
            st.Page(VIEWS / "learn.py", title="Learn a grid", icon=":material/grid_on:",
                    default=True),
            st.Page(VIEWS / "meter.py", title="Meter report", icon=":material/bloodtype:"),
            st.Page(VIEWS / "compare.py", title="Compare grids", icon=":material/compare:"),
            *records,
        ],
        "Benchmarks": [
            st.Page(VIEWS / "cf.py", title="Collaborative filtering", icon=":material/movie:"),
        ],
        "Help": [st.Page(VIEWS / "about.py", title="About", icon=":material/menu_book:")],
    }
)
try:
    page.run()
except Exception:
    if st.get_option("client.showErrorDetails") in (True, "full", "stacktrace"):
        raise  # development: Streamlit shows the traceback
    LOG.exception("the page %r failed", page.title)
    st.error(ERROR_SENTENCE)
