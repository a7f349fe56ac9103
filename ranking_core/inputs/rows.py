"""What a format reader gives the table collector: the header found (each role's column) and the
data rows in chunks, plus the rows it refused itself (a format's entry in the registry,
:class:`~ranking_core.inputs.formats.Reader`, names its reader, which takes a
:class:`ReadRequest`).

A header line is the first line (within :attr:`~ranking_core.inputs.Limits.header_lines`) whose
cells name every required role of the schema, by the role's name or one of its aliases (any case,
surrounding spaces and a unit suffix such as " (mg/dL)" removed); two columns naming one role
refuse the file, naming both.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.inputs.schema import (
    HeaderNotFound,
    InputError,
    Limits,
    RefusedRows,
    Schema,
    quote,
)

__all__ = [
    "CHUNK_ROWS",
    "Chunk",
    "Header",
    "ReadRequest",
    "Refusals",
    "Rows",
    "frame_rows",
    "match_header",
    "missing_header",
]

CHUNK_ROWS = 100_000
_UNIT_IN_NAME = re.compile(r"^(.*?)[\s_]*[(\[]?\s*(mg/dl|mmol/l)\s*[)\]]?$")


def _normalise(name: object) -> tuple[str, str | None]:
    """A header cell → (lower-case name without unit suffix, unit named or None)."""
    text = " ".join(str(name).replace("\ufeff", "").split()).lower()
    match = _UNIT_IN_NAME.match(text)
    if match and match.group(1):
        return match.group(1), "mg/dL" if match.group(2) == "mg/dl" else "mmol/L"
    return text, None


@dataclass
class Header:
    index: dict[str, int]  # role name → column
    width: int
    unit: str | None  # a glucose unit named in the glucose roles' headers


def match_header(cells: Sequence[object], schema: Schema, label: str) -> Header | None:
    """The roles found in one candidate header line, or None when a required one is missing."""
    found: dict[str, list[int]] = {}
    units: dict[str, str] = {}
    names = [_normalise(c) for c in cells]
    for role in schema.roles:
        aliases = {a.lower() for a in (role.name, *role.aliases)}
        hits = [i for i, (n, _) in enumerate(names) if n in aliases]
        if hits:
            found[role.name] = hits
            unit = names[hits[0]][1]
            if role.glucose and unit:
                units[role.name] = unit
    if any(r.required and r.name not in found for r in schema.roles):
        return None
    for name, hits in found.items():
        if len(hits) > 1:
            both = " and ".join(quote(str(cells[i])) for i in hits)
            raise InputError(
                f"{label}: columns {both} both name {name} (rule: one column per "
                "role); rename or remove one"
            )
    if len(set(units.values())) > 1:
        raise InputError(
            f"{label}: the glucose columns name different units "
            f"({', '.join(f'{k} in {v}' for k, v in units.items())})"
        )
    return Header({k: v[0] for k, v in found.items()}, len(cells), next(iter(units.values()), None))


def missing_header(
    cells: Sequence[object], schema: Schema, label: str, first: str
) -> HeaderNotFound:
    """The error for a header that names not every required role: which are missing, the names
    accepted for each, and the first line as it reads."""
    names = {_normalise(c)[0] for c in cells}
    missing = [
        r.name
        for r in schema.roles
        if r.required and not names & {a.lower() for a in (r.name, *r.aliases)}
    ]
    aliases = "; ".join(
        f"{r.name}: {', '.join((r.name, *r.aliases))}" for r in schema.roles if r.required
    )
    return HeaderNotFound(
        f"{label}: missing column(s) {', '.join(missing)}; no header line names "
        f"them (accepted names, any case — {aliases}). The first line reads "
        f"{quote(first)}"
    )


@dataclass
class Chunk:
    """Up to :data:`CHUNK_ROWS` data rows: as rows (lists of fields), or, when every row is known
    to have the header's width, as columns (lists of cells)."""

    lines: Sequence[int]
    rows: list[list[str]] | None = None
    columns: list[list[str]] | None = None
    numbers: NDArray[np.float64] | None = None  # (width, rows): every cell a plain finite number


@dataclass
class Rows:
    """Header and data rows of one input, in chunks."""

    header: Header
    chunks: Iterator[Chunk]
    where: str
    notes: list[str]
    point_is_decimal: bool  # the delimiter or the cell types fix the decimal mark as '.'


def frame_rows(frame: pd.DataFrame, schema: Schema, label: str, first_row: int) -> Rows:
    """A DataFrame as rows: its columns are the header, its cells text (floats by ``repr``, a
    missing value empty), its rows numbered from ``first_row``."""
    header = match_header(list(frame.columns), schema, label)
    if header is None:
        raise missing_header(
            list(frame.columns), schema, label, ", ".join(map(str, frame.columns)) or "(no columns)"
        )

    def cell(value: object) -> str:
        if (
            value is None
            or value is pd.NA
            or value is pd.NaT
            or (isinstance(value, float) and np.isnan(value))
        ):
            return ""
        if isinstance(value, float | np.floating):
            return repr(float(value))
        if isinstance(value, pd.Timestamp):
            return value.isoformat()
        return str(value)

    def chunks() -> Iterator[Chunk]:
        for start in range(0, len(frame), CHUNK_ROWS):
            part = frame.iloc[start : start + CHUNK_ROWS]
            rows = [[cell(v) for v in row] for row in part.itertuples(index=False)]
            yield Chunk(range(start + first_row, start + first_row + len(part)), rows=rows)

    return Rows(header, chunks(), "row", [], True)


class Refusals:
    """Refused lines grouped by rule, in the order the rules were first met."""

    def __init__(self) -> None:
        self.groups: dict[str, tuple[list[NDArray[np.int64]], str]] = {}
        self.unsplit = 0  # rows refused by the reader before they reach a chunk

    def add(
        self, rule: str, lines: Sequence[int] | NDArray, example: str, unsplit: bool = False
    ) -> None:
        lines = np.asarray(lines, dtype=np.int64)
        if lines.size == 0:
            return
        self.unsplit += lines.size if unsplit else 0
        if rule in self.groups:
            self.groups[rule][0].append(lines)
        else:
            self.groups[rule] = ([lines], example)

    def result(self) -> tuple[RefusedRows, ...]:
        return tuple(
            RefusedRows(rule, np.sort(np.concatenate(parts)), example)
            for rule, (parts, example) in self.groups.items()
        )


@dataclass(frozen=True)
class ReadRequest:
    """What :func:`~ranking_core.inputs.read_table` hands a format reader: the input's bytes
    (seekable, closed by the caller), the schema, the input's name for messages, the limits, the
    refusals of rows the reader cannot split (``refuse.add(…, unsplit=True)``) and the sheet
    asked for (None: the first; only for formats with sheets)."""

    binary: IO[bytes]
    schema: Schema
    label: str
    limits: Limits
    refuse: Refusals
    sheet: str | None = None
