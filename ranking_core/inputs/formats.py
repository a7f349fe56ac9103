"""The formats the table reader accepts, :data:`READERS`, and what people are told about them.

Each :class:`Reader` names its format, suffixes, label and the function that reads it (imported
when a file of the format is first read: :class:`~ranking_core.lazy.Deferred`), so that the help
texts (:func:`format_names`), the upload widgets (:func:`upload_types`) and the messages
(:func:`accepted_formats`) read the registry without loading pandas. The reading itself is
:func:`ranking_core.inputs.table.read_table`, which picks a reader by content, then suffix.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ranking_core.lazy import Deferred

if TYPE_CHECKING:
    from ranking_core.inputs.rows import ReadRequest, Rows

__all__ = [
    "ACCEPTED_FORMATS",
    "READERS",
    "Reader",
    "accepted_formats",
    "format_names",
    "reader_named",
    "register_reader",
    "unregister_reader",
    "upload_types",
]


@dataclass(frozen=True)
class Reader:
    """A file format :func:`~ranking_core.inputs.read_table` accepts: one entry of
    :data:`READERS`.

    Attributes
    ----------
    name : a short word for messages ("text", "xlsx"): "--sheet applies to …; this is text".
    suffixes : the file-name suffixes it reads, lower case with the dot ("" for a name without
        one, such as an upload).
    label : what it reads, for people (error messages, help texts, the documentation).
    read : ``read(request)`` (a :class:`~ranking_core.inputs.rows.ReadRequest`) → a context
        manager giving :class:`~ranking_core.inputs.rows.Rows`; the rows are collected inside it
        (a workbook stays open while its rows stream).
    magic : leading bytes that identify the format whatever the file is called (the content is
        sniffed before the suffix is trusted).
    sheets : the format has named sheets (``sheet`` / ``--sheet`` applies).
    """

    name: str
    suffixes: tuple[str, ...]
    label: str
    read: Callable[[ReadRequest], AbstractContextManager[Rows]]
    magic: tuple[bytes, ...] = ()
    sheets: bool = False


READERS: list[Reader] = [
    Reader(
        "text",
        (".csv", ".tsv", ".txt", ".tab", ""),
        "CSV, TSV or TXT text (UTF-8 with or without BOM, or UTF-16 with BOM; "
        "delimiter comma, semicolon or tab)",
        Deferred("ranking_core.inputs.table:read_delimited"),
    ),
    Reader(
        "xlsx",
        (".xlsx", ".xlsm"),
        "XLSX workbooks (.xlsx, .xlsm)",
        Deferred("ranking_core.inputs.xlsx:read_xlsx"),
        magic=(b"PK\x03\x04",),
        sheets=True,
    ),
    Reader(
        "json",
        (".json",),
        "JSON lists of records (.json; device exports such as Nightscout and Tidepool)",
        Deferred("ranking_core.inputs.json_records:read_json_records"),
    ),
]


def accepted_formats() -> str:
    """The formats accepted, for people: the readers' labels joined ("… and …")."""
    labels = [reader.label for reader in READERS]
    return ", ".join(labels[:-1]) + " and " + labels[-1] if len(labels) > 1 else labels[0]


ACCEPTED_FORMATS = accepted_formats()


def upload_types() -> list[str]:
    """The file-name suffixes accepted, without the dot (for an upload widget's ``type=``)."""
    return [s.removeprefix(".") for reader in READERS for s in reader.suffixes if s]


def format_names() -> str:
    """The suffixes accepted in capitals, for help texts: "CSV, TSV, TXT, TAB, XLSX or XLSM"."""
    names = [name.upper() for name in upload_types()]
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]


def reader_named(name: str) -> Reader:
    """The entry of :data:`READERS` called ``name`` ("text", "xlsx"); KeyError when none is."""
    for reader in READERS:
        if reader.name == name:
            return reader
    raise KeyError(name)


def register_reader(reader: Reader) -> None:
    """Add a format to :data:`READERS`. Raises ValueError when its name or one of its suffixes
    is taken already (one reader per suffix)."""
    for known in READERS:
        taken = set(known.suffixes) & set(reader.suffixes)
        if known.name == reader.name or taken:
            raise ValueError(
                f"reader {reader.name!r}: "
                + (f"suffix {sorted(taken)[0]!r}" if taken else "the name")
                + f" is taken by reader {known.name!r}"
            )
    READERS.append(reader)


def unregister_reader(name: str) -> None:
    """Remove the format called ``name`` from :data:`READERS` (KeyError when there is none)."""
    READERS.remove(reader_named(name))
