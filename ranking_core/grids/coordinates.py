"""Glucose coordinates: a per-coordinate transform of (REF, estimate) applied before the kernel.

The SEG's risk changes fastest at low glucose (hypoglycaemia), so a kernel with one width over
0..600 mg/dL is too wide there and too narrow at 400 mg/dL. A log-like warp

.. math:: t(g) = G \\,\\frac{\\log(1 + g/g_0)}{\\log(1 + G/g_0)}, \\qquad G = 600\\ \\text{mg/dL}

stretches the low range and keeps the 0..600 span (so γ stays in (mg/dL)² of the warped scale).
``g_0`` (mg/dL) sets the bend: large g_0 → almost linear, small g_0 → strongly logarithmic.

:class:`TransformedKernel` evaluates K(t(x), t(x')). Because t acts on each coordinate separately,
a Gaussian base kernel still factorises over coordinates on the product lattice (DESIGN §3), which
:func:`ranking_core.grids.learned.learned_grid` uses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids.lattice import GLUCOSE_MAX, SCALES
from ranking_core.kernels import Kernel
from ranking_core.validation import one_of

__all__ = ["SCALES", "GlucoseTransform", "TransformedKernel"]


@dataclass(frozen=True)
class GlucoseTransform:
    """Warp t(g) of glucose values in mg/dL, applied to every coordinate alike.

    Parameters
    ----------
    scale : ``"linear"`` (t(g) = g) or ``"log"`` (the warp in the module docstring).
    offset : g₀ in mg/dL (> 0) for ``"log"``.
    """

    scale: str = "log"
    offset: float = 50.0

    def __post_init__(self) -> None:
        one_of(self.scale, "scale", SCALES, "GlucoseTransform")
        if not np.isfinite(self.offset) or self.offset <= 0:
            raise ValueError(
                f"GlucoseTransform: offset must be a positive number of mg/dL; got {self.offset!r}"
            )

    def __call__(self, values: ArrayLike) -> NDArray[np.float64]:
        """t(g) elementwise, same shape as ``values`` (mg/dL ≥ 0 → warped units)."""
        g = np.asarray(values, dtype=np.float64)
        if self.scale == "linear":
            return g
        return GLUCOSE_MAX * np.log1p(g / self.offset) / np.log1p(GLUCOSE_MAX / self.offset)


@dataclass(frozen=True)
class TransformedKernel(Kernel):
    """K(x, x') = base(t(x), t(x')) with t a :class:`GlucoseTransform` on every coordinate."""

    base: Kernel
    transform: GlucoseTransform

    @property
    def smooth(self) -> bool:  # type: ignore[override]
        return self.base.smooth

    def __call__(self, X: ArrayLike, Y: ArrayLike) -> NDArray[np.float64]:
        return self.base(self.transform(np.atleast_2d(X)), self.transform(np.atleast_2d(Y)))

    def diagonal(self, X: ArrayLike) -> NDArray[np.float64]:
        return self.base.diagonal(self.transform(np.atleast_2d(X)))
