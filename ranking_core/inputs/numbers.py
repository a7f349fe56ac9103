"""Numbers in text cells: the decimal mark, grouping, non-finite spellings.

* decimal comma: accepted in ``;`` and tab files; a value with one mark followed by exactly three
  digits (``1.021``, ``1,021``) is refused as ambiguous (a thousands separator?) unless the file
  shows, in another value, that this mark is its decimal mark and the other mark is not used
  (evidence is collected per chunk, the first chunk being the first 100,000 rows);
* an empty, non-numeric or non-finite cell (NaN, NA, #N/A, inf, an overflow) is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = ["DecimalMark", "parse_numbers", "plain_numbers"]

_NUMBER = re.compile(r"[+-]?(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:[eE][+-]?\d+)?")
_GROUPED = r"[+-]?\d{1,3}[.,]\d{3}"  # one mark, exactly three digits after: 1.021 or 1,021
_NOT_FINITE = frozenset(
    {
        "nan",
        "-nan",
        "+nan",
        "na",
        "n/a",
        "#n/a",
        "null",
        "none",
        "inf",
        "-inf",
        "+inf",
        "infinity",
        "-infinity",
        "+infinity",
        "#num!",
        "#div/0!",
        "#value!",
    }
)


@dataclass
class DecimalMark:
    """Evidence of the file's decimal mark, from values that cannot be thousands separators."""

    point: bool
    comma: bool = False

    def see(self, cells: pd.Series) -> None:
        grouped = cells.str.fullmatch(_GROUPED)
        numeric = cells.str.fullmatch(_NUMBER.pattern) & ~grouped
        self.point |= bool((numeric & cells.str.contains(".", regex=False)).any())
        self.comma |= bool((numeric & cells.str.contains(",", regex=False)).any())


_PLAIN = re.compile(r"[^0-9.eE+\-\n]")


def plain_numbers(cells: NDArray[np.object_], decimal: DecimalMark) -> NDArray[np.float64] | None:
    """The fast path: every cell a plain finite number with a decimal point, in a file whose
    decimal mark is the point (no grouping possible); else None (the full rules apply)."""
    if not (decimal.point and not decimal.comma) or len(cells) == 0:
        return None
    if _PLAIN.search("\n".join(cells)):
        return None
    try:  # float() refuses '', '1.2.3', 'e', '--1'
        values = np.fromiter(map(float, cells), np.float64, len(cells))
    except ValueError:
        return None
    return values if np.isfinite(values).all() else None


def parse_numbers(
    cells: pd.Series, name: str, decimal: DecimalMark
) -> tuple[NDArray[np.float64], list[tuple[str, NDArray[np.bool_]]]]:
    """Cells (stripped str) → float64 and the broken rules with their masks (NaN where broken)."""
    empty = (cells == "").to_numpy()
    lower = cells.str.lower()
    not_finite = lower.isin(_NOT_FINITE).to_numpy()
    numeric = cells.str.fullmatch(_NUMBER.pattern).to_numpy(dtype=bool, na_value=False)
    grouped = cells.str.fullmatch(_GROUPED).to_numpy(dtype=bool, na_value=False)
    comma = cells.str.contains(",", regex=False).to_numpy(dtype=bool, na_value=False)
    point_ok = decimal.point and not decimal.comma
    comma_ok = decimal.comma and not decimal.point
    ambiguous = grouped & np.where(comma, not comma_ok, not point_ok)
    values = np.full(len(cells), np.nan)
    good = numeric & ~ambiguous
    if good.any():
        text = cells[good].str.replace(",", ".", regex=False)
        with np.errstate(over="ignore"):
            values[good] = text.astype(np.float64).to_numpy()
    overflow = good & ~np.isfinite(values)
    values[overflow] = np.nan
    rules = [
        (f"{name} is empty", empty),
        (f"{name} is not finite (NaN, NA or infinite)", not_finite | overflow),
        (
            f"{name} is ambiguous: one mark then three digits could be a thousands separator "
            "(rule: write the decimal mark the rest of the file uses, without grouping)",
            ambiguous,
        ),
        (f"{name} is not a number", ~empty & ~not_finite & ~numeric),
    ]
    return values, rules
