"""Every entry of the shared learner registry fits, predicts and ranks a smooth surface."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import numpy as np
import pytest
from typer.testing import CliRunner

from ranking_core import SpectralRanker
from ranking_core.cli import app
from ranking_core.experiments.learners import compare_learners
from ranking_core.learners import LEARNERS
from ranking_core.metrics import pairwise_misranking
from ranking_core.panels import parkes_surface


def _surface(rng, size):
    X = rng.uniform(0.0, 600.0, (size, 2))
    return X, np.hypot(X[:, 0] - 300.0, X[:, 1] - 300.0) / 100.0  # risk grows off the centre


@pytest.mark.parametrize("name", list(LEARNERS))
def test_every_learner_fits_predicts_and_beats_chance(name):
    spec = LEARNERS[name]
    rng = np.random.default_rng(0)
    X, y = _surface(rng, 50)  # above the DORM pipeline's 40 Nystroem components
    X_test, y_test = _surface(rng, 200)
    grid = spec.grid(50)
    model = spec.make(1e4).set_params(**{spec.param: grid[len(grid) // 2]})
    prediction = model.fit(X, y).predict(X_test)
    assert prediction.shape == (200,) and np.isfinite(prediction).all()
    # a random order misranks half of the pairs; every learner must do far better
    assert pairwise_misranking(y_test, prediction) < 0.3
    assert spec.description and spec.has_path == hasattr(model, "path")


def test_compare_command_prints_every_row_and_writes_json(tmp_path):
    if not os.environ.get("SEG_TABLE"):
        pytest.skip("SEG_TABLE is unset (path to the SEG risk table RiskPairData.csv.gz)")
    out = tmp_path / "rows.json"
    result = CliRunner().invoke(
        app,
        [
            "learners",
            "compare",
            "--m",
            "40",
            "--reps",
            "2",
            "--test-size",
            "300",
            "--learner",
            "spectral-lavrentiev",
            "--learner",
            "nystrom",
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "spectral-lavrentiev" in result.output
    rows = json.loads(out.read_text())["rows"]
    assert [row["learner"] for row in rows] == ["spectral-lavrentiev", "nystrom"]
    assert all(0 < row["misranking_mean"] < 30 for row in rows)


def test_unknown_learner_is_named():
    result = CliRunner().invoke(app, ["learners", "compare", "--learner", "magic"])
    assert result.exit_code != 0 and "magic" in result.output


def _by_hand(surface, m, size, reps, test_size, seed, lams):
    """Kriukova et al. 2014, §4.3 written out: draws of m points of which the first ``size`` are
    used, one Lavrentiev fit per λ on the first half, the first λ of least validation misranking,
    misranking on new points (fractions)."""
    rng = np.random.default_rng(seed)

    def draw(size):
        X = rng.uniform(0.0, 600.0, (size, 2))
        return X, surface[np.rint(X[:, 0]).astype(int), np.rint(X[:, 1]).astype(int)]

    draws = [(draw(m), draw(test_size)) for _ in range(reps)]
    errors, chosen = [], []
    for (X, y), (X_test, y_test) in draws:
        X, y, half = X[:size], y[:size], size // 2
        fits = [SpectralRanker(gamma=1e4, lam=lam).fit(X[:half], y[:half]) for lam in lams]
        validation = [pairwise_misranking(y[half:], f.predict(X[half:])) for f in fits]
        best = int(np.argmin(validation))
        chosen.append(lams[best])
        errors.append(pairwise_misranking(y_test, fits[best].predict(X_test)))
    return errors, chosen


def test_compare_learners_matches_a_hand_written_loop(monkeypatch):
    surface = parkes_surface()
    lams = np.geomspace(1.0, 1e-6, 13)
    spec = replace(LEARNERS["spectral-lavrentiev"], grid=lambda m: lams, max_m=24)
    monkeypatch.setitem(LEARNERS, "tiny-lavrentiev", spec)
    calls = []
    (row,) = compare_learners(
        surface,
        ["tiny-lavrentiev"],
        30,
        3,
        test_size=200,
        seed=7,
        progress=lambda d, t: calls.append((d, t)),
    )
    errors, chosen = _by_hand(surface, 30, 24, 3, 200, 7, lams)  # capped: first 24 of 30
    assert row["m"] == 24 and row["capped"] and row["param"] == "lam"
    assert row["values"] == pytest.approx(chosen)
    assert row["misranking_mean"] == pytest.approx(np.mean(errors), abs=1e-12)
    assert row["misranking_sd"] == pytest.approx(np.std(errors, ddof=1), abs=1e-12)
    assert row["value_median"] == pytest.approx(np.median(chosen))
    assert calls == [(1, 3), (2, 3), (3, 3)]
    assert 0 < row["misranking_mean"] < 0.3


def test_compare_learners_names_unknown_learners():
    with pytest.raises(ValueError, match="magic"):
        compare_learners(parkes_surface(), ["spectral-lavrentiev", "magic"], 20, 1)
