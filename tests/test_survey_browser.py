"""End to end in Chromium: three raters answer a survey through their links at once, the server
is killed (SIGKILL) in the middle and restarted, the raters open their links again and finish;
the export (``riskgrid survey export``) holds every acknowledged answer, and every answer once.
On SQLite and PostgreSQL. Needs Debian's /usr/bin/chromium (never downloads a browser)."""

from __future__ import annotations

import asyncio
import os
import signal

import pandas as pd
import pytest
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.panels import start_design
from ranking_core.surveys import SurveySettings, SurveyStore
from scripts.screenshots import CHROMIUM, free_port, launch, stop
from scripts.survey_raters import answer_survey, open_chromium


def _rating(reference: float, estimate: float) -> float:
    """A rater's answer: half a category per 40 mg/dL of error, at most 4."""
    return min(4.0, round(abs(reference - estimate) / 40) / 2)


async def _run(links: list[tuple[str, str]], port: int, env: dict, kill_after: int):
    from playwright.async_api import async_playwright

    answers: list = []
    server_up = asyncio.Event()
    server = await asyncio.to_thread(launch, port, env)
    server_up.set()
    try:
        async with async_playwright() as playwright:
            browser = await open_chromium(playwright)
            raters = [
                asyncio.create_task(
                    answer_survey(
                        browser,
                        rater,
                        link,
                        _rating,
                        answers,
                        server_up,
                        timeout_ms=20_000,
                        double_click_at=2 if i == 0 else None,
                    )
                )
                for i, (rater, link) in enumerate(links)
            ]
            while sum(a.acknowledged for a in answers) < kill_after:
                if any(task.done() for task in raters):
                    await asyncio.gather(*raters)  # a rater failed: its error, at once
                    break
                await asyncio.sleep(0.05)
            server_up.clear()
            await asyncio.to_thread(stop, server, signal.SIGKILL)
            server = await asyncio.to_thread(launch, port, env)
            server_up.set()
            await asyncio.wait_for(asyncio.gather(*raters), timeout=600)
            await browser.close()
    finally:
        stop(server)
    return answers


@pytest.mark.slow
@pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is absent (apt-get install chromium)"
)
# on PostgreSQL: a server killed mid-survey on SQLite is tests/test_seg_survey_browser.py's case
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_answers_survive_a_server_killed_mid_survey(database_url, team_scheduler, tmp_path):
    pytest.importorskip("playwright.async_api", reason="the playwright Python package is missing")
    port = free_port()
    env = {**os.environ, "RISKGRID_DATABASE_URL": database_url}
    env["RISKGRID_SCHEDULER"] = team_scheduler  # no local cluster (tests/conftest.py)
    env.pop("SEG_TABLE", None)
    surveys = SurveyStore(database_url)
    settings = SurveySettings(
        per_rater=6, overlap=2, repeats=0.34, checks=1, batch=0, base_url=f"http://127.0.0.1:{port}"
    )
    surveys.create("ward", start_design(9, seed=4), settings, "Rate each pair.")
    links = surveys.invite("ward", 3)
    queued = len(surveys.answers("ward"))
    answers = asyncio.run(_run(links, port, env, kill_after=6))

    out = tmp_path / "ratings.csv"
    exported = CliRunner().invoke(  # `riskgrid survey export` (the app, run in this process)
        app,
        ["survey", "export", "ward", "-o", str(out)],
        env={"RISKGRID_DATABASE_URL": database_url},
    )
    assert exported.exit_code == 0, (exported.output, exported.exception)
    export = pd.read_csv(out)
    assert len(export) == queued  # everyone finished: every place answered, none twice
    acknowledged = [a for a in answers if a.acknowledged]
    assert len({(a.rater, a.progress) for a in acknowledged}) >= queued - 3
    stored = export.groupby(["rater", "reference", "estimate"])["rating"].agg(list)
    for a in acknowledged:
        assert a.rating in stored[(a.rater, a.reference, a.estimate)]
    frame = surveys.answers("ward")
    assert not frame.duplicated(["rater", "position"]).any()
    expected = [_rating(r, e) for r, e in zip(frame["reference"], frame["estimate"], strict=True)]
    assert frame["rating"].tolist() == expected
