"""Zone boundary lines of the Clarke and Parkes grids as arrays, for drawing contours."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ranking_core.grids.clarke import CLARKE_LINES
from ranking_core.grids.parkes import PARKES_LINES
from ranking_core.grids.seg import GLUCOSE_MAX

__all__ = ["ZONE_GRID_KINDS", "zone_polylines"]

ZONE_GRID_KINDS = ("clarke", "parkes-type1", "parkes-type2")


def _to_lattice_edge(points: tuple[tuple[float, float], ...]) -> NDArray[np.float64]:
    """The polyline with its last segment continued along its slope to the 0..600 edge."""
    line = np.asarray(points, dtype=np.float64)
    direction = line[-1] - line[-2]
    steps = [(GLUCOSE_MAX - line[-1, i]) / direction[i] for i in (0, 1) if direction[i] > 0]
    if steps and min(steps) > 0:
        line = np.vstack([line, line[-1] + min(steps) * direction])
    return line


def zone_polylines(kind: str) -> dict[str, NDArray[np.float64]]:
    """Boundary lines of a zone grid, each a (k, 2) array of (REF, BGM) vertices in mg/dL.

    Parameters
    ----------
    kind : "clarke", "parkes-type1" or "parkes-type2".

    Returns
    -------
    lines : {"B upper": array, "B lower": array, ...}; Parkes lines run to the edge of the
        0..600 mg/dL lattice as :func:`~ranking_core.grids.parkes.parkes_zone` reads them.
    """
    if kind == "clarke":
        return {name: np.asarray(points, dtype=np.float64)
                for name, points in CLARKE_LINES.items()}
    if kind in ("parkes-type1", "parkes-type2"):
        lines = {}
        for zone, (upper, lower) in PARKES_LINES[int(kind[-1])].items():
            lines[f"{zone} upper"] = _to_lattice_edge(upper)
            if lower is not None:
                lines[f"{zone} lower"] = _to_lattice_edge(lower)
        return lines
    raise ValueError(f"zone_polylines: kind must be one of {', '.join(ZONE_GRID_KINDS)}; "
                     f"got {kind!r}")
