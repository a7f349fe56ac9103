"""Grids that rise away from the diagonal: the projection against a generic solver, its fixed
points, and the SEG's own shape."""

from __future__ import annotations

import os

import numpy as np
import pytest
from scipy.optimize import LinearConstraint, minimize

from ranking_core.grids.learned import learned_grid
from ranking_core.grids.monotone import (
    MONOTONE_TOL,
    MonotoneRisk,
    monotone_violations,
    project_monotone,
    project_rows,
)
from ranking_core.grids.seg import SEG_TABLE_ENV, find_seg_table


def _monotone(n: int, seed: int) -> np.ndarray:
    """A grid that is 0 on the diagonal and rises away from it along rows and columns, not
    symmetric: c₁·(a_i − a_j)₊ + c₂·(a_j − a_i)₊·(1 + j/n) with a increasing."""
    rng = np.random.default_rng(seed)
    a = np.cumsum(rng.uniform(0.1, 1.0, size=n))
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    diff = a[i] - a[j]
    return 1.3 * np.maximum(diff, 0) + 0.7 * np.maximum(-diff, 0) * (1 + j / n)


def _constraints(n: int, rows: bool = True, columns: bool = True) -> list[LinearConstraint]:
    """The cone as linear constraints on the flattened grid: between lattice neighbours, the
    value farther from the diagonal (larger |column − row|) is not below the nearer one, and
    the diagonal is 0."""
    steps = []
    for i in range(n):
        for j in range(n):
            for (k, c), wanted in (((i, j + 1), rows), ((i + 1, j), columns)):
                if not wanted or k >= n or c >= n:
                    continue
                near, far = ((i, j), (k, c)) if abs(j - i) < abs(c - k) else ((k, c), (i, j))
                row = np.zeros(n * n)
                row[far[0] * n + far[1]], row[near[0] * n + near[1]] = 1.0, -1.0
                steps.append(row)
    diagonal = np.zeros((n, n * n))
    diagonal[np.arange(n), np.arange(n) * (n + 1)] = 1.0
    return [LinearConstraint(np.array(steps), 0.0, np.inf), LinearConstraint(diagonal, 0.0, 0.0)]


def _brute_projection(grid: np.ndarray, **kind) -> np.ndarray:
    n = len(grid)
    result = minimize(
        lambda x: 0.5 * np.sum((x - grid.ravel()) ** 2),
        np.zeros(n * n),
        jac=lambda x: x - grid.ravel(),
        constraints=_constraints(n, **kind),
        method="trust-constr",
        options={"gtol": 1e-10, "xtol": 1e-12, "maxiter": 5000},
    )
    return result.x.reshape(n, n)


@pytest.mark.parametrize("seed", [0, 1])
def test_row_projection_is_the_nearest_grid_with_monotone_rows(seed):
    rng = np.random.default_rng(seed)
    grid = _monotone(6, seed) + rng.normal(scale=0.8, size=(6, 6))
    np.testing.assert_allclose(
        project_rows(grid), _brute_projection(grid, columns=False), atol=1e-5
    )


@pytest.mark.parametrize("seed", [2, 3])
def test_projection_is_the_nearest_monotone_grid(seed):
    rng = np.random.default_rng(seed)
    grid = _monotone(6, seed) + rng.normal(scale=0.8, size=(6, 6))
    projected = project_monotone(grid, tol=1e-10, max_iter=5000)
    np.testing.assert_allclose(projected, _brute_projection(grid), atol=1e-5)
    assert monotone_violations(projected)["largest"] < 1e-8


def test_a_monotone_grid_is_left_unchanged():
    grid = _monotone(40, 4)
    assert monotone_violations(grid) == {"share": 0.0, "largest": 0.0, "diagonal": 0.0}
    np.testing.assert_allclose(project_monotone(grid), grid, atol=1e-12)


def test_projection_brings_a_noisy_grid_closer_to_a_monotone_truth():
    truth = _monotone(50, 5)
    noisy = truth + np.random.default_rng(5).normal(scale=0.5, size=truth.shape)
    projected = project_monotone(noisy, tol=1e-8)
    assert monotone_violations(projected)["largest"] <= 1e-8
    assert np.linalg.norm(projected - truth) < 0.8 * np.linalg.norm(noisy - truth)


def test_violations_by_hand():
    grid = np.array(
        [
            [0.0, 1.0, 0.5],  # row 0: falls by 0.5 from (0, 1) to (0, 2)
            [2.0, 0.1, 3.0],  # diagonal 0.1
            [1.0, 4.0, 0.0],
        ]
    )  # row 2: (2, 1) → (2, 0) moves away and falls by 3
    # steps: 12 in all; falls: row 0 (0.5), row 2 (3.0), column 0: (1,0) → (2,0) falls by 1,
    # column 2: (1, 2) → (0, 2) falls by 2.5
    result = monotone_violations(grid)
    assert result["share"] == pytest.approx(4 / 12)
    assert result["largest"] == pytest.approx(3.0)
    assert result["diagonal"] == pytest.approx(0.1)


def test_the_seg_rises_away_from_the_diagonal():
    if not os.environ.get(SEG_TABLE_ENV):
        pytest.skip("needs the SEG table (set SEG_TABLE)")
    result = monotone_violations(find_seg_table().absolute)
    assert result == {"share": 0.0, "largest": 0.0, "diagonal": 0.0}


class _Plane:
    """A fitted model of the absolute risk |REF − estimate|/100 plus a bump that breaks the
    shape at (300, 200)."""

    def predict(self, X):
        X = np.asarray(X, dtype=float)
        bump = 0.5 * np.exp(-((X[:, 0] - 300) ** 2 + (X[:, 1] - 200) ** 2) / 200)
        return np.abs(X[:, 0] - X[:, 1]) / 100 + bump


def test_monotone_risk_predicts_from_the_projected_lattice():
    model = MonotoneRisk.fit(_Plane())
    grid = learned_grid(model)
    np.testing.assert_allclose(grid, project_monotone(learned_grid(_Plane())))
    assert monotone_violations(grid)["largest"] <= MONOTONE_TOL
    X = np.array([[300.4, 199.6], [0.0, 600.0], [12.5, 40.49]])
    np.testing.assert_allclose(model.predict(X), grid[[300, 0, 12], [200, 600, 40]])
    with pytest.raises(ValueError, match="rows 1, 2 lie outside"):
        model.predict(np.array([[1.0, 2.0], [-3.0, 5.0], [1.0, 601.0]]))
