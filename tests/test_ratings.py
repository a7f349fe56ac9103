"""Rating-set validation: every rule names its rows, valid rows are kept."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from ranking_core.ratings import MGDL_PER_MMOLL, RatingSetError, read_rating_set

GOOD = "reference,estimate,rating\n100,120,0.5\n60,250,3\n300,100,2.25\n"


def _csv(text: str) -> io.BytesIO:
    return io.BytesIO(text.encode())


def test_clean_csv_is_read_in_mgdl():
    ratings = read_rating_set(_csv(GOOD), name="panel.csv")
    assert ratings.problems == () and ratings.warnings == ()
    np.testing.assert_array_equal(ratings.X, [[100, 120], [60, 250], [300, 100]])
    np.testing.assert_array_equal(ratings.y, [0.5, 3, 2.25])
    assert ratings.report() == ""


def test_each_rule_names_its_file_lines_and_keeps_valid_rows():
    text = (
        "Reference , ESTIMATE,rating,rater\n"
        "100,120,0.5,a\n"  # line 2 ok
        "abc,120,1,a\n"  # line 3 reference text
        "100,,1,a\n"  # line 4 estimate empty
        "100,120,4.5,a\n"  # line 5 rating > 4
        "-5,120,1,a\n"  # line 6 negative
        "100,700,1,a\n"  # line 7 above 600
        "100,120,0.5,a\n"  # line 8 repeat of line 2
        "100,120,0.5,b\n"  # line 9 ok (other rater)
        "80,90,inf,b\n"  # line 10 rating inf
    )
    ratings = read_rating_set(_csv(text), name="panel.csv")
    assert list(ratings.frame.index) == [2, 9]  # file lines
    assert ratings.frame["rater"].tolist() == ["a", "b"]
    messages = {p.rule: p.message for p in ratings.problems}
    assert messages["reference is not a number"].endswith("line 3")
    assert messages["estimate is empty"].endswith("line 4")
    assert messages["rating is not finite (NaN, NA or infinite)"].endswith("line 10")
    assert messages["rating is outside 0..4"].endswith("line 5")
    grid = "glucose is outside 0..600 mg/dL (the grid)"
    assert messages[f"reference {grid}"].endswith("line 6")
    assert messages[f"estimate {grid}"].endswith("line 7")
    assert any("repeats an earlier row" in m and m.endswith("line 8") for m in messages.values())
    assert "line 5" in ratings.report()
    assert ratings.summary == "panel.csv: 9 rows read, 7 refused"


def test_repeats_without_rater_are_kept_with_a_warning():
    ratings = read_rating_set(_csv(GOOD + "100,120,0.5\n"), name="p.csv")
    assert len(ratings.frame) == 4
    assert ratings.problems == ()
    assert "line 5" in ratings.warnings[0]


def test_mmol_per_litre_is_converted_with_the_stated_factor():
    text = "reference,estimate,rating\n5.5,6.0,0\n3.0,12.0,3\n"
    ratings = read_rating_set(_csv(text), unit="mmol/L", name="p.csv")
    # molar mass of glucose 180.16 g/mol: 1 mmol/L = 180.16 mg/L = 18.016 mg/dL
    np.testing.assert_allclose(ratings.X, np.array([[5.5, 6.0], [3.0, 12.0]]) * 18.016)
    assert MGDL_PER_MMOLL == pytest.approx(180.16 / 10)
    assert ratings.unit == "mmol/L"
    headed = read_rating_set(
        _csv("Reference (mmol/L),Estimate (mmol/L),rating\n5.5,6,0\n"), name="p.csv"
    )
    np.testing.assert_allclose(headed.X, [[5.5 * 18.016, 6 * 18.016]])


def test_mmol_values_without_a_unit_are_refused_naming_the_option():
    with pytest.raises(RatingSetError, match=r"look like mmol/L.*unit mmol/L"):
        read_rating_set(_csv("reference,estimate,rating\n5.5,6.0,0\n3.0,12.0,3\n"), name="p.csv")
    stated = read_rating_set(
        _csv("reference,estimate,rating\n5.5,6.0,0\n3.0,12.0,3\n"), unit="mg/dL", name="p.csv"
    )  # stated: read as it is
    np.testing.assert_array_equal(stated.X, [[5.5, 6.0], [3.0, 12.0]])
    with pytest.raises(RatingSetError, match="look like mg/dL"):  # mg/dL stated as mmol/L
        read_rating_set(_csv(GOOD), unit="mmol/L", name="p.csv")
    partly = read_rating_set(
        _csv("reference,estimate,rating\n100,120,0\n5,6,1\n5,7,0\n"), unit="mmol/L", name="p.csv"
    )
    assert list(partly.frame.index) == [3, 4]
    assert "outside 0..600 mg/dL" in partly.problems[0].message


def test_tsv_semicolon_and_bom_are_read():
    for text in (
        "\ufeffreference\testimate\trating\n100\t120\t1\n10\t200\t3\n",
        "reference;estimate;rating\n100;120;1\n10;200;3\n",
    ):
        ratings = read_rating_set(_csv(text), name="p.txt")
        np.testing.assert_array_equal(ratings.y, [1, 3])


def test_xlsx_first_sheet_with_a_note_about_others(tmp_path):
    path = tmp_path / "panel.xlsx"
    with pd.ExcelWriter(path) as writer:
        pd.DataFrame({"reference": [100, 50], "estimate": [130, 300], "rating": [0, 4]}).to_excel(
            writer, sheet_name="ratings", index=False
        )
        pd.DataFrame({"x": [1]}).to_excel(writer, sheet_name="notes", index=False)
    ratings = read_rating_set(path)
    np.testing.assert_array_equal(ratings.y, [0, 4])
    assert "read sheet 'ratings' of 2" in ratings.warnings[0]
    with pytest.raises(RatingSetError, match="missing column"):
        read_rating_set(path, sheet="notes")
    with pytest.raises(RatingSetError, match="no sheet named 'nope'; the sheets are 'ratings'"):
        read_rating_set(path, sheet="nope")


def test_latin1_bytes_are_refused_naming_the_encoding():
    text = "reference,estimate,rating,rater\n100,120,1,Müller\n".encode("cp1252")
    with pytest.raises(RatingSetError, match=r"Windows-1252.*accepted: UTF-8"):
        read_rating_set(io.BytesIO(text), name="p.csv")
    utf16 = "reference\testimate\trating\trater\n100\t120\t1\tMüller\n".encode("utf-16")
    assert read_rating_set(io.BytesIO(utf16), name="p.txt").frame["rater"].iloc[0] == "Müller"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("   \n", "empty"),
        ("reference,estimate\n100,120\n", "missing column.*rating"),
        ("reference,estimate,rating\n", "no data rows"),
        ("reference,estimate,rating\nx,y,z\n", "no valid row.*line 2"),
    ],
)
def test_unusable_input_raises_with_the_reason(text, message):
    with pytest.raises(RatingSetError, match=message):
        read_rating_set(_csv(text), name="p.csv")


def test_missing_file_and_bad_unit():
    with pytest.raises(RatingSetError, match="not found"):
        read_rating_set("/nonexistent/panel.csv")
    with pytest.raises(ValueError, match="unit"):
        read_rating_set(_csv(GOOD), unit="mg")


def test_dataframe_source():
    frame = pd.DataFrame(
        {"REFERENCE": [100.0, 90.0], "Estimate": [100.0, 400.0], "rating": [0.0, np.nan]}
    )
    ratings = read_rating_set(frame)
    assert len(ratings.frame) == 1
    assert ratings.problems[0].lines == (1,)  # frame rows are numbered from 0
    assert ratings.problems[0].message == "rating is empty in row 1"
