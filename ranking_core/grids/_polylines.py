"""Nested zone grids bounded by polylines (Parkes, DTS): reading, classifying and drawing.

Upper boundaries lie above the diagonal and are read as functions BGM = u(REF); lower boundaries
lie below it and are read as functions REF = l(BGM) (they may start with a vertical segment). Each
polyline's last segment continues along its slope beyond its last vertex. A pair is in the outer
region of zone Z when BGM > u_Z(REF) or REF > l_Z(BGM) (points exactly on a line belong to the
inner, less severe zone); it takes the most severe zone whose outer region contains it, else A.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ranking_core.grids.lattice import GLUCOSE_MAX

Polyline = tuple[tuple[float, float], ...]
# {zone: (upper polyline, lower polyline or None)}, zones from the least to the most severe
NestedLines = dict[str, tuple[Polyline, Polyline | None]]


def _extended_interp(
    t: NDArray[np.float64], knots_t: NDArray[np.float64], knots_v: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Piecewise-linear v(t) through the knots; beyond the last knot the last segment continues
    along its slope (before the first knot the first value holds)."""
    slope = (knots_v[-1] - knots_v[-2]) / (knots_t[-1] - knots_t[-2])
    return np.where(
        t > knots_t[-1], knots_v[-1] + slope * (t - knots_t[-1]), np.interp(t, knots_t, knots_v)
    )


def _outside(
    ref: NDArray[np.float64], bgm: NDArray[np.float64], upper: Polyline, lower: Polyline | None
) -> NDArray[np.bool_]:
    """Pairs strictly above the upper boundary or strictly right of the lower boundary."""
    up = np.asarray(upper, dtype=np.float64)
    outside = bgm > _extended_interp(ref, up[:, 0], up[:, 1])
    if lower is not None:
        low = np.asarray(lower, dtype=np.float64)
        outside |= ref > _extended_interp(bgm, low[:, 1], low[:, 0])
    return outside


def nested_zones(
    ref: NDArray[np.float64],
    bgm: NDArray[np.float64],
    shape: tuple[int, ...],
    lines: NestedLines,
) -> NDArray[np.str_]:
    """Zone letter of each (REF, BGM) pair (mg/dL, checked arrays broadcasting to ``shape``)
    for nested boundary lines; O(n·k) for k vertices, no loop over pairs (each line read once
    per value of REF or BGM: once per row or column of a lattice)."""
    zone = np.full(shape, "A", dtype="<U1")
    for name, (upper, lower) in lines.items():
        zone[np.broadcast_to(_outside(ref, bgm, upper, lower), shape)] = name
    return zone


def to_lattice_edge(points: Polyline) -> NDArray[np.float64]:
    """The polyline with its last segment continued along its slope to the 0..600 mg/dL edge."""
    line = np.asarray(points, dtype=np.float64)
    direction = line[-1] - line[-2]
    steps = [(GLUCOSE_MAX - line[-1, i]) / direction[i] for i in (0, 1) if direction[i] > 0]
    if steps and min(steps) > 0:
        line = np.vstack([line, line[-1] + min(steps) * direction])
    return line


def nested_polylines(lines: NestedLines) -> dict[str, NDArray[np.float64]]:
    """{"B upper": (k, 2) array, "B lower": …} of (REF, BGM) vertices in mg/dL, each running to
    the edge of the 0..600 lattice as :func:`nested_zones` reads it."""
    drawn = {}
    for zone, (upper, lower) in lines.items():
        drawn[f"{zone} upper"] = to_lattice_edge(upper)
        if lower is not None:
            drawn[f"{zone} lower"] = to_lattice_edge(lower)
    return drawn
