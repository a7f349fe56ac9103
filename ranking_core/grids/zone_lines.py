"""Zone boundary lines of the registered zone grids as arrays, for drawing."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ranking_core.grids.registry import ZoneGrid, get_grid

__all__ = ["zone_polylines"]


def zone_polylines(kind: str) -> dict[str, NDArray[np.float64]]:
    """Boundary lines of a zone grid, each a (k, 2) array of (REF, BGM) vertices in mg/dL.

    Parameters
    ----------
    kind : a registered zone grid ("dts", "clarke", "parkes-type1", "parkes-type2"); any other
        name raises :class:`~ranking_core.grids.registry.UnknownGridError` listing the choices.

    Returns
    -------
    lines : {"B upper": array, "B lower": array, ...}; Parkes and DTS lines run to the edge of
        the 0..600 mg/dL lattice as their zone functions read them.
    """
    return get_grid(kind, ZoneGrid).lines()
