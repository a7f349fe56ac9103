"""The Clarke error grid (Clarke et al., Diabetes Care 10(5):622–628, 1987): zones A–E in mg/dL."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids._checks import check_glucose_pairs
from ranking_core.grids.registry import ZONE_COLOURS, ZoneGrid

__all__ = ["CLARKE_LINES", "CLARKE_ZONES", "GRIDS", "clarke_zone"]

CLARKE_ZONES = ("A", "B", "C", "D", "E")
# Zone boundaries (REF, BGM) in mg/dL on the 0..600 lattice, as drawn on the usual Clarke plot
CLARKE_LINES: dict[str, tuple[tuple[float, float], ...]] = {
    "A upper": ((0, 70), (70 / 1.2, 70), (500, 600)),
    "A lower": ((70, 0), (70, 56), (600, 480)),
    "C upper": ((70, 180), (490, 600)),
    "C lower": ((130, 0), (180, 70)),
    "D left": ((70, 84), (70, 180)),
    "D right": ((240, 70), (240, 180), (600, 180)),
    "E upper": ((0, 180), (70, 180), (70, 600)),
    "E lower": ((180, 0), (180, 70), (600, 70)),
}


def clarke_zone(ref: ArrayLike, bgm: ArrayLike) -> NDArray[np.str_]:
    """Clarke error grid zone ('A'..'E') of each (REF, BGM) pair in mg/dL.

    The rules are applied in this order, each overriding the previous (Clarke et al. 1987):

    1. B everywhere;
    2. E if (REF ≤ 70 and BGM ≥ 180) or (REF ≥ 180 and BGM ≤ 70);
    3. D if 70 ≤ BGM < 180 and (REF < 70 or REF > 240);
    4. C if (130 ≤ REF ≤ 180 and BGM < 1.4·(REF − 130)) or
       (REF > 70 and BGM > 180 and BGM > REF + 110);
    5. A if |BGM − REF| ≤ 0.2·REF or both REF < 70 and BGM < 70.

    Parameters
    ----------
    ref, bgm : array-like, broadcastable, reference and meter glucose in mg/dL (finite).

    Returns
    -------
    zones : array of one-letter strings with the broadcast shape. O(n) time.
    """
    ref, bgm, shape = check_glucose_pairs(ref, bgm, "clarke_zone")
    zone = np.full(shape, "B", dtype="<U1")
    zone[((ref <= 70) & (bgm >= 180)) | ((ref >= 180) & (bgm <= 70))] = "E"
    zone[(bgm >= 70) & (bgm < 180) & ((ref < 70) | (ref > 240))] = "D"
    zone[
        ((ref >= 130) & (ref <= 180) & (bgm < 1.4 * (ref - 130)))
        | ((ref > 70) & (bgm > 180) & (bgm > ref + 110))
    ] = "C"
    zone[(np.abs(bgm - ref) <= 0.2 * ref) | ((ref < 70) & (bgm < 70))] = "A"
    return zone


def _lines() -> dict[str, NDArray[np.float64]]:
    return {name: np.asarray(points, dtype=np.float64) for name, points in CLARKE_LINES.items()}


GRIDS = (
    ZoneGrid(
        name="clarke",
        title="Clarke Error Grid",
        citation="Clarke WL, Cox D, Gonder-Frederick LA, Carter W, Pohl SL. Evaluating clinical "
        "accuracy of systems for self-monitoring of blood glucose. Diabetes Care "
        "1987;10(5):622-628.",
        purpose="The first error grid (1987): five zones by the treatment a patient would "
        "choose on "
        "the meter's reading; still quoted for comparison with older studies.",
        zones=CLARKE_ZONES,
        meanings=(
            "clinically accurate",
            "benign error",
            "overcorrection",
            "failure to detect",
            "erroneous treatment",
        ),
        colours=ZONE_COLOURS,
        order=2,
        rule=clarke_zone,
        boundaries=_lines,
    ),
)
