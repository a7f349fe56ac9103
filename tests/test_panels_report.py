"""The panel report: per-rater figures, reliability, flagged ratings; learning with raters."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ranking_core.learn import PRESETS, LearnSettings, learn_grid, learn_panel, robust_settings
from ranking_core.panels import PANEL_MODELS, RobustRanker, panel_report, risk_band
from ranking_core.panels import simulate_panel as simulate
from ranking_core.ratings import read_rating_set

FAST = LearnSettings(robust="huber", n_lams=120)  # λ grid 1 … 0.95^120 (every 4th candidate)


@pytest.fixture(scope="module")
def hard_fit():
    frame = simulate(240, n_raters=6, random_state=3, **PANEL_MODELS["hard"])
    return frame, learn_panel(read_rating_set(frame), FAST)


def test_every_rating_gets_a_weight_and_a_flag(hard_fit):
    frame, fit = hard_fit
    table = fit.ratings
    assert len(table) == len(frame)
    np.testing.assert_allclose(table["rating"], frame["rating"])
    assert table["weight"].between(0, 1).all()
    assert (table["flagged"] == (table["residual"].abs() > 3)).all()
    # the simulated outliers carry less weight than the other ratings
    outlier = frame["outlier"].to_numpy()
    assert table["weight"][outlier].mean() < 0.6 * table["weight"][~outlier].mean()
    assert fit.step == 0.5


def test_report_finds_the_careless_rater(hard_fit):
    frame, fit = hard_fit
    report = panel_report(fit)
    raters = report.raters.set_index("rater")
    assert raters["ratings"].sum() == len(frame) == report.n_ratings
    careless = "R06"  # the simulator's careless rater is the last one
    assert raters["agreement"].idxmin() == careless
    assert raters["mean_weight"].idxmin() == careless
    assert raters["noise_sd"].idxmax() == careless
    others = raters.drop(index=careless)
    assert others["agreement"].min() > 0.6 > 0.3 > raters.loc[careless, "agreement"]
    assert report.low_weight_raters == [careless]  # named in the report, the others not
    # the flagged table holds exactly the flagged ratings, largest residual first
    assert len(report.flagged) == int(fit.ratings["flagged"].sum())
    assert report.flagged["residual"].abs().is_monotonic_decreasing
    assert 0 < report.consensus_r2 < 1
    # each scenario is rated once: reliability between raters is not measurable
    assert report.alpha is None and report.shared_scenarios == 0


def _shared_design(noise, seed=0, raters=4, scenarios=40):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 600, size=(scenarios, 2))
    truth = 3 * (1 - np.exp(-np.abs(X[:, 0] - X[:, 1]) / 150))
    rows = []
    for r in range(raters):
        answer = np.clip(truth + noise * rng.standard_normal(scenarios), 0, 4)
        rows.append(
            pd.DataFrame(
                {"reference": X[:, 0], "estimate": X[:, 1], "rating": answer, "rater": f"D{r}"}
            )
        )
    return pd.concat(rows, ignore_index=True)


def test_krippendorff_alpha_on_a_shared_design():
    settings = LearnSettings(robust="huber", n_lams=80)
    exact = panel_report(learn_panel(_shared_design(0.0), settings))
    assert exact.alpha == pytest.approx(1.0) and exact.shared_scenarios == 40
    noisy = panel_report(learn_panel(_shared_design(0.8), settings))
    # α = 1 − D_o/D_e ≈ 1 − σ²/(σ² + var(truth)) for interval data
    frame = _shared_design(0.8)
    truth_var = frame.groupby(["reference", "estimate"])["rating"].mean().var()
    assert 0.2 < noisy.alpha < 0.95
    assert noisy.alpha == pytest.approx(1 - 0.64 / (0.64 + truth_var), abs=0.2)


def test_learn_grid_with_robust_settings_reads_the_rater_column():
    frame = simulate(150, n_raters=5, random_state=4, **PANEL_MODELS["noise-outliers"])
    assert isinstance(learn_grid(read_rating_set(frame), FAST).model, RobustRanker)
    manual = LearnSettings(robust="huber", rule="manual", lam=1e-3)
    result = learn_grid(read_rating_set(frame), manual)
    assert result.X.shape[1] == 3 and set(result.X[:, 2]) >= {0.0, 4.0, -1.0}
    assert len(result.model.raters_) == frame["rater"].nunique()
    assert result.grid.shape == (601, 601)
    other = result.at(result.lam * 2)
    assert other.model.lam_ == pytest.approx(result.lam * 2)
    assert not np.allclose(other.grid, result.grid)
    with pytest.raises(ValueError, match="robust"):
        LearnSettings(robust="cauchy")


@pytest.mark.slow
def test_learn_command_writes_the_panel_report(tmp_path):
    from typer.testing import CliRunner

    from ranking_core.cli import app

    frame = simulate(150, n_raters=5, random_state=6, **PANEL_MODELS["hard"])
    source = tmp_path / "panel ratings.csv"
    frame.drop(columns="outlier").to_csv(source, index=False)
    report = tmp_path / "report" / "panel.csv"
    result = CliRunner().invoke(
        app,
        ["learn", str(source), "--out-dir", str(tmp_path / "grid"), "--panel-report", str(report)],
    )
    assert result.exit_code == 0, result.output
    assert "Krippendorff" in result.output and "Raters" in result.output
    assert "Ratings of R05 weigh less than 0.25" in result.output  # the careless rater
    settings = json.loads((tmp_path / "grid" / "grid.json").read_text())["settings"]
    assert (
        settings["robust"],
        settings["criterion"],
        settings["monotone"],
        settings["anchors"],
    ) == (PRESETS["robust"].robust, "absolute-error", True, PRESETS["robust"].anchors)
    rows = pd.read_csv(report)
    assert len(rows) == 150 and {"weight", "residual", "flagged", "consensus"} <= set(rows)
    raters = pd.read_csv(tmp_path / "report" / "panel-raters.csv")
    assert sorted(raters["rater"]) == sorted(frame["rater"].unique())
    assert (tmp_path / "grid" / "grid.npy").exists()


def test_learn_command_writes_the_band_of_the_robust_fit(tmp_path):
    from typer.testing import CliRunner

    from ranking_core.cli import app

    frame = simulate(120, n_raters=4, random_state=7, **PANEL_MODELS["noise-outliers"])
    source = tmp_path / "ratings.csv"
    frame.drop(columns="outlier").to_csv(source, index=False)
    result = CliRunner().invoke(
        app, ["learn", str(source), "--out-dir", str(tmp_path / "grid"), "--band"]
    )
    assert result.exit_code == 0, result.output
    expected = risk_band(learn_grid(read_rating_set(source), robust_settings()).risk_model)
    summary = json.loads((tmp_path / "grid" / "band.json").read_text())
    assert summary["uncertain_share"] == pytest.approx(expected.uncertain_share, abs=1e-9)
    assert f"leaves open: {expected.uncertain_share:.1%}" in result.output
    np.testing.assert_allclose(
        np.load(tmp_path / "grid" / "band_upper.npy"), np.clip(expected.upper, 0, 4), atol=1e-9
    )
    written = json.loads((tmp_path / "grid" / "grid.json").read_text())["settings"]
    assert written["robust"] == robust_settings().robust == "tukey"  # the robust recipe's loss
    assert {"band.csv", "band.png", "band_lower.npy"} <= {
        p.name for p in (tmp_path / "grid").iterdir()
    }
    refused = CliRunner().invoke(
        app,
        ["learn", str(source), "--out-dir", str(tmp_path / "b"), "--band", "--filter", "landweber"],
    )
    assert refused.exit_code == 1 and isinstance(refused.exception, SystemExit)  # no traceback
    assert "--band needs the Lavrentiev filter" in refused.output
    assert not (tmp_path / "b").exists()  # refused before anything is written
