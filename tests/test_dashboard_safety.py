"""The dashboard as a server for a team, under Streamlit's AppTest: saved records renamed and
deleted only after a confirmation, hostile names and uploads shown as text (never Markdown or
HTML), errors as one plain sentence, the public read-only demo, data sets from the data folder,
the login gate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from dashboard_support import LOGIN_SECRETS, fresh_machine, open_app
from markdown_it import MarkdownIt
from streamlit import config as streamlit_config
from streamlit.testing.v1 import AppTest

from dashboard import APP_PATH
from dashboard.common import ERROR_SENTENCE, plain
from ranking_core.storage import StorageError, Store

HOSTILE = (
    "![pixel](http://tracker.invalid/p.png) <img src=x onerror=alert(1)> "
    "[click](javascript:alert(1)) **bold** :red[red] $x^2$ <script>alert(1)</script>"
)


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.delenv("RISKGRID_PUBLIC", raising=False)
    monkeypatch.delenv("RISKGRID_DATA_DIR", raising=False)
    return fresh_machine(tmp_path, monkeypatch)


def _ratings(n: int = 30, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "reference": rng.uniform(40, 400, n),
            "estimate": rng.uniform(40, 400, n),
            "rating": rng.integers(0, 5, n).astype(float),
        }
    )


def _rendered_html(at) -> str:
    """Every Markdown-rendering element of the page (and sidebar) as the HTML CommonMark makes of
    it (Streamlit renders these as Markdown)."""
    renderer = MarkdownIt("commonmark")
    elements = [
        *at.markdown,
        *at.caption,
        *at.error,
        *at.warning,
        *at.info,
        *at.success,
        *at.sidebar.markdown,
        *at.sidebar.warning,
        *at.sidebar.success,
    ]
    return "\n".join(renderer.render(str(e.value)) for e in elements)


def test_plain_text_renders_as_the_same_text():
    renderer = MarkdownIt("commonmark")
    html = renderer.render(plain(HOSTILE))
    assert "<img" not in html and "<a " not in html and "<strong>" not in html
    assert "<script" not in html
    # the reader sees the characters themselves (HTML-escaped by the renderer)
    assert "![pixel](http://tracker.invalid/p.png)" in html
    assert "**bold**" in html


def test_records_are_renamed_and_deleted_only_after_confirmation(fresh):
    fresh.save_rating_set("panel A", _ratings(30, 1), saved_by="ada@example.org")
    fresh.save_rating_set("panel B", _ratings(20, 2))
    at = open_app("records")
    table = at.dataframe[0].value
    assert set(table["name"]) == {"panel A", "panel B"}
    assert dict(zip(table["name"], table["saved by"], strict=True)) == {
        "panel A": "ada@example.org",
        "panel B": "—",
    }
    at.selectbox(key="records_chosen").set_value("panel A").run()
    at.text_input[0].set_value("panel C")
    next(b for b in at.button if b.label == "Rename").click()
    at.run()
    assert any("Tick the confirmation" in w.value for w in at.warning)
    assert {r.name for r in fresh.list_records("rating_set")} == {"panel A", "panel B"}
    at.text_input[0].set_value("panel C")
    at.checkbox(key="records_rename_confirm").check()
    next(b for b in at.button if b.label == "Rename").click()
    at.run()
    assert not at.exception
    assert {r.name for r in fresh.list_records("rating_set")} == {"panel C", "panel B"}
    assert len(fresh.load_rating_set("panel C").frame) == 30
    at.selectbox(key="records_chosen").set_value("panel B").run()
    next(b for b in at.button if b.label == "Delete").click()
    at.run()
    assert {r.name for r in fresh.list_records("rating_set")} == {"panel C", "panel B"}
    at.checkbox(key="records_delete_confirm").check()
    next(b for b in at.button if b.label == "Delete").click()
    at.run()
    assert not at.exception
    assert [r.name for r in fresh.list_records("rating_set")] == ["panel C"]


def test_a_taken_name_is_refused_on_the_page_and_changes_nothing(fresh):
    fresh.save_rating_set("one", _ratings(10, 3))
    fresh.save_rating_set("two", _ratings(12, 4))
    at = open_app("records")
    at.selectbox(key="records_chosen").set_value("one").run()
    at.text_input[0].set_value("two")
    at.checkbox(key="records_rename_confirm").check()
    next(b for b in at.button if b.label == "Rename").click()
    at.run()
    assert any("already exists" in e.value for e in at.error)
    assert len(fresh.load_rating_set("one").frame) == 10
    assert len(fresh.load_rating_set("two").frame) == 12


def test_hostile_record_names_are_shown_as_text(fresh):
    fresh.save_rating_set(HOSTILE, _ratings(40, 5))
    at = open_app(learn_source="Saved rating set")
    assert not at.exception
    settings = next(d.value for d in at.dataframe if "setting" in d.value.columns)
    assert HOSTILE in settings["value"].tolist()  # the name is shown verbatim in a table …
    html = _rendered_html(at)
    assert "<img" not in html and "<a " not in html and "<script" not in html  # … never as HTML
    records = open_app("records")
    assert HOSTILE in set(records.dataframe[0].value["name"])
    assert "<img" not in _rendered_html(records)


def test_hostile_upload_text_is_shown_as_text(fresh):
    """Column names and cells of an upload reach the page only through messages that quote
    them; none of them is rendered as Markdown or HTML."""
    lines = [f"reference,estimate,rating,{HOSTILE.replace(',', ' ')}"]
    lines += [f"{100 + i},{110 + i},{i % 5},x" for i in range(30)]
    lines += [f"120,{HOSTILE.replace(',', ' ')},1,y", "130,140,9,z"]
    at = open_app(learn_source="Upload a file")
    at.file_uploader(key="learn_upload").set_value(
        (f"{HOSTILE[:40]}.csv", "\n".join(lines).encode(), "text/csv")
    )
    at.run()
    assert not at.exception
    html = _rendered_html(at)
    assert "<img" not in html and "<a " not in html and "<script" not in html
    missing = open_app(learn_source="Upload a file")
    missing.file_uploader(key="learn_upload").set_value(
        ("bad.csv", f"{HOSTILE.replace(',', ' ')},b\n1,2\n".encode(), "text/csv")
    )
    missing.run()
    assert any("Not usable" in e.value for e in missing.error)
    assert "<img" not in _rendered_html(missing)


def test_an_error_is_one_plain_sentence_with_the_details_in_the_log(fresh, monkeypatch, caplog):
    fresh.save_rating_set("one", _ratings(10, 6))

    def broken(*args, **kwargs):
        raise RuntimeError("/srv/secret/path.sqlite3 is corrupt")

    monkeypatch.setattr(Store, "rename", broken)
    previous = streamlit_config.get_option("client.showErrorDetails")
    streamlit_config.set_option("client.showErrorDetails", "none")
    try:
        at = open_app("records")
        at.checkbox(key="records_rename_confirm").check()
        at.text_input[0].set_value("two")
        next(b for b in at.button if b.label == "Rename").click()
        with caplog.at_level("ERROR"):
            at.run()
    finally:
        streamlit_config.set_option("client.showErrorDetails", previous)
    assert not at.exception
    assert [e.value for e in at.error] == [ERROR_SENTENCE]
    assert "secret" not in _rendered_html(at)


@pytest.mark.parametrize("content", [None, "REF,BGM\n1,2\n"])
def test_the_sidebar_names_the_seg_file_not_its_server_folder(
    fresh, monkeypatch, tmp_path, content
):
    path = tmp_path / "server" / "RiskPairData.csv"  # missing, then present but unreadable
    if content is not None:
        path.parent.mkdir()
        path.write_text(content)
    monkeypatch.setenv("SEG_TABLE", str(path))
    at = open_app()
    assert not at.exception
    shown = " ".join(
        e.value
        for e in (*at.sidebar.info, *at.sidebar.warning, *at.sidebar.success, *at.sidebar.text)
    )
    assert "RiskPairData.csv" in shown
    assert str(tmp_path) not in shown and "server" not in shown


def test_public_demo_stores_nothing_and_offers_built_in_data_only(fresh, monkeypatch, tmp_path):
    fresh.save_rating_set("private panel", _ratings(10, 7))
    monkeypatch.setenv("RISKGRID_PUBLIC", "1")
    monkeypatch.setenv("RISKGRID_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("SEG_TABLE", str(tmp_path / "server" / "RiskPairData.csv"))
    at = open_app()
    assert not at.exception
    shown = [
        e.value
        for e in (*at.sidebar.info, *at.sidebar.warning, *at.sidebar.success, *at.sidebar.text)
    ]
    assert shown and "server" not in " ".join(shown)  # no server path
    assert at.radio(key="learn_source").options == ["Simulated panel"]
    assert len(at.sidebar.file_uploader) == 0 and not any(
        b.key in ("seg_store", "seg_forget") for b in at.button
    )
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page("views/records.py")  # no Saved records page
    at = open_app("cf")
    assert at.radio(key="cf_source").options == ["Synthetic (built-in)"]
    assert len(at.text_input) == 0
    from dashboard.common import get_store

    with pytest.raises(StorageError, match="read-only public demo"):
        get_store().save_rating_set("x", _ratings(5))
    assert get_store().list_records("rating_set") == []
    assert [r.name for r in fresh.list_records("rating_set")] == ["private panel"]


def test_cf_data_sets_come_from_the_data_folder_only(fresh, monkeypatch, tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    rng = np.random.default_rng(1)
    lines = ["user_id,joke_id,rating"] + [
        f"{u},{j + 1},{rng.uniform(-10, 10):.2f}"
        for u in range(1, 101)
        for j in rng.choice(100, size=40, replace=False)
    ]
    (folder / "jokes.csv").write_text("\n".join(lines))
    (folder / "outside").symlink_to("/etc/hostname")
    monkeypatch.setenv("RISKGRID_DATA_DIR", str(folder))
    at = open_app("cf", cf_source="Data folder", cf_format="jester-long")
    assert not at.exception
    assert len(at.text_input) == 0  # no path typed into the page
    assert at.selectbox(key="cf_data_set").options == ["jokes.csv", "outside"]
    at.selectbox(key="cf_data_set").set_value("jokes.csv").run()
    assert not at.exception and any(m.label == "ratings" for m in at.metric)
    assert any(c.value.startswith("jokes\\.csv;") for c in at.caption)  # Markdown-escaped
    assert str(tmp_path) not in _rendered_html(at)
    at.selectbox(key="cf_data_set").set_value("outside").run()
    assert not at.exception and not any(m.label == "ratings" for m in at.metric)
    (folder / "ml-100k").mkdir()  # a MovieLens folder without its u.data
    at.selectbox(key="cf_format").set_value("ml-100k").run()
    at.selectbox(key="cf_data_set").set_value("ml-100k").run()
    assert not at.exception
    assert [e.value.replace("\\", "") for e in at.error] == [  # less the Markdown escapes
        "Not usable: ml-100k/u.data: no such file"
    ]
    assert str(tmp_path) not in _rendered_html(at)


def test_with_a_login_configured_nothing_is_shown_before_signing_in(fresh):
    at = AppTest.from_file(str(APP_PATH), default_timeout=60)
    at.secrets["auth"] = dict(LOGIN_SECRETS)
    at.run()
    assert not at.exception
    assert [b.label for b in at.button] == ["Sign in"]
    assert len(at.radio) == 0 and len(at.sidebar.file_uploader) == 0 and len(at.metric) == 0
