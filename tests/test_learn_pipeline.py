"""One pipeline for ``riskgrid learn`` and the Learn page (ranking_core.learn.pipeline): the same
check refuses a flat grid in both, and what is written or saved is the fitted grid clipped to
the risk scale 0..4."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from dashboard_support import TEST_M, fresh_machine, open_app
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.filters import MAX_LAMBDA
from ranking_core.learn import PRESETS, learn_grid
from ranking_core.learn.pipeline import GridOffScale, choose_settings, fit_checked
from ranking_core.panels import simulate_panel
from ranking_core.ratings import read_rating_set

FLAT = "the learned grid is flat"


def _panel(tmp_path, m: int = 200):
    frame = simulate_panel(m, random_state=0).drop(columns="outlier")
    source = tmp_path / "ratings.csv"
    frame.to_csv(source, index=False)
    return source, read_rating_set(frame, name="ratings.csv")


def test_the_command_and_the_library_refuse_a_flat_grid_with_one_sentence(tmp_path):
    """At the largest λ only the mean rating is left: span 0.003 of a 0..4 rating span."""
    source, data = _panel(tmp_path)
    settings = dataclasses.replace(PRESETS["best"], rule="manual", lam=MAX_LAMBDA)
    grid = learn_grid(data, settings).grid
    assert np.ptp(grid) < 0.01 * np.ptp(data.y)  # flat, by the rule's own numbers
    with pytest.raises(GridOffScale, match=FLAT):
        fit_checked(data, settings)
    out = tmp_path / "grid"
    options = ["--recipe", "best", "--rule", "manual", "--lambda", str(MAX_LAMBDA)]
    result = CliRunner().invoke(app, ["learn", str(source), "--out-dir", str(out), *options])
    *progress, message = result.stderr.strip().splitlines()  # the bar, then one sentence
    assert result.exit_code == 1 and message.startswith(f"cannot learn from ratings.csv: {FLAT}")
    assert all(line.startswith("fitting") for line in progress) and not out.exists()


def test_what_the_command_writes_is_the_fitted_grid_clipped_to_the_risk_scale(tmp_path):
    """A tiny λ overshoots the scale (risk above 4 between ratings): the file holds the
    library's fit clipped to 0..4, and the choice of settings is the command's."""
    source, data = _panel(tmp_path)
    options = ["--recipe", "best", "--rule", "manual", "--lambda", "1e-6"]
    out = tmp_path / "grid"
    result = CliRunner().invoke(app, ["learn", str(source), "--out-dir", str(out), *options])
    assert result.exit_code == 0, result.output
    settings = dataclasses.replace(PRESETS["best"], rule="manual", lam=1e-6)
    assert choose_settings(data, "best", rule="manual", lam=1e-6).settings == settings
    fitted = learn_grid(data, settings).grid
    assert fitted.max() > 4.0  # the fit leaves the scale ...
    written = np.load(out / "grid.npy")
    assert written.min() >= 0.0 and written.max() == 4.0  # ... the file does not
    np.testing.assert_allclose(written, np.clip(fitted, 0.0, 4.0), rtol=0, atol=1e-9)


def test_the_learn_page_applies_the_commands_check(tmp_path, monkeypatch):
    """The page's fit once showed a flat grid (and offered it for download and saving); it
    now refuses it with the command's sentence."""
    fresh_machine(tmp_path, monkeypatch)
    settings = dataclasses.replace(PRESETS["best"], rule="manual", lam=MAX_LAMBDA)
    at = open_app(learn_settings=settings, learn_own_settings=True)
    errors = [e.value for e in at.error]
    assert any(e.startswith("Cannot learn from this rating set: " + FLAT) for e in errors), errors
    assert "learn_result" not in at.session_state
    assert not any(b.label == "Save learned grid" for b in at.button)
    assert TEST_M == 200  # the page's simulated panel: the size the check was made on
