"""A text table cut short (its writer stopped inside the last line) is refused by the one text
reader, by line number and rule, for every table riskgrid reads; a whole last line without a
final line break is kept."""

from __future__ import annotations

import io

import numpy as np
import pytest

from ranking_core.inputs import Role, Schema, read_table
from ranking_core.inputs.decoding import cut_last_line
from ranking_core.meter import read_pairs
from ranking_core.ratings import read_rating_set

PAIRS = Schema("pairs", (Role("BGM", glucose=True), Role("REF", glucose=True)))
CUT = "looks cut off"


def _read(content: bytes, name: str = "pairs.csv"):
    return read_table(io.BytesIO(content), PAIRS, name=name)


def _cut_lines(table) -> list[int]:
    return [int(n) for r in table.refused if CUT in r.rule for n in r.lines]


@pytest.mark.parametrize(
    "content",
    [
        b"BGM,REF\n100,110\n120,130\n95,180",  # a short first field, a whole last field
        b"BGM,REF\n100,110\n120,130\n1000,12",  # as long as the lines above
        b"BGM,REF\n100,110\n40,9\n150,2",  # a one-digit last field as a line above has
        b"BGM,REF\n100,110\n120,130\n150,1\n",  # ends with a line break: whole
        b"BGM,REF\n150,1",  # nothing above it to judge against
        b"BGM;REF\n100,5;110,5\n120,5;130,5\n150;130",  # a whole last field in a ; file
    ],
)
def test_a_whole_last_line_without_a_line_break_is_kept(content):
    table = _read(content)
    lines = content.replace(b"\r\n", b"\n").rstrip(b"\n").split(b"\n")
    assert table.lines.tolist() == list(range(2, len(lines) + 1))
    assert not table.refused


@pytest.mark.parametrize(
    ("content", "line"),
    [
        (b"BGM,REF\n100,110\n120,130\n150,1", 4),  # "150,180" cut to a REF of 1
        (b"BGM,REF\r\n100,110\r\n120,130\r\n150,1", 4),  # Windows line ends
        (b"BGM,REF\r100,110\r120,130\r150,1", 4),  # old Mac line ends
        (b"title\nBGM,REF\n100,110\n\n120,130\n150,1", 6),  # numbered as editors number
        (b"BGM,REF\n100,110\n120,130\n150", 4),  # a line cut before its last field
        (b'BGM,REF\n"100",110\n120,130\n150,1', 4),  # quoted cells: the csv module reads
        ("BGM,REF\n100,110\n120,130\n150,1".encode("utf-16"), 4),  # UTF-16 with BOM
    ],
)
def test_a_cut_number_is_refused_with_its_line_and_the_rule(content, line):
    table = _read(content)
    assert _cut_lines(table) == [line]
    assert table.values["REF"].tolist() == [110, 130]
    message = next(m for m in table.messages() if CUT in m)
    assert f"in line {line}" in message and "without a line break" in message


def test_the_check_reaches_the_last_line_beyond_the_first_chunk(monkeypatch):
    import ranking_core.inputs.table as table_module

    monkeypatch.setattr(table_module, "CHUNK_CHARS", 64)  # many chunks, the last one small
    rows = b"".join(b"%d,%d\n" % (100 + i, 110 + i) for i in range(50))
    table = _read(b"BGM,REF\n" + rows + b"150,1")
    assert _cut_lines(table) == [52] and len(table) == 50
    quoted = _read(b'BGM,REF\n"100",110\n' + rows + b"150,1")  # read by the csv module
    assert _cut_lines(quoted) == [53] and len(quoted) == 51


def test_every_table_gets_the_check_once():
    pairs = read_pairs(io.BytesIO(b"BGM,REF\n100,110\n120,130\n150,1"), name="p.csv")
    assert pairs.ref.tolist() == [110, 130] and pairs.rows.tolist() == [2, 3]
    assert sum(CUT in m for m in pairs.messages) == 1
    ratings = read_rating_set(
        io.BytesIO(b"reference,estimate,rating\n100,120,1.5\n200,150,2.5\n300,190,3"),
        name="r.csv",
    )
    assert list(ratings.frame.index) == [2, 3]
    assert [p.lines for p in ratings.problems if CUT in p.message] == [(4,)]


def test_the_rule_itself():
    above = ["100,110\n", "120,130\n"]
    assert cut_last_line([*above, "150,1"], ",", 2) is not None
    assert cut_last_line([*above, "150"], ",", 2) is not None
    assert cut_last_line([*above, "95,180"], ",", 2) is None
    assert cut_last_line([*above, "150,1\n"], ",", 2) is None
    assert cut_last_line(["150,1"], ",", 2) is None
    assert cut_last_line([*above, "  "], ",", 2) is None
    # a quoted delimiter is no field of its own
    assert cut_last_line(['"a,b",110\n', '"1,5",120'], ",", 2) is None


def test_valid_random_tables_without_a_final_line_break_keep_every_row():
    """Brute force: tables of glucose values written without a final line break are read
    whole unless the last line is shorter than every other line, in its last field too, and
    its first field is as long as the shortest above (the only lines the rule refuses)."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        values = rng.integers(20, 600, size=(int(rng.integers(2, 12)), 2))
        text = "BGM,REF\n" + "\n".join(f"{a},{b}" for a, b in values)
        table = _read(text.encode())
        lines = text.split("\n")[1:]
        last, before = lines[-1], lines[:-1]
        cut = (
            len(last) < min(map(len, before))
            and len(last.split(",")[1]) < min(len(line.split(",")[1]) for line in before)
            and len(last.split(",")[0]) >= min(len(line.split(",")[0]) for line in before)
        )
        assert len(table) == len(values) - cut
        assert _cut_lines(table) == ([len(values) + 1] if cut else [])
