"""The one table reader: text (CSV / TSV / TXT) and XLSX files, uploads and DataFrames → typed
columns of the valid rows, the refused rows with their line numbers and rules, and a summary.

A *schema* names the columns a reader needs (its roles, each with documented aliases) and their
kinds (number, text, time). Reading goes in chunks of :data:`CHUNK_ROWS` rows: only the parsed
values are kept, so memory grows with the number of valid numbers, not with the file's text.

Rules (each refusal names its file lines, or spreadsheet rows, and the rule):

* encodings: UTF-8 with or without BOM, UTF-16 with BOM; anything else refuses the file, naming the
  encoding it looks like;
* delimiter ``,`` ``;`` or tab, found together with the header: the first line (within
  :attr:`Limits.header_lines`) whose fields name every required role; lines above it are skipped
  and reported; two columns naming one role refuse the file, naming both;
* rows: wrong number of fields, a NUL byte, a cell longer than :attr:`Limits.max_cell`, an empty,
  non-numeric or non-finite number, an ambiguous decimal mark, a value outside the role's physical
  range: the row is refused, the other rows are kept;
* decimal comma: accepted in ``;`` and tab files; a value with one mark followed by exactly three
  digits (``1.021``, ``1,021``) is refused as ambiguous (a thousands separator?) unless the file
  shows, in another value, that this mark is its decimal mark and the other mark is not used
  (evidence is collected per chunk, the first chunk being the first 100,000 rows);
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

from ranking_core.inputs.units import UnitError, check_unit, resolve_unit, to_mgdl
from ranking_core.validation import describe_rows

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
ACCEPTED_FORMATS = ("CSV, TSV or TXT text (UTF-8 with or without BOM, or UTF-16 with BOM; "
                    "delimiter comma, semicolon or tab) and XLSX workbooks (.xlsx, .xlsm)")
TEXT_SUFFIXES = frozenset({".csv", ".tsv", ".txt", ".tab", ""})
XLSX_SUFFIXES = frozenset({".xlsx", ".xlsm"})
DELIMITERS = (",", ";", "\t")
# characters str.splitlines also breaks at (the csv module does not)
_OTHER_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:[eE][+-]?\d+)?")
_GROUPED = r"[+-]?\d{1,3}[.,]\d{3}"  # one mark, exactly three digits after: 1.021 or 1,021
_NOT_FINITE = frozenset({"nan", "-nan", "+nan", "na", "n/a", "#n/a", "null", "none", "inf",
                         "-inf", "+inf", "infinity", "-infinity", "+infinity", "#num!", "#div/0!",
                         "#value!"})
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
    offsets). ``low``/``high``: the physical range (inclusive; mg/dL for glucose), refused outside
    with ``range_rule`` (default "outside low..high"). ``glucose``: converted from the file's unit
    to mg/dL before the range check.
    """

    name: str
    kind: str = "number"
    low: float | None = None
    high: float | None = None
    glucose: bool = False
    range_rule: str = ""
    time_formats: tuple[str, ...] = ("ISO8601",)


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
    prepare: Callable[[dict[str, NDArray[np.object_]]],
                      tuple[NDArray[np.bool_], dict[str, NDArray[np.object_]]]] | None = None
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
    time_offset : the UTC offset the file's times carried ("+01:00"; "" without offsets), the
        times then being in UTC.
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
        return f"{self.source}: {self.n_read:,} rows read, {self.n_refused:,} refused"

    def messages(self) -> list[str]:
        """The summary, each group of refused rows, then the notes."""
        return ([self.summary()] + [r.message(self.where) for r in self.refused]
                + list(self.notes))


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


def open_binary(source: str | os.PathLike | IO[bytes] | bytes, label: str,
                limits: Limits | None = None) -> IO[bytes]:
    """A seekable binary stream of at most ``limits.max_bytes`` bytes (checked before reading
    a path; an upload is read up to one byte past the limit)."""
    limits = limits or Limits()
    too_big = (f"{label}: larger than the {limits.max_bytes:,}-byte limit (split the file or "
               "raise the limit)")
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


def read_text(source: str | os.PathLike | IO[bytes] | bytes, name: str | None = None,
              limits: Limits | None = None) -> str:
    """The whole input as text (UTF-8 ± BOM or UTF-16 with BOM, at most ``limits.max_bytes``);
    :class:`InputError` otherwise, naming the encoding."""
    label = _label(source, name)
    binary = open_binary(source, label, limits)
    try:
        text, encoding = _text(binary, label)
        return text.read()
    except UnicodeDecodeError as exc:
        raise _decode_error(label, encoding, exc) from exc
    finally:
        binary.close()


def _decode_error(label: str, encoding: str, exc: UnicodeDecodeError) -> InputError:
    bad = exc.object[exc.start:exc.start + 1].hex().upper()
    return InputError(f"{label}: not valid {encoding} text (byte 0x{bad}; it looks like "
                      f"{_guess_encoding(bytes(exc.object))}); accepted: UTF-8 with or "
                      "without BOM, UTF-16 with BOM (save the file as UTF-8)")


def _text(binary: IO[bytes], label: str) -> tuple[IO[str], str]:
    """A text stream (universal newlines kept for the csv module) and the encoding's name."""
    head = binary.read(65536)
    binary.seek(0)
    if head.startswith(codecs.BOM_UTF8):
        return io.TextIOWrapper(binary, "utf-8-sig", newline=""), "UTF-8"
    guess = _guess_encoding(head)
    if guess == "UTF-32":
        raise InputError(f"{label}: the text is UTF-32; accepted: UTF-8 with or without BOM, "
                         "UTF-16 with BOM (save the file as UTF-8)")
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return io.TextIOWrapper(binary, "utf-16", newline=""), "UTF-16"
    if guess != "UTF-8":
        raise InputError(f"{label}: the text looks like {guess}; accepted: UTF-8 with or "
                         "without BOM, UTF-16 with BOM (save the file as UTF-8)")
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
            raise InputError(f"{label}: columns {both} both name {role} (rule: one column per "
                             "role); rename or remove one")
    if len(set(units.values())) > 1:
        raise InputError(f"{label}: the glucose columns name different units "
                         f"({', '.join(f'{k} in {v}' for k, v in units.items())})")
    return _Header({k: v[0] for k, v in found.items()}, len(cells),
                   next(iter(units.values()), None))


def _missing(cells: Sequence[object], schema: Schema, label: str, first: str) -> HeaderNotFound:
    names = {_normalise(c)[0] for c in cells}
    missing = [r.name for r in schema.roles if r.required
               and not names & {a.lower() for a in (r.name, *r.aliases)}]
    aliases = "; ".join(f"{r.name}: {', '.join((r.name, *r.aliases))}" for r in schema.roles
                        if r.required)
    return HeaderNotFound(f"{label}: missing column(s) {', '.join(missing)}; no header line names "
                      f"them (accepted names, any case — {aliases}). The first line reads "
                      f"{quote(first)}")


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


def _text_rows(text: IO[str], schema: Schema, label: str, limits: Limits,
               refuse: _Refusals) -> _Rows:
    lines: list[str] = []
    header = None
    delimiter = ","
    for _ in range(limits.header_lines):
        line = text.readline(1 << 20)
        if not line:
            break
        if len(line) >= 1 << 20 and not line.endswith(("\n", "\r")):
            raise InputError(f"{label}: line {len(lines) + 1} is longer than 1 MiB before any "
                             "header line was found")
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
        notes.append(f"{label}: {name_lines(np.asarray(above))} above the header skipped "
                     f"(title or comment; the first reads {quote(lines[above[0] - 1].strip())})")
    if delimiter != ",":
        notes.append(f"{label}: delimiter {'semicolon' if delimiter == ';' else 'tab'}")
    width = header.width
    # no valid row is longer (role cells ≤ max_cell, others ≤ the csv module's field limit)
    max_line = (max(limits.max_cell, csv.field_size_limit()) + 1) * width
    wrong_fields = f"the row has the wrong number of fields (the header has {width})"

    def too_long(line: str, number: int) -> bool:
        if len(line) <= max_line:
            return False
        refuse.add(f"the line is longer than {max_line:,} characters", [number], quote(line),
                   unsplit=True)
        return True

    def quoted(lines: Iterable[str], first: int) -> Iterator[_Chunk]:
        """The csv module's reading (quoted fields may hold delimiters and line breaks)."""
        guarded = ("\n" if too_long(line, number) else line
                   for number, line in enumerate(lines, first))
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
                refuse.add(f"the line cannot be split into fields ({exc})",
                           [reader.line_num + first - 1], "", unsplit=True)
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

    numeric = (schema.prepare is None and schema.fields is None  # optional roles absent: no bar
               and all(r.kind == "number" for r in schema.roles if r.name in header.index))

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
                lines = ["\n" if too_long(line, number) else line
                         for number, line in enumerate(lines, first)]
            block = "".join(lines)
            if '"' in block:  # from here on, the csv module reads
                yield from quoted(itertools.chain(lines, text), first)
                return
            bare = (block.splitlines() if _OTHER_BREAKS.search(block) is None
                    else [line.rstrip("\r\n") for line in lines])
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
                refuse.add(wrong_fields, [numbers[i] for i in wrong], quote(bare[wrong[0]]),
                           unsplit=True)
            rows = [bare[i].split(delimiter) for i in kept]
            rows_kept = [(i, r) for i, r in zip(kept, rows, strict=True)
                         if any(r) and not "".join(r).isspace()]
            if rows_kept:
                yield _Chunk([numbers[i] for i, _ in rows_kept], rows=[r for _, r in rows_kept])

    return _Rows(header, chunks(), "line", notes, delimiter == ",")


def _frame_rows(frame: pd.DataFrame, schema: Schema, label: str, first_row: int) -> _Rows:
    header = _match_header(list(frame.columns), schema, label)
    if header is None:
        raise _missing(list(frame.columns), schema, label,
                       ", ".join(map(str, frame.columns)) or "(no columns)")

    def cell(value: object) -> str:
        if value is None or value is pd.NA or value is pd.NaT or (
                isinstance(value, float) and np.isnan(value)):
            return ""
        if isinstance(value, float | np.floating):
            return repr(float(value))
        if isinstance(value, pd.Timestamp):
            return value.isoformat()
        return str(value)

    def chunks() -> Iterator[_Chunk]:
        for start in range(0, len(frame), CHUNK_ROWS):
            part = frame.iloc[start:start + CHUNK_ROWS]
            rows = [[cell(v) for v in row] for row in part.itertuples(index=False)]
            yield _Chunk(range(start + first_row, start + first_row + len(part)), rows=rows)

    return _Rows(header, chunks(), "row", [], True)


# -- refusals and parsing -------------------------------------------------------------------------

class _Refusals:
    """Refused lines grouped by rule, in the order the rules were first met."""

    def __init__(self) -> None:
        self.groups: dict[str, tuple[list[NDArray[np.int64]], str]] = {}
        self.unsplit = 0  # rows refused by the reader before they reach a chunk

    def add(self, rule: str, lines: Sequence[int] | NDArray, example: str,
            unsplit: bool = False) -> None:
        lines = np.asarray(lines, dtype=np.int64)
        if lines.size == 0:
            return
        self.unsplit += lines.size if unsplit else 0
        if rule in self.groups:
            self.groups[rule][0].append(lines)
        else:
            self.groups[rule] = ([lines], example)

    def result(self) -> tuple[RefusedRows, ...]:
        return tuple(RefusedRows(rule, np.sort(np.concatenate(parts)), example)
                     for rule, (parts, example) in self.groups.items())


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


def _plain_block(block: str, delimiter: str, width: int, max_cell: int
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
    if raw.translate(None, b"0123456789-\n" + delimiter.encode() + b"\r" * crlf
                     + (b"." if delimiter == "," else b"")):
        return None
    rows = raw.count(b"\n") + (not raw.endswith(b"\n"))
    codes = np.frombuffer(raw, np.uint8)
    # the longest cell: bounded by the longest line, exact (cells between delimiters) when needed
    longest = int(np.diff(np.flatnonzero(codes == ord("\n")), prepend=-1,
                          append=len(raw)).max()) - 1
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
        frame = pd.read_csv(io.BytesIO(raw), sep=delimiter, header=None, engine="c",
                            na_filter=False, low_memory=False, **({} if longest <= 15 else
                                                {"dtype": np.float64,
                                                 "float_precision": "round_trip"}))
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


def _numbers(cells: pd.Series, name: str, decimal: _Decimal
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
        (f"{name} is ambiguous: one mark then three digits could be a thousands separator "
         "(rule: write the decimal mark the rest of the file uses, without grouping)", ambiguous),
        (f"{name} is not a number", ~empty & ~not_finite & ~numeric),
    ]
    return values, rules


_STRAY_OFFSET = r"[T ].*(?:[Zz]|[+-]\d\d(?::?\d\d)?)$"
_WITH_OFFSET = r"^(.*\d:\d\d(?::\d\d(?:[.,]\d+)?)?)\s*(Z|[+-]\d\d:?\d\d)$"


@dataclass
class _Clock:
    """What a file's times showed so far: UTC offsets (text → first line; '' = none) and the
    time format chosen from the first chunk (one format for the whole file)."""

    seen: dict[str, int] = field(default_factory=dict)
    format: str | None = None
    note: str = ""

    def see(self, offsets: pd.Series, lines: NDArray[np.int64], name: str, label: str) -> None:
        for text, line in zip(*np.unique(offsets.to_numpy(dtype=str), return_index=True),
                              strict=True):
            key = "+00:00" if text.upper() == "Z" else text
            key = key if len(key) != 5 else f"{key[:3]}:{key[3:]}"
            self.seen.setdefault(key, int(lines[line]))
        if len(self.seen) > 1:
            shown = ", ".join(f"{k or 'none'} (line {v})" for k, v in self.seen.items())
            raise InputError(f"{label}: {name} mixes UTC offsets: {shown} (rule: one offset, "
                             "or none, for the whole file)")

    def choose(self, bare: pd.Series, field_: Field, label: str) -> None:
        """The first of the field's formats that reads the most of these times."""
        if self.format is not None or len(field_.time_formats) == 1:
            self.format = self.format or field_.time_formats[0]
            return
        counts = [int((~np.isnat(_parse_times(bare, f))).sum()) for f in field_.time_formats]
        best = int(np.argmax(counts))
        self.format = field_.time_formats[best]
        rivals = [f for f, c in zip(field_.time_formats, counts, strict=True)
                  if c == counts[best] and f != self.format]
        if rivals and counts[best]:
            self.note = (f"{label}: {field_.name} read as {self.format}; every time also fits "
                         f"{rivals[0]} (check day and month)")


def _parse_times(bare: pd.Series, fmt: str) -> NDArray[np.datetime64]:
    """Naive times (NaT where a cell does not parse); a cell pandas reads with an offset of its
    own is NaT too, so that no offset is ever applied silently."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pandas warns about mixed offsets it then refuses
            parsed = pd.to_datetime(bare, format=fmt, errors="coerce")
        if parsed.dtype.kind == "M" and getattr(parsed.dtype, "tz", None) is None:
            return parsed.to_numpy(dtype="datetime64[ns]")
    except (TypeError, ValueError, OverflowError):
        pass
    out = np.full(len(bare), np.datetime64("NaT"), dtype="datetime64[ns]")
    for i, text in enumerate(bare):
        try:
            value = pd.to_datetime(text, format=fmt)
        except (TypeError, ValueError, OverflowError):
            continue
        if value is not pd.NaT and value.tzinfo is None:
            out[i] = value.to_datetime64()
    return out


def _times(cells: pd.Series, field_: Field, clock: _Clock, lines: NDArray[np.int64],
           label: str) -> tuple[NDArray[np.datetime64], list[tuple[str, NDArray[np.bool_]]]]:
    empty = (cells == "").to_numpy()
    parts = cells.str.extract(_WITH_OFFSET)
    offset = parts[1].fillna("")
    bare = parts[0].fillna(cells).str.strip()
    clock.see(offset[~empty], lines[~empty], field_.name, label)
    # an offset left in the text (not after a time of day) is not read as a time
    stray = bare.str.contains(_STRAY_OFFSET).to_numpy(dtype=bool, na_value=False) & ~empty
    clean = ~empty & ~stray
    clock.choose(bare[clean], field_, label)
    values = np.full(len(cells), np.datetime64("NaT"), dtype="datetime64[ns]")
    if clean.any():
        values[clean] = _parse_times(bare[clean], clock.format)
    bad = np.isnat(values) & ~empty
    shown = "ISO 8601" if clock.format == "ISO8601" else clock.format
    return values, [(f"{field_.name} is empty", empty),
                    (f"{field_.name} is not a time ({shown})", bad)]


def _apply_offset(values: NDArray[np.datetime64], offset: str) -> NDArray[np.datetime64]:
    """Local times with a fixed UTC offset → UTC."""
    if not offset:
        return values
    sign = -1 if offset[0] == "-" else 1
    minutes = int(offset[1:3]) * 60 + int(offset[4:6])
    return values - np.timedelta64(sign * minutes, "m")


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
    if isinstance(source, pd.DataFrame):
        rows = _frame_rows(source, schema, label, first_row)
        return _collect(rows, schema, label, unit, limits, refuse, unit_option)
    suffix = Path(label).suffix.lower()
    if suffix not in TEXT_SUFFIXES | XLSX_SUFFIXES:
        old = " (the legacy Excel format; save it as .xlsx or CSV)" if suffix == ".xls" else ""
        raise InputError(f"{label}: {suffix} files are not accepted{old}; accepted: "
                         f"{ACCEPTED_FORMATS}")
    binary = open_binary(source, label, limits)
    try:
        head = binary.read(8)
        binary.seek(0)
        if head.startswith(b"\xd0\xcf\x11\xe0"):
            raise InputError(f"{label}: a legacy Excel (.xls) or other OLE file; accepted: "
                             f"{ACCEPTED_FORMATS}")
        if suffix in XLSX_SUFFIXES or head.startswith(b"PK\x03\x04"):
            from ranking_core.inputs.xlsx import xlsx_rows

            with xlsx_rows(binary, label, limits, sheet) as (sheet_rows, sheet_note):
                rows = _sheet_header(sheet_rows, schema, label, limits, sheet_note)
                return _collect(rows, schema, label, unit, limits, refuse, unit_option)
        if sheet is not None:
            raise InputError(f"{label}: --sheet applies to XLSX workbooks; this is text")
        text, encoding = _text(binary, label)
        try:
            rows = _text_rows(text, schema, label, limits, refuse)
            if encoding != "UTF-8":
                rows.notes.append(f"{label}: read as {encoding}")
            return _collect(rows, schema, label, unit, limits, refuse, unit_option)
        except UnicodeDecodeError as exc:
            raise _decode_error(label, encoding, exc) from exc
    finally:
        binary.close()


def _sheet_header(sheet_rows: Iterator[tuple[int, list[str]]], schema: Schema, label: str,
                  limits: Limits, sheet_note: str) -> _Rows:
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
        notes.append(f"{label}: {name_lines(np.asarray(above), 'row')} above the header skipped "
                     "(title or comment)")
    width = header.width

    def chunks() -> Iterator[_Chunk]:
        rows: list[list[str]] = []
        numbers: list[int] = []
        for number, cells in sheet_rows:
            if not any(c.strip() for c in cells):
                continue
            # a sheet pads rows to its widest one: trailing empty cells are not fields
            last = max(i for i, c in enumerate(cells) if c.strip()) + 1
            rows.append(cells[:max(last, width)] if last > width else
                        cells[:width] + [""] * (width - len(cells)))
            numbers.append(number)
            if len(rows) == CHUNK_ROWS:
                yield _Chunk(numbers, rows=rows)
                rows, numbers = [], []
        if rows:
            yield _Chunk(numbers, rows=rows)

    return _Rows(header, chunks(), "row", notes, True)


def _collect(rows: _Rows, schema: Schema, label: str, unit: str | None, limits: Limits,
             refuse: _Refusals, unit_option: str) -> TableRead:
    header, where = rows.header, rows.where
    typed = tuple(f for f in schema.typed  # an optional role absent from the header is left out
                  if not (isinstance(f, Role) and f in schema.roles and f.name not in header.index))
    decimal = _Decimal(point=rows.point_is_decimal)
    clock = _Clock()
    parts: dict[str, list[NDArray[Any]]] = {f.name: [] for f in typed}
    kept_lines: list[NDArray[np.int64]] = []
    n_read = n_skipped = 0
    for chunk in rows.chunks:
        n = len(chunk.lines)
        n_read += n
        if n_read + refuse.unsplit > limits.max_rows:
            raise InputError(f"{label}: more than {limits.max_rows:,} data rows (the limit; "
                             "split the file or raise the limit)")
        lines = (np.arange(chunk.lines.start, chunk.lines.stop, dtype=np.int64)
                 if isinstance(chunk.lines, range) else np.asarray(chunk.lines, dtype=np.int64))
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
                refuse.add(f"the row has the wrong number of fields (the header has "
                           f"{header.width})", lines[bad], quote(",".join(chunk.rows[first])))
        cells: dict[str, NDArray[np.object_]] = {}
        for role in schema.roles:
            if role.name not in header.index:
                cells[role.name] = np.full(n, "", dtype=object)
                continue
            k = header.index[role.name]
            column = np.empty(n, dtype=object)
            column[:] = (chunk.columns[k] if chunk.columns is not None else
                         [row[k] if len(row) > k else "" for row in chunk.rows])
            joined = "".join(column)
            if "\x00" in joined:
                nul = np.fromiter(("\x00" in c for c in column), bool, len(column)) & ~bad
                if nul.any():
                    refuse.add(f"{role.name} contains a NUL byte", lines[nul],
                               quote(column[nul][0]))
                    bad |= nul
            if max(map(len, column), default=0) > limits.max_cell:
                long = np.fromiter((len(c) > limits.max_cell for c in column), bool,
                                   len(column)) & ~bad
                if long.any():
                    refuse.add(f"{role.name} is longer than {limits.max_cell:,} characters",
                               lines[long], quote(column[long][0]))
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
        fast = {f.name: _plain_numbers(raw[f.name], decimal) for f in typed
                if f.kind == "number"}
        series = {f.name: pd.Series(raw[f.name], dtype=object).str.strip() for f in typed
                  if fast.get(f.name) is None}
        for f in typed:
            if f.kind == "number" and fast[f.name] is None:
                decimal.see(series[f.name])
        for f in typed:
            if fast.get(f.name) is not None:
                values, rules = fast[f.name], []
            elif f.kind == "number":
                values, rules = _numbers(series[f.name], f.name, decimal)
            elif f.kind == "time":
                values, rules = _times(series[f.name], f, clock, lines, label)
            else:
                values, rules = series[f.name].to_numpy(dtype=object), []
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
        raise InputError(f"{label}: no valid row. "
                         + " ".join(r.message(where) for r in refuse.result()))
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
            file_unit = resolve_unit([values[f.name] for f in glucose], unit, header.unit,
                                     label, unit_option)
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
        if v.size == 0 or ((f.low is None or v.min() >= f.low)
                           and (f.high is None or v.max() <= f.high)):
            continue  # every value in range: no mask needed
        out = ((v < f.low) if f.low is not None else False) | (
            (v > f.high) if f.high is not None else False)
        out = np.asarray(out) & ~bad
        if out.any():
            rule = f.range_rule or (f"{f.name} is outside {f.low:g}..{f.high:g}"
                                    + (" mg/dL" if f.glucose else ""))
            refuse.add(rule, lines[out], quote(f"{v[out][0]:g}"))
            bad |= out
    if bad.any():
        values = {k: v[~bad] for k, v in values.items()}
        lines = lines[~bad]
    offset = None
    if any(f.kind == "time" for f in typed):
        offset = next(iter(clock.seen), "")
        if clock.note:
            notes.append(clock.note)
        for f in typed:
            if f.kind == "time":
                values[f.name] = _apply_offset(values[f.name], offset)
    result = TableRead(values, lines, refuse.result(), tuple(notes), label, where, file_unit,
                       n_read, offset)
    if len(lines) == 0:
        raise InputError(f"{label}: no valid row. " + " ".join(result.messages()[1:]))
    return result


def with_limits(limits: Limits | None, **changes: int | None) -> Limits:
    """``limits`` (default :class:`Limits`) with the given fields replaced (``None`` kept)."""
    base = limits or Limits()
    return replace(base, **{k: v for k, v in changes.items() if v is not None})
