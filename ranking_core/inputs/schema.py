"""What a table reader needs and gives: the schema of roles and typed fields, the limits, the
errors, and the result (:class:`TableRead`: kept values, refused rows grouped by rule, notes).

Limits on bytes, data rows and cell length (:class:`Limits`): beyond them an input is refused at
once, before anything large is allocated.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.validation import counted, describe_rows

__all__ = [
    "QUOTE_CHARS",
    "Field",
    "HeaderNotFound",
    "InputError",
    "Limits",
    "RefusedRows",
    "Role",
    "Schema",
    "TableRead",
    "cell_text",
    "name_lines",
    "quote",
    "with_limits",
]

QUOTE_CHARS = 80  # at most this many characters of a bad cell are shown in a message


class InputError(ValueError):
    """The input cannot give any row (unreadable, over a limit, no header, no valid row)."""


class HeaderNotFound(InputError):
    """No line of the input names the schema's required columns."""


@dataclass(frozen=True)
class Limits:
    """Input limits; beyond them the input is refused at once.

    Attributes
    ----------
    max_bytes : size of a text file or upload, or of an XLSX archive (default 256 MiB).
    max_rows : data rows (blank rows not counted; default 2,000,000).
    max_cell : characters in one cell (default 10,000).
    max_xlsx_part : declared uncompressed size of the worksheet read and of the shared-string
        table of an XLSX workbook (default 16 MiB, about 200,000 rows of two numbers); checked
        before parsing.
    max_xlsx_total : declared uncompressed size of all parts of an XLSX archive (default 1 GiB).
    max_xlsx_seconds : time allowed for streaming one sheet (default 30 s); beyond it the
        workbook is refused (save the sheet as CSV, which reads far faster).
    header_lines : lines searched for the header (default 50).
    """

    max_bytes: int = 256 * 2**20
    max_rows: int = 2_000_000
    max_cell: int = 10_000
    max_xlsx_part: int = 16 * 2**20
    max_xlsx_total: int = 2**30
    max_xlsx_seconds: float = 30.0
    header_lines: int = 50


@dataclass(frozen=True)
class Field:
    """A typed output column.

    ``kind``: "number" (float64), "text" (str) or "time" (datetime64[ns]; UTC when the file gives
    offsets). ``date_orders``: the date orders a time may be written in: "ymd" (ISO 8601),
    "dmy", "mdy" (day/month order decided per file). ``low``/``high``: the physical range
    (inclusive; mg/dL for glucose), refused outside with ``range_rule`` (default "outside
    low..high"). ``glucose``: converted from the file's unit to mg/dL before the range check.
    ``choices``: the values a text field may hold (compared case-insensitively, surrounding
    spaces removed; kept as spelled here), any other refused by row.
    """

    name: str
    kind: str = "number"
    low: float | None = None
    high: float | None = None
    glucose: bool = False
    range_rule: str = ""
    date_orders: tuple[str, ...] = ("ymd",)
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Role(Field):
    """A column found in the header by one of its ``aliases`` (compared case-insensitively, with
    surrounding spaces and a unit suffix such as " (mg/dL)" removed)."""

    aliases: tuple[str, ...] = ()
    required: bool = True


@dataclass(frozen=True)
class Schema:
    """What a reader needs from a table.

    ``roles`` are found in the header. ``fields`` are the typed columns of the result (default: the
    roles). ``prepare``, when given, maps a chunk's role cells (name → array of str) to a mask of
    the rows that carry data and the field cells (name → array of str); rows outside the mask are
    skipped with ``skip_note`` (e.g. event rows of a sensor export), not refused.
    """

    name: str
    roles: tuple[Role, ...]
    fields: tuple[Field, ...] | None = None
    prepare: (
        Callable[
            [dict[str, NDArray[np.object_]]],
            tuple[NDArray[np.bool_], dict[str, NDArray[np.object_]]],
        ]
        | None
    ) = None
    skip_note: str = ""

    @property
    def typed(self) -> tuple[Field, ...]:
        return self.roles if self.fields is None else self.fields


@dataclass(frozen=True)
class RefusedRows:
    """The rows refused under one rule: their file lines (or sheet rows) and one bad cell."""

    rule: str
    lines: NDArray[np.int64] = field(repr=False)
    example: str = ""

    def message(self, where: str = "line") -> str:
        """'BGM is not a number (e.g. 'abc') in lines 3, 9; refused'."""
        example = f" (e.g. {self.example})" if self.example else ""
        return f"{self.rule}{example} in {name_lines(self.lines, where)}; refused"


def name_lines(lines: NDArray[np.integer], where: str = "line") -> str:
    """'lines 3, 17' or 'row 4' (at most 10 listed, then 'and k more')."""
    return describe_rows(np.asarray(lines)).replace("row", where, 1)


@dataclass(frozen=True)
class TableRead:
    """The result of :func:`read_table`.

    Attributes
    ----------
    values : per field of the schema, the kept rows' values: float64 (glucose in mg/dL), object
        (text) or datetime64[ns] (time).
    lines : (n,) file line (text; header line counts) or sheet row of each kept row; for a
        DataFrame, its position plus ``first_row``.
    refused : the refused rows, grouped by rule.
    notes : what was done to read the input (lines skipped above the header, unit, decimal mark,
        sheet, rows skipped by the schema).
    source : the file's name.
    where : "line" (text files) or "row" (workbooks and frames): the word for ``lines``.
    unit : the glucose unit the file was read in (``None`` without glucose fields).
    n_read : data rows read (blank rows and rows skipped by the schema not counted).
    time_offset : the UTC offsets the file's times carried ("+01:00" or "-05:00, -04:00"; ""
        without offsets), each time then converted to UTC.
    """

    values: dict[str, NDArray[Any]] = field(repr=False)
    lines: NDArray[np.int64] = field(repr=False)
    refused: tuple[RefusedRows, ...] = ()
    notes: tuple[str, ...] = ()
    source: str = ""
    where: str = "line"
    unit: str | None = None
    n_read: int = 0
    time_offset: str | None = None

    def __len__(self) -> int:
        return len(self.lines)

    @property
    def n_refused(self) -> int:
        return int(sum(len(r.lines) for r in self.refused))

    @property
    def frame(self) -> pd.DataFrame:
        """The kept rows, one column per field, indexed by their line (or row)."""
        out = pd.DataFrame(self.values, index=pd.Index(self.lines, name=self.where))
        return out

    def summary(self) -> str:
        """'pairs.csv: 120 rows read, 3 refused'."""
        return f"{self.source}: {counted(self.n_read, 'row')} read, {self.n_refused:,} refused"

    def messages(self) -> list[str]:
        """The summary, each group of refused rows, then the notes."""
        return [self.summary()] + [r.message(self.where) for r in self.refused] + list(self.notes)


def cell_text(value: object, boolean: tuple[str, str] = ("FALSE", "TRUE")) -> str:
    """A cell's value as the text the collector reads: None blank, a bool as ``boolean``
    (false, true), a float by ``repr`` (every digit kept), a date or time in ISO 8601,
    anything else by ``str``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return boolean[value]
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    return str(value)


def quote(cell: str, limit: int = QUOTE_CHARS) -> str:
    """A cell for a message: at most ``limit`` characters, its length said when cut."""
    text = str(cell)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} characters)"


def with_limits(limits: Limits | None, **changes: int | None) -> Limits:
    """``limits`` (default :class:`Limits`) with the given fields replaced (``None`` kept)."""
    base = limits or Limits()
    return replace(base, **{k: v for k, v in changes.items() if v is not None})
