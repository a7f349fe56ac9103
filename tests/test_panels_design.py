"""Survey planning: start design, greedy picks against brute force, rating forms, the CLI loop."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import qmc
from typer.testing import CliRunner

from ranking_core import SpectralRanker
from ranking_core.cli import app
from ranking_core.panels import plan_pairs, start_design, write_rating_form
from ranking_core.panels.design import PLAN_METHOD_LABELS, greedy_design
from ranking_core.panels.uncertainty import posterior_sd
from ranking_core.ratings import read_rating_set


def _risk(reference, estimate):
    """A smooth synthetic risk (not the SEG), 0..~3.5."""
    return 3.5 * (1 - np.exp(-np.abs(np.asarray(reference) - np.asarray(estimate)) / 150.0))


def test_start_design_is_space_filling_whole_mg_dl_pairs():
    pairs = start_design(32, seed=1)
    points = pairs[["reference", "estimate"]].to_numpy()
    assert len(pairs) == 32 and pairs["pair"].tolist() == list(range(1, 33))
    assert len(np.unique(points, axis=0)) == 32
    assert points.min() >= 0 and points.max() <= 600 and points.dtype.kind == "i"
    # lower discrepancy than uniform random points of the same size
    random = [qmc.discrepancy(np.random.default_rng(s).uniform(size=(32, 2))) for s in range(20)]
    assert qmc.discrepancy(points / 600) < np.median(random)
    assert start_design(32, seed=1).equals(pairs)


def test_greedy_variance_picks_match_brute_force_refits():
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 600, size=(40, 2))
    lam = 1e-2
    model = SpectralRanker(kernel="gaussian", gamma=2e4, lam=lam).fit(X, _risk(*X.T))
    candidates = rng.uniform(0, 600, size=(150, 2))
    picks = greedy_design(model, candidates, 2, "variance")
    sd = posterior_sd(model, np.ones(40), 1.0, candidates)
    assert picks[0] == int(np.argmax(sd))
    # after "rating" the first pick (weight 1, same mλ), the second is the new variance maximum
    X2 = np.vstack([X, candidates[picks[0]]])
    refit = SpectralRanker(kernel="gaussian", gamma=2e4, lam=lam * 40 / 41).fit(X2, _risk(*X2.T))
    sd2 = posterior_sd(refit, np.ones(41), 1.0, candidates)
    sd2[picks[0]] = -np.inf
    assert picks[1] == int(np.argmax(sd2))


def test_plan_pairs_skips_rated_pairs_and_starts_without_ratings():
    assert plan_pairs(None, 5, seed=3).equals(start_design(5, seed=3))
    rng = np.random.default_rng(3)
    X = np.rint(rng.uniform(0, 600, size=(60, 2)))
    frame = pd.DataFrame({"reference": X[:, 0], "estimate": X[:, 1], "rating": _risk(*X.T)})
    model = SpectralRanker(kernel="laplacian", gamma=300.0, lam=1e-3).fit(X, frame["rating"])
    for method in ("imse", "variance", "random"):
        pairs = plan_pairs(frame, 12, seed=4, method=method, model=model)
        assert len(pairs) == 12
        proposed = set(map(tuple, pairs[["reference", "estimate"]].to_numpy()))
        assert len(proposed) == 12 and not proposed & set(map(tuple, X.astype(int)))
    with pytest.raises(ValueError, match="method"):
        plan_pairs(frame, 3, method="entropy", model=model)


def test_rating_form_reads_back_as_a_rating_set(tmp_path):
    pairs = start_design(15, seed=5)
    csv, sheet = tmp_path / "next.csv", tmp_path / "next.html"
    write_rating_form(pairs, csv, sheet, title="Panel <A>")
    form = pd.read_csv(csv)
    assert list(form.columns) == ["pair", "reference", "estimate", "rating", "rater"]
    assert form["rating"].isna().all()
    page = sheet.read_text()
    assert page.count("<tr><td>") == 15 and "Panel &lt;A&gt;" in page
    form["rating"] = _risk(form["reference"], form["estimate"]).round(1)
    form["rater"] = "D1"
    form.to_csv(csv, index=False)
    ratings = read_rating_set(csv)
    assert ratings.problems == () and len(ratings.frame) == 15
    np.testing.assert_allclose(ratings.X, pairs[["reference", "estimate"]].to_numpy())
    assert set(ratings.frame["rater"]) == {"D1"}


def _fill(path, rater):
    form = pd.read_csv(path)
    form["rating"] = _risk(form["reference"], form["estimate"]).round(2)
    form["rater"] = rater
    return form


def test_planning_loop_through_the_command_line(tmp_path):
    runner = CliRunner()
    start = tmp_path / "start.csv"
    result = runner.invoke(app, ["plan-panel", "--next", "24", "-o", str(start), "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "start.html").exists()
    ratings = tmp_path / "ratings.csv"
    _fill(start, "D1").to_csv(ratings, index=False)
    following = tmp_path / "next.csv"
    result = runner.invoke(
        app, ["plan-panel", str(ratings), "--next", "8", "-o", str(following), "--seed", "2"]
    )
    assert result.exit_code == 0, result.output
    new = pd.read_csv(following)
    assert len(new) == 8
    old = pd.read_csv(ratings)
    assert not set(zip(new["reference"], new["estimate"], strict=True)) & set(
        zip(old["reference"], old["estimate"], strict=True)
    )
    pd.concat([old, _fill(following, "D2")]).to_csv(ratings, index=False)
    result = runner.invoke(app, ["learn", str(ratings), "--out-dir", str(tmp_path / "grid")])
    assert result.exit_code == 0, result.output
    grid = np.load(tmp_path / "grid" / "grid.npy", allow_pickle=False)
    assert grid.shape == (601, 601)


def test_plan_panel_names_a_bad_file(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("reference,estimate\n100,120\n")
    result = CliRunner().invoke(app, ["plan-panel", str(bad), "-o", str(tmp_path / "x.csv")])
    assert result.exit_code == 1 and "rating" in result.output


def test_pairs_stay_inside_the_glucose_range():
    low, high = 40, 400
    start = start_design(50, seed=2, glucose_range=(low, high))[["reference", "estimate"]]
    assert start.min().min() >= low and start.max().max() <= high
    assert plan_pairs(None, 5).loc[:, ["reference", "estimate"]].min().min() >= 20  # default
    X = np.random.default_rng(3).uniform(low, high, size=(30, 2))
    frame = pd.DataFrame({"reference": X[:, 0], "estimate": X[:, 1], "rating": _risk(*X.T)})
    model = SpectralRanker(kernel="gaussian", gamma=2e4, lam=1e-2).fit(X, _risk(*X.T))
    for method in ("imse", "random"):
        pairs = plan_pairs(frame, 10, method=method, model=model, glucose_range=(low, high))
        values = pairs[["reference", "estimate"]].to_numpy()
        assert values.min() >= low and values.max() <= high
    with pytest.raises(ValueError, match="0 ≤ LO < HI ≤ 600"):
        start_design(5, glucose_range=(300, 100))


def test_plan_panel_help_names_every_method_with_its_label():
    """The command line's help lists each registered method with the label the dashboard shows;
    an unregistered method is refused naming the registered ones."""
    result = CliRunner().invoke(app, ["plan-panel", "--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    for name, label in PLAN_METHOD_LABELS.items():
        assert f"{name}: {label}" in " ".join(result.output.split())
    with pytest.raises(ValueError, match="'method' must be one of") as refused:
        plan_pairs(None, 3, method="kriging")
    assert all(repr(name) in str(refused.value) for name in PLAN_METHOD_LABELS)
