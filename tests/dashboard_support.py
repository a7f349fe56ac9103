"""Helpers shared by the dashboard's AppTest modules."""

from __future__ import annotations

import base64
import json
import time

import numpy as np
from streamlit.testing.v1 import AppTest

from dashboard import APP_PATH
from ranking_core.storage import Store

# a login configured for the app (an OpenID provider that is never reached in these tests)
LOGIN_SECRETS = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "x" * 32,
    "client_id": "riskgrid",
    "client_secret": "secret",
    "server_metadata_url": "https://id.invalid/.well-known/openid",
}
TEST_M = 200  # ratings of the simulated panel in these tests (the page's default is larger)


def fresh_machine(tmp_path, monkeypatch) -> Store:
    """A fresh machine: no SEG table configured, an empty database in tmp_path."""
    monkeypatch.delenv("SEG_TABLE", raising=False)
    url = f"sqlite:///{tmp_path / 'riskgrid.sqlite3'}"
    monkeypatch.setenv("RISKGRID_DATABASE_URL", url)
    store = Store(url)
    store.upgrade()  # as the dashboard's start does
    return store


def open_app(page: str | None = None, **state) -> AppTest:
    """Run the app (default page: Learn), optionally switch to ``page``; state is set first."""
    at = AppTest.from_file(str(APP_PATH), default_timeout=180)
    at.session_state["learn_m"] = TEST_M
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    if page is not None:
        at.switch_page(f"views/{page}.py").run()
    assert not at.exception, at.exception
    return at


def metrics(at: AppTest) -> dict[str, str]:
    """The metric elements shown, label → value."""
    return {m.label: m.value for m in at.metric}


def upload_meter_csv(at: AppTest, name: str, data: bytes) -> None:
    """On the Meter page: choose the "Upload" source and upload ``data`` as the CSV ``name``."""
    at.radio(key="meter_source").set_value("Upload")
    at.run()
    at.file_uploader(key="meter_upload").set_value((name, data, "text/csv"))
    at.run()
    assert not at.exception, at.exception


def run_for_table(at: AppTest, button: str, column: str, timeout: float = 300):
    """Click the button ``button`` (a key), run, and return the first table with ``column``;
    a job the button starts in a worker process is polled (rerun every second) until then."""
    at.button(key=button).click()
    at.run()
    deadline = time.monotonic() + timeout
    while True:
        assert not at.exception, at.exception
        tables = [d.value for d in at.dataframe if column in d.value.columns]
        if tables or time.monotonic() > deadline:
            break
        time.sleep(1)
        at.run()
    assert tables, f"no table with {column!r}: {[e.value for e in at.error]}"
    return tables[0]


def plotly_numbers(values) -> np.ndarray:
    """A Plotly array as numbers (plain list, or Plotly's base64 typed array)."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
    return np.asarray(values, dtype=float)


def plotly_traces(at: AppTest) -> dict[str, dict]:
    """Every trace of the page's Plotly figures, by name."""
    return {
        t.get("name"): t for c in at.get("plotly_chart") for t in json.loads(c.proto.spec)["data"]
    }


def download_content(at, made, label: str) -> bytes:
    """The bytes of the download button labelled ``label`` (``made``: the ``downloads`` fixture of
    conftest.py)."""
    button = next(b for b in at.get("download_button") if b.proto.label == label)
    content = made[button.proto.deferred_file_id]()
    return content.encode() if isinstance(content, str) else content
