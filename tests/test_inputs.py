"""The one input layer: each way a file used to be misread, now refused row by row or as a whole,
with the valid rows kept; a property test that any supported writing reads back the same."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.grids import GLUCOSE_MAX, SEGTable
from ranking_core.inputs import (
    MGDL_PER_MMOLL,
    InputError,
    Limits,
    Role,
    Schema,
    read_table,
)
from ranking_core.meter import PairsFileError, meter_report, read_pairs
from ranking_core.ratings import RatingSetError, read_rating_set

runner = CliRunner()
PAIRS = Schema("pairs", (Role("BGM", glucose=True), Role("REF", glucose=True)))


def _pairs(content: bytes, name: str = "pairs.csv", **kw):
    return read_pairs(io.BytesIO(content), name=name, **kw)


def _refused(result, rule: str) -> list[int]:
    return [int(n) for r in result.table.refused if r.rule.startswith(rule) for n in r.lines]


def test_ragged_rows_are_refused_not_shifted():
    content = b"BGM,REF\n110,100\n120\n200,300,7\n130,140\n\n90,80,\n"
    pairs = _pairs(content)
    assert pairs.bgm.tolist() == [110, 130] and pairs.ref.tolist() == [100, 140]
    assert pairs.rows.tolist() == [2, 5]
    assert _refused(pairs, "the row has the wrong number of fields") == [3, 4, 7]
    assert pairs.messages[0] == "pairs.csv: 5 rows read, 3 refused"
    ratings = read_rating_set(
        io.BytesIO(b"reference,estimate,rating\n100,120,1\n90,2\n200,300,1,2\n"), name="r.csv"
    )
    assert list(ratings.frame.index) == [2]
    assert ratings.problems[0].lines == (3, 4)


def test_ragged_file_through_the_command_line(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text("BGM,REF\n110,100\n200,300,50\n120\n")
    out = tmp_path / "r.json"
    result = runner.invoke(app, ["meter-report", str(path), "--json", str(out)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "3 rows read, 2 refused" in text and "lines 3, 4" in text
    counts = {r["pair_type"]: r["count"] for r in json.loads(out.read_text())["pair_types"]}
    assert counts["Total"] == 1  # only (110, 100); not (200, 300)


def test_quoted_files_and_over_long_lines_are_refused_row_by_row():
    quoted = _pairs(b'BGM,REF\n"110",100\n1,2,3\n"1,5",7\n120,"130"\n')
    assert quoted.rows.tolist() == [2, 4, 5] and quoted.ref.tolist() == [100, 7, 130]
    assert _refused(quoted, "the row has the wrong number of fields") == [3]
    np.testing.assert_allclose(quoted.table.values["BGM"], [110, 1.5, 120])  # quoted "1,5"
    long = _pairs(b"BGM,REF\n110,100\n" + b"," * 300_000 + b"\n120,130\n")
    assert long.rows.tolist() == [2, 4]
    assert _refused(long, "the line is longer than") == [3]
    assert long.messages[0] == "pairs.csv: 3 rows read, 1 refused"


def test_nul_byte_refuses_the_row():
    pairs = _pairs(b"BGM,REF\n1\x0020,100\n110,100\n")
    assert pairs.bgm.tolist() == [110] and pairs.rows.tolist() == [3]
    assert _refused(pairs, "BGM contains a NUL byte") == [2]


def test_two_columns_for_one_role_are_refused_naming_both():
    with pytest.raises(PairsFileError, match=r"columns 'bgm' and 'BGM' both name BGM"):
        _pairs(b"bgm,BGM,REF\n1,2,3\n")
    with pytest.raises(PairsFileError, match=r"columns 'REF' and 'reference' both name REF"):
        _pairs(b"BGM,REF,reference\n1,2,3\n")


def test_thousands_like_value_in_a_decimal_comma_file_is_ambiguous():
    pairs = _pairs(b"BGM;REF\n110,5;100\n1.021;100\n99;98,25\n")
    assert pairs.bgm.tolist() == [110, 99] and pairs.ref.tolist() == [100, 98]
    assert _refused(pairs, "BGM is ambiguous") == [3]
    np.testing.assert_allclose(pairs.table.values["BGM"], [110.5, 99])
    np.testing.assert_allclose(pairs.table.values["REF"], [100, 98.25])
    # with a decimal point established elsewhere, 1.021 is a decimal number
    point = read_table(io.BytesIO(b"BGM;REF\n110.5;100\n1.021;100\n"), PAIRS, name="p.csv")
    np.testing.assert_allclose(point.values["BGM"], [110.5, 1.021])
    # with no evidence either way it is ambiguous
    bare = read_table(io.BytesIO(b"BGM;REF\n110;100\n1,021;100\n"), PAIRS, name="p.csv")
    assert bare.lines.tolist() == [2] and bare.refused[0].lines.tolist() == [3]


def test_non_numbers_and_non_finite_values_are_refused_by_line():
    content = b"BGM,REF\n110,100\nabc,1\n1_000,2\n0x10,3\n1e999,4\n-inf,5\n#N/A,6\n120,130\n"
    pairs = _pairs(content)
    assert pairs.rows.tolist() == [2, 9]
    assert _refused(pairs, "BGM is not a number") == [3, 4, 5]
    assert _refused(pairs, "BGM is not finite") == [6, 7, 8]


def test_values_above_the_physical_range_are_refused():
    pairs = _pairs(b"BGM,REF\n110,100\n3001,100\n100,99999\n700,100\n")
    assert pairs.bgm.tolist() == [110, 700]  # 700 is kept: the report excludes it, counted
    assert _refused(pairs, "BGM is above 3000 mg/dL") == [3]
    assert _refused(pairs, "REF is above 3000 mg/dL") == [4]


def test_title_and_comment_lines_above_the_header_are_skipped_and_reported():
    pairs = _pairs(b"Meter study 12\n# exported 2024-05-01\n\nBGM,REF\n110,100\n")
    assert pairs.rows.tolist() == [5]
    assert any(
        "lines 1, 2 above the header skipped" in m and "'Meter study 12'" in m
        for m in pairs.messages
    )


def test_aliases_are_matched_case_insensitively_with_a_unit_suffix():
    pairs = _pairs(b" Meter Glucose (mg/dL) ;Reference\n110;100\n")
    assert pairs.bgm.tolist() == [110] and pairs.ref.tolist() == [100]


def test_mmol_meter_file_is_refused_without_a_unit_and_converted_with_one():
    mg = np.array([[40, 45], [100, 97], [250, 180], [55, 70], [399, 420], [18, 20]])
    mmol = np.round(mg / MGDL_PER_MMOLL, 2)
    text = "BGM,REF\n" + "".join(f"{b},{r}\n" for b, r in mmol)
    with pytest.raises(PairsFileError, match=r"look like mmol/L.*--unit mmol/L"):
        _pairs(text.encode())
    pairs = _pairs(text.encode(), unit="mmol/L")
    assert pairs.glucose_unit == "mmol/L"
    np.testing.assert_array_equal(pairs.bgm, mg[:, 0])  # back to whole mg/dL within rounding
    np.testing.assert_array_equal(pairs.ref, mg[:, 1])
    risk = np.random.default_rng(0).uniform(-4, 4, (GLUCOSE_MAX + 1, GLUCOSE_MAX + 1))
    table = SEGTable(risk, "synthetic")
    as_mg = meter_report(
        _pairs(("BGM,REF\n" + "".join(f"{b},{r}\n" for b, r in mg)).encode()), table
    )
    as_mmol = meter_report(pairs, table)
    pd.testing.assert_frame_equal(as_mg.risk_grades, as_mmol.risk_grades)
    pd.testing.assert_frame_equal(as_mg.risk_categories, as_mmol.risk_categories)
    with pytest.raises(PairsFileError, match="headers say mg/dL but --unit mmol/L"):
        _pairs(b"BGM (mg/dL),REF (mg/dL)\n100,110\n", unit="mmol/L")


def test_meter_report_command_takes_a_unit(tmp_path):
    path = tmp_path / "mmol.csv"
    path.write_text("BGM;REF\n5,55;6,1\n7,2;8\n")
    refused = runner.invoke(app, ["meter-report", str(path)])
    assert refused.exit_code == 1 and "--unit mmol/L" in " ".join(refused.output.split())
    out = tmp_path / "r.json"
    ok = runner.invoke(app, ["meter-report", str(path), "--unit", "mmol/L", "--json", str(out)])
    assert ok.exit_code == 0, ok.output
    assert json.loads(out.read_text())["input_unit"] == "mmol/L"
    assert "glucose read in mmol/L, converted to mg/dL" in " ".join(ok.output.split())
    bad = runner.invoke(app, ["meter-report", str(path), "--unit", "mmol"])
    assert bad.exit_code == 1 and "must be one of mg/dL, mmol/L" in " ".join(bad.output.split())


@pytest.mark.parametrize(
    ("content", "rule"),
    [
        ("BGM,REF\n110,100\n".encode("cp1252") + b"\xe9,1\n", "Windows-1252"),
        ("BGM,REF\n110,100\n".encode("utf-16-le"), "UTF-16 without a byte-order mark"),
        ("BGM,REF\n110,100\n".encode("utf-32"), "UTF-32"),
    ],
)
def test_other_encodings_are_refused_by_name(content, rule):
    with pytest.raises(PairsFileError, match=f"{rule}.*accepted: UTF-8 with or without BOM"):
        _pairs(content)


def test_a_huge_cell_is_refused_and_quoted_short():
    for size in (50_000, 2_000_000):  # over the cell limit / over the csv module's field limit
        pairs = _pairs(b"BGM,REF\n110,100\n" + b"9" * size + b",100\n120,130\n")
        assert pairs.rows.tolist() == [2, 4]
        assert sum(len(r.lines) for r in pairs.table.refused) == 1
        assert all(len(m) < 400 for m in pairs.messages)
    long = _pairs(b"BGM,REF\n110,100\n" + b"9" * 50_000 + b",100\n")
    assert "'" + "9" * 80 + "'… (50,000 characters)" in " ".join(long.messages)


def test_limits_refuse_at_once():
    content = b"BGM,REF\n" + b"110,100\n" * 101
    with pytest.raises(PairsFileError, match="more than 100 data rows"):
        _pairs(content, limits=Limits(max_rows=100))
    with pytest.raises(PairsFileError, match="larger than the 500-byte limit"):
        _pairs(content, limits=Limits(max_bytes=500))
    assert len(_pairs(content, limits=Limits(max_rows=101))) == 101
    defaults = Limits()
    assert defaults.max_rows == 2_000_000 and defaults.max_cell == 10_000


def _xlsx_with_shared_strings(path, size: int) -> None:
    """A valid one-sheet workbook whose shared-string table is inflated to ``size`` bytes."""
    pd.DataFrame({"BGM": [110], "REF": [100]}).to_excel(path, index=False)
    with zipfile.ZipFile(path) as archive:
        parts = {n: archive.read(n) for n in archive.namelist()}
    block = b"<!--" + b"x" * (2**20 - 7) + b"-->"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            if name != "xl/sharedStrings.xml":
                archive.writestr(name, data)
        with archive.open("xl/sharedStrings.xml", "w") as part:
            part.write(parts.get("xl/sharedStrings.xml", b"")[:38])  # the XML declaration
            for _ in range(size // len(block)):
                part.write(block)


def test_shared_string_bomb_is_refused_before_parsing(tmp_path):
    path = tmp_path / "bomb.xlsx"
    _xlsx_with_shared_strings(path, 20 * 2**20)
    assert path.stat().st_size < 2**20
    with pytest.raises(PairsFileError, match=r"shared-string table unpacks to .* over the"):
        read_pairs(path)
    with pytest.raises(PairsFileError, match="workbook unpacks to"):
        read_pairs(path, limits=Limits(max_xlsx_total=2**20))


def test_other_sheets_are_never_parsed(tmp_path):
    path = tmp_path / "book.xlsx"
    with pd.ExcelWriter(path) as writer:
        pd.DataFrame({"BGM": [110], "REF": [100]}).to_excel(writer, sheet_name="a", index=False)
        pd.DataFrame({"x": [1]}).to_excel(writer, sheet_name="b", index=False)
    with zipfile.ZipFile(path) as archive:
        parts = {n: archive.read(n) for n in archive.namelist()}
    parts["xl/worksheets/sheet2.xml"] = b"<not xml" * 1000  # a second sheet that cannot parse
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    pairs = read_pairs(path)
    assert pairs.bgm.tolist() == [110] and pairs.ref.tolist() == [100]
    with pytest.raises(PairsFileError, match="cannot be read as an XLSX workbook"):
        read_pairs(path, sheet="b")


def test_large_or_slow_sheets_are_refused(tmp_path):
    path = tmp_path / "long.xlsx"
    pd.DataFrame({"BGM": np.arange(3000) % 500, "REF": 100}).to_excel(path, index=False)
    with pytest.raises(PairsFileError, match=r"sheet 'Sheet1' unpacks to [\d,]+ bytes, over"):
        read_pairs(path, limits=Limits(max_xlsx_part=10_000))
    with pytest.raises(PairsFileError, match=r"took more than 0 s \(stopped at row 1,000\)"):
        read_pairs(path, limits=Limits(max_xlsx_seconds=0))
    assert len(read_pairs(path)) == 3000


def test_xlsx_reads_the_first_sheet_or_the_named_one(tmp_path):
    path = tmp_path / "book.xlsx"
    with pd.ExcelWriter(path) as writer:
        pd.DataFrame([["Study 4"], ["BGM", "REF"]]).to_excel(
            writer, sheet_name="a", index=False, header=False
        )
        pd.DataFrame({"BGM": [1.5, 200], "REF": [100, 210]}).to_excel(
            writer, sheet_name="b", index=False
        )
    with pytest.raises(PairsFileError, match="no data rows"):
        read_pairs(path)
    pairs = read_pairs(path, sheet="b")
    assert pairs.bgm.tolist() == [2, 200] and pairs.rows.tolist() == [2, 3]
    with pytest.raises(PairsFileError, match="--sheet applies to XLSX"):
        _pairs(b"BGM,REF\n1,2\n", sheet="b")


# -- property: any supported writing reads back the same numbers ---------------------------------

_VALUES = st.floats(min_value=0, max_value=2999, allow_nan=False).map(lambda v: round(v, 2))


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(_VALUES, _VALUES), min_size=1, max_size=30),
    delimiter=st.sampled_from([",", ";", "\t"]),
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]),
    comma=st.booleans(),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
    title=st.booleans(),
)
def test_any_supported_writing_reads_back_the_same_numbers(
    rows, delimiter, encoding, comma, newline, title
):
    comma = comma and delimiter != ","  # a comma-separated file keeps the decimal point

    def cell(v: float) -> str:
        text = repr(v)
        return text.replace(".", ",") if comma else text

    lines = (["Exported readings"] if title else []) + [f"BGM{delimiter}REF"]
    lines += [f"{cell(b)}{delimiter}{cell(r)}" for b, r in rows]
    content = (newline.join(lines) + newline).encode(encoding)
    result = read_table(io.BytesIO(content), PAIRS, name="p.csv", unit="mg/dL")
    np.testing.assert_allclose(result.values["BGM"], [b for b, _ in rows], rtol=1e-12)
    np.testing.assert_allclose(result.values["REF"], [r for _, r in rows], rtol=1e-12)
    assert result.refused == ()
    assert result.lines.tolist() == list(range(2 + title, 2 + title + len(rows)))


def test_input_error_is_a_value_error_for_callers():
    assert issubclass(InputError, ValueError) and issubclass(RatingSetError, InputError)
