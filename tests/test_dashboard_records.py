"""The served app's records and public demo under Streamlit's AppTest: the Saved records page
downloads a saved grid as the files ``riskgrid learn --out-dir`` writes, a signed-in viewer cannot
rename or delete another's record, a stored SEG table is its bytes (an earlier record naming a
server path is never opened), the public demo offers no upload anywhere and caps every job; and
the server itself: no metrics endpoint unless asked, no start without its database."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
import zipfile
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest
from dashboard_support import LOGIN_SECRETS, TEST_M, download_content, fresh_machine, open_app
from streamlit.testing.v1 import AppTest
from synthetic_seg import write_synthetic_seg

from dashboard import APP_PATH
from dashboard.common import PUBLIC_LIMITS
from dashboard.pages import shown_pages
from ranking_core.grids.files import grid_csv, grid_png
from ranking_core.learn import LearnSettings, grid_metadata, learn_grid
from ranking_core.panels import simulate_panel
from ranking_core.ratings import read_rating_set
from ranking_core.record_kinds import RECORD_KINDS
from ranking_core.storage import RECORDS
from scripts.screenshots import free_port, serve


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.delenv("RISKGRID_PUBLIC", raising=False)
    monkeypatch.delenv("RISKGRID_DATA_DIR", raising=False)
    return fresh_machine(tmp_path, monkeypatch)


@pytest.fixture(scope="module")
def robust_monotone():
    result = learn_grid(
        read_rating_set(simulate_panel(80, random_state=2)),
        LearnSettings(robust="huber", monotone=True),
    )
    return result.grid, grid_metadata(result, "panel.csv")


def test_the_records_page_downloads_a_saved_grid_as_its_files(fresh, robust_monotone, downloads):
    grid, metadata = robust_monotone
    fresh.save_learned_grid("robust monotone", grid, metadata)
    fresh.save_rating_set(
        "a panel", pd.DataFrame({"reference": [100.0], "estimate": [90.0], "rating": [1.0]})
    )
    at = open_app("records")
    at.radio(key="records_kind").set_value("learned_grid").run()
    assert not at.exception
    caption = " ".join(c.value for c in at.caption)
    assert f"λ {metadata['lambda']:.4g}" in caption and "80 ratings" in caption
    npy = np.load(io.BytesIO(download_content(at, downloads, "grid.npy")), allow_pickle=False)
    np.testing.assert_allclose(npy, np.clip(grid, 0, 4), rtol=0, atol=1e-12)
    assert download_content(at, downloads, "grid.csv") == grid_csv(grid)
    assert download_content(at, downloads, "grid.png") == grid_png(grid)
    assert json.loads(download_content(at, downloads, "grid.json")) == metadata
    with zipfile.ZipFile(io.BytesIO(download_content(at, downloads, "all (zip)"))) as archive:
        assert archive.namelist() == ["grid.npy", "grid.csv", "grid.png", "grid.json"]
        assert archive.read("grid.csv") == grid_csv(grid)
    at.radio(key="records_kind").set_value("rating_set").run()  # no grid files for ratings
    assert not at.exception and not at.get("download_button")
    # every kind of the registry is offered by its heading
    assert at.radio(key="records_kind").options == [k.heading for k in RECORD_KINDS.values()]
    at = open_app("records")
    at.radio(key="records_kind").set_value("seg_table").run()  # none saved
    assert [i.value for i in at.info] == ["No SEG table saved yet."]


def test_a_signed_in_viewer_cannot_rename_or_delete_another_users_record(fresh):
    frame = pd.DataFrame({"reference": [100.0], "estimate": [90.0], "rating": [1.0]})
    fresh.save_rating_set("ada's panel", frame, saved_by="ada@example.org")
    fresh.save_rating_set("bo's panel", frame, saved_by="bo@example.org")
    at = AppTest.from_file(str(APP_PATH), default_timeout=180)
    at.secrets["auth"] = dict(LOGIN_SECRETS)
    at.user = {"is_logged_in": True, "email": "bo@example.org"}
    at.session_state["learn_m"] = TEST_M
    at.run()
    at.switch_page("views/records.py").run()
    assert not at.exception, at.exception
    assert "only the one who saved a record may rename or delete it" in at.caption[0].value
    at.selectbox(key="records_chosen").set_value("ada's panel").run()
    assert not at.exception
    assert any("only they can rename or delete it" in i.value for i in at.info)
    assert not any(b.label in ("Rename", "Delete") for b in at.button)
    at.selectbox(key="records_chosen").set_value("bo's panel").run()
    at.checkbox(key="records_delete_confirm").check()
    next(b for b in at.button if b.label == "Delete").click()
    at.run()
    assert [r.name for r in fresh.list_records("rating_set")] == ["ada's panel"]


def test_a_name_with_a_line_break_from_an_earlier_version_is_shown_escaped_and_deletable(fresh):
    fresh.save_rating_set(
        "x", pd.DataFrame({"reference": [100.0], "estimate": [90.0], "rating": [1.0]})
    )
    with fresh.engine.begin() as conn:
        conn.execute(RECORDS.update().values(name="two\nlines\x1b[31m"))
    at = open_app("records")
    assert list(at.dataframe[0].value["name"]) == ["two\\nlines\\x1b[31m"]
    at.checkbox(key="records_delete_confirm").check()
    next(b for b in at.button if b.label == "Delete").click()
    at.run()
    assert not at.exception and fresh.list_records("rating_set") == []


def test_an_earlier_seg_record_naming_a_server_file_is_never_opened(fresh):
    with fresh.engine.begin() as conn:  # as an earlier version stored it
        conn.execute(
            RECORDS.insert().values(
                kind="seg_table",
                name="environ",
                created_at=datetime.now(UTC),
                meta={
                    "damaged": "it names a file on the server instead of holding the uploaded "
                    "table, and server paths are never opened; upload the table again",
                    "path": "/proc/self/environ",
                },
            )
        )
    at = open_app()
    shown = " ".join(
        str(e.value) for e in (*at.sidebar.warning, *at.sidebar.text, *at.sidebar.success)
    )
    assert "No SEG table" in shown and "never opened" in shown
    assert "PATH=" not in shown and os.environ.get("HOME", "HOME") not in shown


def test_the_sidebar_stores_the_seg_table_as_its_bytes(fresh, tmp_path):
    seg = write_synthetic_seg(tmp_path / "RiskPairData.csv")
    fresh.save_seg_table("RiskPairData.csv", seg.read_bytes(), "RiskPairData.csv")
    seg.unlink()  # nothing refers to a server file
    at = open_app()
    assert any("SEG table loaded" in s.value for s in at.sidebar.success)


def test_the_public_demo_offers_no_upload_on_any_page_and_caps_every_job(fresh, monkeypatch):
    monkeypatch.setenv("RISKGRID_PUBLIC", "1")
    capped = {}
    public_pages = shown_pages(public=True, signed_in=False)
    for page in (p.view for p in public_pages):
        at = open_app(page)
        for source in ("learn_source", "meter_source", "plan_source", "cf_source"):
            for radio in (r for r in at.radio if r.key == source):  # every source offered
                for option in radio.options:
                    radio.set_value(option).run()
                    assert not at.exception, (page, option)
                    assert len(at.get("file_uploader")) == 0, (page, option)
                    assert len(at.sidebar.file_uploader) == 0
                    capped |= {n.key: n.max for n in at.number_input if n.key in PUBLIC_LIMITS}
        assert len(at.get("file_uploader")) == 0 and len(at.sidebar.file_uploader) == 0, page
        capped |= {n.key: n.max for n in at.number_input if n.key in PUBLIC_LIMITS}
        assert not any(b.label.startswith("Save") for b in at.button), page
    assert capped == PUBLIC_LIMITS  # every capped widget was seen, with its cap as maximum


def test_a_count_above_its_cap_is_lowered_in_the_public_demo(fresh, monkeypatch):
    monkeypatch.setenv("RISKGRID_PUBLIC", "1")
    at = open_app("compare", learners_m=2000, learners_reps=20)
    assert not at.exception
    assert at.number_input(key="learners_m").value == PUBLIC_LIMITS["learners_m"]
    assert at.number_input(key="learners_reps").value == 1
    assert at.session_state["learn_m"] <= PUBLIC_LIMITS["learn_m"]


def test_the_server_refuses_to_start_without_its_database(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    env = {**os.environ, "RISKGRID_DATABASE_URL": f"sqlite:///{blocker}/db.sqlite3"}
    env.pop("RISKGRID_PUBLIC", None)
    done = subprocess.run(
        [sys.executable, "-m", "dashboard.server", "run", "app.py"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "not started: the database cannot be opened" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_the_metrics_endpoint_is_off_unless_asked_for(fresh_dashboard, team_scheduler, tmp_path):
    with pytest.raises(urllib.error.HTTPError) as answer:  # the session's default server
        urllib.request.urlopen(f"{fresh_dashboard}/_stcore/metrics", timeout=10)
    assert answer.value.code == 404 and b"metrics are off" in answer.value.read()
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "BROWSER": "true",
        "RISKGRID_DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "RISKGRID_SCHEDULER": team_scheduler,  # no local cluster (tests/conftest.py)
    }
    env.pop("RISKGRID_METRICS", None)
    with (
        serve(free_port(), env, options=["--metrics"]) as url,
        urllib.request.urlopen(f"{url}/_stcore/metrics", timeout=10) as answer,
    ):
        body = answer.read()
    assert b"# TYPE" in body or b"# EOF" in body  # OpenMetrics text


@pytest.mark.parametrize("public", [False, True])
def test_the_public_server_takes_no_upload_even_past_the_page(public, fresh, monkeypatch):
    """Streamlit's upload endpoint keeps what a session sends (up to maxUploadSize) even without
    an upload widget; the public demo's server is started with a limit of 0 MB."""
    import streamlit.web.cli

    import dashboard.server

    handed_over = []
    monkeypatch.setattr(dashboard.server, "warm", lambda: 0.0)
    monkeypatch.setattr(streamlit.web.cli, "main", lambda: handed_over.append(list(sys.argv)))
    monkeypatch.setenv("RISKGRID_METRICS", "1")  # leave Streamlit's routes as they are here
    if public:
        monkeypatch.setenv("RISKGRID_PUBLIC", "1")
    monkeypatch.setattr(sys, "argv", ["dashboard.server", "run", "app.py"])
    dashboard.server.main()
    (argv,) = handed_over
    assert argv[:3] == ["streamlit", "run", "app.py"]
    assert (argv[3:] == ["--server.maxUploadSize", "0"]) is public


def test_a_robust_monotone_grid_saved_on_the_learn_page_is_the_one_compare_shows(fresh):
    """The Learn page's Save for robust learning with the monotone step (refused before: only
    spectral rankers could be stored; a monotone grid came back without its step)."""
    at = open_app(
        learn_settings=LearnSettings(robust="huber", monotone=True), learn_own_settings=True
    )
    shown_grid = at.session_state["learn_result"].grid
    learn_misranking = next(m.value for m in at.metric if m.label == "Misranking vs reference")
    next(t for t in at.text_input if t.label == "Name").set_value("robust monotone")
    next(b for b in at.button if b.label == "Save learned grid").click()
    at.run()
    assert not at.exception and any("Saved learned grid" in s.value for s in at.success)
    stored = fresh.load_learned_grid("robust monotone")
    np.testing.assert_allclose(stored.grid, shown_grid, rtol=0, atol=1e-12)
    assert stored.settings["robust"] == "huber" and stored.settings["monotone"] is True
    at.switch_page("views/compare.py").run()
    at.selectbox(key="compare_a").set_value("built-in surface (smoothed Parkes type 1)")
    at.selectbox(key="compare_b").set_value("learned: robust monotone")
    at.run()
    assert not at.exception
    assert next(m.value for m in at.metric if m.label == "misranking") == learn_misranking
