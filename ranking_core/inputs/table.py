"""The one table reader: text (CSV / TSV / TXT) and XLSX files, uploads and DataFrames → typed
columns of the valid rows, the refused rows with their line numbers and rules, and a summary.

A *schema* names the columns a reader needs (its roles, each with documented aliases) and their
kinds (number, text, time). Reading goes in chunks of :data:`CHUNK_ROWS` rows: only the parsed
values are kept, so memory grows with the number of valid numbers, not with the file's text.

Rules (each refusal names its file lines, or spreadsheet rows, and the rule):

* line ends: LF, CRLF, CR CR LF (a run of CRs followed by LF is one line end) and CR alone;
  lines are numbered as editors (and ``awk``) number them;
* encodings: UTF-8 with or without BOM, UTF-16 with BOM; anything else refuses the file, naming the
  encoding it looks like;
* delimiter ``,`` ``;`` or tab, found together with the header: the first line (within
  :attr:`Limits.header_lines`) whose fields name every required role; lines above it are skipped
  and reported; two columns naming one role refuse the file, naming both;
* rows: wrong number of fields, a NUL byte, a control character or bidi override in a text cell
  (:mod:`ranking_core.inputs.text`), a cell longer than :attr:`Limits.max_cell`, an empty,
  non-numeric or non-finite number, an ambiguous decimal mark, a value outside the role's physical
  range: the row is refused, the other rows are kept;
* decimal comma: accepted in ``;`` and tab files; a value with one mark followed by exactly three
  digits (``1.021``, ``1,021``) is refused as ambiguous (a thousands separator?) unless the file
  shows, in another value, that this mark is its decimal mark and the other mark is not used
  (evidence is collected per chunk, the first chunk being the first 100,000 rows);
* times: a date (year first, or day and month first), a time of day to the minute or finer, an
  optional AM/PM and an optional UTC offset; each time is converted to UTC with its own offset
  (−12:00..+14:00); partial dates, dates without a time, impossible dates, years outside
  :data:`YEARS` are refused; the day/month order of dates written with the year last is decided
  from the whole file (a number above 12 can only be a day) or given, else the file is refused
  as ambiguous; a file has offsets on every time or on none;
* limits on bytes, data rows and cell length (:class:`Limits`); beyond them the file is refused at
  once, before anything large is allocated.
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import operator
import os
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.inputs.text import UNSAFE, UNSAFE_RULE
from ranking_core.inputs.units import UnitError, check_unit, resolve_unit, to_mgdl
from ranking_core.validation import counted, describe_rows

__all__ = [
    "ACCEPTED_FORMATS",
    "CHUNK_ROWS",
    "QUOTE_CHARS",
    "Field",
    "HeaderNotFound",
    "InputError",
    "Limits",
    "RefusedRows",
    "Role",
    "Schema",
    "TableRead",
    "name_lines",
    "open_binary",
    "quote",
    "read_table",
    "read_text",
    "with_limits",
]

CHUNK_ROWS = 100_000
CHUNK_CHARS = 1 << 22  # text is read in chunks of about 4 million characters
QUOTE_CHARS = 80  # at most this many characters of a bad cell are shown in a message
ACCEPTED_FORMATS = (
    "CSV, TSV or TXT text (UTF-8 with or without BOM, or UTF-16 with BOM; "
    "delimiter comma, semicolon or tab) and XLSX workbooks (.xlsx, .xlsm)"
)
TEXT_SUFFIXES = frozenset({".csv", ".tsv", ".txt", ".tab", ""})
XLSX_SUFFIXES = frozenset({".xlsx", ".xlsm"})
DELIMITERS = (",", ";", "\t")
# characters str.splitlines also breaks at (the csv module does not)
_OTHER_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
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
_UNIT_IN_NAME = re.compile(r"^(.*?)[\s_]*[(\[]?\s*(mg/dl|mmol/l)\s*[)\]]?$")


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
    """

    name: str
    kind: str = "number"
    low: float | None = None
    high: float | None = None
    glucose: bool = False
    range_rule: str = ""
    date_orders: tuple[str, ...] = ("ymd",)


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


def quote(cell: str, limit: int = QUOTE_CHARS) -> str:
    """A cell for a message: at most ``limit`` characters, its length said when cut."""
    text = str(cell)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} characters)"


# -- opening --------------------------------------------------------------------------------------


def _label(source: object, name: str | None) -> str:
    if name:
        return str(name)
    if isinstance(source, str | os.PathLike):
        return str(source)
    if isinstance(source, pd.DataFrame):
        return "table"
    return str(getattr(source, "name", "") or "upload")


def open_binary(
    source: str | os.PathLike | IO[bytes] | bytes, label: str, limits: Limits | None = None
) -> IO[bytes]:
    """A seekable binary stream of at most ``limits.max_bytes`` bytes (checked before reading
    a path; an upload is read up to one byte past the limit)."""
    limits = limits or Limits()
    too_big = (
        f"{label}: larger than the {limits.max_bytes:,}-byte limit (split the file or "
        "raise the limit)"
    )
    if isinstance(source, bytes | bytearray | memoryview):
        if len(source) > limits.max_bytes:
            raise InputError(too_big)
        return io.BytesIO(bytes(source))
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        try:
            if path.is_dir():
                raise InputError(f"{label}: is a folder, not a file")
            if path.stat().st_size > limits.max_bytes:
                raise InputError(too_big)
            return path.open("rb")
        except FileNotFoundError as exc:
            raise InputError(f"{label}: file not found") from exc
        except OSError as exc:
            raise InputError(f"{label}: cannot be opened ({exc.strerror})") from exc
    data = source.read(limits.max_bytes + 1)
    if isinstance(data, str):
        data = data.encode("utf-8")
    if len(data) > limits.max_bytes:
        raise InputError(too_big)
    return io.BytesIO(data)


def _guess_encoding(sample: bytes) -> str:
    if sample.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32"
    even, odd = sample[0::2], sample[1::2]
    if sample and max(even.count(0), odd.count(0)) > 0.3 * len(sample) / 2:
        return "UTF-16 without a byte-order mark"
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        if len(sample) == 65536 and exc.start >= len(sample) - 4:  # a character cut by the sample
            return "UTF-8"
        return "an 8-bit code page such as Windows-1252 or Latin-1 (not UTF-8)"
    return "UTF-8"


def read_text(
    source: str | os.PathLike | IO[bytes] | bytes,
    name: str | None = None,
    limits: Limits | None = None,
) -> str:
    """The whole input as text (UTF-8 ± BOM or UTF-16 with BOM, at most ``limits.max_bytes``;
    a run of CRs before LF read as LF, so that lines count as editors count them);
    :class:`InputError` otherwise, naming the encoding."""
    label = _label(source, name)
    binary = open_binary(source, label, limits)
    try:
        text, encoding = _text(binary, label)
        return _LineEnds(text).read()
    except UnicodeDecodeError as exc:
        raise _decode_error(label, encoding, exc) from exc
    finally:
        binary.close()


def _decode_error(label: str, encoding: str, exc: UnicodeDecodeError) -> InputError:
    bad = exc.object[exc.start : exc.start + 1].hex().upper()
    return InputError(
        f"{label}: not valid {encoding} text (byte 0x{bad}; it looks like "
        f"{_guess_encoding(bytes(exc.object))}); accepted: UTF-8 with or "
        "without BOM, UTF-16 with BOM (save the file as UTF-8)"
    )


class _LineEnds:
    """A text stream with line ends as editors count them: a run of CRs followed by LF (LF,
    CRLF, CR CR LF) is one line end, given as LF; a CR not followed by LF ends a line by itself
    (old Mac files). Reads like a file: ``read``, ``readline`` and line iteration."""

    def __init__(self, inner: IO[str]) -> None:
        self.inner = inner
        self.buf = ""  # text read from ``inner`` and not given out yet

    def _more(self) -> bool:
        data = self.inner.read(1 << 16)
        self.buf += data
        return bool(data)

    def read(self, size: int = -1) -> str:
        data = self.buf + self.inner.read(-1 if size < 0 else max(size - len(self.buf), 0))
        self.buf = ""
        if data.endswith("\r"):  # the run of CRs may go on to its LF
            while (tail := self.inner.read(1)) == "\r":
                data += tail
            if tail == "\n":
                data += tail
            else:
                self.buf = tail
        return _CRS_LF.sub("\n", data) if "\r" in data else data

    def readline(self, limit: int = -1) -> str:
        found = None
        while (
            (found := _ANY_END.search(self.buf)) is None
            and not (0 <= limit <= len(self.buf))
            and self._more()
        ):
            pass
        if found is None or 0 <= limit <= found.start():
            end = len(self.buf) if limit < 0 else min(limit, len(self.buf))
            line, self.buf = self.buf[:end], self.buf[end:]
            return line
        i = found.start()
        j = i + 1
        if self.buf[i] == "\r":
            while True:
                while j < len(self.buf) and self.buf[j] == "\r":
                    j += 1
                if j < len(self.buf) or not self._more():
                    break
            if j < len(self.buf) and self.buf[j] == "\n":
                line, self.buf = self.buf[:i] + "\n", self.buf[j + 1 :]
                return line
            j = i + 1
        line, self.buf = self.buf[:j], self.buf[j:]
        return line

    def __iter__(self) -> Iterator[str]:
        rest = ""
        while block := self.read(1 << 16):
            lines = io.StringIO(rest + block, newline="").readlines()
            rest = "" if lines[-1].endswith(("\n", "\r")) else lines.pop()
            yield from lines
        if rest:
            yield rest


_CRS_LF = re.compile("\r+\n")
_ANY_END = re.compile("[\r\n]")


def _text(binary: IO[bytes], label: str) -> tuple[IO[str], str]:
    """A text stream (universal newlines kept for the csv module) and the encoding's name."""
    head = binary.read(65536)
    binary.seek(0)
    if head.startswith(codecs.BOM_UTF8):
        return io.TextIOWrapper(binary, "utf-8-sig", newline=""), "UTF-8"
    guess = _guess_encoding(head)
    if guess == "UTF-32":
        raise InputError(
            f"{label}: the text is UTF-32; accepted: UTF-8 with or without BOM, "
            "UTF-16 with BOM (save the file as UTF-8)"
        )
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return io.TextIOWrapper(binary, "utf-16", newline=""), "UTF-16"
    if guess != "UTF-8":
        raise InputError(
            f"{label}: the text looks like {guess}; accepted: UTF-8 with or "
            "without BOM, UTF-16 with BOM (save the file as UTF-8)"
        )
    return io.TextIOWrapper(binary, "utf-8", newline=""), "UTF-8"


# -- header ---------------------------------------------------------------------------------------


def _normalise(name: object) -> tuple[str, str | None]:
    """A header cell → (lower-case name without unit suffix, unit named or None)."""
    text = " ".join(str(name).replace("\ufeff", "").split()).lower()
    match = _UNIT_IN_NAME.match(text)
    if match and match.group(1):
        return match.group(1), "mg/dL" if match.group(2) == "mg/dl" else "mmol/L"
    return text, None


@dataclass
class _Header:
    index: dict[str, int]  # role name → column
    width: int
    unit: str | None  # a glucose unit named in the glucose roles' headers


def _match_header(cells: Sequence[object], schema: Schema, label: str) -> _Header | None:
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
    for role, hits in found.items():
        if len(hits) > 1:
            both = " and ".join(quote(cells[i]) for i in hits)
            raise InputError(
                f"{label}: columns {both} both name {role} (rule: one column per "
                "role); rename or remove one"
            )
    if len(set(units.values())) > 1:
        raise InputError(
            f"{label}: the glucose columns name different units "
            f"({', '.join(f'{k} in {v}' for k, v in units.items())})"
        )
    return _Header(
        {k: v[0] for k, v in found.items()}, len(cells), next(iter(units.values()), None)
    )


def _missing(cells: Sequence[object], schema: Schema, label: str, first: str) -> HeaderNotFound:
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


# -- rows -----------------------------------------------------------------------------------------


@dataclass
class _Chunk:
    """Up to :data:`CHUNK_ROWS` data rows: as rows (lists of fields), or, when every row is known
    to have the header's width, as columns (lists of cells)."""

    lines: Sequence[int]
    rows: list[list[str]] | None = None
    columns: list[list[str]] | None = None
    numbers: NDArray[np.float64] | None = None  # (width, rows): every cell a plain finite number


@dataclass
class _Rows:
    """Header and data rows of one input, in chunks."""

    header: _Header
    chunks: Iterator[_Chunk]
    where: str
    notes: list[str]
    point_is_decimal: bool  # the delimiter or the cell types fix the decimal mark as '.'


def _text_rows(
    text: IO[str], schema: Schema, label: str, limits: Limits, refuse: _Refusals
) -> _Rows:
    lines: list[str] = []
    header = None
    delimiter = ","
    for _ in range(limits.header_lines):
        line = text.readline(1 << 20)
        if not line:
            break
        if len(line) >= 1 << 20 and not line.endswith(("\n", "\r")):
            raise InputError(
                f"{label}: line {len(lines) + 1} is longer than 1 MiB before any "
                "header line was found"
            )
        lines.append(line)
        if not line.strip():
            continue
        for delimiter in DELIMITERS:
            cells = next(csv.reader([line], delimiter=delimiter), [])
            header = _match_header(cells, schema, label)
            if header is not None:
                break
        if header is not None:
            break
    if not any(line.strip() for line in lines):
        raise InputError(f"{label}: the file is empty")
    if header is None:
        first = next(line for line in lines if line.strip()).rstrip("\r\n")
        best = max((next(csv.reader([first], delimiter=d), []) for d in DELIMITERS), key=len)
        raise _missing(best, schema, label, first)
    header_line = len(lines)
    notes = []
    above = [i + 1 for i, line in enumerate(lines[:-1]) if line.strip()]
    if above:
        notes.append(
            f"{label}: {name_lines(np.asarray(above))} above the header skipped "
            f"(title or comment; the first reads {quote(lines[above[0] - 1].strip())})"
        )
    if delimiter != ",":
        notes.append(f"{label}: delimiter {'semicolon' if delimiter == ';' else 'tab'}")
    width = header.width
    # no valid row is longer (role cells ≤ max_cell, others ≤ the csv module's field limit)
    max_line = (max(limits.max_cell, csv.field_size_limit()) + 1) * width
    wrong_fields = f"the row has the wrong number of fields (the header has {width})"

    def too_long(line: str, number: int) -> bool:
        if len(line) <= max_line:
            return False
        refuse.add(
            f"the line is longer than {max_line:,} characters", [number], quote(line), unsplit=True
        )
        return True

    def quoted(lines: Iterable[str], first: int) -> Iterator[_Chunk]:
        """The csv module's reading (quoted fields may hold delimiters and line breaks)."""
        guarded = (
            "\n" if too_long(line, number) else line for number, line in enumerate(lines, first)
        )
        reader = csv.reader(guarded, delimiter=delimiter)
        rows: list[list[str]] = []
        numbers: list[int] = []
        wrong: list[int] = []
        example = ""
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                refuse.add(
                    f"the line cannot be split into fields ({exc})",
                    [reader.line_num + first - 1],
                    "",
                    unsplit=True,
                )
                continue
            if not any(row) or "".join(row).isspace():  # a blank row
                continue
            if len(row) != width:  # refused at once: a wide row is never kept in memory
                example = example or quote(delimiter.join(row))
                wrong.append(reader.line_num + first - 1)
                continue
            rows.append(row)
            numbers.append(reader.line_num + first - 1)
            if len(rows) == CHUNK_ROWS:
                yield _Chunk(numbers, rows=rows)
                rows, numbers = [], []
        refuse.add(wrong_fields, wrong, example, unsplit=True)
        if rows:
            yield _Chunk(numbers, rows=rows)

    numeric = (
        schema.prepare is None
        and schema.fields is None  # optional roles absent: no bar
        and all(r.kind == "number" for r in schema.roles if r.name in header.index)
    )

    def chunks() -> Iterator[_Chunk]:
        first = header_line + 1  # the file line of the next line read
        while True:
            block = text.read(CHUNK_CHARS)
            if not block:
                return
            if not block.endswith("\n"):
                block += text.readline()  # whole lines only
            values = _plain_block(block, delimiter, width, limits.max_cell) if numeric else None
            if values is not None:
                yield _Chunk(range(first, first + values.shape[1]), numbers=values)
                first += values.shape[1]
                continue
            lines = io.StringIO(block, newline="").readlines()  # as the file's readlines()
            del block
            if max(map(len, lines)) > max_line:  # refuse over-long lines before any copy
                lines = [
                    "\n" if too_long(line, number) else line
                    for number, line in enumerate(lines, first)
                ]
            block = "".join(lines)
            if '"' in block:  # from here on, the csv module reads
                yield from quoted(itertools.chain(lines, text), first)
                return
            bare = (
                block.splitlines()
                if _OTHER_BREAKS.search(block) is None
                else [line.rstrip("\r\n") for line in lines]
            )
            del block
            numbers = range(first, first + len(bare))
            first += len(bare)
            counts = list(map(operator.methodcaller("count", delimiter), bare))
            if set(counts) == {width - 1}:
                # plain rows of the header's width: split the whole chunk at once
                cells = delimiter.join(bare).split(delimiter)
                columns = [cells[k::width] for k in range(width)]
                first_cells = columns[0]
                if all(first_cells) and not any(map(str.isspace, first_cells)):
                    yield _Chunk(numbers, columns=columns)  # no blank row possible
                    continue
            kept: list[int] = []
            wrong: list[int] = []
            for i, (line, count) in enumerate(zip(bare, counts, strict=True)):
                if too_long(line, numbers[i]):
                    continue
                if count == width - 1:
                    kept.append(i)
                elif line.replace(delimiter, "").strip():  # not a blank row
                    wrong.append(i)
            if wrong:
                refuse.add(
                    wrong_fields, [numbers[i] for i in wrong], quote(bare[wrong[0]]), unsplit=True
                )
            rows = [bare[i].split(delimiter) for i in kept]
            rows_kept = [
                (i, r)
                for i, r in zip(kept, rows, strict=True)
                if any(r) and not "".join(r).isspace()
            ]
            if rows_kept:
                yield _Chunk([numbers[i] for i, _ in rows_kept], rows=[r for _, r in rows_kept])

    return _Rows(header, chunks(), "line", notes, delimiter == ",")


def _frame_rows(frame: pd.DataFrame, schema: Schema, label: str, first_row: int) -> _Rows:
    header = _match_header(list(frame.columns), schema, label)
    if header is None:
        raise _missing(
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

    def chunks() -> Iterator[_Chunk]:
        for start in range(0, len(frame), CHUNK_ROWS):
            part = frame.iloc[start : start + CHUNK_ROWS]
            rows = [[cell(v) for v in row] for row in part.itertuples(index=False)]
            yield _Chunk(range(start + first_row, start + first_row + len(part)), rows=rows)

    return _Rows(header, chunks(), "row", [], True)


# -- refusals and parsing -------------------------------------------------------------------------


class _Refusals:
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


@dataclass
class _Decimal:
    """Evidence of the file's decimal mark, from values that cannot be thousands separators."""

    point: bool
    comma: bool = False

    def see(self, cells: pd.Series) -> None:
        grouped = cells.str.fullmatch(_GROUPED)
        numeric = cells.str.fullmatch(_NUMBER.pattern) & ~grouped
        self.point |= bool((numeric & cells.str.contains(".", regex=False)).any())
        self.comma |= bool((numeric & cells.str.contains(",", regex=False)).any())


_PLAIN = re.compile(r"[^0-9.eE+\-\n]")


def _plain_numbers(cells: NDArray[np.object_], decimal: _Decimal) -> NDArray[np.float64] | None:
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


def _plain_block(
    block: str, delimiter: str, width: int, max_cell: int
) -> NDArray[np.float64] | None:
    """The fast path of text files: a block of whole lines of plain numbers, parsed by pandas' C
    reader (correctly rounded, like ``float``), as a (width, lines) array; None unless every line
    has ``width`` cells and every cell is a finite number of at most ``max_cell`` characters
    (then the full rules read the block, with the same result).

    Plain: digits, minus signs, delimiters, line ends (LF or CRLF) and, when the delimiter is a
    comma (the decimal mark is then the point), points. pandas reads every token of these
    characters that is not a number ('', '-', '.', '1-2', '1.2.3') as text, which sends the block
    to the full rules, so no blank, text, NaN, NUL, spaced or grouped cell passes; a blank line
    (which pandas skips) changes the number of rows and is caught.
    """
    if not block.isascii():
        return None
    raw = block.encode("ascii")
    crlf = b"\r" in raw and raw.count(b"\r") == raw.count(b"\r\n")  # Windows ends, no bare CR
    if raw.translate(
        None,
        b"0123456789-\n" + delimiter.encode() + b"\r" * crlf + (b"." if delimiter == "," else b""),
    ):
        return None
    rows = raw.count(b"\n") + (not raw.endswith(b"\n"))
    codes = np.frombuffer(raw, np.uint8)
    # the longest cell: bounded by the longest line, exact (cells between delimiters) when needed
    longest = (
        int(np.diff(np.flatnonzero(codes == ord("\n")), prepend=-1, append=len(raw)).max()) - 1
    )
    if longest > 15:
        cuts = np.flatnonzero((codes == ord("\n")) | (codes == ord(delimiter)))
        longest = int(np.diff(cuts, prepend=-1, append=len(raw)).max()) - 1
    del codes
    if longest > max_cell:
        return None
    try:
        # numbers of ≤ 15 characters (≤ 15 digits) pandas' own parser rounds correctly, and
        # integers among them are exact in int64 and in float64 (< 2⁵³); longer ones go through
        # Python's strtod
        # low_memory=False: one pass over the block, so no warning of types mixed between
        # pandas' internal chunks (such a block goes to the full rules anyway)
        frame = pd.read_csv(
            io.BytesIO(raw),
            sep=delimiter,
            header=None,
            engine="c",
            na_filter=False,
            low_memory=False,
            **({} if longest <= 15 else {"dtype": np.float64, "float_precision": "round_trip"}),
        )
    except (ValueError, pd.errors.ParserError):
        return None
    if frame.shape != (rows, width) or not all(d.kind in "if" for d in frame.dtypes):
        return None  # a blank line skipped, or a cell that is not a number
    values = np.empty((width, rows))
    for k, (_, column) in enumerate(frame.items()):
        values[k] = column.to_numpy()
        if column.dtype.kind == "f" and not np.isfinite(values[k]).all():
            return None
    return values


def _numbers(
    cells: pd.Series, name: str, decimal: _Decimal
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


# a date (year first, or day and month first in either order), a time of day to the minute or
# finer, an optional AM/PM and an optional UTC offset
_TIME = re.compile(
    r"^(?:(?P<y1>\d{4})(?P<s1>[-/.])(?P<a1>\d{1,2})(?P=s1)(?P<b1>\d{1,2})"
    r"|(?P<a2>\d{1,2})(?P<s2>[-/.])(?P<b2>\d{1,2})(?P=s2)(?P<y2>\d{4}))"
    r"(?:[Tt]|\s+)(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:[.,](?P<f>\d{1,9}))?)?"
    r"\s*(?P<ampm>[AaPp]\.?[Mm]\.?)?"
    r"\s*(?P<off>[Zz]|[+-]\d{2}(?::?\d{2})?)?$"
)
_DATE_ONLY = re.compile(r"^\d{4}(?:[-/.]\d{1,2}){0,2}$|^\d{1,2}[-/.]\d{1,2}[-/.]\d{4}$")
_ORDER_NAMES = {
    "ymd": "YYYY-MM-DD",
    "dmy": "DD-MM-YYYY (day first)",
    "mdy": "MM-DD-YYYY (month first)",
}
YEARS = (1900, 2200)  # years accepted: far from the limits of nanosecond times (1677..2262)
OFFSETS = (-12 * 60, 14 * 60)  # UTC offsets in use, in minutes (−12:00..+14:00)
_NO_OFFSET = np.iinfo(np.int64).min
# the columns of a chunk's parsed times: year, the two day/month numbers in text order, the
# year's place (0 first, 1 last), hour (24-hour), minute, second, nanoseconds, offset (minutes)
_Y, _A, _B, _LAST, _H, _MI, _S, _NS, _OFF = range(9)


_GROUP_NAMES = (
    "last",
    "y",
    "a",
    "b",
    "h",
    "mi",
    "s",
    "ns",
    "ampm",
    "aware",
    "sign",
    "off_h",
    "off_m",
)


def _time_groups(cells: NDArray[np.object_]) -> tuple[NDArray[np.bool_], dict[str, NDArray]]:
    """Which cells match :data:`_TIME`, and their parts as integers (0 where not matched):
    last (the year written last), y, a, b (the day/month numbers in text order), h, mi, s, ns,
    ampm (0 none, 1 AM, 2 PM), aware (an offset given), sign, off_h, off_m.

    Cells laid out exactly like the first one (same length, digits and separators in the same
    places; the usual export) are read from a byte matrix at once; the others by the regular
    expression."""
    n = len(cells)
    matched = np.zeros(n, dtype=bool)
    groups = {k: np.zeros(n, dtype=np.int64) for k in _GROUP_NAMES}
    rest = np.ones(n, dtype=bool)
    first = _TIME.match(cells[0]) if n else None
    if first is not None and cells[0].isascii():
        fast = _fixed_layout(cells, first)
        if fast is not None:
            rows, values = fast
            matched[rows] = True
            rest[rows] = False
            for k, v in values.items():
                groups[k][rows] = v
    if rest.any():
        parts = pd.Series(cells[rest], dtype=object).str.extract(_TIME)
        found = parts["h"].notna().to_numpy()
        matched[rest] = found

        def number(name: str) -> NDArray[np.int64]:
            return parts[name].fillna("0").to_numpy(dtype=str).astype(np.int64)

        last = parts["y2"].notna().to_numpy()
        offset = parts["off"].fillna("")
        digits = offset.str[1:].str.replace(":", "", regex=False)  # '' for Z
        ampm = parts["ampm"].str.upper().str[0].fillna("").to_numpy(dtype=str)
        values = {
            "last": last,
            "y": np.where(last, number("y2"), number("y1")),
            "a": np.where(last, number("a2"), number("a1")),
            "b": np.where(last, number("b2"), number("b1")),
            "h": number("h"),
            "mi": number("mi"),
            "s": number("s"),
            "ns": parts["f"].fillna("").str.ljust(9, "0").to_numpy(dtype=str).astype(np.int64),
            "ampm": (ampm == "A") + 2 * (ampm == "P"),
            "aware": (offset != "").to_numpy(),
            "sign": np.where(offset.str.startswith("-").to_numpy(dtype=bool), -1, 1),
            "off_h": digits.str[:2].replace("", "0").to_numpy(dtype=str).astype(np.int64),
            "off_m": digits.str[2:4].replace("", "0").to_numpy(dtype=str).astype(np.int64),
        }
        for k, v in values.items():
            groups[k][rest] = v
    return matched, groups


def _fixed_layout(
    cells: NDArray[np.object_], first: re.Match[str]
) -> tuple[NDArray[np.bool_], dict[str, NDArray[np.int64]]] | None:
    """The rows laid out like ``first`` (see :func:`_time_groups`), with their parts."""
    width = len(first.string)
    lengths = np.fromiter(map(len, cells), np.int64, len(cells))
    same = lengths == width
    try:
        raw = "".join(cells[same]).encode("ascii")
    except UnicodeEncodeError:
        return None
    codes = np.frombuffer(raw, np.uint8).reshape(-1, width)
    template = np.frombuffer(first.string.encode("ascii"), np.uint8)
    free = np.zeros(width, dtype=bool)  # positions checked by kind, not by equality
    digit = np.zeros(width, dtype=bool)
    spans = {}
    for name in ("y1", "a1", "b1", "a2", "b2", "y2", "h", "mi", "s", "f"):
        if first.group(name) is not None:
            start, end = first.span(name)
            spans[name] = (start, end)
            digit[start:end] = True
    ok = np.ones(len(codes), dtype=bool)
    if digit.any():
        ok &= ((codes[:, digit] >= 48) & (codes[:, digit] <= 57)).all(axis=1)
    free |= digit
    values: dict[str, NDArray[np.int64]] = {}
    if first.group("ampm") is not None:
        at = first.start("ampm")
        free[at] = True
        letter = codes[:, at] | 0x20  # lower case
        ok &= (letter == ord("a")) | (letter == ord("p"))
        values["ampm"] = np.where(letter == ord("p"), 2, 1)
    offset = first.group("off")
    if offset is not None and offset not in ("Z", "z"):
        at = first.start("off")
        free[at] = True
        ok &= (codes[:, at] == ord("+")) | (codes[:, at] == ord("-"))
        values["sign"] = np.where(codes[:, at] == ord("-"), -1, 1)
        body = [at + 1 + i for i, c in enumerate(offset[1:]) if c != ":"]
        digit_off = np.zeros(width, dtype=bool)
        digit_off[body] = True
        ok &= ((codes[:, digit_off] >= 48) & (codes[:, digit_off] <= 57)).all(axis=1)
        free |= digit_off
        spans["off_h"] = (body[0], body[0] + 2)
        if len(body) == 4:
            spans["off_m"] = (body[2], body[4 - 1] + 1)
    ok &= (codes[:, ~free] == template[~free]).all(axis=1)
    codes = codes[ok]

    def number(start: int, end: int) -> NDArray[np.int64]:
        powers = 10 ** np.arange(end - start - 1, -1, -1, dtype=np.int64)
        return (codes[:, start:end].astype(np.int64) - 48) @ powers

    last = "y2" in spans
    for key, (name_first, name_last) in {
        "y": ("y1", "y2"),
        "a": ("a1", "a2"),
        "b": ("b1", "b2"),
    }.items():
        values[key] = number(*spans[name_last if last else name_first])
    for key in ("h", "mi", "s", "off_h", "off_m"):
        if key in spans:
            values[key] = number(*spans[key])
    if "f" in spans:
        start, end = spans["f"]
        values["ns"] = number(start, end) * 10 ** (9 - (end - start))
    values["last"] = np.full(len(codes), last, dtype=np.int64)
    values["aware"] = np.full(len(codes), offset is not None, dtype=np.int64)
    if "ampm" in values:
        values["ampm"] = values["ampm"][ok]
    if "sign" in values:
        values["sign"] = values["sign"][ok]
    else:
        values["sign"] = np.ones(len(codes), dtype=np.int64)
    return np.flatnonzero(same)[ok], values


def _clock_parts(
    cells: pd.Series, field_: Field
) -> tuple[NDArray[np.int64], list[tuple[str, NDArray[np.bool_]]]]:
    """Stripped time cells → (n, 9) integer parts (see the column names above) and the broken
    rules. The date's day/month order is decided later, from the whole file (:class:`_Clock`)."""
    n = len(cells)
    empty = (cells == "").to_numpy()
    matched, g = _time_groups(cells.to_numpy(dtype=object))
    out = np.zeros((n, 9), dtype=np.int64)
    last = g["last"].astype(bool)
    out[:, _Y], out[:, _A], out[:, _B], out[:, _LAST] = g["y"], g["a"], g["b"], last
    hour = g["h"]
    out[:, _MI], out[:, _S], out[:, _NS] = g["mi"], g["s"], g["ns"]
    twelve = g["ampm"] > 0
    bad_clock = np.where(twelve, (hour < 1) | (hour > 12), hour > 23)
    out[:, _H] = np.where(twelve, hour % 12 + 12 * (g["ampm"] == 2), hour)
    bad_clock |= (out[:, _MI] > 59) | (out[:, _S] > 59)
    aware = g["aware"].astype(bool)
    off_m = g["off_m"]
    minutes = g["sign"] * (g["off_h"] * 60 + off_m)
    out[:, _OFF] = np.where(aware, minutes, _NO_OFFSET)
    bad_offset = aware & ((off_m > 59) | (minutes < OFFSETS[0]) | (minutes > OFFSETS[1]))
    bad_year = (out[:, _Y] < YEARS[0]) | (out[:, _Y] > YEARS[1])
    orders = ", ".join(_ORDER_NAMES[o] for o in field_.date_orders)
    partial = ~empty & ~matched & cells.str.match(_DATE_ONLY).to_numpy(dtype=bool, na_value=False)
    not_time = ~empty & ~matched & ~partial
    if "ymd" not in field_.date_orders:
        not_time |= matched & ~last
    if not set(field_.date_orders) - {"ymd"}:
        not_time |= matched & last
    ok = matched & ~not_time
    name = field_.name
    return out, [
        (f"{name} is empty", empty),
        (
            f"{name} is a date without a time of day, or a partial date (rule: a date and a time, "
            "at least to the minute)",
            partial,
        ),
        (
            f"{name} is not a time (date {orders}, then hh:mm[:ss], optional AM/PM and UTC offset)",
            not_time,
        ),
        (
            f"{name} has no valid time of day (hours 0..23, or 1..12 with AM/PM; minutes and "
            "seconds 0..59)",
            ok & bad_clock,
        ),
        (f"{name} has a UTC offset outside -12:00..+14:00", ok & ~bad_clock & bad_offset),
        (
            f"{name} is outside the years {YEARS[0]}..{YEARS[1]}",
            ok & ~bad_clock & ~bad_offset & bad_year,
        ),
    ]


@dataclass
class _Clock:
    """The file's day/month order: given (``dayfirst`` True/False) or decided from the whole
    file's times when every time is read (``option`` names how to give it)."""

    dayfirst: bool | None = None
    option: str = "--dayfirst or --monthfirst"

    def finish(
        self, parts: NDArray[np.int64], lines: NDArray[np.int64], field_: Field, label: str
    ) -> tuple[NDArray[np.datetime64], list[tuple[str, NDArray[np.bool_]]], str, list[str]]:
        """The instants (UTC when the file gives offsets), the rules broken, the offsets seen
        ("" for none) and notes. InputError when the order cannot be decided or when the file
        mixes times with and without offsets."""
        name = field_.name
        last = parts[:, _LAST] == 1
        a, b = parts[:, _A], parts[:, _B]
        day_first = last & (a > 12) & (b <= 12)
        month_first = last & (b > 12) & (a <= 12)
        notes = []
        dayfirst = self.dayfirst
        if dayfirst is None and last.any():
            if day_first.any() and month_first.any():
                raise InputError(
                    f"{label}: {name} has the day first in line "
                    f"{lines[day_first][0]} ({a[day_first][0]} > 12) and the month first in "
                    f"line {lines[month_first][0]} ({b[month_first][0]} > 12) (rule: one "
                    f"day/month order per file); give the order with {self.option} to refuse "
                    "the lines that do not fit it"
                )
            if day_first.any() or month_first.any():
                dayfirst = bool(day_first.any())
                decides = day_first if dayfirst else month_first
                notes.append(
                    f"{label}: {name} read {_ORDER_NAMES['dmy' if dayfirst else 'mdy']}"
                    f", as line {lines[decides][0]} shows (a day "
                    f"{(a if dayfirst else b)[decides][0]} > 12)"
                )
            elif (last & (a != b)).any():
                shown = lines[last & (a != b)][0]
                raise InputError(
                    f"{label}: {name} is ambiguous: every date fits both day-first and "
                    f"month-first order (no number above 12 decides it; e.g. line {shown}); "
                    f"give the order with {self.option}"
                )
        elif dayfirst is not None and last.any():
            notes.append(f"{label}: {name} read {'day' if dayfirst else 'month'} first (as given)")
        month = np.where(last & bool(dayfirst), b, a)
        day = np.where(last & bool(dayfirst), a, b)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dates = pd.to_datetime(
                pd.DataFrame(
                    {
                        "year": parts[:, _Y],
                        "month": month,
                        "day": day,
                        "hour": parts[:, _H],
                        "minute": parts[:, _MI],
                        "second": parts[:, _S],
                    }
                ),
                errors="coerce",
            )
        values = dates.to_numpy(dtype="datetime64[ns]") + parts[:, _NS].astype("timedelta64[ns]")
        wrong_order = last & (month > 12)
        invalid = np.isnat(values) & ~wrong_order
        order = "day first" if dayfirst else "month first"
        offset = parts[:, _OFF]
        aware = offset != _NO_OFFSET
        rules = [
            (f"{name} does not fit the file's day/month order ({order})", wrong_order),
            (f"{name} is not a valid date", invalid),
        ]
        kept = ~wrong_order & ~invalid
        if (aware & kept).any() and (~aware & kept).any():
            first_with = lines[aware & kept][0]
            first_without = lines[~aware & kept][0]
            raise InputError(
                f"{label}: {name} has a UTC offset in line {first_with} and none "
                f"in line {first_without} (rule: offsets on every time, or on none)"
            )
        seen = ""
        if (aware & kept).any():
            values = values - np.where(aware, offset, 0).astype("timedelta64[m]")
            distinct = np.unique(offset[aware & kept])
            seen = ", ".join(_offset_text(int(m)) for m in distinct)
            notes.append(f"{label}: {name} in UTC (each time's offset applied: {seen})")
        return values, rules, seen, notes


def _offset_text(minutes: int) -> str:
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


# -- reading --------------------------------------------------------------------------------------


def read_table(
    source: str | os.PathLike | IO[bytes] | bytes | pd.DataFrame,
    schema: Schema,
    *,
    unit: str | None = None,
    name: str | None = None,
    sheet: str | None = None,
    limits: Limits | None = None,
    first_row: int = 0,
    unit_option: str = "--unit",
    dayfirst: bool | None = None,
    order_option: str = "--dayfirst or --monthfirst",
) -> TableRead:
    """Read a table for ``schema`` (see the module notes for every rule).

    Parameters
    ----------
    source : a path, an uploaded file object, bytes, or a DataFrame (its columns are the header).
    unit : glucose unit of the file, "mg/dL" or "mmol/L"; ``None``: taken from the headers when
        they name one, else mg/dL unless the values look like mmol/L (then refused).
    name : the file name for the format and messages (uploads).
    sheet : the XLSX sheet to read (default the first).
    limits : :class:`Limits` (default limits when ``None``).
    first_row : number of a DataFrame's first row in messages.
    unit_option : how messages name the unit option ("--unit" on the command line).
    dayfirst : the day/month order of dates written with the year last (True: day first);
        ``None``: decided from the whole file (a number above 12 decides), else refused as
        ambiguous, naming ``order_option``.

    Raises
    ------
    InputError : the input gives no row (unreadable, over a limit, no header, no valid row).
    """
    limits = limits or Limits()
    label = _label(source, name)
    try:
        unit = check_unit(unit)
    except UnitError as exc:
        raise InputError(f"{label}: {exc}") from exc
    refuse = _Refusals()
    clock = _Clock(dayfirst, order_option)
    if isinstance(source, pd.DataFrame):
        rows = _frame_rows(source, schema, label, first_row)
        return _collect(rows, schema, label, unit, limits, refuse, unit_option, clock)
    suffix = Path(label).suffix.lower()
    if suffix not in TEXT_SUFFIXES | XLSX_SUFFIXES:
        old = " (the legacy Excel format; save it as .xlsx or CSV)" if suffix == ".xls" else ""
        raise InputError(
            f"{label}: {suffix} files are not accepted{old}; accepted: {ACCEPTED_FORMATS}"
        )
    binary = open_binary(source, label, limits)
    try:
        head = binary.read(8)
        binary.seek(0)
        if head.startswith(b"\xd0\xcf\x11\xe0"):
            raise InputError(
                f"{label}: a legacy Excel (.xls) or other OLE file; accepted: {ACCEPTED_FORMATS}"
            )
        if suffix in XLSX_SUFFIXES or head.startswith(b"PK\x03\x04"):
            from ranking_core.inputs.xlsx import xlsx_rows

            with xlsx_rows(binary, label, limits, sheet) as (sheet_rows, sheet_note):
                rows = _sheet_header(sheet_rows, schema, label, limits, sheet_note)
                return _collect(rows, schema, label, unit, limits, refuse, unit_option, clock)
        if sheet is not None:
            raise InputError(f"{label}: --sheet applies to XLSX workbooks; this is text")
        text, encoding = _text(binary, label)
        try:
            rows = _text_rows(_LineEnds(text), schema, label, limits, refuse)
            if encoding != "UTF-8":
                rows.notes.append(f"{label}: read as {encoding}")
            return _collect(rows, schema, label, unit, limits, refuse, unit_option, clock)
        except UnicodeDecodeError as exc:
            raise _decode_error(label, encoding, exc) from exc
    finally:
        binary.close()


def _sheet_header(
    sheet_rows: Iterator[tuple[int, list[str]]],
    schema: Schema,
    label: str,
    limits: Limits,
    sheet_note: str,
) -> _Rows:
    above: list[int] = []
    header = None
    first_cells: list[str] = []
    for number, cells in sheet_rows:
        if not any(c.strip() for c in cells):
            continue
        first_cells = first_cells or cells
        header = _match_header(cells, schema, label)
        if header is not None:
            break
        above.append(number)
        if len(above) >= limits.header_lines:
            break
    if header is None:
        if not first_cells:
            raise InputError(f"{label}: the sheet is empty")
        raise _missing(first_cells, schema, label, ", ".join(c for c in first_cells if c))
    notes = [sheet_note] if sheet_note else []
    if above:
        notes.append(
            f"{label}: {name_lines(np.asarray(above), 'row')} above the header skipped "
            "(title or comment)"
        )
    width = header.width

    def chunks() -> Iterator[_Chunk]:
        rows: list[list[str]] = []
        numbers: list[int] = []
        for number, cells in sheet_rows:
            if not any(c.strip() for c in cells):
                continue
            # a sheet pads rows to its widest one: trailing empty cells are not fields
            last = max(i for i, c in enumerate(cells) if c.strip()) + 1
            rows.append(
                cells[: max(last, width)]
                if last > width
                else cells[:width] + [""] * (width - len(cells))
            )
            numbers.append(number)
            if len(rows) == CHUNK_ROWS:
                yield _Chunk(numbers, rows=rows)
                rows, numbers = [], []
        if rows:
            yield _Chunk(numbers, rows=rows)

    return _Rows(header, chunks(), "row", notes, True)


def _collect(
    rows: _Rows,
    schema: Schema,
    label: str,
    unit: str | None,
    limits: Limits,
    refuse: _Refusals,
    unit_option: str,
    clock: _Clock,
) -> TableRead:
    header, where = rows.header, rows.where
    typed = tuple(
        f
        for f in schema.typed  # an optional role absent from the header is left out
        if not (isinstance(f, Role) and f in schema.roles and f.name not in header.index)
    )
    decimal = _Decimal(point=rows.point_is_decimal)
    parts: dict[str, list[NDArray[Any]]] = {f.name: [] for f in typed}
    kept_lines: list[NDArray[np.int64]] = []
    n_read = n_skipped = 0
    for chunk in rows.chunks:
        n = len(chunk.lines)
        n_read += n
        if n_read + refuse.unsplit > limits.max_rows:
            raise InputError(
                f"{label}: more than {limits.max_rows:,} data rows (the limit; "
                "split the file or raise the limit)"
            )
        lines = (
            np.arange(chunk.lines.start, chunk.lines.stop, dtype=np.int64)
            if isinstance(chunk.lines, range)
            else np.asarray(chunk.lines, dtype=np.int64)
        )
        if chunk.numbers is not None:  # plain numbers, already checked
            for f in typed:
                parts[f.name].append(chunk.numbers[header.index[f.name]])
            kept_lines.append(lines)
            continue
        bad = np.zeros(n, dtype=bool)
        if chunk.rows is not None:
            width = np.fromiter(map(len, chunk.rows), dtype=np.int64, count=n)
            bad = width != header.width
            if bad.any():
                first = int(np.flatnonzero(bad)[0])
                refuse.add(
                    f"the row has the wrong number of fields (the header has {header.width})",
                    lines[bad],
                    quote(",".join(chunk.rows[first])),
                )
        cells: dict[str, NDArray[np.object_]] = {}
        for role in schema.roles:
            if role.name not in header.index:
                cells[role.name] = np.full(n, "", dtype=object)
                continue
            k = header.index[role.name]
            column = np.empty(n, dtype=object)
            column[:] = (
                chunk.columns[k]
                if chunk.columns is not None
                else [row[k] if len(row) > k else "" for row in chunk.rows]
            )
            joined = "".join(column)
            if "\x00" in joined:
                nul = np.fromiter(("\x00" in c for c in column), bool, len(column)) & ~bad
                if nul.any():
                    refuse.add(
                        f"{role.name} contains a NUL byte", lines[nul], quote(column[nul][0])
                    )
                    bad |= nul
            if max(map(len, column), default=0) > limits.max_cell:
                long = (
                    np.fromiter((len(c) > limits.max_cell for c in column), bool, len(column))
                    & ~bad
                )
                if long.any():
                    refuse.add(
                        f"{role.name} is longer than {limits.max_cell:,} characters",
                        lines[long],
                        quote(column[long][0]),
                    )
                    bad |= long
            cells[role.name] = column
        keep = ~bad
        if schema.prepare is not None:
            data, cells = schema.prepare(cells)
            n_skipped += int((keep & ~data).sum())
            keep &= data
        lines = lines[keep]
        chunk_values: dict[str, NDArray[Any]] = {}
        bad = np.zeros(len(lines), dtype=bool)
        raw = {f.name: cells[f.name][keep] for f in typed}
        fast = {f.name: _plain_numbers(raw[f.name], decimal) for f in typed if f.kind == "number"}
        series = {
            f.name: pd.Series(raw[f.name], dtype=object).str.strip()
            for f in typed
            if fast.get(f.name) is None
        }
        for f in typed:
            if f.kind == "number" and fast[f.name] is None:
                decimal.see(series[f.name])
        for f in typed:
            if fast.get(f.name) is not None:
                values, rules = fast[f.name], []
            elif f.kind == "number":
                values, rules = _numbers(series[f.name], f.name, decimal)
            elif f.kind == "time":
                values, rules = _clock_parts(series[f.name], f)
            else:
                values = series[f.name].to_numpy(dtype=object)
                rules = [
                    (
                        f"{f.name} {UNSAFE_RULE}",
                        series[f.name].str.contains(UNSAFE).to_numpy(dtype=bool, na_value=False),
                    )
                ]
            for rule, mask in rules:
                mask = mask & ~bad
                if mask.any():
                    cell = series[f.name][mask].iloc[0]
                    refuse.add(rule, lines[mask], quote(cell) if cell else "")
                    bad |= mask
            chunk_values[f.name] = values
        for f in typed:
            parts[f.name].append(chunk_values[f.name][~bad])
        kept_lines.append(lines[~bad])
    n_read += refuse.unsplit - n_skipped
    if n_read == 0:
        raise InputError(f"{label}: the table has a header but no data rows")
    if not kept_lines:  # every row was refused by the reader
        raise InputError(
            f"{label}: no valid row. " + " ".join(r.message(where) for r in refuse.result())
        )
    values = {f.name: np.concatenate(parts.pop(f.name)) for f in typed}
    lines = np.concatenate(kept_lines)
    del kept_lines
    notes = list(rows.notes)
    if n_skipped:
        notes.append(f"{label}: {n_skipped:,} rows skipped: {schema.skip_note}")
    if decimal.comma and not decimal.point:
        notes.append(f"{label}: decimal comma")
    file_unit = None
    glucose = [f for f in typed if f.glucose]
    if glucose:
        try:
            file_unit = resolve_unit(
                [values[f.name] for f in glucose], unit, header.unit, label, unit_option
            )
        except UnitError as exc:
            raise InputError(str(exc)) from exc
        for f in glucose:
            values[f.name] = to_mgdl(values[f.name], file_unit)
        if file_unit != "mg/dL":
            notes.append(f"{label}: glucose read in {file_unit} and converted to mg/dL")
    bad = np.zeros(len(lines), dtype=bool)
    for f in typed:
        if f.kind != "number" or (f.low is None and f.high is None):
            continue
        v = values[f.name]
        if v.size == 0 or (
            (f.low is None or v.min() >= f.low) and (f.high is None or v.max() <= f.high)
        ):
            continue  # every value in range: no mask needed
        out = ((v < f.low) if f.low is not None else False) | (
            (v > f.high) if f.high is not None else False
        )
        out = np.asarray(out) & ~bad
        if out.any():
            rule = f.range_rule or (
                f"{f.name} is outside {f.low:g}..{f.high:g}" + (" mg/dL" if f.glucose else "")
            )
            refuse.add(rule, lines[out], quote(f"{v[out][0]:g}"))
            bad |= out
    if bad.any():
        values = {k: v[~bad] for k, v in values.items()}
        lines = lines[~bad]
    offset = None
    for f in typed:
        if f.kind != "time":
            continue
        values[f.name], rules, offset, clock_notes = clock.finish(values[f.name], lines, f, label)
        notes.extend(clock_notes)
        bad = np.zeros(len(lines), dtype=bool)
        for rule, mask in rules:
            mask = mask & ~bad
            if mask.any():
                refuse.add(rule, lines[mask], "")
                bad |= mask
        if bad.any():
            values = {k: v[~bad] for k, v in values.items()}
            lines = lines[~bad]
    result = TableRead(
        values, lines, refuse.result(), tuple(notes), label, where, file_unit, n_read, offset
    )
    if len(lines) == 0:
        raise InputError(f"{label}: no valid row. " + " ".join(result.messages()[1:]))
    return result


def with_limits(limits: Limits | None, **changes: int | None) -> Limits:
    """``limits`` (default :class:`Limits`) with the given fields replaced (``None`` kept)."""
    base = limits or Limits()
    return replace(base, **{k: v for k, v in changes.items() if v is not None})
