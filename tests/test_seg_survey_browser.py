"""End to end in Chromium: a SEG-method survey (``riskgrid survey create --method seg`` with a
scenarios file, shown in mmol/L) answered through two raters' links — a threshold refused with
its rule, a matrix with a consistency note, the server killed (SIGKILL) after the first scenario
and started again, the raters back through their links where they stopped — then ``riskgrid
survey export -o DIR``: thresholds.csv and matrix.csv hold exactly what was typed (mmol/L ×
18.016, rounded to whole mg/dL). Needs Debian's /usr/bin/chromium (never downloads a browser)."""

from __future__ import annotations

import os
import signal

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from dashboard.seg_rater import cell_label, threshold_label
from ranking_core.cli import app
from ranking_core.surveys.seg_method import ACTIONS, CUT_ACTIONS
from scripts.screenshots import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, launch, stop

TIMEOUT = 30_000  # ms for one page to answer

# (scenario name, insulin) as in the scenarios file
SCENARIOS = [("Pump, adult", True), ("Diet only", False)]
# what each rater types per scenario: four cut points in mmol/L, then the 5 x 5 matrix
CUTS = {
    ("ann", 0): ["2.8", "3.9", "10.0", "13.9"],
    ("ann", 1): ["3.0", "4.0", "12.5", "20.0"],
    ("bo", 0): ["2.5", "3.6", "8.3", "16.7"],
    ("bo", 1): ["2.2", "3.3", "11.1", "25.0"],
}
SMOOTH = [[1, 3, 5, 7, 9], [3, 1, 3, 5, 7], [6, 3, 1, 2, 5], [8, 6, 2, 1, 3], [9, 8, 5, 3, 1]]
DIP = [[1, 2, 4, 3, 9], [2, 1, 2, 4, 8], [5, 2, 1, 2, 6], [7, 5, 3, 1, 2], [9, 8, 6, 4, 1]]
MATRICES = {("ann", 0): SMOOTH, ("ann", 1): DIP, ("bo", 0): DIP, ("bo", 1): SMOOTH}


def _cli(*args: str, database: str) -> None:
    """``riskgrid ARGS`` (the command line's app, run in this process) on ``database``."""
    result = CliRunner().invoke(
        app, list(args), env={"RISKGRID_DATABASE_URL": database, "SEG_TABLE": None}
    )
    assert result.exit_code == 0, (result.output, result.exception)


def _answer_scenario(page, rater: str, index: int, n: int) -> None:
    """Type the thresholds and the matrix of scenario ``index`` as the page shows it."""
    name, insulin = SCENARIOS[index]
    page.get_by_text(f"Scenario {index + 1} of {n}").wait_for(timeout=TIMEOUT)
    page.get_by_role("heading", name=name).wait_for(timeout=TIMEOUT)
    for letter, value in zip(CUT_ACTIONS, CUTS[(rater, index)], strict=True):
        box = page.get_by_label(threshold_label(letter, insulin, "mmol/L"), exact=True)
        box.fill(value)
        box.press("Tab")
    page.get_by_role("button", name="Save thresholds").click()
    matrix = MATRICES[(rater, index)]
    page.get_by_label(cell_label(1, 0), exact=True).wait_for(timeout=TIMEOUT)
    for i in range(5):
        for j in range(5):
            if i != j:
                box = page.get_by_label(cell_label(i, j), exact=True)
                box.fill(str(matrix[i][j]))
                box.press("Tab")
    page.get_by_role("button", name="Save matrix").click()
    if matrix is DIP:  # the note is shown with the scenario; the rater goes on anyway
        page.get_by_text("Please check: risk usually does not fall").wait_for(timeout=TIMEOUT)
        if index < n - 1:
            page.get_by_role("button", name="Next scenario").click()
    else:
        page.get_by_text("Please check").wait_for(state="detached", timeout=TIMEOUT)


@pytest.mark.slow
@pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is absent (apt-get install chromium)"
)
def test_two_raters_answer_a_seg_survey_and_the_export_holds_what_they_typed(
    team_scheduler, tmp_path
):
    pytest.importorskip("playwright.sync_api", reason="the playwright Python package is missing")
    from playwright.sync_api import sync_playwright

    port = free_port()
    database = f"sqlite:///{tmp_path / 'riskgrid.sqlite3'}"
    env = {**os.environ, "RISKGRID_DATABASE_URL": database, "PYTHONPATH": str(ROOT)}
    env["RISKGRID_SCHEDULER"] = team_scheduler  # no local cluster (tests/conftest.py)
    env.pop("SEG_TABLE", None)
    scenarios = tmp_path / "scenarios.csv"
    scenarios.write_text(
        'name,description,insulin\n"Pump, adult",An adult on a pump,yes\n'
        "Diet only,*No* <b>insulin</b>,no\n"
    )
    _cli(
        "survey", "create", "ward", "--method", "seg", "--unit", "mmol/L",
        "--scenarios", str(scenarios), "--base-url", f"http://127.0.0.1:{port}",
        database=database,
    )  # fmt: skip
    links_file = tmp_path / "links.csv"
    _cli("survey", "invite", "ward", "--raters", "2", "-o", str(links_file), database=database)
    links = pd.read_csv(links_file)
    links["rater"] = ["ann", "bo"]
    server = launch(port, env)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            pages = {}
            for rater, link in zip(links["rater"], links["link"], strict=True):
                pages[rater] = browser.new_context(viewport={"width": 1400, "height": 1000})
                pages[rater] = pages[rater].new_page()
                pages[rater].goto(link)
            ann, bo = pages["ann"], pages["bo"]
            # a threshold below the one before is refused with the rule, nothing stored
            ann.get_by_text("Scenario 1 of 2").wait_for(timeout=TIMEOUT)
            for letter, value in zip(CUT_ACTIONS, ["3.9", "2.8", "10.0", "13.9"], strict=True):
                box = ann.get_by_label(threshold_label(letter, True, "mmol/L"), exact=True)
                box.fill(value)
                box.press("Tab")
            ann.get_by_role("button", name="Save thresholds").click()
            ann.get_by_text("must increase strictly from A to D").wait_for(timeout=TIMEOUT)
            # the description is text, not markup
            bo.get_by_text("Scenario 1 of 2").wait_for(timeout=TIMEOUT)
            _answer_scenario(ann, "ann", 0, 2)
            _answer_scenario(bo, "bo", 0, 2)
            # the server is killed (SIGKILL) and started again; both raters open their links
            # again and find scenario 2, where they stopped
            stop(server, signal.SIGKILL)
            server = launch(port, env)
            for page, link in ((ann, links["link"][0]), (bo, links["link"][1])):
                page.goto(link)
                page.get_by_text("Scenario 2 of 2").wait_for(timeout=TIMEOUT)
            bo.get_by_text("*No* <b>insulin</b>").wait_for(timeout=TIMEOUT)
            _answer_scenario(bo, "bo", 1, 2)
            _answer_scenario(ann, "ann", 1, 2)
            for page in (ann, bo):
                page.goto(page.url)
                page.get_by_text("All scenarios answered").wait_for(timeout=TIMEOUT)
            browser.close()
    finally:
        stop(server)

    folder = tmp_path / "export"
    _cli("survey", "export", "ward", "-o", str(folder), database=database)
    thresholds = pd.read_csv(folder / "thresholds.csv")
    matrix = pd.read_csv(folder / "matrix.csv")
    assert list(thresholds.columns) == ["rater", "scenario", "action", "max"]
    assert list(matrix.columns) == ["rater", "scenario", "measured", "actual", "score"]
    names = dict(zip(links["rater"], [f"rater-{i}" for i in (1, 2)], strict=True))
    expected_cuts = {
        (names[r], SCENARIOS[s][0], a): round(float(v) * 18.016)
        for (r, s), values in CUTS.items()
        for a, v in zip(CUT_ACTIONS, values, strict=True)
    }
    got_cuts = {(r.rater, r.scenario, r.action): r.max for r in thresholds.itertuples()}
    assert got_cuts == expected_cuts
    expected_scores = {
        (names[r], SCENARIOS[s][0], ACTIONS[i], ACTIONS[j]): m[i][j]
        for (r, s), m in MATRICES.items()
        for i in range(5)
        for j in range(5)
    }
    got_scores = {(r.rater, r.scenario, r.measured, r.actual): r.score for r in matrix.itertuples()}
    assert got_scores == expected_scores

    # ... and `riskgrid elicit` turns the export into the grid the typed answers define:
    # risk(REF, BGM) = (score[action(BGM), action(REF)] - 1) / 2, averaged over the raters of a
    # scenario, then over the scenarios (computed here cell block by cell block from what was typed)
    out = tmp_path / "grid"
    _cli(
        *("elicit", str(folder / "thresholds.csv"), str(folder / "matrix.csv")),
        *("--out-dir", str(out), "--no-learn"),
        database=database,
    )
    glucose = np.arange(601)
    scenario_means = []
    for s in range(len(SCENARIOS)):
        maps = []
        for rater in ("ann", "bo"):
            cuts = [round(float(v) * 18.016) for v in CUTS[(rater, s)]]
            risk = np.empty((601, 601))
            for i in range(5):  # measured action: the BGM column block
                bgm = (glucose > (cuts[i - 1] if i else -1)) & (glucose <= ([*cuts, 600])[i])
                for j in range(5):  # actual action: the REF row block
                    ref = (glucose > (cuts[j - 1] if j else -1)) & (glucose <= ([*cuts, 600])[j])
                    risk[np.ix_(ref, bgm)] = (MATRICES[(rater, s)][i][j] - 1) / 2
            maps.append(risk)
        scenario_means.append(np.mean(maps, axis=0))
    np.testing.assert_allclose(
        np.load(out / "grid.npy"), np.mean(scenario_means, axis=0), atol=1e-9
    )
