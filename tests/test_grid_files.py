"""Grid files: what ``write_grid_files`` and ``riskgrid learn`` write reads back, in NumPy, in a
CSV reader and in the meter report; broken grid files are refused with one line."""

from __future__ import annotations

import dataclasses
import io
import json
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.grids.files import (
    SIZE,
    GridFileError,
    grid_csv,
    grid_png,
    read_grid_file,
)
from ranking_core.grids.raster import LEFT, TOP
from ranking_core.inputs import MGDL_PER_MMOLL
from ranking_core.learn import (
    PRESETS,
    LearnSettings,
    learn_grid,
    ratings_checksum,
    write_grid_files,
)
from ranking_core.panels import simulate_panel
from ranking_core.ratings import read_rating_set

runner = CliRunner()


@pytest.fixture(scope="module")
def learned():
    ratings = read_rating_set(simulate_panel(80, random_state=4))
    return ratings, learn_grid(ratings, LearnSettings(rule="holdout"))


def test_written_files_read_back(learned, tmp_path):
    ratings, result = learned
    paths = write_grid_files(result, tmp_path, source="panel.csv")
    assert [p.name for p in paths] == ["grid.npy", "grid.csv", "grid.png", "grid.json"]
    expected = np.clip(result.grid, 0.0, 4.0)
    array = np.load(tmp_path / "grid.npy", allow_pickle=False)
    assert array.shape == (601, 601) and array.dtype == np.float64
    np.testing.assert_allclose(array, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(read_grid_file(tmp_path / "grid.npy"), expected, atol=1e-12)
    # long form, the SEG risk table's columns; REF 100, BGM 250 is row 100·601 + 250
    frame = pd.read_csv(tmp_path / "grid.csv")
    assert list(frame.columns) == ["REF", "BGM", "risk"] and len(frame) == 601 * 601
    row = frame.iloc[100 * 601 + 250]
    assert (row["REF"], row["BGM"]) == (100, 250)
    assert row["risk"] == pytest.approx(expected[100, 250], abs=5e-5)
    np.testing.assert_allclose(read_grid_file(tmp_path / "grid.csv"), expected, atol=5e-5)
    meta = json.loads((tmp_path / "grid.json").read_text())
    assert LearnSettings(**meta["settings"]) == result.settings
    assert meta["lambda"] == pytest.approx(result.lam, rel=1e-15)
    assert meta["ratings_checksum"] == ratings_checksum(ratings.X, ratings.y)
    assert meta["points_fitted"] == result.points_fitted and meta["rating_set"] == "panel.csv"
    assert meta["riskgrid_version"] not in ("", None)
    with Image.open(tmp_path / "grid.png") as image:
        assert image.format == "PNG" and image.width > 601 and image.height > 601


@pytest.mark.parametrize(
    ("risk", "colour"),
    [(0.0, (0x00, 0xA5, 0x00)), (4.0, (0x80, 0x00, 0x00)), (1.0625, (0xFF, 0xFF, 0x00))],
)
def test_png_uses_the_seg_colours(risk, colour):
    with Image.open(io.BytesIO(grid_png(np.full((601, 601), risk)))) as image:
        rgb = image.convert("RGB")
        assert rgb.getpixel((LEFT + 300, TOP + 300)) == colour  # the centre of the heat map


def _npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


class _Explodes:
    def __reduce__(self):
        return (pytest.fail, ("a grid file was unpickled",))


GOOD = np.full((601, 601), 1.0)


@pytest.mark.parametrize(
    ("name", "content", "rule"),
    [
        ("grid.npy", _npy(np.array([_Explodes()], dtype=object)), "holds object values"),
        ("grid.npy", _npy(np.zeros((600, 601))), "shape (600, 601)"),
        ("grid.npy", _npy(np.where(np.eye(601, dtype=bool), np.nan, GOOD)), "NaN or infinite"),
        ("grid.npy", _npy(np.where(np.eye(601, dtype=bool), 4.5, GOOD)), "outside the risk scale"),
        ("grid.npy", b"REF,BGM,risk\n0,0,0\n", "not a NumPy .npy file"),
        ("grid.npy", _npy(GOOD)[:5000], "incomplete or damaged"),
        ("grid.txt", _npy(GOOD), ".npy or .csv"),
        ("grid.csv", b"REF,BGM\n0,0\n", "missing column(s) risk"),
        ("grid.csv", b"REF,BGM,risk\n0,0,0\n0,0,1\n", "distinct (REF, BGM)"),
        ("grid.csv", b"REF,BGM,risk\n0,0,x\n", "line 2 is not three finite numbers"),
        ("grid.csv", b"REF,BGM,risk\n0.5,0,1\n", "off the lattice"),
    ],
)
def test_broken_grid_files_are_refused_with_one_line(name, content, rule):
    with pytest.raises(GridFileError) as caught:
        read_grid_file(content, name)
    message = str(caught.value)
    assert rule in message and "\n" not in message and name in message


def test_pickle_is_never_loaded_from_a_path(tmp_path):
    path = tmp_path / "grid.npy"
    path.write_bytes(pickle.dumps(_Explodes()))
    with pytest.raises(GridFileError, match=r"not a NumPy \.npy file"):
        read_grid_file(path)
    with pytest.raises(GridFileError, match=r"cannot open the grid file missing\.npy"):
        read_grid_file(tmp_path / "missing.npy")


def _rating_file(tmp_path, m: int = 60, unit_factor: float = 1.0) -> tuple:
    frame = simulate_panel(m, random_state=5)
    path = tmp_path / "ratings.csv"
    frame.assign(
        reference=frame["reference"] / unit_factor, estimate=frame["estimate"] / unit_factor
    ).to_csv(path, index=False)
    return path, frame


def _learn(ratings: Path, out: Path, options: str):
    """``riskgrid learn RATINGS --out-dir OUT`` with the space-separated ``options``."""
    return runner.invoke(app, ["learn", str(ratings), "--out-dir", str(out), *options.split()])


def test_cli_learn_writes_what_the_library_learns(tmp_path):
    path, _ = _rating_file(tmp_path)
    out = tmp_path / "out"
    result = _learn(
        path, out, "--rule holdout --kernel gaussian --gamma 10000 --unsigned --recipe best"
    )
    assert result.exit_code == 0, result.output
    settings = LearnSettings(rule="holdout", kernel="gaussian", gamma=1e4, signed=False)
    expected = learn_grid(read_rating_set(path), settings)
    meta = json.loads((out / "grid.json").read_text())
    assert LearnSettings(**meta["settings"]) == settings
    assert meta["lambda"] == pytest.approx(expected.lam, rel=1e-12)
    np.testing.assert_allclose(np.load(out / "grid.npy"), np.clip(expected.grid, 0, 4), atol=1e-9)
    assert "Points fitted" in result.output
    # a simulated panel names its raters: the best recipe, named, learns it by least squares
    # and the advice points to robust learning
    assert "recipe: best (changed by the options)" in result.output
    assert "10 raters" in result.output and "Robust learning" in result.output


def test_cli_learn_reads_mmol_per_litre(tmp_path):
    path, frame = _rating_file(tmp_path, unit_factor=MGDL_PER_MMOLL)
    out = tmp_path / "out"
    result = _learn(path, out, "--unit mmol/L --rule manual --lambda 0.01")
    assert result.exit_code == 0, result.output
    ratings = read_rating_set(frame)
    meta = json.loads((out / "grid.json").read_text())
    # a simulated panel: the robust recipe by default (its rule set by hand)
    expected = learn_grid(ratings, dataclasses.replace(PRESETS["robust"], rule="manual", lam=0.01))
    np.testing.assert_allclose(np.load(out / "grid.npy"), np.clip(expected.grid, 0, 4), atol=1e-6)
    assert meta["ratings"] == len(frame)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kernel", "cosine"], "kernel"),
        (["--rule", "best"], "rule"),
    ],
)
def test_cli_learn_refuses_bad_options_in_one_line(tmp_path, args, message):
    path, _ = _rating_file(tmp_path, m=20)
    result = runner.invoke(app, ["learn", str(path), "--out-dir", str(tmp_path / "o"), *args])
    assert result.exit_code == 1 and message in result.output
    assert "Traceback" not in result.output and not (tmp_path / "o").exists()


def test_cli_learn_refuses_a_missing_file(tmp_path):
    result = runner.invoke(
        app, ["learn", str(tmp_path / "nope.csv"), "--out-dir", str(tmp_path / "o")]
    )
    assert result.exit_code == 1 and "file not found" in result.output
    assert "Traceback" not in result.output


def test_meter_report_reads_the_learned_grid_files(tmp_path, monkeypatch):
    monkeypatch.delenv("SEG_TABLE", raising=False)
    path, _ = _rating_file(tmp_path)
    out = tmp_path / "out"
    assert (
        runner.invoke(
            app, ["learn", str(path), "--out-dir", str(out), "--rule", "manual", "--lambda", "0.01"]
        ).exit_code
        == 0
    )
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("BGM,REF\n110,100\n40,50\n300,200\n")
    reports = {}
    for name in ("grid.npy", "grid.csv"):
        json_out = tmp_path / f"{name}.json"
        result = runner.invoke(
            app,
            [
                "meter-report",
                str(pairs),
                "--learned-grid",
                str(out / name),
                "--json",
                str(json_out),
            ],
        )
        assert result.exit_code == 0, result.output
        reports[name] = json.loads(json_out.read_text())["learned_categories"]
    assert sum(r["count"] for r in reports["grid.npy"]) == 3
    assert reports["grid.npy"] == reports["grid.csv"]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.npy", None, "cannot open the grid file missing.npy"),
        ("grid.txt", b"1,2,3\n", ".npy or .csv"),
        ("grid.npy", b"not numpy", "not a NumPy .npy file"),
    ],
)
def test_meter_report_refuses_a_bad_grid_file_in_one_line(tmp_path, name, content, message):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("BGM,REF\n110,100\n")
    grid = tmp_path / name
    if content is not None:
        grid.write_bytes(content)
    result = runner.invoke(app, ["meter-report", str(pairs), "--learned-grid", str(grid)])
    assert result.exit_code == 1 and message in result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)


def test_grid_csv_is_what_pandas_writes_with_four_decimals():
    # the reference: pandas' own CSV writer with float_format="%.4f" (what the file was before)
    rng = np.random.default_rng(11)
    halves = np.round(rng.uniform(0, 4, (SIZE, SIZE)) * 2e4) / 2e4  # many exact x.xxxx5 values
    for grid in (rng.uniform(-0.5, 4.5, (SIZE, SIZE)), halves, np.full((SIZE, SIZE), -0.0)):
        axis = np.arange(SIZE)
        frame = pd.DataFrame(
            {
                "REF": np.repeat(axis, SIZE),
                "BGM": np.tile(axis, SIZE),
                "risk": np.clip(grid, 0.0, 4.0).ravel(),
            }
        )
        expected = frame.to_csv(index=False, float_format="%.4f", lineterminator="\n").encode()
        assert grid_csv(grid) == expected
