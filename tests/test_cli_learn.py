"""``riskgrid learn``: the recipe it used and why, refusals with a sentence, the files it writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rating_support import continuous_ratings
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.panels import simulate_panel


def _learn(tmp_path, frame: pd.DataFrame, *options: str):
    source = tmp_path / "ratings.csv"
    frame.to_csv(source, index=False)
    out = tmp_path / "grid"
    result = CliRunner().invoke(app, ["learn", str(source), "--out-dir", str(out), *options])
    return result, out


def test_a_panel_is_learned_with_the_robust_recipe_and_the_line_says_why(tmp_path):
    frame = simulate_panel(60, random_state=2, n_raters=4, step=0.5).drop(columns="outlier")
    result, out = _learn(tmp_path, frame, "--rule", "manual", "--lambda", "0.001")
    assert result.exit_code == 0, result.output
    assert (
        "recipe: robust (changed by the options), the robust recipe for rater panels: the "
        "ratings come from a panel (4 raters and answers in steps of 0.5)"
    ) in result.output
    settings = json.loads((out / "grid.json").read_text())["settings"]
    assert (settings["robust"], settings["monotone"], settings["lam"]) == ("tukey", True, 0.001)


def test_continuous_ratings_keep_the_best_recipe_and_write_no_manual_lambda(tmp_path):
    result, out = _learn(tmp_path, continuous_ratings(40))
    assert result.exit_code == 0, result.output
    assert (
        "recipe: best, the best recipe for clean ratings: continuous ratings without a "
        "rater column" in result.output
    )
    written = json.loads((out / "grid.json").read_text())
    assert "lam" not in written["settings"] and written["lambda"] > 0
    assert written["settings"]["robust"] is None


def test_another_kernel_takes_its_own_width(tmp_path):
    result, out = _learn(
        tmp_path, continuous_ratings(40), "--kernel", "gaussian", "--rule", "holdout"
    )
    assert result.exit_code == 0, result.output
    assert json.loads((out / "grid.json").read_text())["settings"]["gamma"] == 1e4


@pytest.mark.parametrize(
    "ratings,sentence",
    [
        ([0.5, 1.0, 2.0], "3 ratings cannot make a grid: at least 5 are needed"),
        ([2.0] * 8, "every rating is 2: a grid needs at least two different ratings"),
    ],
)
def test_degenerate_rating_sets_are_refused_with_a_sentence(tmp_path, ratings, sentence):
    n = len(ratings)
    frame = pd.DataFrame(
        {
            "reference": np.linspace(50, 400, n),
            "estimate": np.linspace(80, 300, n),
            "rating": ratings,
        }
    )
    result, out = _learn(tmp_path, frame)
    assert result.exit_code == 1
    assert sentence in " ".join(result.output.split())
    assert "Traceback" not in result.output and not out.exists()


def test_a_size_beyond_the_memory_budget_is_refused_at_once_naming_the_limit(tmp_path):
    result, out = _learn(tmp_path, continuous_ratings(7000), "--filter", "showalter")
    assert result.exit_code == 1
    assert "at most 7,000 points with these settings" in " ".join(result.output.split())
    assert not out.exists()


def test_the_panel_report_works_with_the_hold_out_rule(tmp_path):
    frame = simulate_panel(60, random_state=3, n_raters=4).drop(columns="outlier")
    report = tmp_path / "report.csv"
    result, _ = _learn(tmp_path, frame, "--rule", "holdout", "--panel-report", str(report))
    assert result.exit_code == 0, result.output
    rows = pd.read_csv(report)
    assert len(rows) == 60
    fitted = rows["residual"].notna()
    assert 0 < fitted.sum() < 60  # the paper's hold-out fits the first half only
    assert not rows.loc[~fitted, "flagged"].any()
    assert "nan %" not in result.output  # the variance explained is that of the fitted half


@pytest.mark.parametrize("save", [False, True])
def test_learn_leaves_its_objects_to_the_system_at_exit_unless_it_holds_a_database(tmp_path, save):
    """Written files only: the process freezes its objects at exit (Python's last collections
    skip them; the handler registered first runs last and sees them frozen). With --save the
    database's connections are collected and closed as usual. The files are whole either way."""
    source = tmp_path / "ratings.csv"
    continuous_ratings(40).to_csv(source, index=False)
    script = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count()))\n"
        "from ranking_core.cli import app\n"
        "app(sys.argv[1:], prog_name='riskgrid')\n"
    )
    out = tmp_path / "grid"
    options = ["--save", "exit-check"] if save else []
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    env["RISKGRID_DATABASE_URL"] = f"sqlite:///{tmp_path / 'records.db'}"
    done = subprocess.run(
        [sys.executable, "-c", script, "learn", str(source), "--out-dir", str(out), *options],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    frozen = int(done.stdout.rsplit("frozen at exit:", 1)[1])
    assert (frozen == 0) if save else (frozen > 10_000)
    assert np.load(out / "grid.npy").shape == (601, 601)
