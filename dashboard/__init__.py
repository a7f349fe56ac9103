"""riskgrid's web dashboard: a Streamlit multipage app over ``ranking_core`` (run ``riskgrid
dashboard``). Pages only call ``ranking_core`` and draw with Plotly; no numerics live here."""

from pathlib import Path

APP_PATH = Path(__file__).with_name("app.py")
# set by `riskgrid dashboard --public` / `--data-dir` / `--metrics` for the app's process
PUBLIC_ENV = "RISKGRID_PUBLIC"
DATA_DIR_ENV = "RISKGRID_DATA_DIR"
METRICS_ENV = "RISKGRID_METRICS"
