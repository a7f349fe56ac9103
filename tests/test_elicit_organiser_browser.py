"""End to end in Chromium: a SEG-method survey answered by 5 raters through the calls the rater's
page makes; the organiser's link shows the grid so far, computed as a background job: the pooled
SEG-style mean grid and its difference from the SEG, with the share of pairs whose risk category
changes equal to the one computed here from the answers (an independent NumPy oracle) and the
official table. Needs Debian's /usr/bin/chromium and the SEG table ($SEG_TABLE)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ranking_core.surveys import SurveySettings, SurveyStore
from ranking_core.surveys.seg_method import Scenario
from ranking_core.surveys.seg_storage import (
    create_seg_survey,
    save_matrix,
    save_thresholds,
    stored_scenarios,
)
from scripts.screenshots import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, launch, stop

TIMEOUT = 120_000  # ms: the page, then the job


def _answers(url: str, port: int) -> tuple[str, dict]:
    surveys = SurveyStore(url)
    settings = SurveySettings(checks=0, base_url=f"http://127.0.0.1:{port}")
    survey, token = create_seg_survey(surveys, "ward", [Scenario("Pump")], settings)
    rng = np.random.default_rng(11)
    typed = {}
    for rater, link in surveys.invite("ward", 5):
        access = surveys.rater("ward", link.split("token=")[1])
        scenario = stored_scenarios(surveys, survey)[0]
        cuts = np.sort(rng.choice(np.arange(20, 500), 4, replace=False)).tolist()
        scores = rng.integers(1, 10, (5, 5))
        np.fill_diagonal(scores, 1)
        save_thresholds(surveys, access, scenario.id, cuts)
        save_matrix(surveys, access, scenario.id, scores.tolist())
        typed[rater] = (cuts, scores)
    return survey.organiser_link(token), typed


def _pooled(typed: dict) -> np.ndarray:
    glucose = np.arange(601)
    maps = []
    for cuts, scores in typed.values():
        edges = [-1, *cuts, 600]
        risk = np.empty((601, 601))
        for i in range(5):  # measured action: BGM columns
            bgm = (glucose > edges[i]) & (glucose <= edges[i + 1])
            for j in range(5):  # actual action: REF rows
                ref = (glucose > edges[j]) & (glucose <= edges[j + 1])
                risk[np.ix_(ref, bgm)] = (scores[i][j] - 1) / 2
        maps.append(risk)
    return np.mean(maps, axis=0)


@pytest.mark.slow
@pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is absent (apt-get install chromium)"
)
def test_the_organiser_sees_the_pooled_grid_and_its_difference_from_the_seg(
    team_scheduler, tmp_path
):
    pytest.importorskip("playwright.sync_api", reason="the playwright Python package is missing")
    from playwright.sync_api import sync_playwright

    from ranking_core.grids.risk_scale import risk_category
    from ranking_core.grids.seg import find_seg_table

    seg = find_seg_table().absolute  # $SEG_TABLE (tests/conftest.py)
    port = free_port()
    url = f"sqlite:///{tmp_path / 'riskgrid.sqlite3'}"
    env = {**os.environ, "RISKGRID_DATABASE_URL": url, "PYTHONPATH": str(ROOT)}
    env["RISKGRID_SCHEDULER"] = team_scheduler  # the job on the session's team (conftest.py)
    link, typed = _answers(url, port)
    changed = np.mean(risk_category(_pooled(typed)) != risk_category(seg))
    server = launch(port, env)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(link)
            page.get_by_role("button", name="Compute the grid so far").click(timeout=TIMEOUT)
            page.get_by_text("Pooled SEG-style mean grid").first.wait_for(timeout=TIMEOUT)
            page.get_by_text("Elicited − SEG").first.wait_for(timeout=TIMEOUT)
            page.get_by_text(f"Against SEG: {changed:.1%} of pairs change risk category").wait_for(
                timeout=TIMEOUT
            )
            page.get_by_text("5 raters, 1 scenario, 5 rater maps").wait_for(timeout=TIMEOUT)
            browser.close()
    finally:
        stop(server)
