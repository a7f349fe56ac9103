"""Checks shared by the zone grids: (REF, BGM) arrays in mg/dL."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.validation import describe_rows


def check_glucose_pairs(
    ref: ArrayLike, bgm: ArrayLike, owner: str
) -> tuple[NDArray[np.float64], NDArray[np.float64], tuple[int, ...]]:
    """REF and BGM (mg/dL) as float64 in their own shapes, and the shape they broadcast to;
    names the non-finite rows (counted in that shape). A rule computes what depends on one of
    them alone in its own shape: once per row and once per column of the 601 × 601 lattice,
    not once per point."""
    ref_a = np.asarray(ref, dtype=np.float64)
    bgm_a = np.asarray(bgm, dtype=np.float64)
    shape = np.broadcast_shapes(ref_a.shape, bgm_a.shape)
    finite = np.isfinite(ref_a) & np.isfinite(bgm_a)
    bad = np.flatnonzero(~np.broadcast_to(finite, shape))
    if bad.size:
        raise ValueError(
            f"{owner}: REF or BGM is NaN or infinite in {describe_rows(bad)} "
            "(rule: every value must be a finite number in mg/dL)"
        )
    return ref_a, bgm_a, shape
