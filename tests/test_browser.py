"""One end-to-end browser test: the README's command serves the app (the session's server of a fresh
machine, tests/conftest.py), headless Chromium renders the Learn page's figures, as pictures and
then interactive. Needs Debian's /usr/bin/chromium (never downloads a browser)."""

from __future__ import annotations

import pytest

from scripts.screenshots import CHROMIUM, open_browser, wait_until_rendered


@pytest.mark.slow
@pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is absent (apt-get install chromium)"
)
def test_learn_page_renders_its_figure_in_chromium(fresh_dashboard, tmp_path):
    pytest.importorskip("playwright.sync_api", reason="the playwright Python package is missing")
    with open_browser() as page:
        page.goto(fresh_dashboard)
        wait_until_rendered(page)
        # the λ curve and the learned grid open as pictures, the grid one pixel per mg/dL
        widths = page.locator("[data-testid='stMain'] [data-testid='stImage'] img").evaluate_all(
            "(imgs) => imgs.map((img) => img.complete ? img.naturalWidth : 0)"
        )
        assert len(widths) == 2 and min(widths) > 601
        assert page.locator("[data-testid='stPlotlyChart']").count() == 0
        assert page.get_by_text("Misranking vs reference").count() > 0
        page.locator("[data-testid='stCheckbox']").filter(has_text="Interactive figures").locator(
            "label"
        ).first.click()
        page.wait_for_selector("[data-testid='stPlotlyChart'] .js-plotly-plot")
        wait_until_rendered(page)
        charts = page.locator("[data-testid='stPlotlyChart'] .js-plotly-plot")
        assert charts.count() == 2  # the same two figures, now interactive
        assert page.locator(".js-plotly-plot .heatmaplayer, .js-plotly-plot .hm").count() > 0
        assert page.locator("[data-testid='stAppDeployButton']").count() == 0
        assert page.locator("[data-testid='stException']").count() == 0
        shot = tmp_path / "learn.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
