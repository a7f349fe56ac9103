"""Reproducing kernels K(x, x') and their Gram / cross-kernel blocks: the entries of the registry
:data:`ranking_core.kernels.KERNELS`, which names each one (with, for learned glucose grids, its
label and widths).

Every kernel is a small frozen dataclass with ``__call__(X, Y) -> (len(X), len(Y))`` evaluated in
float64 without Python loops over points. The Gaussian kernel follows the papers' convention

.. math:: K(x, x') = \\exp(-\\lVert x - x' \\rVert^2 / \\gamma)

(Kriukova et al. 2014, §4.1, §4.3): ``gamma`` *is* γ, a squared length scale, not scikit-learn's
1/γ. An array
``gamma`` of one width per input coordinate gives an anisotropic kernel
exp(−Σ_k (x_k − x'_k)²/γ_k).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.kernels import KERNELS

__all__ = [
    "GaussianKernel",
    "Kernel",
    "LaplacianKernel",
    "LinearKernel",
    "PolynomialKernel",
    "gaussian_lattice",
    "laplacian_lattice",
    "make_kernel",
]


def _widths(gamma: float | ArrayLike, n_features: int) -> NDArray[np.float64]:
    """γ as an array of one positive width per coordinate."""
    widths = np.broadcast_to(np.asarray(gamma, dtype=np.float64), (n_features,))
    if not np.all(np.isfinite(widths)) or np.any(widths <= 0):
        raise ValueError(f"gamma must be positive and finite, got {gamma!r}")
    return widths


@dataclass(frozen=True)
class Kernel:
    """Base class: a symmetric positive semi-definite kernel K(x, x')."""

    smooth: ClassVar[bool] = False  # numerically low-rank Gram matrices on low-dimensional inputs

    def __call__(self, X: ArrayLike, Y: ArrayLike) -> NDArray[np.float64]:
        raise NotImplementedError

    def diagonal(self, X: ArrayLike) -> NDArray[np.float64]:
        """K(x_i, x_i) for every row of X, shape (n,)."""
        raise NotImplementedError


@dataclass(frozen=True)
class GaussianKernel(Kernel):
    """K(x, x') = exp(−‖x − x'‖²/γ); ``gamma`` scalar or one width per coordinate."""

    gamma: float | tuple[float, ...] = 1e4
    smooth: ClassVar[bool] = True

    def _scaled(self, Z: ArrayLike) -> NDArray[np.float64]:
        Z = np.atleast_2d(np.asarray(Z, dtype=np.float64))
        return Z / np.sqrt(_widths(self.gamma, Z.shape[1]))

    def __call__(self, X: ArrayLike, Y: ArrayLike) -> NDArray[np.float64]:
        from scipy.spatial.distance import cdist  # loaded when a kernel is evaluated

        return np.exp(-cdist(self._scaled(X), self._scaled(Y), "sqeuclidean"))

    def diagonal(self, X: ArrayLike) -> NDArray[np.float64]:
        return np.ones(len(np.atleast_2d(X)))


@dataclass(frozen=True)
class LaplacianKernel(Kernel):
    """K(x, x') = exp(−‖x − x'‖₁/γ)."""

    gamma: float = 1e2

    def __call__(self, X: ArrayLike, Y: ArrayLike) -> NDArray[np.float64]:
        from scipy.spatial.distance import cdist  # loaded when a kernel is evaluated

        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        Y = np.atleast_2d(np.asarray(Y, dtype=np.float64))
        return np.exp(-cdist(X, Y, "cityblock") / float(_widths(self.gamma, 1)[0]))

    def diagonal(self, X: ArrayLike) -> NDArray[np.float64]:
        return np.ones(len(np.atleast_2d(X)))


@dataclass(frozen=True)
class LinearKernel(Kernel):
    """K(x, x') = ⟨x, x'⟩; explicit features, so the ranker may solve in the primal."""

    def __call__(self, X: ArrayLike, Y: ArrayLike) -> NDArray[np.float64]:
        return (
            np.atleast_2d(np.asarray(X, dtype=np.float64))
            @ np.atleast_2d(np.asarray(Y, dtype=np.float64)).T
        )

    def diagonal(self, X: ArrayLike) -> NDArray[np.float64]:
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        return np.einsum("ij,ij->i", X, X)


@dataclass(frozen=True)
class PolynomialKernel(Kernel):
    """K(x, x') = (⟨x, x'⟩/γ + c₀)^d with γ = ``gamma``, c₀ = ``coef0``, d = ``degree``."""

    gamma: float = 1.0
    degree: int = 3
    coef0: float = 1.0

    def __call__(self, X: ArrayLike, Y: ArrayLike) -> NDArray[np.float64]:
        inner = LinearKernel()(X, Y) / float(_widths(self.gamma, 1)[0])
        return (inner + self.coef0) ** self.degree

    def diagonal(self, X: ArrayLike) -> NDArray[np.float64]:
        inner = LinearKernel().diagonal(X) / float(_widths(self.gamma, 1)[0])
        return (inner + self.coef0) ** self.degree


def make_kernel(
    kernel: str | Kernel,
    *,
    gamma: float | ArrayLike | None = None,
    degree: int | None = None,
    coef0: float | None = None,
) -> Kernel:
    """Resolve a kernel name (``"gaussian"``, ``"laplacian"``, ``"linear"``, ``"polynomial"``).

    A parameter left at ``None`` (or one the kernel does not have) takes the kernel class's own
    default, so each default is defined once, on the class: γ = 10⁴ (mg/dL)² for the Gaussian,
    γ = 10² mg/dL for the Laplacian, γ = 1, degree 3, c₀ = 1 for the polynomial kernel.
    """
    if isinstance(kernel, Kernel):
        return kernel
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; expected one of {sorted(KERNELS)}")
    cls = KERNELS[kernel].load()
    names = {field.name for field in fields(cls)}
    given = {"gamma": gamma, "degree": degree, "coef0": coef0}
    params = {name: value for name, value in given.items() if name in names and value is not None}
    if "gamma" in params:
        width = np.asarray(params["gamma"], dtype=np.float64)
        _widths(width, max(width.size, 1))
        if width.ndim and cls is not GaussianKernel:
            raise ValueError(f"the {kernel} kernel takes one scalar gamma, got {gamma!r}")
        params["gamma"] = float(width) if width.ndim == 0 else tuple(width.tolist())
    if "degree" in params and degree is not None:
        params["degree"] = int(degree)
    if "coef0" in params and coef0 is not None:
        params["coef0"] = float(coef0)
    return cls(**params)


def gaussian_lattice(
    axis_0: ArrayLike,
    axis_1: ArrayLike,
    centers: ArrayLike,
    coef: ArrayLike,
    gamma: float | ArrayLike,
) -> NDArray[np.float64]:
    """Evaluate f(a, b) = Σ_i c_i exp(−(a − x_i0)²/γ_0 − (b − x_i1)²/γ_1) on a product lattice.

    The Gaussian kernel factorises over coordinates, so the (n_0, n_1) surface is
    F = A · diag(c) · Bᵀ with A_ai = exp(−(a − x_i0)²/γ_0), B_bi = exp(−(b − x_i1)²/γ_1)
    (DESIGN §3): O((n_0 + n_1)·m + n_0·n_1·m) flops in two BLAS products instead of n_0·n_1·m
    kernel evaluations. For the 601 × 601 mg/dL glucose lattice, ``axis_0`` is REF and ``axis_1``
    the estimate.

    Parameters
    ----------
    axis_0, axis_1 : (n_0,), (n_1,) lattice coordinates (already transformed if the model uses an
        input transform).
    centers : (m, 2) kernel centres x_i.
    coef : (m,) or (m, p) coefficients c; with p columns the result is (p, n_0, n_1).
    gamma : γ, scalar or (γ_0, γ_1).
    """
    g0, g1 = _widths(gamma, 2)
    return _product_lattice(
        axis_0,
        axis_1,
        centers,
        coef,
        lambda d: np.exp(-(d**2) / g0),
        lambda d: np.exp(-(d**2) / g1),
    )


def laplacian_lattice(
    axis_0: ArrayLike,
    axis_1: ArrayLike,
    centers: ArrayLike,
    coef: ArrayLike,
    gamma: float,
) -> NDArray[np.float64]:
    """Evaluate f(a, b) = Σ_i c_i exp(−(|a − x_i0| + |b − x_i1|)/γ) on a product lattice.

    The Laplacian kernel exp(−‖x − x'‖₁/γ) is the product of the 1-D kernels exp(−|d|/γ), so it
    factorises like the Gaussian (:func:`gaussian_lattice`, DESIGN §3): F = A·diag(c)·Bᵀ with
    A_ai = exp(−|a − x_i0|/γ), B_bi = exp(−|b − x_i1|/γ). Arguments as for
    :func:`gaussian_lattice`, with γ a scalar.
    """
    width = float(_widths(gamma, 1)[0])

    def profile(d: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.exp(-np.abs(d) / width)

    return _product_lattice(axis_0, axis_1, centers, coef, profile, profile)


# kernel-profile entries per block of centres in _product_lattice (8 bytes each)
LATTICE_BLOCK_ENTRIES = 1 << 22


def _product_lattice(axis_0, axis_1, centers, coef, profile_0, profile_1) -> NDArray[np.float64]:
    """Σ_i c_i k_0(a − x_i0)·k_1(b − x_i1) on the lattice axis_0 × axis_1 as A·diag(c)·Bᵀ, summed
    over blocks of centres so that A and B never hold more than ``LATTICE_BLOCK_ENTRIES``."""
    centers = np.asarray(centers, dtype=np.float64)
    if centers.ndim != 2 or centers.shape[1] != 2:
        raise ValueError(f"centers must have shape (m, 2), got {centers.shape}")
    a = np.asarray(axis_0, dtype=np.float64)[:, None]
    b = np.asarray(axis_1, dtype=np.float64)[:, None]
    coef = np.asarray(coef, dtype=np.float64)
    surface = np.zeros((*coef.shape[1:], a.size, b.size))
    step = max(1, LATTICE_BLOCK_ENTRIES // max(a.size + b.size, 1))  # centres per block
    for start in range(0, len(centers), step):
        block = slice(start, start + step)
        A = profile_0(a - centers[None, block, 0])
        B = profile_1(b - centers[None, block, 1])
        part = (
            (A * coef[block]) @ B.T
            if coef.ndim == 1
            else np.einsum("ai,ip,bi->pab", A, coef[block], B, optimize=True)
        )
        surface += part
    return surface
