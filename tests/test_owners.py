"""Owners hold, with two signed-in users (ada, bo) and the operator (no login), on SQLite and on
PostgreSQL: a survey is seen and changed by its owner only (its rater links work for raters); the
SEG table in use is one record that only its owner or the operator replaces, whatever file name
an upload has; reports name the table they used; records keep their owner. Then the same rules
through the dashboard (Streamlit AppTest, the user injected as ``st.user`` the way the app reads it
with a login configured)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re

import pandas as pd
import pytest
from dashboard_support import fresh_machine
from streamlit.testing.v1 import AppTest
from synthetic_seg import synthetic_risk, write_synthetic_seg

from dashboard import APP_PATH
from ranking_core.panels import start_design
from ranking_core.storage import OPERATOR, StorageError, Store
from ranking_core.surveys import SurveySettings, SurveyStore

ADA, BO = "ada@example.org", "bo@example.org"
AUTH = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "x" * 32,
    "client_id": "riskgrid",
    "client_secret": "secret",
    "server_metadata_url": "https://id.invalid/.well-known/openid",
}


@pytest.fixture(scope="module")
def seg_tables(tmp_path_factory):
    """The made-up SEG table as CSV bytes, and the same table with every risk 0."""
    path = write_synthetic_seg(tmp_path_factory.mktemp("seg") / "RiskPairData.csv")
    content = path.read_bytes()
    frame = pd.read_csv(io.BytesIO(content))
    frame["RiskFactor"] = 0.0
    frame["abs_risk"] = 0.0
    return content, frame.to_csv(index=False).encode()


@pytest.fixture
def store(database_url):
    s = Store(database_url)
    yield s
    s.dispose()


def _survey(surveys: SurveyStore, name: str) -> str:
    _, organiser = surveys.create(
        name, start_design(6, seed=1), SurveySettings(checks=1, repeats=0.0, batch=0)
    )
    return organiser


def test_a_survey_is_seen_and_changed_by_its_owner_only(store):
    operator = SurveyStore(store)
    ada, bo = operator.acting_for(ADA), operator.acting_for(BO)
    _survey(ada, "ward A")
    _survey(bo, "ward B")
    _survey(operator, "from the command line")
    assert [s.name for s in ada.list_surveys()] == ["ward A"]
    assert [s.name for s in bo.list_surveys()] == ["ward B"]
    assert [s.owner for s in operator.list_surveys()] == [ADA, BO, None]
    refused = {
        "get": lambda: bo.get("ward A"),
        "invite": lambda: bo.invite("ward A", 1),
        "close": lambda: bo.close("ward A"),
        "export": lambda: bo.answers("ward A"),
        "raters": lambda: bo.raters("ward A"),
        "revoke": lambda: bo.revoke("ward A", "rater-1"),
        "batch": lambda: bo.append_batch("ward A", start_design(3, seed=4), 1),
    }
    for action, attempt in refused.items():
        with pytest.raises(StorageError, match=r"survey 'ward A' is not yours: only the one"):
            attempt()
        assert operator.raters("ward A").empty, action  # bo invited nobody
    with pytest.raises(StorageError, match="is not yours"):  # the operator's survey too
        ada.invite("from the command line", 1)
    assert operator.get("ward A").is_open  # bo closed nothing
    # ada invites a rater; the rater's link works (no login) and is not an organiser's link
    ((rater, link),) = ada.invite("ward A", 1)
    token = link.split("token=")[1]
    access = operator.rater("ward A", token)
    assert access is not None and access.rater == rater
    first = operator.queue(access.rater_id)[0]
    operator.answer(access, first.position, 2.0)
    assert ada.answers("ward A")["rating"].notna().sum() == 1
    assert operator.organiser("ward A", token) is None
    ada.close("ward A")
    assert not operator.get("ward A").is_open


def test_the_seg_table_in_use_is_replaced_only_by_its_owner(store, seg_tables):
    official, zeros = seg_tables
    store.save_seg_table("RiskPairData.csv", official, "RiskPairData.csv", saved_by=ADA)

    def risk_in_use() -> float:
        return float(store.latest_seg_table().load().absolute[50, 300])

    assert risk_in_use() == pytest.approx(abs(synthetic_risk(50, 300)))  # 2.5 in this table
    for file_name in ("other.csv", "RiskPairData.csv", "zeros.csv.gz"):
        content = gzip.compress(zeros) if file_name.endswith(".gz") else zeros
        with pytest.raises(StorageError, match=rf"stored by {ADA}; only they may replace it"):
            store.save_seg_table(file_name, content, file_name, replace=True, saved_by=BO)
    with pytest.raises(StorageError, match="cannot delete"):
        store.delete("seg_table", "RiskPairData.csv", by=BO)
    assert [r.name for r in store.list_records("seg_table")] == ["RiskPairData.csv"]
    assert risk_in_use() == pytest.approx(2.5)
    used = store.latest_seg_table()
    assert used.describe() == (
        f"RiskPairData.csv (sha256 {hashlib.sha256(official).hexdigest()[:12]}, stored by {ADA})"
    )
    # its owner may replace it under another name; then ada's table is gone, bo still refused
    store.save_seg_table("flat.csv", zeros, "flat.csv", replace=True, saved_by=ADA)
    assert [r.name for r in store.list_records("seg_table")] == ["flat.csv"]
    assert risk_in_use() == 0.0
    with pytest.raises(StorageError, match="only they may replace it"):
        store.save_seg_table("x.csv", official, "x.csv", replace=True, saved_by=BO)
    # the operator (command line, no login) may replace anyone's; then no signed-in user may
    store.save_seg_table("RiskPairData.csv", official, "RiskPairData.csv", replace=True)
    assert store.latest_seg_table().info.saved_by is None and risk_in_use() == 2.5
    with pytest.raises(StorageError, match=re.escape(f"stored by {OPERATOR}; only they")):
        store.save_seg_table("y.csv", zeros, "y.csv", replace=True, saved_by=ADA)


def test_records_keep_their_owner_through_rename_and_replace(store):
    frame = pd.DataFrame({"reference": [100.0, 200.0], "estimate": [90.0, 260.0]})
    frame["rating"] = [0.5, 2.0]
    store.save_rating_set("panel", frame, saved_by=ADA)
    store.rename("rating_set", "panel", "panel 2", by=ADA)
    store.save_rating_set("panel 2", frame, replace=True, saved_by=ADA)
    assert [(r.name, r.saved_by) for r in store.list_records("rating_set")] == [("panel 2", ADA)]
    with pytest.raises(StorageError, match="only the one who saved it"):
        store.save_rating_set("panel 2", frame, replace=True, saved_by=BO)


# -- through the dashboard -------------------------------------------------------------------------
def _signed_in(user: str, page: str | None = None) -> AppTest:
    at = AppTest.from_file(str(APP_PATH), default_timeout=180)
    at.secrets["auth"] = AUTH
    at.user = {"is_logged_in": True, "email": user}
    at.session_state["learn_m"] = 200
    at.run()
    if page is not None:
        at.switch_page(f"views/{page}.py").run()
    assert not at.exception, at.exception
    return at


def test_the_surveys_page_shows_each_user_their_own_surveys_only(tmp_path, monkeypatch):
    store = fresh_machine(tmp_path, monkeypatch)
    operator = SurveyStore(store)
    _survey(operator.acting_for(ADA), "ward A")
    at = _signed_in(BO, "surveys")
    assert any("You have no survey yet" in i.value for i in at.info)
    assert not any(s.key == "surveys_pick" for s in at.selectbox)
    labels = [b.label for b in at.button]
    assert not {"Close the survey", "Add a batch now", "Invite", "Revoke"} & set(labels)
    # bo creates his own; he sees it with its controls, never ada's
    at.text_input(key="survey_new_name").set_value("ward B")
    at.number_input(key="survey_new_n").set_value(6)
    at.button(key="FormSubmitter:survey_create-Create").click().run()
    assert not at.exception, at.exception
    assert operator.get("ward B").owner == BO
    at = _signed_in(BO, "surveys")
    assert at.selectbox(key="surveys_pick").options == ["ward B"]
    assert any(b.label == "Close the survey" for b in at.button)
    ada = _signed_in(ADA, "surveys")
    assert ada.selectbox(key="surveys_pick").options == ["ward A"]
    assert any(b.label == "Close the survey" for b in ada.button)


def sidebar_app() -> None:
    from dashboard.sidebar import seg_sidebar

    seg_sidebar()


def _sidebar(user: str) -> AppTest:
    at = AppTest.from_function(sidebar_app, default_timeout=180)
    at.secrets["auth"] = AUTH
    at.user = {"is_logged_in": True, "email": user}
    return at.run()


def _upload(at: AppTest, name: str, content: bytes) -> None:
    at.sidebar.file_uploader(key="seg_upload").set_value((name, content, "text/csv"))
    at.run()
    if any(c.key == "seg_replace_confirm" for c in at.checkbox):  # a table is stored already
        at.checkbox(key="seg_replace_confirm").check()
        at.run()
    at.button(key="seg_store").click()
    at.run()
    assert not at.exception, at.exception


def test_a_seg_upload_by_another_user_is_refused_on_the_dashboard(
    tmp_path, monkeypatch, seg_tables
):
    official, zeros = seg_tables
    store = fresh_machine(tmp_path, monkeypatch)
    _upload(_sidebar(ADA), "RiskPairData.csv", official)
    stored = store.latest_seg_table()
    assert stored.info.saved_by == ADA and stored.load().absolute[50, 300] == 2.5
    bo = _sidebar(BO)
    assert any(f"stored by {ADA}".replace(".", "\\.") in c.value for c in bo.sidebar.caption)
    _upload(bo, "other-name.csv", zeros)
    assert any("only they may replace it" in e.value for e in bo.sidebar.error)
    assert [r.name for r in store.list_records("seg_table")] == ["RiskPairData.csv"]
    assert store.latest_seg_table().load().absolute[50, 300] == 2.5  # for everyone
    # the meter report names the table it used: file, sha256 prefix, owner
    at = _signed_in(BO, "meter")
    provenance = "\n".join(t.value for t in at.text)
    digest = hashlib.sha256(official).hexdigest()[:12]
    assert f"SEG table: RiskPairData.csv (sha256 {digest}, stored by {ADA})" in provenance


def test_the_cli_meter_report_names_the_seg_table_it_used(tmp_path):
    from typer.testing import CliRunner

    from ranking_core.cli import app

    table = write_synthetic_seg(tmp_path / "RiskPairData.csv")
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("REF,BGM\n50,300\n100,110\n")
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        app, ["meter-report", str(pairs), "--seg-table", str(table), "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    provenance = json.loads(out.read_text())["provenance"]
    digest = hashlib.sha256(table.read_bytes()).hexdigest()[:12]
    assert provenance["SEG table"] == (
        f"RiskPairData.csv (sha256 {digest}, the operator's file: --seg-table)"
    )
