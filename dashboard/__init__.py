"""riskgrid's web dashboard: a Streamlit multipage app over ``ranking_core`` (run ``riskgrid
dashboard``). Pages only call ``ranking_core`` and draw with Plotly; no numerics live here."""

import os
from pathlib import Path

APP_PATH = Path(__file__).with_name("app.py")
# set by `riskgrid dashboard --public` / `--data-dir` / `--metrics` for the app's process
PUBLIC_ENV = "RISKGRID_PUBLIC"
DATA_DIR_ENV = "RISKGRID_DATA_DIR"
METRICS_ENV = "RISKGRID_METRICS"


def public_mode() -> bool:
    """The public demo (``riskgrid dashboard --public``): built-in data only (no uploads, no
    server files), no records, and jobs capped to a few seconds (``dashboard.common.size_limit``).
    Read from the environment only, so the server process can ask before it imports Streamlit's
    caches."""
    return os.environ.get(PUBLIC_ENV, "") not in ("", "0")
