"""riskgrid dashboard entry point: page routing and the shared sidebar (SEG table status).

Run with ``riskgrid dashboard`` (or ``streamlit run dashboard/app.py``).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard.sidebar import seg_sidebar

VIEWS = Path(__file__).with_name("views")  # not "pages": that name turns on the old auto-navigation

st.set_page_config(page_title="riskgrid", page_icon="🩸", layout="wide")


seg_sidebar()
page = st.navigation(
    {
        "Grids": [
            st.Page(VIEWS / "learn.py", title="Learn a grid", icon=":material/grid_on:",
                    default=True),
            st.Page(VIEWS / "meter.py", title="Meter report", icon=":material/bloodtype:"),
            st.Page(VIEWS / "compare.py", title="Compare grids", icon=":material/compare:"),
        ],
        "Benchmarks": [
            st.Page(VIEWS / "cf.py", title="Collaborative filtering", icon=":material/movie:"),
        ],
        "Help": [st.Page(VIEWS / "about.py", title="About", icon=":material/menu_book:")],
    }
)
page.run()
