"""Zone grids (Clarke, Parkes type 1 and 2) as risk grids on the 601 × 601 mg/dL lattice.

To put a zone grid beside a risk grid (SEG, learned), each lattice point (REF, BGM) of 0..600 mg/dL
gets its zone coded A = 0, B = 1, C = 2, D = 3, E = 4 on the 0 (none) … 4 (extreme) risk scale.
This coding is the project's convention for comparisons, not part of the published grids.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids.clarke import clarke_zone
from ranking_core.grids.parkes import parkes_zone
from ranking_core.grids.seg import GLUCOSE_MAX
from ranking_core.grids.zone_lines import ZONE_GRID_KINDS
from ranking_core.validation import one_of

__all__ = ["ZONE_GRID_KINDS", "ZONE_LETTERS", "zone_codes", "zone_grid"]

ZONE_LETTERS = ("A", "B", "C", "D", "E")


def zone_codes(zones: ArrayLike) -> NDArray[np.float64]:
    """Zone letters 'A'..'E' → 0..4 (same shape); any other value is refused."""
    letters = np.asarray(zones, dtype=str)
    codes = np.full(letters.shape, -1.0)
    for code, letter in enumerate(ZONE_LETTERS):
        codes[letters == letter] = code
    if np.any(codes < 0):
        raise ValueError(f"zone_codes: zones must be the letters {', '.join(ZONE_LETTERS)}")
    return codes


@lru_cache(maxsize=3)
def zone_grid(kind: str) -> NDArray[np.float64]:
    """(601, 601) zone codes (A = 0 … E = 4) indexed [REF, BGM] in mg/dL, read-only.

    Parameters
    ----------
    kind : ``"clarke"``, ``"parkes-type1"`` or ``"parkes-type2"``.
    """
    one_of(kind, "kind", ZONE_GRID_KINDS, "zone_grid")
    axis = np.arange(GLUCOSE_MAX + 1, dtype=np.float64)
    ref, bgm = np.meshgrid(axis, axis, indexing="ij")
    if kind == "clarke":
        zones = clarke_zone(ref, bgm)
    else:
        zones = parkes_zone(ref, bgm, diabetes_type=1 if kind == "parkes-type1" else 2)
    grid = zone_codes(zones).reshape(ref.shape)
    grid.setflags(write=False)
    return grid
