"""Spectral regularization filters g_λ(σ) (Kriukova et al. 2014, §3): the registry :data:`FILTERS`
and the bounds of their parameters, importable without NumPy; the filters themselves are
:mod:`ranking_core.filters.definitions`.

Each entry of :data:`FILTERS` gives a filter's label (shown in the CLI and the dashboard) and its
class by import path, imported on first use (:meth:`FilterEntry.load`,
:func:`~ranking_core.filters.definitions.make_filter`); the command line's help lists the names
without loading the numerical stack. The classes and ``make_filter`` are imported from here on
first use too (PEP 562).
"""

# ruff: noqa: F401 (the imports for type checkers re-export the names of _HOMES)

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ranking_core.lazy import checked_homes, imported, lazy_exports

if TYPE_CHECKING:  # the same names, for type checkers (exported at run time by _HOMES)
    from ranking_core.filters.definitions import (
        Filter,
        IteratedLavrentiev,
        Landweber,
        Lavrentiev,
        NuMethod,
        Showalter,
        SpectralCutoff,
        make_filter,
    )

# k of the iterated Lavrentiev filter: its qualification; beyond a few the filter is a spectral
# cut-off in all but name (Kriukova et al. 2014 use k = 2); the bound keeps every use finite
MAX_ORDER = 100
# λ far above the spectrum: K̃ = CKC/m has eigenvalues at most trace(K)/m = 1 for the kernels of
# glucose grids (k(x, x) = 1), so at λ ≫ 1 every factor is ≈ 1/λ and the fit keeps only the mean;
# the candidate grids start at λ₀ = 1
MAX_LAMBDA = 100.0


@dataclass(frozen=True)
class FilterEntry:
    """A filter of :data:`FILTERS`: its label, shown to users, and its class
    (``"package.module:Class"``, a :class:`~ranking_core.filters.definitions.Filter`)."""

    label: str
    implementation: str

    def load(self) -> type[Filter]:
        """The filter's class, imported now if it was not yet."""
        filter_class: type[Filter] = imported(self.implementation)
        return filter_class


_DEFINITIONS = "ranking_core.filters.definitions"
FILTERS: dict[str, FilterEntry] = {
    "lavrentiev": FilterEntry("Lavrentiev (Tikhonov)", f"{_DEFINITIONS}:Lavrentiev"),
    "iterated-lavrentiev": FilterEntry("iterated Lavrentiev", f"{_DEFINITIONS}:IteratedLavrentiev"),
    "spectral-cutoff": FilterEntry("spectral cut-off", f"{_DEFINITIONS}:SpectralCutoff"),
    "landweber": FilterEntry("Landweber iteration", f"{_DEFINITIONS}:Landweber"),
    "showalter": FilterEntry("Showalter (asymptotic)", f"{_DEFINITIONS}:Showalter"),
    "nu-method": FilterEntry("ν-method (Brakhage)", f"{_DEFINITIONS}:NuMethod"),
}

_HOMES = checked_homes(__name__)  # name → its module, from the TYPE_CHECKING imports
__all__ = ["FILTERS", "MAX_LAMBDA", "MAX_ORDER", "FilterEntry", *sorted(_HOMES)]
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
