"""Risk grids that rise away from the diagonal, and the nearest such grid to a learned one.

Shape knowledge. The risk of a (reference, estimate) pair is zero for an exact reading and does
not fall as the estimate moves away from the reference: along every row of the lattice (fixed
reference) it is non-increasing up to the diagonal and non-decreasing after it, and likewise
along every column (fixed estimate). The SEG's abs_risk satisfies this exactly: none of the
2 × 360,600 steps between lattice neighbours breaks it (docs/RESULTS.md, panels).

The (n, n) grids g with g[i, i] = 0 that rise away from the diagonal along every row and every
column form a closed convex cone K. Its Euclidean projection P (the L2-nearest grid in K) is
non-expansive and leaves every member of K fixed, so for a true surface s in K,
‖P(g) − s‖ ≤ ‖g − s‖: projecting a learned grid can only bring it closer to a monotone truth
(Barlow, Bartholomew, Bremner & Brunk 1972, ch. 1; Robertson, Wright & Dykstra 1988, §1.3).

Computation. K = R ∩ C with R the grids whose every row rises away from the diagonal (zero on
it) and C the same for columns. The projection onto R is exact and row by row: each half-row
(from the diagonal outwards) is an isotonic regression (pool adjacent violators,
:func:`scipy.optimize.isotonic_regression`), clipped at 0 (the isotonic fit under a constant
lower bound is the clipped isotonic fit), and the diagonal is 0; C is R transposed. Dykstra's
alternating projections with their correction terms (Boyle & Dykstra 1986) converge to the
projection onto the intersection.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids.lattice import GLUCOSE_MAX
from ranking_core.grids.learned import GLUCOSE_AXIS, learned_grid
from ranking_core.validation import check_inputs, describe_rows, positive_float

__all__ = ["MonotoneRisk", "monotone_violations", "project_monotone", "project_rows"]

MONOTONE_TOL = 1e-3  # risk units: Dykstra's stopping rule (moves and falls below it)
MONOTONE_MAX_ITER = 200


def _square(grid: ArrayLike, owner: str) -> NDArray[np.float64]:
    grid = np.asarray(grid, dtype=np.float64)
    if grid.ndim != 2 or grid.shape[0] != grid.shape[1] or not np.all(np.isfinite(grid)):
        raise ValueError(
            f"{owner}: needs a square grid of finite values indexed [reference, "
            f"estimate] on one axis (the diagonal is an exact reading); got shape "
            f"{grid.shape}"
        )
    return grid


def project_rows(grid: ArrayLike) -> NDArray[np.float64]:
    """The L2-nearest grid whose every row is 0 on the diagonal and non-decreasing away from it
    (both sides), row by row: isotonic regression of each half-row from the diagonal outwards,
    clipped at 0. Apply to the transpose for columns."""
    from scipy.optimize import isotonic_regression  # scipy.optimize: loaded when projecting

    grid = _square(grid, "project_rows")
    out = np.zeros_like(grid)
    n = len(grid)
    for i in range(n):
        if i > 0:  # left of the diagonal, read outwards: non-decreasing
            out[i, i - 1 :: -1] = isotonic_regression(grid[i, i - 1 :: -1]).x
        if i < n - 1:
            out[i, i + 1 :] = isotonic_regression(grid[i, i + 1 :]).x
    return np.maximum(out, 0.0)


def project_monotone(
    grid: ArrayLike, *, tol: float = MONOTONE_TOL, max_iter: int = MONOTONE_MAX_ITER
) -> NDArray[np.float64]:
    """The L2 projection of an (n, n) risk grid (indexed [reference, estimate] on one axis) onto
    the grids that are 0 on the diagonal and rise away from it along every row and column
    (module docstring), by Dykstra's alternating projections (Boyle & Dykstra 1986).

    Each iteration ends with the exact column projection; it stops when the iteration moved no
    value by more than ``tol`` (risk units) and no step along a row falls by more than ``tol``
    either (:func:`monotone_violations`), or after ``max_iter`` iterations.
    """
    grid = _square(grid, "project_monotone")
    positive_float(tol, "tol", "project_monotone")
    if int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"project_monotone: max_iter must be a positive integer; got {max_iter!r}")
    x = grid.copy()
    row_correction = np.zeros_like(grid)
    column_correction = np.zeros_like(grid)
    for _ in range(int(max_iter)):
        rows = project_rows(x + row_correction)
        row_correction = x + row_correction - rows
        new = project_rows((rows + column_correction).T).T
        column_correction = rows + column_correction - new
        change = float(np.abs(new - x).max())
        x = new
        if change <= tol and monotone_violations(x)["largest"] <= tol:
            break
    return x


def monotone_violations(grid: ArrayLike) -> dict[str, float]:
    """How far an (n, n) risk grid is from rising away from the diagonal: the share of the
    steps between lattice neighbours (along rows and columns, 2·n·(n − 1) in all) that fall
    when moving away from the diagonal, the largest such fall, and the largest |value| on the
    diagonal (risk units)."""
    grid = _square(grid, "monotone_violations")
    n = len(grid)
    i, j = np.meshgrid(np.arange(n - 1), np.arange(n), indexing="ij")
    # step from column i to i + 1 in row j (and, transposed, row i to i + 1 in column j):
    # moving away from the diagonal when i ≥ j
    parts = []
    for surface in (grid.T, grid):  # rows of the grid, then its columns
        step = surface[1:, :] - surface[:-1, :]
        parts.append(np.where(i >= j, -step, step))
    falls = np.concatenate([f.ravel() for f in parts])
    return {
        "share": float(np.mean(falls > 0)),
        "largest": float(max(falls.max(), 0.0)),
        "diagonal": float(np.abs(np.diag(grid)).max()),
    }


@dataclass(frozen=True)
class MonotoneRisk:
    """A fitted risk model made to rise away from the diagonal: its grid on the 601 × 601 mg/dL
    lattice projected by :func:`project_monotone`.

    ``predict`` reads the projected grid at the rounded (reference, estimate), as the SEG itself
    is read (integer mg/dL); :func:`~ranking_core.grids.learned.learned_grid` returns the grid.

    Attributes
    ----------
    model : the fitted model whose grid was projected (``predict`` of the absolute risk).
    surface_ : (601, 601) the projected grid indexed [reference, estimate].
    """

    model: Any
    surface_: NDArray[np.float64] = field(repr=False)
    lattice_axis_: NDArray[np.float64] = field(default_factory=lambda: GLUCOSE_AXIS, repr=False)

    @classmethod
    def fit(
        cls, model: Any, *, tol: float = MONOTONE_TOL, max_iter: int = MONOTONE_MAX_ITER
    ) -> MonotoneRisk:
        """Project the fitted ``model``'s 601 × 601 grid (:func:`learned_grid`)."""
        return cls(model, project_monotone(learned_grid(model), tol=tol, max_iter=max_iter))

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """The projected risk at (n, 2) inputs (reference, estimate in mg/dL, rounded to the
        integer lattice 0..600), shape (n,)."""
        X = check_inputs(X, "MonotoneRisk", 2)
        index = np.rint(X)
        outside = np.any((index < 0) | (index > GLUCOSE_MAX), axis=1)
        if outside.any():
            raise ValueError(
                f"MonotoneRisk: {describe_rows(np.flatnonzero(outside))} lie outside "
                f"the grid (rule: reference and estimate in 0..{GLUCOSE_MAX} mg/dL)"
            )
        index = index.astype(np.intp)
        return self.surface_[index[:, 0], index[:, 1]]
