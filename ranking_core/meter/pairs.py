"""Readers for paired meter (BGM) and reference (REF) glucose readings in mg/dL.

CSV, TSV and XLSX; header names matched case-insensitively; a UTF-8 byte-order mark and CR or
CR-LF line endings are tolerated. Rows whose BGM or REF is empty, text, NaN or infinite are left out
with a message naming their lines; values that are not whole mg/dL are rounded to the nearest
integer (half to even, like R's ``round`` used by the official SEG tool) and reported.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.validation import describe_rows

__all__ = ["PAIR_COLUMNS", "MeterPairs", "PairsFileError", "name_rows", "pairs_from_frame",
           "read_pairs"]

PAIR_COLUMNS = ("BGM", "REF")
_NA_MARKERS = frozenset({"nan", "na", "n/a", "#n/a", "null", "none", "-nan"})


class PairsFileError(ValueError):
    """The file cannot give any pair (unreadable, empty, missing columns, no valid row)."""


@dataclass(frozen=True)
class MeterPairs:
    """Valid (BGM, REF) pairs in whole mg/dL and what was done to read them.

    Attributes
    ----------
    bgm, ref : (n,) float64 meter and reference glucose in mg/dL, rounded to integers.
    rows : (n,) file row (line) number of each pair; the header is row 1.
    messages : one sentence per broken rule, naming the rows.
    source : the file name (for messages).
    unit : "line" (text files) or "row" (spreadsheets, frames), the word used for ``rows``.
    """

    bgm: NDArray[np.float64] = field(repr=False)
    ref: NDArray[np.float64] = field(repr=False)
    rows: NDArray[np.intp] = field(repr=False)
    messages: tuple[str, ...] = ()
    source: str = ""
    unit: str = "row"

    def __len__(self) -> int:
        return len(self.ref)

    @property
    def frame(self) -> pd.DataFrame:
        """The pairs as a DataFrame with columns BGM, REF, row."""
        return pd.DataFrame({"BGM": self.bgm, "REF": self.ref, "row": self.rows})


def name_rows(rows: NDArray[np.intp], unit: str) -> str:
    """'lines 3, 17' or 'row 4' for file row numbers."""
    return describe_rows(rows).replace("row", unit, 1)


def pairs_from_frame(frame: pd.DataFrame, source: str = "", first_row: int = 2,
                     unit: str = "row") -> MeterPairs:
    """Check a table with BGM and REF columns (any case) and keep its valid rows.

    ``first_row`` is the file row number of the frame's first row (2 below a header line);
    ``unit`` ("line" or "row") is the word used in messages. Rows left entirely blank are skipped
    silently; every other rule broken is reported with the rows that break it.
    """
    label = source or "pairs"
    by_lower: dict[str, object] = {}
    for column in frame.columns:
        by_lower.setdefault(str(column).strip().lower(), column)
    missing = [c for c in PAIR_COLUMNS if c.lower() not in by_lower]
    if missing:
        raise PairsFileError(
            f"{label}: missing column(s) {', '.join(missing)}; found "
            f"{', '.join(map(str, frame.columns)) or 'no columns'} (rule: a header row naming "
            "the columns BGM and REF, in any case)"
        )
    row_numbers = np.arange(len(frame)) + first_row
    text = {c: frame[by_lower[c.lower()]].astype("string").str.strip().fillna("")
            for c in PAIR_COLUMNS}
    blank = np.logical_and.reduce([(frame[col].astype("string").str.strip().fillna("") == "")
                                   .to_numpy() for col in frame.columns])
    messages: list[str] = []
    values: dict[str, NDArray[np.float64]] = {}
    bad = blank.copy()
    for name in PAIR_COLUMNS:
        cells = text[name]
        number = pd.to_numeric(cells, errors="coerce").to_numpy(dtype=np.float64,
                                                               na_value=np.nan)
        empty = (cells == "").to_numpy() & ~blank
        marker = cells.str.lower().isin(_NA_MARKERS).to_numpy()
        infinite = np.isinf(number)
        words = np.isnan(number) & ~empty & ~marker & ~blank
        for mask, rule in ((empty, "is empty"), (marker, "is NaN / NA"),
                           (words, "is text, not a number"), (infinite, "is infinite")):
            if mask.any():
                example = "" if rule == "is empty" else f" (e.g. {cells[mask].iloc[0]!r})"
                messages.append(f"{label}: {name} {rule}{example} in "
                                f"{name_rows(row_numbers[mask], unit)}; those rows are left out")
        bad |= ~np.isfinite(number)
        values[name] = number
    keep = ~bad
    for name in PAIR_COLUMNS:
        number = values[name]
        fractional = keep & (number != np.rint(number))
        if fractional.any():
            first = number[fractional][0]
            messages.append(
                f"{label}: {name} is not a whole mg/dL in "
                f"{name_rows(row_numbers[fractional], unit)}; rounded to the nearest integer "
                f"(e.g. {first:g} → {np.rint(first):g})"
            )
    if not keep.any():
        raise PairsFileError(f"{label}: no valid (BGM, REF) pair. " + " ".join(messages)
                             if messages else f"{label}: the file has no data rows")
    return MeterPairs(bgm=np.rint(values["BGM"][keep]), ref=np.rint(values["REF"][keep]),
                      rows=row_numbers[keep], messages=tuple(messages), source=label,
                      unit=unit)


def _decode(raw: bytes) -> str:
    """UTF-8 (with or without BOM), else Windows-1252; CR and CR-LF become LF."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1252", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _delimiter(header: str, suffix: str) -> str:
    if suffix in (".tsv", ".tab") or "\t" in header:
        return "\t"
    if ";" in header and "," not in header:
        return ";"
    return ","


def read_pairs(path: str | os.PathLike | IO[bytes], name: str | None = None) -> MeterPairs:
    """Read BGM/REF pairs (mg/dL) from a CSV, TSV or XLSX file or an uploaded file object.

    ``name`` gives an upload's file name (for the format and messages). Raises
    :class:`PairsFileError` when no pair can be read; otherwise returns the valid pairs with
    row-level messages about the rest.
    """
    label = name or (str(path) if isinstance(path, str | os.PathLike) else "uploaded pairs")
    suffix = Path(label).suffix.lower()
    try:
        if suffix == ".xls":
            raise PairsFileError(f"{label}: the old Excel .xls format is not supported; save "
                                 "the sheet as .xlsx or CSV")
        if suffix in (".xlsx", ".xlsm"):
            try:
                frame = pd.read_excel(path, dtype=object)
            except Exception as exc:  # openpyxl and zipfile raise their own error types
                raise PairsFileError(f"{label}: cannot be read as an XLSX workbook "
                                     f"({type(exc).__name__}: {exc})") from exc
            return pairs_from_frame(frame, label, first_row=2, unit="row")
        raw = Path(path).read_bytes() if isinstance(path, str | os.PathLike) else path.read()
        text = _decode(raw)
        if not text.strip():
            raise PairsFileError(f"{label}: the file is empty (rule: a header row naming BGM "
                                 "and REF, then one pair per line)")
        header = text.split("\n", 1)[0]
        frame = pd.read_csv(io.StringIO(text), sep=_delimiter(header, suffix), dtype=str,
                            keep_default_na=False, skip_blank_lines=False)
    except FileNotFoundError as exc:
        raise PairsFileError(f"{label}: file not found") from exc
    except (pd.errors.ParserError, pd.errors.EmptyDataError, OSError, ValueError) as exc:
        if isinstance(exc, PairsFileError):
            raise
        raise PairsFileError(f"{label}: cannot be read as a CSV/TSV/XLSX table ({exc})") from exc
    return pairs_from_frame(frame, label, first_row=2, unit="line")
