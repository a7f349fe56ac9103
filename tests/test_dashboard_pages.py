"""The page registry (``dashboard.pages.PAGES``) is the one list of pages: the navigation, the
screenshot script and the public-demo checks read it, and a page added there (with its view
script) is served with nothing else to edit."""

from __future__ import annotations

import pytest
from dashboard_support import fresh_machine, open_app
from streamlit.testing.v1 import AppTest

import dashboard.pages
from dashboard import APP_PATH
from dashboard.pages import PAGES, VIEWS, Page, screenshot_pages, shown_pages
from scripts import screenshots


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    return fresh_machine(tmp_path, monkeypatch)


def test_every_view_script_is_one_registered_page_and_one_is_the_default():
    assert sorted(page.view for page in PAGES) == sorted(p.stem for p in VIEWS.glob("*.py"))
    assert all(page.script.is_file() for page in PAGES)
    assert sum(page.default for page in PAGES) == 1
    assert len({page.title for page in PAGES}) == len(PAGES)
    assert len({page.screenshot for page in PAGES if page.screenshot}) == len(screenshot_pages())


def test_the_screenshot_script_takes_every_page_that_names_a_screenshot():
    named = [page for page in PAGES if page.screenshot is not None]
    assert screenshots.PAGES == {("" if p.default else p.view): p.screenshot for p in named}
    # taken on a fresh machine without a login: no page of organisers or of stored records
    assert all(page.audience == "everyone" for page in named)


def test_who_sees_which_page():
    audiences = {
        (public, signed_in): {p.audience for p in shown_pages(public, signed_in)}
        for public in (False, True)
        for signed_in in (False, True)
    }
    assert audiences[(True, False)] == audiences[(True, True)] == {"everyone"}
    assert audiences[(False, False)] == {"everyone", "records"}
    assert audiences[(False, True)] == {"everyone", "records", "organisers"}
    with pytest.raises(ValueError, match="audience 'staff' is not one of everyone"):
        Page("x", "X", ":material/star:", "Help", audience="staff")


def test_the_navigation_lists_every_page_a_visitor_may_see(fresh, monkeypatch):
    at = open_app()
    for page in shown_pages(public=False, signed_in=False):
        at.switch_page(str(page.script))  # raises unless the navigation registered the script
    for page in PAGES:
        if page.audience == "organisers":  # no login configured: no organisers' page
            with pytest.raises(ValueError, match="Could not find a navigation page"):
                at.switch_page(str(page.script))


def test_a_page_added_to_the_registry_is_served_and_photographed(fresh, monkeypatch, tmp_path):
    """The recipe of docs/ARCHITECTURE.md ("How to add a dashboard page"), on a throw-away
    page: a view script and one registry entry."""
    (tmp_path / "throwaway.py").write_text(
        'import streamlit as st\n\nst.title("Throw-away page")\nst.write("drawn by its view")\n'
    )
    extra = Page(
        "throwaway", "Throw-away", ":material/science:", "Help", "throwaway", folder=tmp_path
    )
    monkeypatch.setattr(dashboard.pages, "PAGES", (*PAGES, extra))
    at = AppTest.from_file(str(APP_PATH), default_timeout=180)
    at.session_state["learn_m"] = 200
    at.run()
    at.switch_page(str(extra.script)).run()  # absolute: the page lives outside dashboard/
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Throw-away page"]
    assert "throwaway" in screenshot_pages(dashboard.pages.PAGES)

    monkeypatch.setattr(
        dashboard.pages,
        "PAGES",
        (
            *PAGES,
            Page(
                "throwaway",
                "Throw-away",
                ":material/science:",
                "Help",
                audience="records",
                folder=tmp_path,
            ),
        ),
    )
    monkeypatch.setenv("RISKGRID_PUBLIC", "1")  # the public demo keeps no records' pages
    at = AppTest.from_file(str(APP_PATH), default_timeout=180)
    at.session_state["learn_m"] = 200
    at.run()
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page(str(extra.script))


def test_every_table_upload_offers_each_format_the_reader_accepts(fresh):
    """Upload widgets read their types from the input layer: each suffix of the registered
    readers (``ranking_core.inputs.READERS``), and only those, is offered."""
    from ranking_core.inputs import READERS

    accepted = {suffix for reader in READERS for suffix in reader.suffixes if suffix}
    seen = 0
    for page, radio, choice in (
        ("learn", "learn_source", "Upload a file"),
        ("plan", "plan_source", "Upload ratings so far"),
        ("meter", "meter_source", "Upload"),
        ("meter", "meter_source", "Sensor + reference"),
    ):
        at = open_app(page)
        at.radio(key=radio).set_value(choice).run()
        assert not at.exception, (page, choice)
        for uploader in at.get("file_uploader"):  # the sidebar's SEG upload is not a table
            if uploader.proto.label.startswith("RiskPairData"):
                continue
            assert set(uploader.proto.type) == accepted, (page, uploader.proto.label)
            seen += 1
    assert seen == 5  # learn, plan, meter, and the sensor and reference series
