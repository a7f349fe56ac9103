"""What every conformance vector shares: one published number against ours
(:class:`Comparison`), the error for a vector file that is missing or malformed, and the size
check of a vector's files."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

__all__ = [
    "CONFORMANCE_ENV",
    "MAX_VECTOR_BYTES",
    "MAX_VECTOR_PAIRS",
    "Comparison",
    "ConformanceDataError",
    "check_file",
    "read_pairs_table",
]

CONFORMANCE_ENV = "RISKGRID_CONFORMANCE"
MAX_VECTOR_BYTES = 16 * 2**20  # every vector file is far smaller; larger ones are refused
MAX_VECTOR_PAIRS = 1_000_000  # rows of a vector's table of pairs (each has a few thousand)


class ConformanceDataError(ValueError):
    """A vector's file is missing, too large or not in the published layout (the message names
    the file and the rule)."""


@dataclass(frozen=True)
class Comparison:
    """One published number against ours.

    ``tolerance`` is the largest |ours − expected| counted as agreement (in the statistic's own
    unit); ``decimals`` how many decimals the table shows; ``explanation`` the known reason when
    the two differ by more (empty when they agree). ``ours`` is None when we have no number.
    """

    vector: str
    source: str
    statistic: str
    expected: float
    ours: float | None
    tolerance: float
    decimals: int
    explanation: str = ""

    @property
    def difference(self) -> float:
        return math.nan if self.ours is None else self.ours - self.expected

    @property
    def agrees(self) -> bool:
        """|ours − expected| ≤ tolerance (plus rounding slack of 1e-9)."""
        return abs(self.difference) <= self.tolerance + 1e-9

    @property
    def status(self) -> str:
        """ "agrees", "explained" (differs for the stated known reason) or "differs"."""
        if self.agrees:
            return "agrees"
        return "explained" if self.explanation else "differs"


def check_file(path: Path) -> Path:
    """``path`` if it is a file of at most :data:`MAX_VECTOR_BYTES`; else
    :class:`ConformanceDataError`."""
    if not path.is_file():
        raise ConformanceDataError(
            f"{path}: missing (the conformance folder's layout is in its README)"
        )
    size = path.stat().st_size
    if size > MAX_VECTOR_BYTES:
        raise ConformanceDataError(
            f"{path}: {size:,} bytes, more than the {MAX_VECTOR_BYTES:,} a vector file may have"
        )
    return path


def read_pairs_table(path: Path, columns: Sequence[str]) -> pd.DataFrame:
    """A vector's CSV table of pairs, read after :func:`check_file`; :class:`ConformanceDataError`
    when one of ``columns`` is missing or it has more than :data:`MAX_VECTOR_PAIRS` rows (read
    no further than that)."""
    frame = pd.read_csv(check_file(path), nrows=MAX_VECTOR_PAIRS + 1)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ConformanceDataError(f"{path}: no column {', '.join(missing)}")
    if len(frame) > MAX_VECTOR_PAIRS:
        raise ConformanceDataError(f"{path}: more than {MAX_VECTOR_PAIRS:,} pairs")
    return frame
