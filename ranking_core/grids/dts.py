"""The DTS Error Grid (Klonoff DC, Freckmann G, Pleus S, et al. The Diabetes Technology Society
Error Grid and Trend Accuracy Matrix for Glucose Monitors. J Diabetes Sci Technol
2024;18(6):1346–1361, doi:10.1177/19322968241275701).

Five zones A (no risk) … E (extreme risk) with straight-line borders, the same for blood glucose
monitors and continuous glucose monitors. The borders are those of the paper's Supplemental
Appendix 2, Table A1 ("Coordinates (Reference/Monitor) of the Lines Defining the Zones of the DTS
Error Grid"), as (reference, measured) in mg/dL; each border is a three-point polyline::

    zone  upper border (above the diagonal)        lower border (below the diagonal)
    B     (0, 60)   (50, 60)   (500, 600)          (62.5, 0)  (62.5, 50)  (600, 480)
    C     (0, 86.5) (50, 86.5) (347, 600)          (97.5, 0)  (97.5, 50)  (600, 307)
    D     (0, 124)  (50, 124)  (241, 600)          (153, 0)   (153, 50)   (600, 197)
    E     (0, 179)  (50, 179)  (167, 600)          (238, 0)   (238, 50)   (600, 126)

(the table's sub-headers call the outermost pair "D"; they bound zone E, as the paper's figure
shows). Above the diagonal each border is flat up to reference 50 mg/dL and then a straight line;
below it each border is vertical up to measured 50 mg/dL and then a straight line. The zones are
nested: a pair beyond the border of zone Z (measured above the upper line, or reference right of
the lower line) is in Z or worse; a pair exactly on a border is in the less severe zone (the
paper's zone intervals, 0–0.5 for A and > 0.5–1.5 for B, are closed above). Beyond 600 mg/dL the
last segment continues along its slope.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids._checks import check_glucose_pairs
from ranking_core.grids._polylines import NestedLines, nested_polylines, nested_zones
from ranking_core.grids.registry import ZONE_COLOURS, ZoneGrid

__all__ = ["DTS_LINES", "DTS_ZONES", "GRIDS", "dts_zone"]

DTS_ZONES = ("A", "B", "C", "D", "E")
# DTS_LINES[zone] = (upper border, lower border) bounding the zone from the inside, (REF, BGM)
DTS_LINES: NestedLines = {
    "B": (((0, 60), (50, 60), (500, 600)), ((62.5, 0), (62.5, 50), (600, 480))),
    "C": (((0, 86.5), (50, 86.5), (347, 600)), ((97.5, 0), (97.5, 50), (600, 307))),
    "D": (((0, 124), (50, 124), (241, 600)), ((153, 0), (153, 50), (600, 197))),
    "E": (((0, 179), (50, 179), (167, 600)), ((238, 0), (238, 50), (600, 126))),
}


def dts_zone(ref: ArrayLike, bgm: ArrayLike) -> NDArray[np.str_]:
    """DTS Error Grid zone ('A'..'E') of each (reference, measured) pair in mg/dL.

    Parameters
    ----------
    ref, bgm : array-like, broadcastable, reference and measured (BGM or CGM) glucose in mg/dL
        (finite).

    Returns
    -------
    zones : array of one-letter strings with the broadcast shape; O(n) time, no loop over pairs.
    """
    ref, bgm, shape = check_glucose_pairs(ref, bgm, "dts_zone")
    return nested_zones(ref, bgm, shape, DTS_LINES)


GRIDS = (
    ZoneGrid(
        name="dts",
        title="DTS Error Grid",
        citation="Klonoff DC, Freckmann G, Pleus S, et al. The Diabetes Technology Society "
        "Error Grid "
        "and Trend Accuracy Matrix for Glucose Monitors. J Diabetes Sci Technol "
        "2024;18(6):1346-1361.",
        purpose="The 2024 consensus grid of 89 experts with straight-line borders smoothed "
        "from the "
        "Surveillance Error Grid, one grid for both BGMs and CGMs; it replaces Clarke and "
        "Parkes in new accuracy studies.",
        zones=DTS_ZONES,
        meanings=("no risk", "mild risk", "moderate risk", "high risk", "extreme risk"),
        colours=ZONE_COLOURS,
        order=1,
        rule=dts_zone,
        boundaries=lambda: nested_polylines(DTS_LINES),
    ),
)
