"""Every dashboard page in headless Chromium at 1280 × 800, as a new user sees it: no table header
is a raw field name (snake_case), no table hides a column behind a scroll bar, the Compare page
offers every zone grid (DTS included) and draws each grid at least 400 px wide. Needs Debian's
/usr/bin/chromium (never downloads a browser)."""

from __future__ import annotations

import re

import pytest

from scripts.screenshots import CHROMIUM, PAGES, open_browser, wait_until_rendered

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason=f"{CHROMIUM} is absent (apt-get install chromium)"
    ),
]

SNAKE_CASE = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)+")
HEADERS_JS = """() => Array.from(document.querySelectorAll(
    "[data-testid='stMain'] th, [data-testid='stMain'] [role='columnheader']"))
  .map((cell) => cell.innerText.trim())"""
# tables whose content is wider than their box: columns hidden behind a scroll bar
HIDDEN_JS = """() => Array.from(document.querySelectorAll(
    "[data-testid='stMain'] [data-testid='stTable'], [data-testid='stMain'] .dvn-scroller"))
  .filter((box) => box.scrollWidth > box.clientWidth + 1)
  .map((box) => box.innerText.slice(0, 80))"""
# width in px of the plotting area of each Plotly chart (the drag layer covers exactly it)
PLOT_WIDTHS_JS = """() => Array.from(document.querySelectorAll(
    "[data-testid='stPlotlyChart'] .js-plotly-plot"))
  .map((plot) => plot.querySelector(".nsewdrag").getBoundingClientRect().width)"""


@pytest.fixture(scope="module")
def browser_page(fresh_dashboard):
    """The session's server of a fresh machine (tests/conftest.py) and a page at 1280 × 800."""
    pytest.importorskip("playwright.sync_api", reason="the playwright Python package is missing")
    with open_browser(1280, 800) as page:
        yield fresh_dashboard, page


@pytest.mark.parametrize("path", list(PAGES))
def test_no_raw_field_names_and_no_hidden_columns(browser_page, path):
    url, page = browser_page
    page.goto(f"{url}/{path}")
    wait_until_rendered(page)
    assert page.locator("[data-testid='stException']").count() == 0
    headers = page.evaluate(HEADERS_JS)
    raw = [h for h in headers if SNAKE_CASE.fullmatch(h)]
    assert not raw, f"{PAGES[path]}: raw field names as headers: {raw}"
    assert page.evaluate(HIDDEN_JS) == [], f"{PAGES[path]}: a table hides columns"
    if path == "meter":
        assert {"Verdict", "95 % lower bound (%)", "DTS", "Hypo missed"} <= set(headers)


def test_compare_offers_every_zone_grid_and_draws_them_wide(browser_page):
    url, page = browser_page
    page.goto(f"{url}/compare")
    wait_until_rendered(page)
    widths = page.evaluate(PLOT_WIDTHS_JS)
    assert len(widths) >= 3 and min(widths[:3]) >= 400, widths  # reference, other, difference
    page.locator("[data-testid='stSelectbox']").filter(has_text="other grid").click()
    options = page.locator("[role='option']").all_inner_texts()
    for title in (
        "DTS Error Grid",
        "Clarke Error Grid",
        "Parkes Error Grid, type 1",
        "Parkes Error Grid, type 2",
    ):
        assert f"{title} zones (A–E = 0–4)" in options, options
