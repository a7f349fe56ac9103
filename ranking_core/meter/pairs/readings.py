"""Paired meter (BGM) and reference (REF) glucose readings, read through the one input layer.

Columns (names matched case-insensitively, a unit suffix such as " (mmol/L)" allowed):

===  =====================================================================================
BGM  meter / sensor glucose; also ``meter``, ``meter glucose``, ``estimate``, ``measured``, ``cgm``,
     ``icgm``, ``sensor glucose``
REF  reference glucose; also ``reference``, ``reference glucose``, ``lab``, ``ysi``, ``comp``,
     ``comparator``
===  =====================================================================================

Optional columns: ``subject`` or ``sensor`` (pairs of one person or sensor are a cluster: the
acceptance bounds account for it) and ``reference_time`` / ``sensor_time`` (as written by
``riskgrid pair``: rate-of-change agreement).

Text (CSV / TSV / TXT) and XLSX files, uploads and DataFrames are read by
:func:`ranking_core.inputs.read_table`: every broken row is refused with its line and rule, the
valid rows are kept. Glucose is converted to mg/dL (``unit``; mmol/L × 18.016); a value above the
physical range (3000 mg/dL) is refused; negative values are kept, for the report counts them as the
SEG tool does. The SEG tool's tables read whole mg/dL: other values are rounded to the nearest
integer for them (half to even, like R's ``round`` used by the official SEG tool), and this is
reported; the acceptance standards judge the values as measured (``bgm_measured``,
``ref_measured``). A blank ``subject`` or ``sensor`` cell refuses its row, naming the line (the
bounds need every pair's cluster); so does a blank cell of the ``--by`` column. The ``--by``
column may hold at most :data:`MAX_GROUPS` distinct values (each group is judged by every
standard again), checked before any is judged.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import IO

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.inputs import (
    PHYSICAL_MAX_MGDL,
    InputError,
    Limits,
    Role,
    Schema,
    TableRead,
    read_table,
)
from ranking_core.inputs import name_lines as name_rows

__all__ = [
    "MAX_GROUPS",
    "OPTIONAL_COLUMNS",
    "PAIR_COLUMNS",
    "PAIR_SCHEMA",
    "MeterPairs",
    "PairsFileError",
    "check_groups",
    "name_rows",
    "pairs_from_frame",
    "read_pairs",
]

PAIR_COLUMNS = ("BGM", "REF")
# groups of --by: each is judged by every standard (about 20 ms each), so at most this many
MAX_GROUPS = 100
_RANGE = f"above {PHYSICAL_MAX_MGDL:g} mg/dL (outside the physical range)"
PAIR_SCHEMA = Schema(
    "meter pairs",
    (
        Role(
            "BGM",
            glucose=True,
            high=PHYSICAL_MAX_MGDL,
            range_rule=f"BGM is {_RANGE}",
            aliases=(
                "meter",
                "meter glucose",
                "estimate",
                "measured",
                "cgm",
                "icgm",
                "sensor glucose",
            ),
        ),
        Role(
            "REF",
            glucose=True,
            high=PHYSICAL_MAX_MGDL,
            range_rule=f"REF is {_RANGE}",
            aliases=("reference", "reference glucose", "lab", "ysi", "comp", "comparator"),
        ),
        # optional: clusters for the acceptance bounds, times for rate-of-change agreement
        Role("subject", kind="text", required=False, aliases=("patient", "participant")),
        Role(
            "sensor",
            kind="text",
            required=False,
            aliases=("sensor id", "sensorid", "sensor_id", "device"),
        ),
        Role("reference_time", kind="time", required=False, aliases=("reference time",)),
        Role("sensor_time", kind="time", required=False, aliases=("sensor time",)),
    ),
)
OPTIONAL_COLUMNS = ("subject", "sensor", "reference_time", "sensor_time")


class PairsFileError(InputError):
    """The file cannot give any pair (unreadable, empty, missing columns, no valid row)."""


@dataclass(frozen=True)
class MeterPairs:
    """Valid (BGM, REF) pairs in whole mg/dL and what was done to read them.

    Attributes
    ----------
    bgm, ref : (n,) float64 meter and reference glucose in mg/dL, rounded to integers (the SEG
        tool's tables).
    bgm_measured, ref_measured : the same as measured (mg/dL, not rounded): what the acceptance
        standards judge.
    rows : (n,) file line (text; the header is line 1 when nothing is above it) or sheet row of
        each pair.
    messages : the summary ("n rows read, k refused"), the refused rows by rule, the notes.
    source : the file name (for messages).
    unit : "line" (text files) or "row" (spreadsheets, frames), the word used for ``rows``.
    glucose_unit : the unit the file was read in ("mg/dL" or "mmol/L"); values are mg/dL.
    table : the input layer's full result (refusals, notes, summary).
    extra : the optional columns present (subject, sensor: str; reference_time, sensor_time:
        datetime64), one value per pair.
    """

    bgm: NDArray[np.float64] = field(repr=False)
    ref: NDArray[np.float64] = field(repr=False)
    rows: NDArray[np.intp] = field(repr=False)
    messages: tuple[str, ...] = ()
    source: str = ""
    unit: str = "row"
    glucose_unit: str = "mg/dL"
    table: TableRead | None = field(default=None, repr=False, compare=False)
    extra: dict[str, NDArray] = field(default_factory=dict, repr=False, compare=False)
    bgm_measured: NDArray[np.float64] | None = field(default=None, repr=False, compare=False)
    ref_measured: NDArray[np.float64] | None = field(default=None, repr=False, compare=False)
    group_column: str = ""

    @property
    def measured(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(REF, BGM) in mg/dL as measured."""
        ref = self.ref if self.ref_measured is None else self.ref_measured
        bgm = self.bgm if self.bgm_measured is None else self.bgm_measured
        return ref, bgm

    def __len__(self) -> int:
        return len(self.ref)

    @property
    def frame(self) -> pd.DataFrame:
        """The pairs as a DataFrame with columns BGM, REF, row."""
        return pd.DataFrame({"BGM": self.bgm, "REF": self.ref, "row": self.rows})


def _blank_cells(table: TableRead, group_column: str) -> tuple[TableRead, list[str]]:
    """Rows whose cluster (subject, sensor) or group cell is blank, refused by line."""
    names: list[str] = [k for k in ("subject", "sensor") if k in table.values]
    if group_column:
        names.append("group")
    blank = np.zeros(len(table.lines), dtype=bool)
    messages = []
    for name in names:
        cells = table.values[name]
        empty = np.array([not str(c).strip() for c in cells], dtype=bool)
        if empty.any():
            column = group_column if name == "group" else name
            messages.append(
                f"{table.source}: {column} is blank in "
                f"{name_rows(table.lines[empty], table.where)}; those pairs are refused (every "
                f"pair needs its {column} for the bounds and groups)"
            )
            blank |= empty
    if not blank.any():
        return table, messages
    keep = ~blank
    values = {k: v[keep] for k, v in table.values.items()}
    return replace(table, values=values, lines=table.lines[keep]), messages


def check_groups(groups: NDArray, column: str, source: str = "") -> None:
    """Refuse more than :data:`MAX_GROUPS` distinct values in the ``--by`` column, in one
    sentence naming the column and the limit (checked before any group is judged)."""
    count = len(pd.unique(pd.Series(groups, dtype=object)))
    if count > MAX_GROUPS:
        where = f"{source}: " if source else ""
        raise PairsFileError(
            f"{where}--by {column} has {count:,} distinct values, more than the limit of "
            f"{MAX_GROUPS:,} groups (each group is judged by every standard; group by "
            "population, site or lot)"
        )


def _pairs(table: TableRead, group_column: str = "") -> MeterPairs:
    whole = {}  # each column rounded to whole mg/dL (half to even); the same array if it was
    table, blank_messages = _blank_cells(table, group_column)
    if group_column:
        check_groups(table.values["group"], group_column, table.source)
    messages = table.messages() + blank_messages
    if not len(table.lines):
        raise PairsFileError(f"{table.source}: no pair left to judge after refusing blank cells")
    if table.unit == "mmol/L":
        messages.append(
            f"{table.source}: glucose rounded to whole mg/dL after the conversion for the SEG "
            "tool's tables (the acceptance standards judge the values as measured)"
        )
    for name in ("BGM", "REF"):
        values = table.values[name]
        rounded = np.rint(values)
        fractional = values != rounded
        whole[name] = rounded if fractional.any() else values
        if table.unit != "mmol/L" and fractional.any():
            first = values[fractional][0]
            messages.append(
                f"{table.source}: {name} is not a whole mg/dL in "
                f"{name_rows(table.lines[fractional], table.where)}; rounded to the nearest "
                f"integer for the SEG tool's tables (e.g. {first:g} → {np.rint(first):g}); the "
                "acceptance standards judge the values as measured"
            )
    return MeterPairs(
        bgm=whole["BGM"],
        ref=whole["REF"],
        rows=table.lines,
        messages=tuple(messages),
        source=table.source,
        unit=table.where,
        glucose_unit=table.unit or "mg/dL",
        table=table,
        extra={k: table.values[k] for k in (*OPTIONAL_COLUMNS, "group") if k in table.values},
        bgm_measured=table.values["BGM"],
        ref_measured=table.values["REF"],
        group_column=group_column,
    )


def pairs_from_frame(
    frame: pd.DataFrame,
    source: str = "",
    first_row: int = 2,
    unit: str = "row",
    glucose_unit: str | None = "mg/dL",
) -> MeterPairs:
    """Check a table with BGM and REF columns (any case) and keep its valid rows.

    ``first_row`` is the number given to the frame's first row in messages and ``unit`` ("line"
    or "row") the word for it; ``glucose_unit`` is the unit of the values (``None``: detected,
    see :func:`read_pairs`).
    """
    try:
        table = read_table(
            frame.reset_index(drop=True),
            PAIR_SCHEMA,
            unit=glucose_unit,
            name=source or "pairs",
            first_row=first_row,
            unit_option="glucose_unit",
        )
    except InputError as exc:
        raise PairsFileError(str(exc)) from exc
    return _pairs(replace(table, where=unit))


def read_pairs(
    path: str | os.PathLike | IO[bytes],
    name: str | None = None,
    unit: str | None = None,
    sheet: str | None = None,
    limits: Limits | None = None,
    unit_option: str = "--unit",
    by: str | None = None,
) -> MeterPairs:
    """Read BGM/REF pairs from a CSV, TSV or XLSX file or an uploaded file object.

    ``name`` gives an upload's file name (for the format and messages); ``unit`` the glucose unit
    ("mg/dL" or "mmol/L"; ``None``: named in the headers, else mg/dL unless the values look like
    mmol/L, which is refused); ``sheet`` the XLSX sheet (default the first). Raises
    :class:`PairsFileError` when no pair can be read; otherwise returns the valid pairs in mg/dL
    with the refused rows and notes as messages. ``by`` names a further text column (population,
    site, lot) whose values group the pairs for the acceptance standards; it is kept under
    ``extra["group"]``.
    """
    try:
        table = read_table(
            path,
            _schema_with(by),
            unit=unit,
            name=name,
            sheet=sheet,
            limits=limits,
            unit_option=unit_option,
        )
    except InputError as exc:
        raise PairsFileError(str(exc)) from exc
    return _pairs(table, by or "")


def _schema_with(by: str | None) -> Schema:
    """The pairs schema, with the ``--by`` column as a required text role named "group"."""
    if not by:
        return PAIR_SCHEMA
    taken = {a.lower() for r in PAIR_SCHEMA.roles for a in (r.name, *r.aliases)}
    if by.strip().lower() in taken:
        raise PairsFileError(
            f"--by {by!r}: that column is read as {by.strip()!r} already; name a column such as "
            "population, site or lot"
        )
    return replace(
        PAIR_SCHEMA, roles=(*PAIR_SCHEMA.roles, Role("group", kind="text", aliases=(by.strip(),)))
    )
