"""The format registry ``READERS``: adding an input reader is one module, one registry entry and
its test. Here the recipe is followed for a throw-away reader of a made-up format, registered only
for the test: a file in it is read through ``read_table`` (so through the collector's rules), the
registry's readers (upload types, help texts, messages) name it, and once it is unregistered the
format is refused again."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager

import pandas as pd
import pytest

from ranking_core.inputs import (
    READERS,
    InputError,
    Reader,
    Role,
    Schema,
    accepted_formats,
    format_names,
    read_table,
    reader_for,
    register_reader,
    unregister_reader,
    upload_types,
)
from ranking_core.inputs.rows import Chunk, ReadRequest, Rows, match_header, missing_header

SCHEMA = Schema("pairs", (Role("BGM", low=0, high=1000), Role("REF", low=0, high=1000)))
MAGIC = b"%PIPES"


@pytest.fixture
def pipes_reader() -> Iterator[list[str]]:
    """A reader of '.pipes' files: a magic first line, then '|'-separated fields, the first line
    after it the header. Registered for the test and removed after it; yields the labels of the
    inputs it read."""
    used: list[str] = []

    @contextmanager
    def read_pipes(request: ReadRequest) -> Iterator[Rows]:
        schema, label = request.schema, request.label
        used.append(label)
        lines = request.binary.read().decode("utf-8").splitlines()
        assert lines[0] == MAGIC.decode()
        cells = lines[1].split("|")
        header = match_header(cells, schema, label)
        if header is None:
            raise missing_header(cells, schema, label, lines[1])
        rows = [line.split("|") for line in lines[2:]]
        yield Rows(header, iter([Chunk(range(3, 3 + len(rows)), rows=rows)]), "line", [], True)

    reader = Reader("pipes", (".pipes",), "pipe-separated test tables", read_pipes, (MAGIC,))
    register_reader(reader)
    try:
        yield used
    finally:
        unregister_reader("pipes")
    assert reader not in READERS


def test_a_registered_reader_is_used_by_read_table(pipes_reader) -> None:
    content = b"%PIPES\nREF|BGM\n100|110\n200|abc\n50|5000\n300|290\n"
    table = read_table(io.BytesIO(content), SCHEMA, name="pairs.pipes")
    assert pipes_reader == ["pairs.pipes"]
    # the values of the file as written, after the collector's rules: line 5 (not a number) and
    # line 6 (outside 0..1000) refused, the others kept with their file lines
    assert table.values["BGM"].tolist() == [110.0, 290.0]
    assert table.values["REF"].tolist() == [100.0, 300.0]
    assert table.lines.tolist() == [3, 6]
    refused = {r.rule: r.lines.tolist() for r in table.refused}
    assert refused == {"BGM is not a number": [4], "BGM is outside 0..1000": [5]}


def test_the_content_decides_before_the_suffix(pipes_reader) -> None:
    """A file that starts with the reader's magic bytes is read by it whatever its name; text
    without them under a text suffix is read by the text reader, as before."""
    content = b"%PIPES\nBGM|REF\n1|2\n"
    table = read_table(content, SCHEMA, name="renamed.csv")
    assert pipes_reader == ["renamed.csv"] and table.values["REF"].tolist() == [2.0]
    plain = read_table(b"BGM,REF\n1,2\n", SCHEMA, name="plain.csv")
    assert pipes_reader == ["renamed.csv"] and plain.values["BGM"].tolist() == [1.0]


def test_everything_that_names_the_formats_reads_the_registry(pipes_reader) -> None:
    assert "pipes" in upload_types()  # the dashboard's upload widgets
    assert format_names().endswith("or PIPES")  # the command line's help texts
    assert "pipe-separated test tables" in accepted_formats()  # messages
    assert reader_for(".pipes").name == "pipes"
    with pytest.raises(InputError, match=r"\.ods files are not accepted.*pipe-separated"):
        read_table(b"", SCHEMA, name="x.ods")


def test_an_unregistered_format_is_refused_again() -> None:
    names = [reader.name for reader in READERS]
    assert "pipes" not in names and names[:2] == ["text", "xlsx"]
    assert "pipes" not in upload_types() and "PIPES" not in format_names()
    with pytest.raises(InputError, match=r"\.pipes files are not accepted; accepted: CSV"):
        read_table(b"%PIPES\nBGM|REF\n1|2\n", SCHEMA, name="pairs.pipes")


def test_a_suffix_or_name_already_taken_is_refused(pipes_reader) -> None:
    def never(*args):
        raise AssertionError("not called")

    with pytest.raises(ValueError, match=r"suffix '\.csv' is taken by reader 'text'"):
        register_reader(Reader("other", (".csv",), "other", never))
    with pytest.raises(ValueError, match=r"the name is taken by reader 'pipes'"):
        register_reader(Reader("pipes", (".pipes2",), "other", never))
    with pytest.raises(KeyError):
        unregister_reader("no such reader")
    assert [r.name for r in READERS].count("pipes") == 1


def test_every_registered_suffix_reads_a_table() -> None:
    """No suffix is listed without a reader behind it: a two-row table written in each built-in
    format, under each of its suffixes, reads back the numbers written."""
    workbook = io.BytesIO()
    pd.DataFrame({"BGM": [1.5, 7.0], "REF": [2.0, 8.0]}).to_excel(workbook, index=False)
    written = {
        "text": b"BGM;REF\n1,5;2\n7;8\n",
        "xlsx": workbook.getvalue(),
        "json": b'[{"BGM": 1.5, "REF": 2}, {"BGM": 7, "REF": 8}]',
    }
    assert set(written) == {reader.name for reader in READERS}
    for reader in READERS:
        for suffix in reader.suffixes:
            table = read_table(written[reader.name], SCHEMA, name=f"p{suffix}")
            assert table.values["BGM"].tolist() == [1.5, 7.0], suffix
            assert table.values["REF"].tolist() == [2.0, 8.0], suffix
