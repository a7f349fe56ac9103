"""Reproducing kernels K(x, x'): the registry :data:`KERNELS`, importable without NumPy; the kernels
themselves are :mod:`ranking_core.kernels.definitions`.

Each entry of :data:`KERNELS` gives a kernel's class by import path, imported on first use
(:meth:`KernelEntry.load`, :func:`~ranking_core.kernels.definitions.make_kernel`), and, for the
kernels a learned glucose grid may use (:data:`ranking_core.learn.KERNELS`), the label, the unit
of γ, the default γ and the range of γ that suits a few hundred SEG ratings; the command line's
help reads them without loading the numerical stack. The classes and functions are imported from
here on first use too (PEP 562).
"""

# ruff: noqa: F401 (the imports for type checkers re-export the names of _HOMES)

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ranking_core.lazy import checked_homes, imported, lazy_exports

if TYPE_CHECKING:  # the same names, for type checkers (exported at run time by _HOMES)
    from ranking_core.kernels.definitions import (
        GaussianKernel,
        Kernel,
        LaplacianKernel,
        LinearKernel,
        PolynomialKernel,
        gaussian_lattice,
        laplacian_lattice,
        make_kernel,
    )


@dataclass(frozen=True)
class KernelEntry:
    """A kernel of :data:`KERNELS`: its class (``"package.module:Class"``, a
    :class:`~ranking_core.kernels.definitions.Kernel`) and, for learned glucose grids (None: not
    offered there), a label, the unit of γ, the default γ and the range of γ that suits a few
    hundred SEG ratings."""

    implementation: str
    label: str = ""
    width_unit: str = ""
    glucose_width: float | None = None
    suited_widths: tuple[float, float] | None = None

    def load(self) -> type[Kernel]:
        """The kernel's class, imported now if it was not yet."""
        kernel_class: type[Kernel] = imported(self.implementation)
        return kernel_class


_DEFINITIONS = "ranking_core.kernels.definitions"
KERNELS: dict[str, KernelEntry] = {
    "gaussian": KernelEntry(
        f"{_DEFINITIONS}:GaussianKernel",
        "Gaussian, exp(−‖Δ‖²/γ)",
        "(mg/dL)²",
        # on log glucose coordinates, the best recipe otherwise, 400 SEG ratings (3 draws,
        # benchmarks/seg_recipes.py): γ = 10⁴ / 2·10⁴ / 4·10⁴ / 10⁵ → 3.27 / 3.24 / 3.55 /
        # 3.91 % misranking; the Laplacian's γ = 10³ (31.9 % for this kernel) was never meant
        # for it
        glucose_width=1e4,
        suited_widths=(4e3, 4e5),
    ),
    "laplacian": KernelEntry(
        f"{_DEFINITIONS}:LaplacianKernel",
        "Laplacian, exp(−‖Δ‖₁/γ)",
        "mg/dL",
        glucose_width=1e3,
        suited_widths=(1e2, 2e4),
    ),
    "linear": KernelEntry(f"{_DEFINITIONS}:LinearKernel"),
    "polynomial": KernelEntry(f"{_DEFINITIONS}:PolynomialKernel"),
}

_HOMES = checked_homes(__name__)  # name → its module, from the TYPE_CHECKING imports
__all__ = ["KERNELS", "KernelEntry", *sorted(_HOMES)]
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
