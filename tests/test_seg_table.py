"""The SEG risk-table loader: valid files in every format, each rule's message, lookup."""

import os

import numpy as np
import pandas as pd
import pytest
from synthetic_seg import synthetic_risk, write_synthetic_seg

from ranking_core.grids.seg import (
    MISSING_SEG_MESSAGE,
    SEGTableError,
    SEGTableMissing,
    find_seg_table,
    load_seg_table,
    seg_table_from_frame,
)


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    ref, bgm = np.meshgrid(np.arange(601), np.arange(601), indexing="ij")
    ref, bgm = ref.ravel(), bgm.ravel()
    factor = synthetic_risk(ref, bgm)
    return pd.DataFrame(
        {
            "RiskPairID": np.arange(1, ref.size + 1),
            "REF": ref,
            "BGM": bgm,
            "RiskFactor": factor,
            "abs_risk": np.abs(factor),
        }
    )


def test_loads_csv_gz_and_looks_up(tmp_path) -> None:
    table = load_seg_table(write_synthetic_seg(tmp_path / "RiskPairData.csv.gz"))
    ref = np.array([100, 300, 0, 599.6])
    bgm = np.array([300, 100, 0, 12.2])
    np.testing.assert_allclose(
        table.risk(ref, bgm, signed=True), synthetic_risk(np.rint(ref), np.rint(bgm))
    )
    np.testing.assert_allclose(
        table.risk(ref, bgm), np.abs(synthetic_risk(np.rint(ref), np.rint(bgm)))
    )
    assert table.absolute.shape == (601, 601)


def test_rows_in_any_order_and_xlsx(tmp_path, frame) -> None:
    shuffled = frame.sample(frac=1.0, random_state=0)
    table = seg_table_from_frame(shuffled.rename(columns=str.lower))  # names case-insensitive
    np.testing.assert_allclose(table.signed, seg_table_from_frame(frame).signed)
    path = tmp_path / "seg.xlsx"
    frame.iloc[:20].to_excel(path, index=False)
    with pytest.raises(SEGTableError, match=r"361181 of the 361201 .* pairs are missing"):
        load_seg_table(path)  # the XLSX is read; the lattice check then names what is missing


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: f.drop(columns=["abs_risk"]), "missing column.*abs_risk"),
        (
            lambda f: f.assign(REF=f["REF"].astype(object).where(f.index != 5, "high")),
            "REF is not a finite number in line 7",
        ),
        (
            lambda f: f.assign(BGM=f["BGM"].where(f.index != 3, 601)),
            "BGM is not an integer in 0..600 mg/dL in line 5",
        ),
        (lambda f: f.assign(REF=f["REF"].where(f.index != 0, 0.5)), "REF is not an integer"),
        (
            lambda f: f.assign(abs_risk=f["abs_risk"].where(f.index != 10, 3.0)),
            r"abs_risk differs from \|RiskFactor\| in line 12",
        ),
        (
            lambda f: pd.concat([f, f.iloc[[42]]], ignore_index=True),
            "repeats an earlier line in line 361203",
        ),
        (lambda f: f.drop(index=[601]), r"1 of the 361201 .* missing, for example \(1, 0\)"),
    ],
)
def test_each_rule_names_its_lines(frame, change, message) -> None:
    with pytest.raises(SEGTableError, match=message):
        seg_table_from_frame(change(frame.copy()), "RiskPairData.csv")


def test_unreadable_and_missing_files(tmp_path) -> None:
    bad = tmp_path / "seg.csv"
    bad.write_bytes(b"\xff\xfe\x00garbage\x00\x00")
    with pytest.raises(SEGTableError):
        load_seg_table(bad)
    with pytest.raises(SEGTableMissing, match=r"not found.*SEG_TABLE"):
        load_seg_table(tmp_path / "absent.csv.gz")
    with pytest.raises(SEGTableMissing) as missing:
        find_seg_table(environ={})
    assert str(missing.value) == MISSING_SEG_MESSAGE
    assert "--seg-table" in MISSING_SEG_MESSAGE and "upload" in MISSING_SEG_MESSAGE


def test_lookup_refuses_points_off_the_grid(frame) -> None:
    table = seg_table_from_frame(frame)
    with pytest.raises(ValueError, match="rows 1, 2 lie outside the grid"):
        table.risk([10, 700, -3], [10, 10, 10])


def test_fingerprint_tells_tables_apart(frame) -> None:
    a = seg_table_from_frame(frame)
    b = seg_table_from_frame(
        frame.assign(RiskFactor=frame["RiskFactor"] * 0.5, abs_risk=frame["abs_risk"] * 0.5)
    )
    assert a.fingerprint == seg_table_from_frame(frame).fingerprint
    assert a.fingerprint != b.fingerprint


def test_official_table_values() -> None:
    path = os.environ.get("SEG_TABLE")
    if not path:
        pytest.skip("SEG_TABLE is not set: this test needs the official SEG risk table")
    table = find_seg_table()
    # the sign convention and two values stated with the distributed table
    assert table.risk(100, 300, signed=True) == pytest.approx(-2.1323)
    assert table.risk(300, 100, signed=True) == pytest.approx(1.6056)
    assert table.risk(0, 0) == 0.0
    assert 3.5 < table.absolute.max() <= 4.0
