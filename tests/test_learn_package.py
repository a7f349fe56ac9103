"""The learn package's promises: one robust-learning policy for every front end (library, CLI,
Learn page), one size rule (the plan's method is the direct learner's own ``auto`` choice), and
the kernel built once per fit."""

from __future__ import annotations

import json

import numpy as np
import pytest
from dashboard_support import fresh_machine, open_app
from typer.testing import CliRunner

from ranking_core import kernels
from ranking_core.cli import app
from ranking_core.learn import (
    PRESETS,
    LearnSettings,
    fit_method,
    learn_grid,
    plan_fit,
    robust_settings,
    with_robust,
)
from ranking_core.learn.plan import LOW_RANK_FROM
from ranking_core.learners.direct import EXACT_UP_TO, ONE_FOLD_UP_TO, choose_method
from ranking_core.panels import simulate_panel
from ranking_core.ratings import read_rating_set


@pytest.fixture(scope="module")
def panel_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("panel") / "panel.csv"
    simulate_panel(40, random_state=2).to_csv(path, index=False)
    return path


def test_the_policy_robust_learning_makes_the_grid_monotone_unless_told():
    best, robust = PRESETS["best"], PRESETS["robust"]
    assert with_robust(best, "huber").monotone and with_robust(best, "tukey").robust == "tukey"
    assert not with_robust(robust, None).monotone and with_robust(robust, None).robust is None
    assert not with_robust(best, "huber", monotone=False).monotone
    assert with_robust(best, None, monotone=True).monotone
    assert robust_settings() == robust  # the preset follows the same policy


@pytest.mark.parametrize(
    ("options", "monotone"),
    [
        (["--robust", "huber"], True),
        (["--robust", "huber", "--as-learned"], False),
        (["--recipe", "robust", "--robust", "none"], False),
        (["--recipe", "robust", "--robust", "none", "--monotone"], True),
    ],
)
def test_the_cli_applies_the_policy(panel_file, tmp_path, options, monotone):
    out = tmp_path / "out"
    recipe = [] if "--recipe" in options else ["--recipe", "best"]
    run = CliRunner().invoke(
        app, ["learn", str(panel_file), *recipe, *options, "--out-dir", str(out)]
    )
    assert run.exit_code == 0, run.output
    settings = json.loads((out / "grid.json").read_text())["settings"]
    assert settings["monotone"] is monotone


def test_the_learn_page_applies_the_same_policy(tmp_path, monkeypatch):
    fresh_machine(tmp_path, monkeypatch)
    at = open_app(learn_settings=PRESETS["best"], learn_own_settings=True)
    at.selectbox(key="learn_robust").set_value("huber").run()
    assert not at.exception, at.exception
    shown = at.session_state["learn_settings"]
    assert shown == with_robust(PRESETS["best"], "huber") and shown.monotone
    assert at.toggle(key="learn_monotone").value is True


@pytest.mark.parametrize("kernel", ["laplacian", "gaussian"])
@pytest.mark.parametrize(
    "m", [5, EXACT_UP_TO, EXACT_UP_TO + 1, ONE_FOLD_UP_TO, ONE_FOLD_UP_TO + 1, 10**6]
)
def test_the_plan_uses_the_one_size_rule(kernel, m):
    settings = LearnSettings(kernel=kernel, anchors=0)
    try:
        plan = plan_fit(settings, m)
    except ValueError as exc:  # beyond the memory budget: the sentence names the limit
        assert "GB" in str(exc) and kernel == "gaussian" and m > 9000
        return
    assert plan.ranker.kernel is plan.kernel
    if kernel == "gaussian" and m >= LOW_RANK_FROM:  # a smooth kernel: one low-rank factor
        assert (plan.method, plan.engine, fit_method(settings, m)) == ("low-rank",) * 3
        assert plan_fit(with_robust(settings, "huber"), min(m, 9000)).engine == "robust"
        return
    assert plan.method == choose_method(m, plan.kernel) == fit_method(settings, m)
    expected = "spectral" if plan.method == "exact" else "direct"
    assert plan.engine == expected
    assert plan_fit(with_robust(settings, "huber"), min(m, 9000)).engine == "robust"


@pytest.mark.parametrize(
    "settings",
    [
        LearnSettings(n_lams=40),
        LearnSettings(n_lams=40, method="one-fold"),
        LearnSettings(n_lams=40, robust="huber", method="one-fold"),
        LearnSettings(n_lams=40, rule="holdout"),
    ],
    ids=["exact", "one-fold", "robust-one-fold", "holdout"],
)
def test_the_kernel_is_built_once_per_fit(monkeypatch, settings):
    ratings = read_rating_set(simulate_panel(60, random_state=5))
    built = []
    original = kernels.LaplacianKernel.__init__

    def counting(self, *args, **kwargs):
        built.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(kernels.LaplacianKernel, "__init__", counting)
    result = learn_grid(ratings, settings)
    assert len(built) == 1  # copies (scikit-learn's clone) are not built again
    assert np.isfinite(result.grid).all()
