"""Learned grids: the lattice factorisation equals the model's own predictions point by point."""

from __future__ import annotations

import numpy as np
import pytest

from ranking_core import SpectralRanker, SpectralRegressor
from ranking_core.grids.coordinates import GlucoseTransform, TransformedKernel
from ranking_core.grids.learned import GLUCOSE_AXIS, lattice_points, learned_grid
from ranking_core.kernels import GaussianKernel, LaplacianKernel


def _data(m: int = 60, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 600, size=(m, 2))
    y = np.clip(np.abs(X[:, 0] - X[:, 1]) / 150.0, 0, 4)
    return X, y


AXIS = np.arange(0, 601, 13, dtype=np.float64)


@pytest.mark.parametrize(
    "model",
    [
        SpectralRanker(gamma=1e4, lam=1e-3),
        SpectralRanker(gamma=(5e3, 2e4), lam=1e-3, filter="iterated-lavrentiev"),
        SpectralRegressor(gamma=1e4, lam=1e-2),
        SpectralRanker(
            kernel=TransformedKernel(GaussianKernel(8e3), GlucoseTransform("log", 30.0)), lam=1e-3
        ),
        SpectralRanker(kernel=LaplacianKernel(200.0), lam=1e-3),
        SpectralRanker(
            kernel=TransformedKernel(LaplacianKernel(1e3), GlucoseTransform("log")), lam=1e-3
        ),
    ],
    ids=[
        "gaussian",
        "anisotropic-iterated",
        "regressor",
        "log-coordinates",
        "laplacian",
        "log-laplacian",
    ],
)
def test_grid_equals_predict_on_lattice(model):
    X, y = _data()
    model.fit(X, y)
    grid = learned_grid(model, AXIS)
    assert grid.shape == (AXIS.size, AXIS.size)
    direct = model.predict(lattice_points(AXIS)).reshape(AXIS.size, AXIS.size)
    np.testing.assert_allclose(grid, direct, rtol=0, atol=1e-10)


def test_full_lattice_is_indexed_ref_then_estimate():
    X, y = _data(40)
    model = SpectralRanker(gamma=1e4, lam=1e-3).fit(X, y)
    grid = learned_grid(model)
    assert grid.shape == (601, 601)
    assert GLUCOSE_AXIS[0] == 0 and GLUCOSE_AXIS[-1] == 600
    for ref, est in [(0, 600), (100, 300), (550, 20)]:
        assert grid[ref, est] == pytest.approx(model.predict([[ref, est]])[0], abs=1e-10)


def test_log_transform_kernel_is_gaussian_on_warped_coordinates():
    t = GlucoseTransform("log", offset=50.0)
    assert t(0.0) == 0.0 and t(600.0) == pytest.approx(600.0)
    assert t(50.0) == pytest.approx(600 * np.log(2) / np.log(13))
    X, _ = _data(10)
    kernel = TransformedKernel(GaussianKernel(1e4), t)
    warped = t(X)
    brute = np.exp(-((warped[:, None, :] - warped[None, :, :]) ** 2).sum(-1) / 1e4)
    np.testing.assert_allclose(kernel(X, X), brute, atol=1e-14)
    np.testing.assert_array_equal(GlucoseTransform("linear")(X), X)


@pytest.mark.parametrize("bad", [{"scale": "sqrt"}, {"offset": 0.0}, {"offset": -3.0}])
def test_transform_rejects_bad_parameters(bad):
    with pytest.raises(ValueError, match="GlucoseTransform"):
        GlucoseTransform(**bad)


def test_signed_ratings_follow_the_seg_sign_convention():
    from ranking_core.grids.signed import side_of_diagonal, signed_ratings

    X = np.array([[300.0, 100.0], [100.0, 300.0], [120.0, 120.0]])
    np.testing.assert_array_equal(side_of_diagonal(X), [1, -1, 0])  # low reading → positive
    np.testing.assert_array_equal(signed_ratings(X, [1.6, 2.1, 0.3]), [1.6, -2.1, 0.0])


def test_absolute_risk_grid_is_the_absolute_signed_grid():
    from ranking_core.grids.signed import AbsoluteRisk, signed_ratings

    X, y = _data()
    signed = SpectralRanker(gamma=1e4, lam=1e-3).fit(X, signed_ratings(X, y))
    model = AbsoluteRisk(signed)
    grid = learned_grid(model, AXIS)
    np.testing.assert_allclose(grid, np.abs(learned_grid(signed, AXIS)), atol=0)
    direct = model.predict(lattice_points(AXIS)).reshape(AXIS.size, AXIS.size)
    np.testing.assert_allclose(grid, direct, atol=1e-10)
    assert grid.min() >= 0
