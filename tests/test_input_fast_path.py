"""The text reader's fast path (whole blocks of plain numbers parsed by pandas' C reader) gives
exactly what the row-by-row rules give: the same values, lines, refusals and notes."""

from __future__ import annotations

import io

import numpy as np
import pytest

from ranking_core import inputs
from ranking_core.inputs import table
from ranking_core.meter import read_pairs


def _both(content: bytes, monkeypatch: pytest.MonkeyPatch, name: str = "pairs.csv"):
    """(fast, row by row) readings of one file, and how many blocks the fast path accepted."""
    accepted = []

    def counting(*args):
        values = plain_block(*args)
        accepted.append(values is not None)
        return values

    plain_block = table._plain_block
    with monkeypatch.context() as patch:
        patch.setattr(table, "_plain_block", counting)
        fast = read_pairs(io.BytesIO(content), name=name)
    with monkeypatch.context() as patch:
        patch.setattr(table, "_plain_block", lambda *args: None)
        slow = read_pairs(io.BytesIO(content), name=name)
    return fast, slow, sum(accepted)


def _same(fast, slow) -> None:
    assert np.array_equal(fast.bgm, slow.bgm) and np.array_equal(fast.ref, slow.ref)
    assert np.array_equal(fast.rows, slow.rows)
    assert fast.messages == slow.messages
    assert [(r.rule, r.lines.tolist(), r.example) for r in fast.table.refused] == [
        (r.rule, r.lines.tolist(), r.example) for r in slow.table.refused
    ]


def _lines(n: int, delimiter: str = ",", seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    ref = rng.integers(20, 601, n)
    bgm = np.rint(ref * (1 + 0.1 * rng.standard_normal(n))).clip(0, 650)
    return [f"{b:g}{delimiter}{r}" for b, r in zip(bgm, ref, strict=True)]


@pytest.fixture
def small_chunks(monkeypatch):
    """Blocks of 64 kB, so that a file of 30,000 lines spans several blocks."""
    monkeypatch.setattr(table, "CHUNK_CHARS", 1 << 16)


def test_clean_file_goes_through_the_fast_path(monkeypatch, small_chunks):
    rows = _lines(30_000)
    rows[7] = "612.5,-3"  # decimals, a negative value: plain numbers too
    content = ("BGM,REF\n" + "\n".join(rows) + "\n").encode()
    fast, slow, accepted = _both(content, monkeypatch)
    _same(fast, slow)
    assert accepted >= 3 and len(fast) == 30_000
    assert fast.rows[0] == 2 and fast.rows[-1] == 30_001
    # against the values written, independently of both paths
    assert fast.bgm[7] == 612 and fast.ref[7] == -3  # 612.5 rounds half to even
    assert fast.ref[100] == int(rows[100].split(",")[1])


@pytest.mark.parametrize("bad", ["abc", "", "nan", "1.2.3", "-", "1e999", " 5", "1-2", "inf"])
def test_one_bad_row_in_the_middle_of_a_block(monkeypatch, small_chunks, bad):
    rows = _lines(30_000, seed=1)
    rows[12_345] = f"{bad},100"
    rows[20_000] = "100"  # wrong number of fields
    rows[25_000] = "4000,100"  # above the physical range
    content = ("BGM,REF\r\n" + "\r\n".join(rows) + "\r\n\r\n").encode()
    fast, slow, accepted = _both(content, monkeypatch)
    _same(fast, slow)
    assert accepted >= 1  # the clean blocks still go the fast way
    refused = {line for r in fast.table.refused for line in r.lines.tolist()}
    assert {20_002, 25_002} <= refused
    assert (12_347 in refused) == (bad not in (" 5",))  # ' 5' is a number with a space


def test_decimal_comma_and_semicolon(monkeypatch, small_chunks):
    rows = [row.replace(",", ";") for row in _lines(20_000, seed=2)]
    content = ("BGM;REF\n" + "\n".join(rows) + "\n").encode()
    fast, slow, accepted = _both(content, monkeypatch, "p.txt")
    _same(fast, slow)
    assert accepted >= 2
    rows[9_000] = "120,5;118"  # a decimal comma: the row-by-row rules decide for the block
    rows[15_000] = "1,021;90"  # ambiguous unless the file shows its decimal mark
    content = ("BGM;REF\n" + "\n".join(rows) + "\n").encode()
    fast, slow, _ = _both(content, monkeypatch, "p.txt")
    _same(fast, slow)
    assert fast.bgm[fast.rows == 9_002].tolist() == [120]  # 120.5 → 120, half to even


def test_long_numbers_are_rounded_like_float(monkeypatch):
    cells = [
        "1.00000000000000011102230246251565",
        "0.1000000000000000055511151231257827",
        "123456789012345678901234567890",
        "5",
    ]
    content = ("BGM,REF\n" + "\n".join(f"{c},100" for c in cells) + "\n").encode()
    rows = table.read_table(
        io.BytesIO(content),
        inputs.Schema("pairs", (inputs.Role("BGM"), inputs.Role("REF"))),
        name="p.csv",
    )
    assert rows.values["BGM"].tolist() == [float(c) for c in cells]
