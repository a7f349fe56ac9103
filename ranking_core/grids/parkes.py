"""The Parkes (consensus) error grid (Parkes et al., Diabetes Care 23(8):1143–1148, 2000).

Zones A–E for type 1 and type 2 diabetes from the published boundary polylines in mg/dL
(x = REF, y = BGM), read as nested zones (:mod:`ranking_core.grids._polylines`: upper lines as
BGM = u(REF), lower lines as REF = l(BGM), each continued along its last slope; points exactly
on a line belong to the inner, less severe zone). Type 1 has no lower E boundary.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids._checks import check_glucose_pairs
from ranking_core.grids._polylines import NestedLines, nested_polylines, nested_zones
from ranking_core.grids.registry import ZONE_COLOURS, ZoneGrid

__all__ = ["GRIDS", "PARKES_LINES", "PARKES_ZONES", "parkes_zone"]

PARKES_ZONES = ("A", "B", "C", "D", "E")
# PARKES_LINES[diabetes_type][zone] = (upper polyline, lower polyline or None), (REF, BGM) mg/dL
PARKES_LINES: dict[int, NestedLines] = {
    1: {
        "B": (
            ((0, 50), (30, 50), (140, 170), (280, 380), (430, 550)),
            ((50, 0), (50, 30), (170, 145), (385, 300), (550, 450)),
        ),
        "C": (
            ((0, 60), (30, 60), (50, 80), (70, 110), (260, 550)),
            ((120, 0), (120, 30), (260, 130), (550, 250)),
        ),
        "D": (
            ((0, 100), (25, 100), (50, 125), (80, 215), (125, 550)),
            ((250, 0), (250, 40), (550, 150)),
        ),
        "E": (((0, 150), (35, 155), (50, 550)), None),
    },
    2: {
        "B": (
            ((0, 50), (30, 50), (230, 330), (440, 550)),
            ((50, 0), (50, 30), (90, 80), (330, 230), (550, 450)),
        ),
        "C": (((0, 60), (30, 60), (280, 550)), ((90, 0), (260, 130), (550, 250))),
        "D": (
            ((0, 80), (25, 80), (35, 90), (125, 550)),
            ((250, 0), (250, 40), (410, 110), (550, 160)),
        ),
        "E": (((0, 200), (35, 200), (50, 550)), None),
    },
}


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
    ref, bgm, shape = check_glucose_pairs(ref, bgm, "parkes_zone")
    return nested_zones(ref, bgm, shape, PARKES_LINES[diabetes_type])


def _grid(diabetes_type: int) -> ZoneGrid:
    return ZoneGrid(
        name=f"parkes-type{diabetes_type}",
        title=f"Parkes Error Grid, type {diabetes_type}",
        citation="Parkes JL, Slatin SL, Pardo S, Ginsberg BH. A new consensus error grid to "
        "evaluate the clinical significance of inaccuracies in the measurement of blood "
        "glucose. Diabetes Care 2000;23(8):1143-1148.",
        purpose=f"The consensus grid of 100 clinicians for type {diabetes_type} diabetes; ISO "
        "15197:2013 asks for 99 % of the pairs in its zones A and B.",
        zones=PARKES_ZONES,
        meanings=(
            "no effect on clinical action",
            "altered action, little or no effect on outcome",
            "altered action, likely to affect outcome",
            "altered action, significant medical risk",
            "altered action, could have dangerous consequences",
        ),
        colours=ZONE_COLOURS,
        order=2 + diabetes_type,
        family="parkes",
        diabetes_type=diabetes_type,
        rule=lambda ref, bgm: parkes_zone(ref, bgm, diabetes_type),
        boundaries=lambda: nested_polylines(PARKES_LINES[diabetes_type]),
    )


GRIDS = (_grid(1), _grid(2))
