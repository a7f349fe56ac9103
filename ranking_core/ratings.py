"""Rating sets: clinicians' risk ratings of (reference, estimate) glucose scenarios, validated.

Format (CSV, TSV or XLSX, read by :func:`ranking_core.inputs.read_table`; header names matched
case-insensitively, a unit suffix such as " (mmol/L)" allowed):

=========  ===========================================================================
reference  reference glucose (mg/dL or mmol/L); also ``ref``, ``reference glucose``
estimate   estimated / meter glucose, same unit; also ``estimated``, ``bgm``, ``meter``
rating     risk on the SEG scale 0 (none) … 4 (extreme), fractions allowed; also ``risk``
rater      optional rater identifier (printable text; blank → "unknown", with a warning); also
           ``rater id``, ``clinician``
role       optional, as a survey export writes it: a row whose role is ``repeat`` (or
           ``retest``) is a test-retest answer, kept even when it equals an earlier answer
=========  ===========================================================================

mmol/L values are converted with 18.016 mg/dL per mmol/L
(:data:`ranking_core.inputs.MGDL_PER_MMOLL`). Every row is checked against the input layer's
rules and the ones below; rows that break one are reported by file line with the rule, and the
valid rows are kept. Nothing here unpickles or evaluates input.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import IO

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.grids.seg import GLUCOSE_MAX
from ranking_core.inputs import (
    MGDL_PER_MMOLL,
    UNITS,
    InputError,
    Limits,
    Role,
    Schema,
    name_lines,
    read_table,
)

__all__ = [
    "MGDL_PER_MMOLL",
    "RATING_COLUMNS",
    "RATING_SCHEMA",
    "UNITS",
    "RatingSet",
    "RatingSetError",
    "RowProblem",
    "read_rating_set",
]

RATING_COLUMNS = ("reference", "estimate", "rating")
RATING_MAX = 4.0
UNKNOWN_RATER = "unknown"  # the rater of rows whose rater cell is blank
# the roles of a test-retest answer: "repeat" is what a survey export writes (the roles of
# ranking_core.surveys.design.ROLES), "retest" a hand-made file's word; such a row repeats an
# earlier answer on purpose and is kept
RETEST_ROLES = ("repeat", "retest")
MAX_ROWS = 200_000  # a panel rates hundreds to thousands of scenarios; beyond this is a wrong file
_GRID = f"outside 0..{GLUCOSE_MAX} mg/dL (the grid)"
RATING_SCHEMA = Schema(
    "rating set",
    (
        Role(
            "reference",
            glucose=True,
            low=0.0,
            high=float(GLUCOSE_MAX),
            range_rule=f"reference glucose is {_GRID}",
            aliases=("ref", "reference glucose"),
        ),
        Role(
            "estimate",
            glucose=True,
            low=0.0,
            high=float(GLUCOSE_MAX),
            range_rule=f"estimate glucose is {_GRID}",
            aliases=("estimated", "bgm", "meter"),
        ),
        Role(
            "rating",
            low=0.0,
            high=RATING_MAX,
            range_rule=f"rating is outside 0..{RATING_MAX:g}",
            aliases=("risk",),
        ),
        Role("rater", kind="text", required=False, aliases=("rater id", "clinician")),
        Role("role", kind="text", required=False, aliases=("answer role",)),
    ),
)


class RatingSetError(InputError):
    """The input cannot be read as a rating set at all (no valid row can be kept)."""


@dataclass(frozen=True)
class RowProblem:
    """One broken rule and the file lines (or sheet / frame rows) that break it."""

    rule: str
    lines: tuple[int, ...]
    where: str = "line"

    @property
    def message(self) -> str:
        """'rating is outside 0..4 in lines 3, 9'."""
        return f"{self.rule} in {name_lines(np.asarray(self.lines), self.where)}"


@dataclass(frozen=True)
class RatingSet:
    """A validated rating set.

    Attributes
    ----------
    frame : the valid rows, columns reference, estimate (mg/dL, float), rating (0..4, float)
        and, when given, rater (str); index = the row's file line (or sheet / frame row).
    problems : the broken rules, each with its lines (those rows are not in ``frame``).
    warnings : messages about rows kept or the file as a whole (unit, duplicates, sheets).
    name : where it came from.
    summary : "n rows read, k refused".
    unit : the glucose unit the source was read in.
    """

    frame: pd.DataFrame = field(repr=False)
    problems: tuple[RowProblem, ...] = ()
    warnings: tuple[str, ...] = ()
    name: str = ""
    summary: str = ""
    unit: str = "mg/dL"

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


def read_rating_set(
    source: str | os.PathLike | IO | pd.DataFrame,
    unit: str | None = None,
    name: str | None = None,
    sheet: str | None = None,
    limits: Limits | None = None,
) -> RatingSet:
    """Read and validate a rating set from a path, an uploaded file object or a DataFrame.

    Parameters
    ----------
    source : CSV/TSV (delimiter detected) or XLSX path or file-like; or a frame.
    unit : ``"mg/dL"`` or ``"mmol/L"``, the unit of reference and estimate. ``None``: named in
        the headers, else mg/dL unless the values look like mmol/L (refused, asking for the
        unit); a DataFrame is taken as mg/dL.
    name : file name for the format and for messages when ``source`` is a file object.
    sheet : the XLSX sheet (default the first).
    limits : input limits (default: at most 200,000 rows).

    Rules beyond the input layer's: a blank rater cell (in a file with a rater column) is
    named "unknown", with a warning; a row repeating an earlier row exactly is refused when there
    is a rater column; without one, repeats are kept and named in a warning (several raters may
    rate the same scenario alike). A test-retest answer (role ``repeat`` or ``retest``, as in a
    survey export) is not a repeat of the first answer: it is kept, and only refused when it
    repeats an earlier test-retest row. The role column is kept in the frame (a stored rating
    set reads back the same).

    Raises
    ------
    RatingSetError : unreadable or empty input, a required column missing, over a limit, or no
        valid row at all (the message lists the problems).
    """
    if isinstance(source, pd.DataFrame) and unit is None:
        unit = "mg/dL"
    try:
        table = read_table(
            source,
            RATING_SCHEMA,
            unit=unit,
            name=name,
            sheet=sheet,
            limits=limits or Limits(max_rows=MAX_ROWS),
            unit_option="unit",
        )
    except InputError as exc:
        raise RatingSetError(str(exc)) from exc
    where = table.where
    problems = [RowProblem(r.rule, tuple(int(n) for n in r.lines), where) for r in table.refused]
    warnings_ = list(table.notes)
    out = table.frame
    if "rater" in out:
        blank = (out["rater"] == "").to_numpy()
        if blank.any() and (out["rater"] == UNKNOWN_RATER).any():
            problems.append(
                RowProblem(
                    f"rater is blank (rule: name the rater; '{UNKNOWN_RATER}', the name blank "
                    "raters get, is already a rater's name)",
                    tuple(int(n) for n in out.index[blank]),
                    where,
                )
            )
            out = out[~blank]
        elif blank.any():
            out = out.assign(rater=out["rater"].where(~blank, UNKNOWN_RATER))
            warnings_.append(
                f"{table.source}: rater is blank in "
                f"{name_lines(out.index[blank].to_numpy(), where)}; these ratings are taken as"
                f" one rater named '{UNKNOWN_RATER}'"
            )
    repeats = _repeated_rows(out)
    if repeats.any() and "rater" in out:
        problems.append(
            RowProblem(
                "the row repeats an earlier row (same reference, estimate, rating and rater)",
                tuple(int(n) for n in out.index[repeats]),
                where,
            )
        )
        out = out[~repeats]
    elif repeats.any():
        warnings_.append(
            f"{table.source}: {name_lines(out.index[repeats].to_numpy(), where)} repeat an "
            "earlier row exactly; kept (add a rater column to tell raters apart)"
        )
    summary = f"{table.source}: {table.n_read:,} rows read, {table.n_read - len(out):,} refused"
    return RatingSet(
        out, tuple(problems), tuple(warnings_), table.source, summary, table.unit or "mg/dL"
    )


def _repeated_rows(frame: pd.DataFrame) -> NDArray[np.bool_]:
    """Rows that repeat an earlier row exactly. With a role column (a survey export), a
    test-retest answer (:data:`RETEST_ROLES`) is compared with the earlier test-retest answers
    only: the same answer given again on purpose is evidence, not a duplicate; every other row
    is compared as before, its role not counted."""
    if "role" not in frame:
        return frame.duplicated(keep="first").to_numpy()
    role = frame["role"].astype(str).str.strip().str.lower()
    retest = role.isin(RETEST_ROLES)
    key = frame.drop(columns="role").assign(retest=retest)
    return key.duplicated(keep="first").to_numpy()


def without_cut_last_rating(data: RatingSet, source: str | os.PathLike) -> RatingSet:
    """The rating set without the row of a last line that looks cut off (no final line break,
    fewer fields or characters than the lines above), refused by line in its report
    (:func:`~ranking_core.inputs.series.cut_last_line_of`)."""
    from ranking_core.inputs.series import cut_last_line_of

    cut = cut_last_line_of(source)
    if cut is None or cut[0] not in data.frame.index:
        return data
    line, rule = cut
    frame = data.frame.drop(index=line)
    problem = RowProblem(rule, (line,))
    if frame.empty:
        raise RatingSetError(f"{data.name}: no valid rating; {problem.message}")
    return dataclasses.replace(data, frame=frame, problems=(*data.problems, problem))
