"""How an elicited grid stands: raters whose maps stand apart from the panel, and the difference
from the published grids.

**Raters apart.** A rater's distance is the root mean square, over their scenarios, of their
map's root-mean-square distance from the scenario's mean grid (risk units over the 601 × 601
cells; :attr:`~ranking_core.elicit.mapping.ElicitedGrids.distances`). A rater stands apart when
the distance exceeds the median of the raters' distances by more than three scaled median
absolute deviations (1.4826 · MAD, the normal-consistent scale) and by at least
:data:`APART_MIN` risk units; with fewer than :data:`APART_RATERS` raters no one is flagged. A
flag is a note for the organiser: the rater's maps stay in every grid.

**Difference from SEG and DTS.** ``elicited − other`` on the lattice ``[REF, BGM]``. Against
the SEG (its table, risk 0..4) the share of lattice pairs whose risk category (the 8 categories
of :func:`~ranking_core.grids.risk_scale.risk_category`) changes; against DTS, a zone grid coded
A = 0 … E = 4 (:func:`~ranking_core.grids.zone_codes.zone_grid`), the share whose grade A..E
(:func:`~ranking_core.grids.risk_scale.risk_grade`) differs from the DTS zone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ranking_core.elicit.mapping import ElicitedGrids

__all__ = ["APART_MIN", "APART_RATERS", "GridDifference", "grid_differences", "raters_apart"]

APART_MIN = 0.25  # risk units
APART_RATERS = 4
MAD_SCALE = 1.4826


def raters_apart(grids: ElicitedGrids) -> pd.DataFrame:
    """One row per rater (in order of appearance): maps, distance (risk units), apart (bool)."""
    by_rater: dict[str, list[float]] = {}
    for (rater, _), one in grids.distances.items():
        by_rater.setdefault(rater, []).append(one)
    names = list(by_rater)
    distance = np.array([np.sqrt(np.mean(np.square(by_rater[r]))) for r in names])
    apart = np.zeros(len(names), dtype=bool)
    if len(names) >= APART_RATERS:
        median = float(np.median(distance))
        mad = float(np.median(np.abs(distance - median))) * MAD_SCALE
        apart = np.asarray(distance > median + max(3 * mad, APART_MIN), dtype=bool)
    return pd.DataFrame(
        {
            "rater": names,
            "maps": [len(by_rater[r]) for r in names],
            "distance": distance,
            "apart": apart,
        }
    )


@dataclass(frozen=True)
class GridDifference:
    """``elicited − other`` and the share of lattice pairs whose category changes (``rule``
    says which categories)."""

    name: str
    difference: NDArray[np.float64] = field(repr=False)
    changed_share: float
    rule: str

    def summary(self) -> str:
        return (
            f"against {self.name}: mean |difference| {np.abs(self.difference).mean():.3f}, "
            f"{self.changed_share:.1%} of pairs change {self.rule}"
        )


def grid_differences(pooled: ArrayLike, seg: ArrayLike | None = None) -> list[GridDifference]:
    """The difference from the SEG (when its table's ``absolute`` grid is given) and from DTS
    (module notes)."""
    from ranking_core.grids.risk_scale import risk_category, risk_grade
    from ranking_core.grids.zone_codes import zone_grid

    grid = np.asarray(pooled, dtype=np.float64)
    out = []
    if seg is not None:
        table = np.asarray(seg, dtype=np.float64)
        changed = risk_category(grid) != risk_category(table)
        out.append(GridDifference("SEG", grid - table, float(changed.mean()), "risk category"))
    dts = zone_grid("dts")
    changed = risk_grade(grid) != dts.astype(np.intp)
    out.append(GridDifference("DTS", grid - dts, float(changed.mean()), "zone (grade A-E)"))
    return out
