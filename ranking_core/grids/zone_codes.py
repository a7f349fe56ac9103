"""Zone grids (Clarke, Parkes type 1 and 2, DTS) as risk grids on the 601 × 601 mg/dL lattice.

To put a zone grid beside a risk grid (SEG, learned), each lattice point (REF, BGM) of 0..600 mg/dL
gets its zone coded A = 0, B = 1, C = 2, D = 3, E = 4 on the 0 (none) … 4 (extreme) risk scale.
This coding is the project's convention for comparisons, not part of the published grids.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from ranking_core.grids.lattice import GLUCOSE_MAX
from ranking_core.grids.registry import ZoneGrid, get_grid, grid_names

__all__ = ["zone_grid", "zone_grid_names"]


def zone_grid_names() -> tuple[str, ...]:
    """Names of the registered zone grids ("dts", "clarke", "parkes-type1", …)."""
    return grid_names(ZoneGrid)


@lru_cache(maxsize=8)
def zone_grid(kind: str) -> NDArray[np.float64]:
    """(601, 601) zone codes (A = 0 … E = 4) indexed [REF, BGM] in mg/dL, read-only.

    Parameters
    ----------
    kind : the name of a registered zone grid (:func:`zone_grid_names`); any other name raises
        :class:`~ranking_core.grids.registry.UnknownGridError` listing the choices.
    """
    grid = get_grid(kind, ZoneGrid)
    axis = np.arange(GLUCOSE_MAX + 1, dtype=np.float64)
    codes = grid.zone_index(axis[:, None], axis[None, :]).astype(np.float64)
    codes.setflags(write=False)
    return codes
