"""The one table reader, :func:`read_table`: text (CSV / TSV / TXT) and XLSX files, uploads and
DataFrames → typed columns of the valid rows, the refused rows with their line numbers and rules,
and a summary, in the formats of :data:`~ranking_core.inputs.formats.READERS`.

The parts: :mod:`~ranking_core.inputs.schema` (schemas, limits, errors, the result),
:mod:`~ranking_core.inputs.decoding` (opening, encodings, line ends),
:mod:`~ranking_core.inputs.rows` (header matching, what a reader gives),
:mod:`~ranking_core.inputs.numbers`, :mod:`~ranking_core.inputs.times` (cells),
:mod:`~ranking_core.inputs.collect` (rows → typed columns), and one module per format beyond text
(:mod:`~ranking_core.inputs.xlsx`). A format is chosen by its content (:attr:`Reader.magic`)
first, then by the file name's suffix; a suffix no reader claims is refused, naming the formats
accepted.

The text reader (here): the delimiter ``,`` ``;`` or tab is found together with the header (the
first line naming every required role); lines above it are skipped and reported. Reading goes in
chunks of about :data:`CHUNK_CHARS` characters of whole lines; a chunk of plain numbers is parsed
at once by pandas' C reader (:func:`_plain_block`), any other by the row-by-row rules, with the
same result. A last line that looks cut off (no final line break; fewer fields than the header,
or shorter than every line above: :func:`~ranking_core.inputs.decoding.cut_last_line`) is
refused by its number before it is split, so every table read as text gets the check once.
"""

from __future__ import annotations

import csv
import io
import itertools
import operator
import os
import re
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.inputs.collect import collect
from ranking_core.inputs.decoding import (
    TAIL_LINES,
    LineEnds,
    cut_last_line,
    decode_error,
    open_binary,
    source_label,
    text_stream,
)
from ranking_core.inputs.formats import READERS, Reader, accepted_formats
from ranking_core.inputs.rows import (
    CHUNK_ROWS,
    Chunk,
    ReadRequest,
    Refusals,
    Rows,
    frame_rows,
    match_header,
    missing_header,
)
from ranking_core.inputs.schema import InputError, Limits, Schema, TableRead, name_lines, quote
from ranking_core.inputs.times import Clock
from ranking_core.inputs.units import UnitError, check_unit

__all__ = ["read_delimited", "read_table", "reader_for"]

CHUNK_CHARS = 1 << 22  # text is read in chunks of about 4 million characters
DELIMITERS = (",", ";", "\t")
# characters str.splitlines also breaks at (the csv module does not)
_OTHER_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
HEAD_BYTES = 16  # the leading bytes a format is recognised by
OLE_MAGIC = b"\xd0\xcf\x11\xe0"  # legacy Excel .xls and other OLE compound files: refused


# -- the text reader ------------------------------------------------------------------------------


def _text_rows(
    text: LineEnds, schema: Schema, label: str, limits: Limits, refuse: Refusals
) -> Rows:
    """The header (the first line, within ``limits.header_lines``, that names every required
    role with one of the delimiters) and the data rows of a text file, in chunks; lines above
    the header are noted, rows with the wrong number of fields, over-long lines and lines the
    csv module cannot split go to ``refuse``."""
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
            header = match_header(cells, schema, label)
            if header is not None:
                break
        if header is not None:
            break
    if not any(line.strip() for line in lines):
        raise InputError(f"{label}: the file is empty")
    if header is None:
        first = next(line for line in lines if line.strip()).rstrip("\r\n")
        best = max((next(csv.reader([first], delimiter=d), []) for d in DELIMITERS), key=len)
        raise missing_header(best, schema, label, first)
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

    def whole(lines: Iterable[str], first: int) -> Iterator[str]:
        """``lines`` (the first numbered ``first``) without a last line that looks cut off,
        refused by its number (:func:`~ranking_core.inputs.decoding.cut_last_line`)."""
        recent: deque[str] = deque(maxlen=TAIL_LINES + 1)
        count = 0
        for line in lines:
            if recent:
                yield recent[-1]
            recent.append(line)
            count += 1
        if not recent:
            return
        rule = cut_last_line(list(recent), delimiter, width)
        if rule is None:
            yield recent[-1]
        else:
            refuse.add(rule, [first + count - 1], quote(recent[-1]), unsplit=True)

    def over_limit(pending: int) -> None:
        """Refuse the file once the rows refused so far and ``pending`` pass the row limit."""
        if refuse.unsplit + pending > limits.max_rows:
            raise InputError(
                f"{label}: more than {limits.max_rows:,} data rows (the limit; split the file or "
                "raise the limit)"
            )

    def quoted(lines: Iterable[str], first: int) -> Iterator[Chunk]:
        """The csv module's reading (quoted fields may hold delimiters and line breaks)."""
        guarded = (
            "\n" if too_long(line, number) else line
            for number, line in enumerate(whole(lines, first), first)
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
                if len(wrong) == CHUNK_ROWS:  # counted against the limit as they come
                    refuse.add(wrong_fields, wrong, example, unsplit=True)
                    wrong = []
                    over_limit(len(rows))
                continue
            rows.append(row)
            numbers.append(reader.line_num + first - 1)
            if len(rows) == CHUNK_ROWS:
                yield Chunk(numbers, rows=rows)
                rows, numbers = [], []
        refuse.add(wrong_fields, wrong, example, unsplit=True)
        if rows:
            yield Chunk(numbers, rows=rows)

    numeric = (
        schema.prepare is None
        and schema.fields is None  # optional roles absent: no bar
        and all(r.kind == "number" for r in schema.roles if r.name in header.index)
    )

    def chunks() -> Iterator[Chunk]:
        first = header_line + 1  # the file line of the next line read
        while True:
            block = text.read(CHUNK_CHARS)
            if not block:
                return
            if not block.endswith("\n"):
                block += text.readline()  # whole lines only
            if not block.endswith(("\n", "\r")):  # the last line, without a line break
                block = "".join(whole(io.StringIO(block, newline="").readlines(), first))
                if not block:
                    return
            values = _plain_block(block, delimiter, width, limits.max_cell) if numeric else None
            if values is not None:
                yield Chunk(range(first, first + values.shape[1]), numbers=values)
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
                    yield Chunk(numbers, columns=columns)  # no blank row possible
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
                yield Chunk([numbers[i] for i, _ in rows_kept], rows=[r for _, r in rows_kept])

    return Rows(header, chunks(), "line", notes, delimiter == ",")


@contextmanager
def read_delimited(request: ReadRequest) -> Iterator[Rows]:
    """The text reader: UTF-8 (± BOM) or UTF-16 (with BOM) text, delimiter comma, semicolon or
    tab; a byte that is not valid in the file's encoding, met while the rows are collected,
    refuses the file naming the encoding it looks like."""
    label = request.label
    text, encoding = text_stream(request.binary, label)
    try:
        rows = _text_rows(LineEnds(text), request.schema, label, request.limits, request.refuse)
        if encoding != "UTF-8":
            rows.notes.append(f"{label}: read as {encoding}")
        yield rows
    except UnicodeDecodeError as exc:
        raise decode_error(label, encoding, exc) from exc


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
            dtype=None if longest <= 15 else np.float64,
            float_precision=None if longest <= 15 else "round_trip",
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


def reader_for(suffix: str, head: bytes = b"") -> Reader:
    """The reader of a file whose name ends in ``suffix`` (lower case, with the dot) and whose
    content starts with ``head``: the first whose :attr:`Reader.magic` the content starts with,
    else the one claiming the suffix. Raises :class:`InputError` when none does."""
    for reader in READERS:
        if any(head.startswith(magic) for magic in reader.magic):
            return reader
    for reader in READERS:
        if suffix in reader.suffixes:
            return reader
    raise InputError(f"{suffix} files are not accepted; accepted: {accepted_formats()}")


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
    """Read a table for ``schema`` in the format :func:`reader_for` picks (the rules: the module
    notes here and in the parts listed there; docs/INPUTS.md).

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
    label = source_label(source, name)
    try:
        unit = check_unit(unit)
    except UnitError as exc:
        raise InputError(f"{label}: {exc}") from exc
    refuse = Refusals()
    clock = Clock(dayfirst, order_option)
    if isinstance(source, pd.DataFrame):
        rows = frame_rows(source, schema, label, first_row)
        return collect(rows, schema, label, unit, limits, refuse, unit_option, clock)
    suffix = Path(label).suffix.lower()
    if not any(suffix in reader.suffixes for reader in READERS):
        old = " (the legacy Excel format; save it as .xlsx or CSV)" if suffix == ".xls" else ""
        raise InputError(
            f"{label}: {suffix} files are not accepted{old}; accepted: {accepted_formats()}"
        )
    binary = open_binary(source, label, limits)
    try:
        head = binary.read(HEAD_BYTES)
        binary.seek(0)
        if head.startswith(OLE_MAGIC):
            raise InputError(
                f"{label}: a legacy Excel (.xls) or other OLE file; accepted: {accepted_formats()}"
            )
        reader = reader_for(suffix, head)
        if sheet is not None and not reader.sheets:
            sheeted = " or ".join(r.label for r in READERS if r.sheets)
            raise InputError(f"{label}: --sheet applies to {sheeted}; this is {reader.name}")
        with reader.read(ReadRequest(binary, schema, label, limits, refuse, sheet)) as rows:
            return collect(rows, schema, label, unit, limits, refuse, unit_option, clock)
    finally:
        binary.close()
