"""The recipes of docs/ARCHITECTURE.md, performed on throw-away entries: a learner is a module,
one registry entry and its test; a λ rule is a label in lambda_rules.py, a function in
selection/choose.py and its test. Each recipe is checked to be enough (the entry reaches the
protocol, the CLI and the learn pipeline) against an independent result: a closed-form solve, or
the same λ set by hand."""

from __future__ import annotations

import importlib
import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.experiments.learners import compare_learners
from ranking_core.learn import LearnSettings, describe_settings, learn_grid
from ranking_core.learners import LEARNERS, LearnerSpec
from ranking_core.learners.direct import DirectRanker
from ranking_core.panels import parkes_surface, simulate_panel
from ranking_core.ratings import read_rating_set
from ranking_core.selection import RULE_CHOICES, RULES, Choice, RuleCall, choose

DOC = Path(__file__).resolve().parents[1] / "docs" / "ARCHITECTURE.md"

# Step 1 of "How to add a learner": the module. The Lavrentiev ranker (Kriukova et al. 2014,
# eq. (4)) by a plain dense solve, built from the mixins of learners/base.py.
LEARNER_MODULE = '''
"""A throw-away learner: Lavrentiev ranking, (K̃ + λI)c = Cy/m, by numpy.linalg.solve."""

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from ranking_core.learners.base import (
    CheckedInputsMixin,
    KernelMixin,
    RankingScoreMixin,
    store_params,
)


class ThrowawayRanker(
    KernelMixin, RankingScoreMixin, CheckedInputsMixin, RegressorMixin, BaseEstimator
):
    def __init__(self, kernel="gaussian", gamma=1e4, degree=None, coef0=None, lam=1e-3):
        store_params(self, locals())

    def fit(self, X, y):
        X, y = self._check_training_data(X, y)
        (lam,) = self._check_positive_params("lam")
        K = self._resolve_kernel()(X, X)
        m = len(y)
        C = np.eye(m) - 1.0 / m
        coef = np.linalg.solve(C @ K @ C / m + lam * np.eye(m), C @ y / m)
        self.X_fit_, self.coef_ = X, coef
        self.intercept_ = float(y.mean() - (K @ coef).mean())
        return self
'''


def _recipe(title: str) -> str:
    return DOC.read_text(encoding="utf-8").split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


@pytest.fixture
def throwaway_learner(tmp_path, monkeypatch):
    """Steps 1 and 2 of the recipe: the module, and its entry in the registry."""
    (tmp_path / "throwaway_learner.py").write_text(textwrap.dedent(LEARNER_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("throwaway_learner")
    spec = LearnerSpec(
        lambda gamma: module.ThrowawayRanker(gamma=gamma),
        "ThrowawayRanker: Lavrentiev by a dense solve (a recipe test)",
        False,
        "lam",
        LEARNERS["direct"].grid,  # the grid of the direct entry: the rows must then agree
    )
    monkeypatch.setitem(LEARNERS, "throwaway", spec)
    yield module
    importlib.invalidate_caches()


def test_the_learner_recipe_names_three_files_only():
    recipe = _recipe("How to add a learner")
    assert "learners/<family>.py" in recipe and "LEARNERS" in recipe
    assert "tests/test_<family>.py" in recipe
    steps = [line for line in recipe.splitlines() if line[:3] in ("1. ", "2. ", "3. ")]
    assert len(steps) == 3


def test_a_learner_added_by_the_recipe_fits_and_runs_in_the_learner_protocol(throwaway_learner):
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 600, (60, 2))
    y = np.abs(X[:, 0] - X[:, 1]) / 150
    X_new = rng.uniform(0, 600, (40, 2))
    ours = LEARNERS["throwaway"].make(1e4).set_params(lam=1e-3).fit(X, y)
    closed_form = DirectRanker("gaussian", gamma=1e4, lam=1e-3, solver="cholesky").fit(X, y)
    np.testing.assert_allclose(ours.predict(X_new), closed_form.predict(X_new), atol=1e-8)
    # the registry entry alone puts it into the protocol of `riskgrid learners compare`: on the
    # same draws it chooses the same λ and misranks as the direct entry, the same model
    rows = compare_learners(parkes_surface(), ["throwaway", "direct"], m=40, reps=2, test_size=300)
    assert [row["learner"] for row in rows] == ["throwaway", "direct"]
    assert rows[0]["values"] == rows[1]["values"]
    assert rows[0]["misranking_mean"] == pytest.approx(rows[1]["misranking_mean"], abs=1e-12)
    assert 0 < rows[0]["misranking_mean"] < 0.3


# "How to add a λ rule", step 1: a label in RULES and a function in RULE_CHOICES. The throw-away
# rule takes the largest candidate λ (the first of the decreasing grid).
LARGEST = "largest"


def _largest(call: RuleCall) -> Choice:
    grid = call.candidate_grid()
    chosen = float(grid[0])
    return Choice(chosen, call.param, None, grid, None, None, call.fit_at(chosen), call.rule, True)


@pytest.fixture
def throwaway_rule(monkeypatch):
    monkeypatch.setitem(RULES, LARGEST, "the largest candidate λ")
    monkeypatch.setitem(RULE_CHOICES, LARGEST, _largest)


@pytest.fixture(scope="module")
def ratings(tmp_path_factory):
    frame = simulate_panel(60, random_state=4).drop(columns=["rater"], errors="ignore")
    path = tmp_path_factory.mktemp("ratings") / "ratings.csv"
    frame.to_csv(path, index=False)
    return path


def test_the_rule_recipe_names_its_two_library_files_and_its_test():
    recipe = _recipe("How to add a λ rule")
    assert "RULES" in recipe and "lambda_rules.py" in recipe
    assert "RULE_CHOICES" in recipe and "selection/choose.py" in recipe
    assert "tests/test_selection.py" in recipe


def test_every_rule_named_is_computed_and_every_computation_named():
    """The λ rules' names (lambda_rules.py, no NumPy) and their computations (choose.py) agree."""
    assert list(RULE_CHOICES) == list(RULES)


def test_a_rule_listed_without_its_computation_is_refused_with_a_sentence(monkeypatch):
    monkeypatch.setitem(RULES, LARGEST, "the largest candidate λ")
    X = np.random.default_rng(0).uniform(0, 600, (20, 2))
    with pytest.raises(ValueError, match="not in RULE_CHOICES"):
        choose(DirectRanker("gaussian"), X, X[:, 0] - X[:, 1], rule=LARGEST, param="lam")


def test_a_rule_added_by_the_recipe_reaches_the_settings_the_fit_and_the_cli(
    throwaway_rule, ratings, tmp_path
):
    data = read_rating_set(ratings)
    settings = LearnSettings(rule=LARGEST, n_lams=50)
    assert "the largest candidate λ" in describe_settings(settings)["How λ is chosen"]
    result = learn_grid(data, settings)
    assert result.lam == settings.lams()[0] == 1.0
    # the same λ set by hand (the manual rule): the same grid
    by_hand = learn_grid(data, LearnSettings(rule="manual", lam=1.0, n_lams=50))
    np.testing.assert_allclose(result.grid, by_hand.grid, atol=1e-12)
    out = tmp_path / "out"
    run = CliRunner().invoke(
        app, ["learn", str(ratings), "--recipe", "best", "--rule", LARGEST, "--out-dir", str(out)]
    )
    assert run.exit_code == 0, run.output
    written = json.loads((out / "grid.json").read_text())
    assert written["settings"]["rule"] == LARGEST and written["lambda"] == 1.0
