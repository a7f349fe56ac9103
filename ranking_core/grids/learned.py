"""Learned error grids: a fitted ranking function evaluated on the 601 × 601 mg/dL lattice.

For a Gaussian kernel (isotropic or one width per coordinate) or a Laplacian (L1) kernel,
optionally after a per-coordinate :class:`~ranking_core.grids.coordinates.GlucoseTransform`, the
surface f(r, e) = Σ_i c_i K((r, e), x_i) + b factorises as F = A·diag(c)·Bᵀ + b (DESIGN §3;
:func:`ranking_core.kernels.gaussian_lattice`, :func:`ranking_core.kernels.laplacian_lattice`):
O(601·m·601) flops in one BLAS product instead of 361,201 · m kernel evaluations. Any other
fitted model is evaluated through its own blocked ``predict``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids.coordinates import TransformedKernel
from ranking_core.grids.lattice import GLUCOSE_MAX
from ranking_core.grids.registry import risk_grid
from ranking_core.grids.signed import AbsoluteRisk
from ranking_core.kernels import (
    GaussianKernel,
    LaplacianKernel,
    gaussian_lattice,
    laplacian_lattice,
)

__all__ = ["GLUCOSE_AXIS", "GRIDS", "lattice_points", "learned_grid"]

GLUCOSE_AXIS = np.arange(GLUCOSE_MAX + 1, dtype=np.float64)  # 0..600 mg/dL, step 1
GRIDS = (
    risk_grid(
        "learned",
        "Learned error grid",
        "Kriukova G, Pereverzyev S, Tkachenko P. On the convergence rate and some applications of "
        "regularized ranking algorithms. RICAM-Report 2014-21, 2014.",
        "A risk surface on the SEG's 0 to 4 scale learned by regularized ranking from a panel's "
        "ratings; placing the pairs on it shows how a smaller or newer panel would grade the "
        "meter.",
        order=5,
        needs="a learned risk surface (a saved learned grid)",
    ),
)


def lattice_points(axis_0: ArrayLike, axis_1: ArrayLike | None = None) -> NDArray[np.float64]:
    """All (a, b) pairs of the product lattice, shape (n_0·n_1, 2), ``a`` varying slowest
    (row-major, so ``values.reshape(n_0, n_1)`` is indexed [a, b])."""
    a = np.asarray(axis_0, dtype=np.float64)
    b = a if axis_1 is None else np.asarray(axis_1, dtype=np.float64)
    return np.column_stack([np.repeat(a, b.size), np.tile(b, a.size)])


def learned_grid(model, axis: ArrayLike = GLUCOSE_AXIS) -> NDArray[np.float64]:
    """The fitted rating function on the lattice ``axis × axis``, indexed [REF, estimate].

    Parameters
    ----------
    model : a fitted :class:`~ranking_core.SpectralRanker` or
        :class:`~ranking_core.SpectralRegressor` (attributes ``coef_``, ``intercept_``,
        ``X_fit_``, ``kernel_``) on inputs (REF, estimate) in mg/dL, an
        :class:`~ranking_core.grids.signed.AbsoluteRisk` around one (the grid is |signed grid|),
        or any fitted model with ``predict`` on (n, 2) inputs.
    axis : (n,) glucose values in mg/dL; default 0..600 step 1.

    Returns
    -------
    (n, n) predicted ratings: read off ``surface_`` for a lattice solve
    (:class:`~ranking_core.learners.direct.DirectRanker`) on the same axis; O(n²·m) flops by
    factorisation for Gaussian and Laplacian kernels (centres in blocks, so memory stays
    O(n·block) at any m); otherwise ``model.predict`` on the n² lattice points (which blocks its
    kernel rows).
    """
    axis = np.asarray(axis, dtype=np.float64).ravel()
    if isinstance(model, AbsoluteRisk):
        return np.abs(learned_grid(model.signed_model, axis))
    surface = getattr(model, "surface_", None)  # a lattice solve already holds f on its lattice
    if surface is not None and np.array_equal(axis, model.lattice_axis_):
        return surface.copy()
    kernel = getattr(model, "kernel_", None)
    transform = None
    if isinstance(kernel, TransformedKernel):
        transform, kernel = kernel.transform, kernel.base
    lattices: dict[type, Callable[..., NDArray[np.float64]]] = {
        GaussianKernel: gaussian_lattice,
        LaplacianKernel: laplacian_lattice,
    }
    lattice = lattices.get(type(kernel))
    if (
        lattice is not None
        and isinstance(kernel, GaussianKernel | LaplacianKernel)
        and getattr(model, "X_fit_", None) is not None
    ):
        from sklearn.utils.validation import check_is_fitted  # on use: the meter report needs none

        check_is_fitted(model, "coef_")
        centers = model.X_fit_
        if centers.shape[1] != 2:
            raise ValueError(
                f"learned_grid: the model was fitted on {centers.shape[1]} "
                "features; a glucose grid needs 2 (REF, estimate)"
            )
        if transform is not None:
            axis, centers = transform(axis), transform(centers)
        surface = lattice(axis, axis, centers, model.coef_, kernel.gamma)
        return surface + model.intercept_
    return np.asarray(model.predict(lattice_points(axis)), dtype=np.float64).reshape(
        axis.size, axis.size
    )
