"""The learned grid's band: the Gaussian-process posterior against scikit-learn's."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel

from ranking_core import SpectralRanker
from ranking_core.grids.files import read_grid_file
from ranking_core.grids.raster import LEFT, TOP, grid_image
from ranking_core.grids.signed import AbsoluteRisk, signed_ratings
from ranking_core.learn import write_band_files
from ranking_core.panels import RobustRanker, risk_band
from ranking_core.panels.uncertainty import BAND_FILES, RiskBand, band_csv, posterior_sd

GAMMA, LAM, NOISE = 2e4, 1e-2, 0.2


def _data(m, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 600, size=(m, 2))
    y = 3 * (1 - np.exp(-np.abs(X[:, 0] - X[:, 1]) / 150)) + NOISE * rng.standard_normal(m)
    return X, y


def _gpr(X, y, noise_var):
    """scikit-learn's GP: prior a²K plus a wide constant (≈ the flat prior on the intercept)."""
    amplitude = NOISE**2 / (len(X) * LAM)
    kernel = ConstantKernel(amplitude, "fixed") * RBF(np.sqrt(GAMMA / 2), "fixed") + ConstantKernel(
        1e5 * amplitude, "fixed"
    )
    return GaussianProcessRegressor(kernel, alpha=noise_var, optimizer=None).fit(X, y)


def test_ranker_is_the_posterior_mean_and_the_sd_matches_scikit_learn():
    X, y = _data(60, 0)
    points = np.random.default_rng(1).uniform(0, 600, size=(80, 2))
    ranker = SpectralRanker(kernel="gaussian", gamma=GAMMA, lam=LAM).fit(X, y)
    mean, sd = _gpr(X, y, NOISE**2).predict(points, return_std=True)
    np.testing.assert_allclose(ranker.predict(points), mean, atol=2e-3)
    np.testing.assert_allclose(posterior_sd(ranker, np.ones(60), NOISE, points), sd, rtol=2e-3)
    weights = np.random.default_rng(2).uniform(0.2, 1.0, size=60)  # noise variance σ²/w
    _, sd_w = _gpr(X, y, NOISE**2 / weights).predict(points, return_std=True)
    np.testing.assert_allclose(posterior_sd(ranker, weights, NOISE, points), sd_w, rtol=2e-3)


def test_band_holds_the_risk_and_narrows_with_more_ratings():
    widths = []
    for m in (60, 240):
        X, y = _data(m, 3)
        model = RobustRanker(
            SpectralRanker(kernel="gaussian", gamma=GAMMA, lam=LAM), signed=True
        ).fit(X, signed_ratings(X, np.clip(y, 0, 4)))
        band = risk_band(AbsoluteRisk(model))
        assert band.risk.shape == band.lower.shape == (601, 601)
        assert np.all(band.lower <= band.risk + 1e-12) and np.all(band.risk <= band.upper + 1e-12)
        assert np.all(band.lower >= 0)
        assert 0 < band.uncertain_share < 1
        widths.append(band.width.mean())
    assert widths[1] < 0.8 * widths[0]


def test_band_needs_a_noise_level_for_a_plain_ranker():
    X, y = _data(30, 4)
    ranker = SpectralRanker(kernel="gaussian", gamma=GAMMA, lam=LAM).fit(X, y)
    with pytest.raises(TypeError, match="noise_sd"):
        risk_band(ranker)
    assert risk_band(ranker, noise_sd=0.2).sd.min() > 0


def test_band_refuses_a_ranker_solved_in_the_primal_form():
    """The primal form of a linear kernel keeps no training inputs: the posterior, a kernel
    expansion over them, is refused with the reason instead of failing on a missing array."""
    X, y = _data(30, 4)
    ranker = SpectralRanker(kernel="linear", solver="primal", lam=LAM).fit(X, y)
    assert ranker.X_fit_ is None
    with pytest.raises(ValueError, match="primal form"):
        risk_band(ranker, noise_sd=0.2)
    with pytest.raises(ValueError, match="primal form"):
        posterior_sd(ranker, np.ones(30), 0.2, X[:3])


def test_band_files_hold_the_band_as_grid_files_do(tmp_path):
    X, y = _data(80, 5)
    model = RobustRanker(SpectralRanker(kernel="gaussian", gamma=GAMMA, lam=LAM), signed=True).fit(
        X, signed_ratings(X, np.clip(y, 0, 4))
    )
    band = risk_band(AbsoluteRisk(model))
    grid = np.clip(band.risk, 0, 4)
    paths = write_band_files(band, grid, tmp_path / "out")
    assert [p.name for p in paths] == [*BAND_FILES, "band.json"]
    table = pd.read_csv(tmp_path / "out" / "band.csv")
    assert list(table.columns) == ["REF", "BGM", "lower", "upper", "uncertain"]
    row = table.iloc[250 * 601 + 40]  # REF varies slowest, as in grid.csv
    assert (row["REF"], row["BGM"]) == (250, 40)
    assert row["lower"] == pytest.approx(band.lower[250, 40], abs=5e-5)
    assert row["upper"] == pytest.approx(min(band.upper[250, 40], 4.0), abs=5e-5)
    assert table["uncertain"].mean() == pytest.approx(band.uncertain_share)
    lower = read_grid_file(tmp_path / "out" / "band_lower.npy")  # reads back as a grid file
    np.testing.assert_allclose(lower, np.clip(band.lower, 0, 4))
    summary = json.loads((tmp_path / "out" / "band.json").read_text())
    assert summary["level"] == 0.95 and summary["uncertain_share"] == band.uncertain_share
    # the picture: pale (half-way to white) exactly where the category is left open
    plain = np.asarray(grid_image(grid, "t"))
    pale = np.asarray(Image.open(tmp_path / "out" / "band.png").convert("RGB"))
    for ref, measured in ((250, 40), (40, 250), (300, 300), (590, 10)):
        x, y_px = LEFT + ref, TOP + 600 - measured
        expected = (
            (plain[y_px, x].astype(int) + 255) // 2
            if band.uncertain[ref, measured]
            else plain[y_px, x]
        )
        np.testing.assert_array_equal(pale[y_px, x], expected)
    assert band.uncertain.any() and not band.uncertain.all()


def test_band_csv_clips_the_ends_to_the_risk_scale():
    upper = np.full((601, 601), 3.0)
    upper[10, 20] = 4.7
    lower = np.zeros((601, 601))
    lower[10, 20] = -0.2
    band = RiskBand(
        np.ones((601, 601)), lower, upper, np.ones((601, 601)), np.zeros((601, 601), bool)
    )
    table = pd.read_csv(io.BytesIO(band_csv(band)))
    row = table.iloc[10 * 601 + 20]
    assert (row["REF"], row["BGM"], row["lower"], row["upper"]) == (10, 20, 0.0, 4.0)
    assert table["upper"].drop(index=10 * 601 + 20).eq(3.0).all()
