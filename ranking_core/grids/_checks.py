"""Checks shared by the zone grids: (REF, BGM) arrays in mg/dL."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.validation import describe_rows


def check_glucose_pairs(
    ref: ArrayLike, bgm: ArrayLike, owner: str
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """REF and BGM (mg/dL) broadcast to one shape as float64; names the non-finite rows."""
    ref_a, bgm_a = np.broadcast_arrays(
        np.asarray(ref, dtype=np.float64), np.asarray(bgm, dtype=np.float64)
    )
    bad = np.flatnonzero(~(np.isfinite(ref_a) & np.isfinite(bgm_a)).ravel())
    if bad.size:
        raise ValueError(
            f"{owner}: REF or BGM is NaN or infinite in {describe_rows(bad)} "
            "(rule: every value must be a finite number in mg/dL)"
        )
    return ref_a, bgm_a
