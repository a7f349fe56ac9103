"""Shifted solves from one factor: every λ equals its own factorisation (dense or lattice)."""

from __future__ import annotations

import numpy as np
import pytest

from ranking_core.grids.coordinates import GlucoseTransform, TransformedKernel
from ranking_core.kernels import LaplacianKernel
from ranking_core.learners.direct import DirectRanker
from ranking_core.learners.lattice_shifted import shifted_solutions

WARPED_L1 = TransformedKernel(LaplacianKernel(1e3), GlucoseTransform("log", 50.0))


def _spd(n: int, rng: np.random.Generator, rank: int | None = None) -> np.ndarray:
    A = rng.standard_normal((n, rank or n))
    return A @ A.T


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_shift_equals_a_dense_solve_of_its_own_system(seed):
    rng = np.random.default_rng(seed)
    n = 60
    P = _spd(n, rng) + n * np.eye(n)
    Q = _spd(n, rng, rank=40)  # semi-definite, as the lattice's T ⊗ T restricted to data is not
    Q *= np.linalg.eigvalsh(P)[0] / np.linalg.norm(Q, 2)  # ‖Q‖ = λ_min(P): P + σQ ≻ 0, σ > −1
    r = rng.standard_normal(n)
    shifts = np.array([-0.9, -0.5, 0.0, 0.3, 2.0, 6.0])
    rows = np.array([3, 17, 41])
    weights = rng.standard_normal(n)
    values, steps = shifted_solutions(
        lambda v: np.linalg.solve(P, v),
        lambda v: Q @ v,
        r,
        shifts,
        lambda v: np.append(v[rows], weights @ v),
    )
    for shift, got in zip(shifts, values, strict=True):
        exact = np.linalg.solve(P + shift * Q, r)
        expected = np.append(exact[rows], weights @ exact)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12 * np.abs(exact).max())
    assert 1 < steps <= n


def test_too_few_steps_say_so():
    rng = np.random.default_rng(3)
    Q = _spd(30, rng)  # P = I: the preconditioner is the identity
    with pytest.raises(ValueError, match="Lanczos steps left a relative residual"):
        shifted_solutions(
            lambda v: v,
            lambda v: Q @ v,
            rng.standard_normal(30),
            np.array([5.0]),
            lambda v: v,
            max_steps=2,
        )


def test_lattice_path_values_equal_a_factorisation_at_each_lambda():
    rng = np.random.default_rng(4)
    X = 10.0 * np.rint(rng.uniform(0, 600, size=(400, 2)) / 10.0)
    y = np.sign(X[:, 0] - X[:, 1]) * np.log1p(np.abs(X[:, 0] - X[:, 1]) / (X[:, 0] + 40))
    y += rng.normal(0, 0.05, len(y))
    X_new = rng.uniform(0, 600, size=(300, 2))
    lam0 = 1e-4
    lams = lam0 * np.array([1 / 16, 1 / 4, 0.9, 1.0, 2.5, 16.0])
    middle = DirectRanker(
        WARPED_L1, lam=lam0, solver="lattice", lattice_step=10.0, keep_factor=True
    ).fit(X, y)
    values = middle.lattice_path_values(lams, y, X_new)
    for lam, got in zip(lams, values, strict=True):
        own = DirectRanker(WARPED_L1, lam=lam, solver="lattice", lattice_step=10.0).fit(X, y)
        expected = own.lattice_values(X_new)
        assert np.abs(got - expected).max() <= 1e-9 * np.abs(expected).max()


def test_lattice_path_values_need_the_kept_factor():
    X = np.array([[100.0, 110.0], [200.0, 180.0], [300.0, 330.0]])
    plain = DirectRanker(WARPED_L1, lam=1e-3, solver="lattice", lattice_step=20.0).fit(
        X, np.array([0.1, 0.4, 0.2])
    )
    with pytest.raises(ValueError, match="keep_factor=True"):
        plain.lattice_path_values([1e-3], np.array([0.1, 0.4, 0.2]), X)
