"""Rating sets: clinicians' risk ratings of (reference, estimate) glucose scenarios, validated.

Format (CSV, TSV or XLSX; header names matched case-insensitively, surrounding spaces ignored):

=========  ===========================================================================
reference  reference glucose (mg/dL or mmol/L, as stated by the user)
estimate   estimated / meter glucose, same unit
rating     risk on the SEG scale 0 (none) … 4 (extreme); fractions allowed
rater      optional rater identifier (text)
=========  ===========================================================================

mmol/L values are converted with 18.01806 mg/dL per mmol/L (the SEG tools' factor). Every row is
checked against the rules below; rows that break one are reported by file line (the header is
line 1) with the rule, and the valid rows are kept. Nothing here unpickles or evaluates input.
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

from ranking_core.grids.seg import GLUCOSE_MAX
from ranking_core.validation import describe_rows, one_of

__all__ = [
    "MGDL_PER_MMOLL",
    "RATING_COLUMNS",
    "RatingSet",
    "RatingSetError",
    "RowProblem",
    "read_rating_set",
    "validate_rating_frame",
]

MGDL_PER_MMOLL = 18.01806
RATING_COLUMNS = ("reference", "estimate", "rating")
UNITS = ("mg/dL", "mmol/L")
RATING_MAX = 4.0
MAX_ROWS = 200_000  # a panel rates hundreds to thousands of scenarios; beyond this is a wrong file
# glucose that would be implausible in the stated unit (whole-column medians)
_LOOKS_LIKE_MMOLL = 35.0  # mg/dL stated, but the values are mostly below 35 → probably mmol/L
_LOOKS_LIKE_MGDL = 40.0  # mmol/L stated, but the values are mostly above 40 → probably mg/dL


class RatingSetError(ValueError):
    """The input cannot be read as a rating set at all (no valid row can be kept)."""


@dataclass(frozen=True)
class RowProblem:
    """One broken rule and the data rows (0-based, in file order) that break it."""

    rule: str
    rows: tuple[int, ...]

    @property
    def message(self) -> str:
        """'rating outside 0..4 in lines 3, 9' (file lines, header = line 1)."""
        return f"{self.rule} in {_lines(self.rows)}"


@dataclass(frozen=True)
class RatingSet:
    """A validated rating set.

    Attributes
    ----------
    frame : the valid rows, columns reference, estimate (mg/dL, float), rating (0..4, float)
        and, when given, rater (str); index = 0-based position of the row in the source.
    problems : the broken rules, each with its rows (those rows are not in ``frame``).
    warnings : messages about rows kept or the file as a whole (unit, duplicates, extra sheets).
    name : where it came from.
    """

    frame: pd.DataFrame = field(repr=False)
    problems: tuple[RowProblem, ...] = ()
    warnings: tuple[str, ...] = ()
    name: str = ""

    @property
    def X(self) -> NDArray[np.float64]:
        """(n, 2) inputs (reference, estimate) in mg/dL."""
        return self.frame[["reference", "estimate"]].to_numpy(dtype=np.float64)

    @property
    def y(self) -> NDArray[np.float64]:
        """(n,) ratings."""
        return self.frame["rating"].to_numpy(dtype=np.float64)

    def report(self) -> str:
        """Every problem and warning, one per line ('' when the set is clean)."""
        return "\n".join([p.message for p in self.problems] + list(self.warnings))


def _read_table(source: str | os.PathLike | IO | pd.DataFrame, label: str
                ) -> tuple[pd.DataFrame, list[str]]:
    notes: list[str] = []
    if isinstance(source, pd.DataFrame):
        return source.copy(), notes
    suffix = Path(label).suffix.lower()
    try:
        if suffix in (".xlsx", ".xlsm"):
            sheets = pd.read_excel(source, sheet_name=None, dtype=object)
            if not sheets:
                raise RatingSetError(f"{label}: the workbook has no sheet")
            first = next(iter(sheets))
            if len(sheets) > 1:
                notes.append(f"{label}: the workbook has {len(sheets)} sheets; read the first, "
                             f"{first!r}")
            return sheets[first], notes
        raw = source.read() if hasattr(source, "read") else Path(source).read_bytes()
        if isinstance(raw, bytes):
            try:
                text = raw.decode("utf-8-sig")
            except UnicodeDecodeError:
                text = raw.decode("cp1252", errors="replace")
                notes.append(f"{label}: not UTF-8 text; read as Windows-1252 (check any names)")
        else:
            text = raw
        if not text.strip():
            raise RatingSetError(f"{label}: the file is empty")
        frame = pd.read_csv(io.StringIO(text), sep=None, engine="python", dtype=str,
                            skipinitialspace=True, nrows=MAX_ROWS + 1)
    except RatingSetError:
        raise
    except FileNotFoundError as exc:
        raise RatingSetError(f"{label}: file not found") from exc
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, OSError) as exc:
        raise RatingSetError(f"{label}: cannot be read as CSV/TSV/XLSX ({exc})") from exc
    return frame, notes


def read_rating_set(
    source: str | os.PathLike | IO | pd.DataFrame,
    unit: str = "mg/dL",
    name: str | None = None,
) -> RatingSet:
    """Read and validate a rating set from a path, an uploaded file object or a DataFrame.

    Parameters
    ----------
    source : CSV/TSV (delimiter detected) or XLSX (first sheet) path or file-like; or a frame.
    unit : ``"mg/dL"`` or ``"mmol/L"``, the unit of reference and estimate as stated by the user.
    name : file name for the format and for messages when ``source`` is a file object.

    Raises
    ------
    RatingSetError : unreadable or empty input, a required column missing, too many rows, or no
        valid row at all (the message lists the problems).
    """
    one_of(unit, "unit", UNITS, "read_rating_set")
    if name is None:
        name = (str(source) if isinstance(source, str | os.PathLike)
                else getattr(source, "name", None) or "rating set")
    frame, notes = _read_table(source, str(name))
    return validate_rating_frame(frame, unit, str(name), notes)


def _lines(rows: tuple[int, ...]) -> str:
    """0-based data rows as file lines (header = line 1): 'lines 3, 9'."""
    return describe_rows(np.asarray(rows) + 2).replace("row", "line")


def _rows(mask: pd.Series | NDArray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.flatnonzero(np.asarray(mask)))


def validate_rating_frame(
    frame: pd.DataFrame, unit: str = "mg/dL", name: str = "rating set",
    notes: list[str] | None = None,
) -> RatingSet:
    """Apply the row rules to a raw frame (see :func:`read_rating_set`).

    Rules, each reported with its rows: reference / estimate / rating is not a number (text,
    empty, NaN, inf); glucose is negative; glucose is above 600 mg/dL (outside the grid, after
    converting mmol/L); rating is outside 0..4; the row repeats an earlier row exactly (with a
    rater column; without one, repeats are kept and named in a warning, since several raters may
    rate the same scenario alike).
    """
    warnings_ = list(notes or [])
    if len(frame) > MAX_ROWS:
        raise RatingSetError(f"{name}: more than {MAX_ROWS:,} rows; a rating set this large is "
                             "probably the wrong file (split it if it is not)")
    by_lower = {str(c).strip().lower(): c for c in frame.columns}
    missing = [c for c in RATING_COLUMNS if c not in by_lower]
    if missing:
        raise RatingSetError(
            f"{name}: missing column(s) {', '.join(missing)}; found "
            f"{', '.join(map(str, frame.columns)) or 'none'} (rule: columns reference, estimate, "
            "rating and optionally rater, names case-insensitive)"
        )
    if len(frame) == 0:
        raise RatingSetError(f"{name}: the table has a header but no rows")
    frame = frame.reset_index(drop=True)
    values = {c: pd.to_numeric(frame[by_lower[c]], errors="coerce").astype(np.float64)
              for c in RATING_COLUMNS}
    raw = np.concatenate([values["reference"].to_numpy(), values["estimate"].to_numpy()])
    raw = raw[np.isfinite(raw)]
    median = float(np.median(raw)) if raw.size else float("nan")
    if unit == "mg/dL" and median < _LOOKS_LIKE_MMOLL:
        warnings_.append(
            f"{name}: the glucose values look like mmol/L (median {median:.1f}); they were read "
            f"as mg/dL as stated. If they are mmol/L, load them with unit='mmol/L' "
            f"(× {MGDL_PER_MMOLL} mg/dL per mmol/L)")
    if unit == "mmol/L" and median > _LOOKS_LIKE_MGDL:
        warnings_.append(
            f"{name}: the glucose values look like mg/dL (median {median:.1f}); they were read "
            "as mmol/L as stated. If they are mg/dL, load them with unit='mg/dL'")
    problems: list[RowProblem] = []
    bad = np.zeros(len(frame), dtype=bool)

    def rule(text: str, mask: NDArray) -> None:
        mask = np.asarray(mask) & ~bad
        if mask.any():
            problems.append(RowProblem(text, _rows(mask)))
            bad[:] |= mask

    for column in RATING_COLUMNS:
        rule(f"{column} is not a finite number", ~np.isfinite(values[column].to_numpy()))
    scale = MGDL_PER_MMOLL if unit == "mmol/L" else 1.0
    glucose = {c: values[c].to_numpy() * scale for c in ("reference", "estimate")}
    for column, g in glucose.items():
        rule(f"{column} glucose is negative", g < 0)
    for column, g in glucose.items():
        rule(f"{column} glucose is above {GLUCOSE_MAX} mg/dL (outside the grid)", g > GLUCOSE_MAX)
    rating = values["rating"].to_numpy()
    rule(f"rating is outside 0..{RATING_MAX:g}", (rating < 0) | (rating > RATING_MAX))

    out = pd.DataFrame({"reference": glucose["reference"], "estimate": glucose["estimate"],
                        "rating": rating})
    if "rater" in by_lower:
        out["rater"] = frame[by_lower["rater"]].astype(str).str.strip()
    repeats = out.duplicated(keep="first").to_numpy() & ~bad
    if "rater" in out:
        rule("the row repeats an earlier row (same reference, estimate, rating and rater)",
             repeats)
    elif repeats.any():
        warnings_.append(f"{name}: {_lines(_rows(repeats))} repeat an earlier row exactly; "
                         "kept (add a rater column to tell raters apart)")
    out = out[~bad]
    out.index.name = "row"

    if len(out) == 0:
        detail = "; ".join([p.message for p in problems] + warnings_)
        raise RatingSetError(f"{name}: no valid row ({detail})")
    return RatingSet(out, tuple(problems), tuple(warnings_), name)
