"""What the method-comparison analyses share: the check of the pairs they read (finite numbers,
one reference per device reading, a bounded count) and numbers made JSON-ready."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["CONFIDENCE", "MAX_PAIRS", "check_pairs", "json_number"]

CONFIDENCE = 0.95  # two-sided level of every interval here
MAX_PAIRS = 50_000  # Passing–Bablok reads n(n − 1)/2 slopes: 1.25·10⁹ at this count


def check_pairs(
    x: ArrayLike, y: ArrayLike, *, minimum: int = 3, maximum: int = MAX_PAIRS
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``x`` (reference) and ``y`` (device) as float arrays of one length between ``minimum`` and
    ``maximum``, every value finite; else ValueError naming the first bad pair (1-based)."""
    xs = np.asarray(x, dtype=np.float64).ravel()
    ys = np.asarray(y, dtype=np.float64).ravel()
    if xs.size != ys.size:
        raise ValueError(f"{xs.size:,} reference values but {ys.size:,} device values")
    if not minimum <= xs.size <= maximum:
        raise ValueError(f"{xs.size:,} pairs: the analysis needs {minimum:,} to {maximum:,}")
    bad = ~(np.isfinite(xs) & np.isfinite(ys))
    if bad.any():
        raise ValueError(f"pair {int(np.flatnonzero(bad)[0]) + 1}: values must be finite numbers")
    return xs, ys


def json_number(value: float | int | None) -> float | int | None:
    """``value`` for JSON: NaN and ±∞ as None (JSON has neither), NumPy scalars as Python's."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    number = float(value)
    return number if math.isfinite(number) else None
