"""The Parkes (consensus) error grid (Parkes et al., Diabetes Care 23(8):1143–1148, 2000).

Zones A–E for type 1 and type 2 diabetes from the published boundary polylines in mg/dL
(x = REF, y = BGM). Upper boundaries lie above the diagonal and are read as functions BGM = u(REF);
lower boundaries lie below it and are read as functions REF = l(BGM) (they start with a vertical
segment). Each polyline's last segment continues along its slope to the edge of the 0..600 lattice.
A pair is in the outer region of zone Z when BGM > u_Z(REF) or REF > l_Z(BGM) (points exactly on
a line belong to the inner, less severe zone); it takes the highest zone whose outer region
contains it, otherwise A. Type 1 has no lower E boundary.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids._checks import check_glucose_pairs

__all__ = ["PARKES_LINES", "PARKES_ZONES", "parkes_zone"]

PARKES_ZONES = ("A", "B", "C", "D", "E")
Polyline = tuple[tuple[float, float], ...]
# PARKES_LINES[diabetes_type][zone] = (upper polyline, lower polyline or None), (REF, BGM) mg/dL
PARKES_LINES: dict[int, dict[str, tuple[Polyline, Polyline | None]]] = {
    1: {
        "B": (((0, 50), (30, 50), (140, 170), (280, 380), (430, 550)),
              ((50, 0), (50, 30), (170, 145), (385, 300), (550, 450))),
        "C": (((0, 60), (30, 60), (50, 80), (70, 110), (260, 550)),
              ((120, 0), (120, 30), (260, 130), (550, 250))),
        "D": (((0, 100), (25, 100), (50, 125), (80, 215), (125, 550)),
              ((250, 0), (250, 40), (550, 150))),
        "E": (((0, 150), (35, 155), (50, 550)), None),
    },
    2: {
        "B": (((0, 50), (30, 50), (230, 330), (440, 550)),
              ((50, 0), (50, 30), (90, 80), (330, 230), (550, 450))),
        "C": (((0, 60), (30, 60), (280, 550)),
              ((90, 0), (260, 130), (550, 250))),
        "D": (((0, 80), (25, 80), (35, 90), (125, 550)),
              ((250, 0), (250, 40), (410, 110), (550, 160))),
        "E": (((0, 200), (35, 200), (50, 550)), None),
    },
}


def _extended_interp(t: NDArray[np.float64], knots_t: NDArray[np.float64],
                     knots_v: NDArray[np.float64]) -> NDArray[np.float64]:
    """Piecewise-linear v(t) through the knots; beyond the last knot the last segment continues
    along its slope (before the first knot the first value holds)."""
    slope = (knots_v[-1] - knots_v[-2]) / (knots_t[-1] - knots_t[-2])
    return np.where(t > knots_t[-1], knots_v[-1] + slope * (t - knots_t[-1]),
                    np.interp(t, knots_t, knots_v))


def _outside(ref: NDArray[np.float64], bgm: NDArray[np.float64], upper: Polyline,
             lower: Polyline | None) -> NDArray[np.bool_]:
    """Pairs strictly above the upper boundary or strictly right of the lower boundary."""
    up = np.asarray(upper, dtype=np.float64)
    outside = bgm > _extended_interp(ref, up[:, 0], up[:, 1])
    if lower is not None:
        low = np.asarray(lower, dtype=np.float64)
        outside |= ref > _extended_interp(bgm, low[:, 1], low[:, 0])
    return outside


def parkes_zone(ref: ArrayLike, bgm: ArrayLike, diabetes_type: int = 1) -> NDArray[np.str_]:
    """Parkes consensus error grid zone ('A'..'E') of each (REF, BGM) pair in mg/dL.

    Parameters
    ----------
    ref, bgm : array-like, broadcastable, reference and meter glucose in mg/dL (finite).
    diabetes_type : 1 or 2, which of the two published grids.

    Returns
    -------
    zones : array of one-letter strings with the broadcast shape. O(n·k) time for k polyline
        vertices, no loop over pairs.
    """
    if diabetes_type not in PARKES_LINES:
        raise ValueError(f"parkes_zone: diabetes_type must be 1 or 2; got {diabetes_type!r}")
    ref, bgm = check_glucose_pairs(ref, bgm, "parkes_zone")
    zone = np.full(ref.shape, "A", dtype="<U1")
    for name, (upper, lower) in PARKES_LINES[diabetes_type].items():  # B, C, D, E: nested
        zone[_outside(ref, bgm, upper, lower)] = name
    return zone
