"""riskgrid dashboard entry point: page routing and the shared sidebar (SEG table status).

Run with ``riskgrid dashboard`` (or ``streamlit run dashboard/app.py``).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard.sidebar import seg_sidebar

PAGES = Path(__file__).with_name("pages")

st.set_page_config(page_title="riskgrid", page_icon="🩸", layout="wide")


seg_sidebar()
page = st.navigation(
    {
        "Grids": [
            st.Page(PAGES / "learn.py", title="Learn a grid", icon="🧭", default=True),
            st.Page(PAGES / "meter.py", title="Meter report", icon="🩺"),
            st.Page(PAGES / "compare.py", title="Compare grids", icon="⚖️"),
        ],
        "Benchmarks": [
            st.Page(PAGES / "cf.py", title="Collaborative filtering", icon="🎬"),
        ],
        "Help": [st.Page(PAGES / "about.py", title="About", icon="📖")],
    }
)
page.run()
