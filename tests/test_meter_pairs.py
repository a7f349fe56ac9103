"""Readers for BGM/REF pair files: encodings, line endings, formats and row-level messages."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from ranking_core.meter import PairsFileError, pairs_from_frame, read_pairs


def _read(content: bytes, name: str = "pairs.csv"):
    return read_pairs(io.BytesIO(content), name=name)


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_bom_and_line_endings(newline, bom):
    content = bom + newline.join([b"Bgm,REF", b"110,100", b"95,120", b""])
    pairs = _read(content)
    assert pairs.bgm.tolist() == [110, 95] and pairs.ref.tolist() == [100, 120]
    assert pairs.rows.tolist() == [2, 3]
    assert pairs.messages == ("pairs.csv: 2 rows read, 0 refused",)


def test_tsv_semicolon_and_header_case_and_extra_columns(tmp_path):
    tsv = tmp_path / "p.tsv"
    tsv.write_bytes(b"id\tref\tbgm\n1\t100\t110\n2\t300\t280\n")
    pairs = read_pairs(tsv)
    assert pairs.ref.tolist() == [100, 300] and pairs.bgm.tolist() == [110, 280]
    pairs = _read(b"REF;BGM\n100;110\n", name="p.txt")
    assert pairs.ref.tolist() == [100] and pairs.bgm.tolist() == [110]


def test_xlsx(tmp_path):
    path = tmp_path / "p.xlsx"
    pd.DataFrame({"BGM": [110, "high", 99.5, None], "Ref": [100, 90, 100, 80]}).to_excel(
        path, index=False
    )
    pairs = read_pairs(path)
    assert pairs.bgm.tolist() == [110, 100] and pairs.ref.tolist() == [100, 100]
    assert pairs.rows.tolist() == [2, 4]  # spreadsheet rows, header is row 1
    text = " ".join(pairs.messages)
    assert "4 rows read, 2 refused" in text and "BGM is empty in row 5; refused" in text
    assert "BGM is not a number (e.g. 'high') in row 3; refused" in text
    assert "BGM is not a whole mg/dL in row 4" in text and "99.5 → 100" in text


def test_rounding_is_reported_and_half_to_even():
    pairs = _read(b"BGM,REF\n120.4,100\n120.5,99.5\n121.5,100.6\n")
    assert pairs.bgm.tolist() == [120, 120, 122]  # R's round(): half to even
    assert pairs.ref.tolist() == [100, 100, 101]
    assert any("BGM is not a whole mg/dL in lines 2, 3, 4" in m for m in pairs.messages)
    assert any("REF is not a whole mg/dL in lines 3, 4" in m for m in pairs.messages)


def test_bad_rows_named_and_valid_rows_kept():
    content = b"BGM,REF\n110,100\nabc,100\n,100\nNaN,100\n100,NA\n100,inf\n\n120,130\n"
    pairs = _read(content)
    assert pairs.bgm.tolist() == [110, 120] and pairs.rows.tolist() == [2, 9]
    text = "\n".join(pairs.messages)
    assert pairs.messages[0] == "pairs.csv: 7 rows read, 5 refused"
    assert "BGM is not a number (e.g. 'abc') in line 3; refused" in text
    assert "BGM is empty in line 4; refused" in text
    assert "BGM is not finite (NaN, NA or infinite) (e.g. 'NaN') in line 5;" in text
    assert "REF is not finite (NaN, NA or infinite) (e.g. 'NA') in lines 6, 7;" in text
    assert "line 8" not in text  # a blank line is skipped silently


@pytest.mark.parametrize(
    ("content", "rule"),
    [
        (b"", "empty"),
        (b"\xef\xbb\xbf\r\n", "empty"),
        (b"BGM,REF\n", "no data rows"),
        (b"glucose,lab value\n100,110\n", "missing column(s) BGM, REF"),
        (b"BGM,glucose\n100,110\n", "missing column(s) REF"),
        (b"BGM,REF\nx,y\n,\n1,\n", "no valid row"),
    ],
)
def test_files_without_pairs_raise_with_the_rule(content, rule):
    with pytest.raises(PairsFileError, match=rule.replace("(", r"\(").replace(")", r"\)")):
        _read(content)


def test_broken_or_old_workbooks():
    with pytest.raises(PairsFileError, match="cannot be read as an XLSX workbook"):
        _read(b"BGM,REF\n1,2\n", name="pairs.xlsx")
    with pytest.raises(PairsFileError, match=r"legacy Excel format.*accepted: CSV, TSV"):
        _read(b"whatever", name="pairs.xls")
    with pytest.raises(PairsFileError, match=r"\.ods files are not accepted; accepted: CSV"):
        _read(b"whatever", name="pairs.ods")
    with pytest.raises(PairsFileError, match=r"legacy Excel \(\.xls\) or other OLE file"):
        _read(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(100), name="pairs.csv")


def test_missing_file():
    with pytest.raises(PairsFileError, match="not found"):
        read_pairs("/nonexistent/pairs.csv")


def test_frame_input_numbers_rows_from_zero():
    pairs = pairs_from_frame(pd.DataFrame({"bgm": [1.0, np.nan], "ref": [2, 3]}), first_row=0)
    assert pairs.rows.tolist() == [0]
    assert pairs.messages == ("pairs: 2 rows read, 1 refused", "BGM is empty in row 1; refused")
