"""XLSX workbooks for the table reader: sizes checked before parsing, then one sheet streamed.

The archive's declared uncompressed sizes are checked first (all parts, the shared-string table
and the worksheet read), so a zip bomb or a huge shared-string table is refused before any of it
is decompressed; :mod:`zipfile` never inflates a member beyond its declared size. The sheet is
then read row by row with openpyxl's read-only mode (first sheet unless one is named).
:func:`read_xlsx` is the table reader's XLSX format (:data:`ranking_core.inputs.formats.READERS`):
the header is the first non-blank row naming every required role.
"""

from __future__ import annotations

import time
import warnings
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING

import numpy as np

from ranking_core.inputs.rows import (
    CHUNK_ROWS,
    Chunk,
    ReadRequest,
    Rows,
    match_header,
    missing_header,
)
from ranking_core.inputs.schema import InputError, Limits, Schema, cell_text, name_lines, quote

if TYPE_CHECKING:  # openpyxl is loaded when a workbook is read, not with the table reader
    from openpyxl import Workbook

__all__ = ["read_xlsx", "xlsx_rows"]


def _damaged(label: str, exc: Exception) -> InputError:
    return InputError(
        f"{label}: cannot be read as an XLSX workbook ({type(exc).__name__}: {quote(str(exc))})"
    )


def _check_sizes(archive: zipfile.ZipFile, label: str, limits: Limits) -> None:
    infos = archive.infolist()
    total = sum(i.file_size for i in infos)
    if total > limits.max_xlsx_total:
        raise InputError(
            f"{label}: the workbook unpacks to {total:,} bytes, over the "
            f"{limits.max_xlsx_total:,}-byte limit (a zip bomb or a very large "
            "workbook; save the sheet needed as CSV)"
        )
    for info in infos:
        if info.filename.lower().endswith("sharedstrings.xml") and (
            info.file_size > limits.max_xlsx_part
        ):
            raise InputError(
                f"{label}: the shared-string table unpacks to {info.file_size:,} "
                f"bytes, over the {limits.max_xlsx_part:,}-byte limit"
            )


def _open_book(binary: IO[bytes]) -> tuple[Workbook, list, list[str]]:
    """The workbook's manifest, shared strings, sheet list and styles, and no worksheet: unlike
    ``openpyxl.load_workbook``, which opens every sheet, only the sheet read is ever parsed."""
    from openpyxl.reader.excel import ExcelReader
    from openpyxl.styles.stylesheet import apply_stylesheet

    reader = ExcelReader(binary, read_only=True, data_only=True)
    reader.read_manifest()
    reader.read_strings()
    reader.read_workbook()
    apply_stylesheet(reader.archive, reader.wb)  # number formats tell dates from numbers
    sheets = [
        (entry, rel) for entry, rel in reader.parser.find_sheets() if "chartsheet" not in rel.Type
    ]
    return reader.wb, sheets, reader.shared_strings


@contextmanager
def xlsx_rows(
    binary: IO[bytes], label: str, limits: Limits, sheet: str | None = None
) -> Iterator[tuple[Iterator[tuple[int, list[str]]], str]]:
    """(rows, note): an iterator of (sheet row number, cells as text) and a note on the sheets.

    Raises :class:`InputError` for a damaged archive, sizes over ``limits`` or an unknown sheet.
    """
    try:
        archive = zipfile.ZipFile(binary)
    except Exception as exc:  # zipfile raises several types for damaged archives
        raise InputError(
            f"{label}: cannot be read as an XLSX workbook (not a ZIP archive)"
        ) from exc
    try:
        _check_sizes(archive, label, limits)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # openpyxl warns about styles it cannot read
                book, sheets, strings = _open_book(binary)
        except Exception as exc:  # openpyxl raises many types for damaged parts
            raise _damaged(label, exc) from exc
        try:
            names = [entry.name for entry, _ in sheets]
            if not names:
                raise InputError(f"{label}: the workbook has no sheet")
            chosen = names[0] if sheet is None else sheet
            if chosen not in names:
                raise InputError(
                    f"{label}: no sheet named {quote(chosen)}; the sheets are "
                    + ", ".join(quote(n) for n in names)
                )
            part = sheets[names.index(chosen)][1].target
            try:
                size = archive.getinfo(part).file_size
            except KeyError as exc:
                raise InputError(
                    f"{label}: sheet {quote(chosen)} is missing from the archive"
                ) from exc
            if size > limits.max_xlsx_part:
                raise InputError(
                    f"{label}: sheet {quote(chosen)} unpacks to {size:,} bytes, "
                    f"over the {limits.max_xlsx_part:,}-byte limit (save it as "
                    "CSV, or raise the limit)"
                )
            from openpyxl.worksheet._read_only import ReadOnlyWorksheet

            try:
                worksheet = ReadOnlyWorksheet(book, chosen, part, strings)
                worksheet.reset_dimensions()  # never trust the declared size
            except Exception as exc:  # a damaged sheet part
                raise _damaged(label, exc) from exc
            note = ""
            if len(names) > 1:
                note = (
                    f"{label}: read sheet {quote(chosen)} of {len(names)} "
                    "(name another with --sheet)"
                )

            def rows() -> Iterator[tuple[int, list[str]]]:
                deadline = time.monotonic() + limits.max_xlsx_seconds
                try:
                    # the stubs type iter_rows' self as Worksheet; openpyxl shares the function
                    cells = worksheet.iter_rows(values_only=True)  # type: ignore[misc]
                    for number, values in enumerate(cells, 1):
                        if number % 1000 == 0 and time.monotonic() > deadline:
                            raise InputError(
                                f"{label}: reading sheet {quote(chosen)} took more than "
                                f"{limits.max_xlsx_seconds:g} s (stopped at row {number:,}); "
                                "save it as CSV, which reads far faster"
                            )
                        yield number, [cell_text(v) for v in values]
                except InputError:
                    raise
                except Exception as exc:  # a damaged sheet part
                    raise _damaged(label, exc) from exc

            yield rows(), note
        finally:
            book.close()  # read-only: closes the archive openpyxl opened
    finally:
        archive.close()


@contextmanager
def read_xlsx(request: ReadRequest) -> Iterator[Rows]:
    """The XLSX reader: the header and the rows of one sheet (the first unless ``sheet`` names
    one), streamed while the workbook is open; rows are numbered as the spreadsheet numbers
    them."""
    label, limits = request.label, request.limits
    with xlsx_rows(request.binary, label, limits, request.sheet) as (sheet_rows, sheet_note):
        yield _sheet_header(sheet_rows, request.schema, label, limits, sheet_note)


def _sheet_header(
    sheet_rows: Iterator[tuple[int, list[str]]],
    schema: Schema,
    label: str,
    limits: Limits,
    sheet_note: str,
) -> Rows:
    above: list[int] = []
    header = None
    first_cells: list[str] = []
    for number, cells in sheet_rows:
        if not any(c.strip() for c in cells):
            continue
        first_cells = first_cells or cells
        header = match_header(cells, schema, label)
        if header is not None:
            break
        above.append(number)
        if len(above) >= limits.header_lines:
            break
    if header is None:
        if not first_cells:
            raise InputError(f"{label}: the sheet is empty")
        raise missing_header(first_cells, schema, label, ", ".join(c for c in first_cells if c))
    notes = [sheet_note] if sheet_note else []
    if above:
        notes.append(
            f"{label}: {name_lines(np.asarray(above), 'row')} above the header skipped "
            "(title or comment)"
        )
    width = header.width

    def chunks() -> Iterator[Chunk]:
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
                yield Chunk(numbers, rows=rows)
                rows, numbers = [], []
        if rows:
            yield Chunk(numbers, rows=rows)

    return Rows(header, chunks(), "row", notes, True)
