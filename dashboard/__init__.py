"""riskgrid's web dashboard: a Streamlit multipage app over ``ranking_core`` (run ``riskgrid
dashboard``). Pages only call ``ranking_core`` and draw with Plotly; no numerics live here."""

from pathlib import Path

APP_PATH = Path(__file__).with_name("app.py")
