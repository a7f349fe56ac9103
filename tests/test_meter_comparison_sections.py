"""The method comparison, comparator coverage (DGR) and sensor precision sections, through
``riskgrid meter-report``: their JSON equals the library's functions on the same pairs and the
definitions computed by brute force (every pairwise slope of Passing & Bablok 1983; Deming's
closed form and its jackknife from n explicit leave-one-out refits; rates by hand); the choices
(--deming-ratio, --decision-levels) are said in the settings and the provenance, and a bad
choice is one sentence; the sections appear in every rendering where they apply and nowhere
where they do not; a grid.json of nested brackets is one sentence, not a crash."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pypdf import PdfReader
from scipy.stats import norm
from scipy.stats import t as student_t
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.inputs import MGDL_PER_MMOLL
from ranking_core.meter.cgm.dgr import dgr
from ranking_core.meter.cgm.precision import sensor_precision
from ranking_core.meter.comparison.summary import method_comparison

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample_meter_pairs.csv"
runner = CliRunner()
SECTION_TITLES = {
    "method_comparison": "Method comparison: Passing–Bablok, Deming and Bland–Altman",
    "dgr": "Comparator data coverage (Dynamic Glucose Regions)",
    "precision": "Sensor-to-sensor precision",
}


# --- brute force: the definitions, pair by pair ----------------------------------------------
def _pb_brute(x: list[float], y: list[float], confidence: float = 0.95) -> dict[str, float]:
    """Passing & Bablok 1983 as written: every slope S_ij (i < j), 0/0 dropped, vertical pairs
    ±∞ by the sign of y_i − y_j, slopes of exactly −1 dropped; shifted median and rank limits."""
    n = len(x)
    slopes = []
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0 and dy == 0:
                continue
            s = (math.inf if dy > 0 else -math.inf) if dx == 0 else dy / dx
            if s != -1.0:
                slopes.append(s)
    slopes.sort()
    big_n = len(slopes)
    k = sum(1 for s in slopes if s < -1)
    if big_n % 2:
        b = slopes[(big_n + 1) // 2 + k - 1]
    else:
        b = 0.5 * (slopes[big_n // 2 + k - 1] + slopes[big_n // 2 + k])
    c = norm.ppf(0.5 + confidence / 2) * math.sqrt(n * (n - 1) * (2 * n + 5) / 18)
    m1 = math.floor((big_n - c) / 2 + 0.5)
    m2 = big_n - m1 + 1
    b_low, b_high = slopes[m1 + k - 1], slopes[m2 + k - 1]
    xs, ys = np.array(x), np.array(y)
    return {
        "slope": b,
        "slope_lower": b_low,
        "slope_upper": b_high,
        "intercept": float(np.median(ys - b * xs)),
        "intercept_lower": float(np.median(ys - b_high * xs)),
        "intercept_upper": float(np.median(ys - b_low * xs)),
        "n": n,
    }


def _deming_fit(x: np.ndarray, y: np.ndarray, ratio: float) -> tuple[float, float]:
    sxx, syy = np.var(x) * x.size, np.var(y) * y.size
    sxy = float(np.sum((x - x.mean()) * (y - y.mean())))
    b = (ratio * syy - sxx + math.sqrt((sxx - ratio * syy) ** 2 + 4 * ratio * sxy**2)) / (
        2 * ratio * sxy
    )
    return b, float(y.mean() - b * x.mean())


def _jackknife(estimate: float, refits: list[float], confidence: float = 0.95):
    n = len(refits)
    values = np.array(refits)
    se = math.sqrt((n - 1) / n * float(np.sum((values - values.mean()) ** 2)))
    half = student_t.ppf(0.5 + confidence / 2, n - 1) * se
    return estimate - half, estimate + half


def _deming_brute(x: np.ndarray, y: np.ndarray, ratio: float, levels) -> dict:
    """Closed form and the jackknife from n explicit refits without pair i."""
    slope, intercept = _deming_fit(x, y, ratio)
    refits = [_deming_fit(np.delete(x, i), np.delete(y, i), ratio) for i in range(x.size)]
    s_low, s_high = _jackknife(slope, [r[0] for r in refits])
    i_low, i_high = _jackknife(intercept, [r[1] for r in refits])
    bias = []
    for level in levels:
        at = intercept + (slope - 1) * level
        low, high = _jackknife(at, [a + (b - 1) * level for b, a in refits])
        bias.append((level, at, low, high))
    return {
        "slope": slope,
        "slope_lower": s_low,
        "slope_upper": s_high,
        "intercept": intercept,
        "intercept_lower": i_low,
        "intercept_upper": i_high,
        "bias": bias,
    }


def _close(found: object, expected: object, path: str = "") -> None:
    """Nested JSON values equal, numbers to 1e-9 relative (None for NaN on both sides)."""
    if isinstance(expected, dict):
        assert isinstance(found, dict) and set(found) == set(expected), path
        for key in expected:
            _close(found[key], expected[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(found, list) and len(found) == len(expected), path
        for k, (a, b) in enumerate(zip(found, expected, strict=True)):
            _close(a, b, f"{path}[{k}]")
    elif isinstance(expected, float) and not isinstance(expected, bool):
        assert found == pytest.approx(expected, rel=1e-9, abs=1e-12), path
    else:
        assert found == expected, path


def _as_json(value: object) -> object:
    return json.loads(json.dumps(value, allow_nan=True).replace("NaN", "null"))


# --- files ---------------------------------------------------------------------------------
def _small_pairs(tmp_path: Path) -> tuple[Path, np.ndarray, np.ndarray]:
    """40 meter pairs of whole mg/dL with ties, repeated pairs and vertical pairs."""
    rng = np.random.default_rng(11)
    ref = rng.choice([55, 70, 90, 120, 150, 180, 220, 260, 310], size=40).astype(float)
    bgm = np.round(ref * rng.normal(1.04, 0.08, ref.size) + rng.integers(-3, 4, ref.size))
    path = tmp_path / "small.csv"
    pd.DataFrame({"BGM": bgm.astype(int), "REF": ref.astype(int)}).to_csv(path, index=False)
    return path, ref, bgm


def _study(subjects: int = 6, draws: int = 30, seed: int = 4) -> pd.DataFrame:
    """A CGM study: two sensors per subject, one reference draw every 15 min for both."""
    rng = np.random.default_rng(seed)
    start = np.datetime64("2024-05-01T08:00:00")
    frames = []
    for s in range(subjects):
        minutes = np.arange(draws) * 15.0
        ref = np.round(160 + 110 * np.sin(minutes / 45 + s))
        t_ref = start + (minutes * 60).astype("timedelta64[s]")
        for k in range(2):
            frames.append(
                pd.DataFrame(
                    {
                        "subject": f"P{s}",
                        "sensor": f"P{s}-S{k}",
                        "reference_time": t_ref.astype(str),
                        "sensor_time": (t_ref + np.timedelta64(60 + 30 * k, "s")).astype(str),
                        "REF": ref,
                        "BGM": np.round(ref * rng.normal(1, 0.07, ref.size), 1),
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def _json(tmp_path: Path, pairs: Path, *options: str) -> dict:
    out = tmp_path / f"{pairs.stem}.json"
    result = runner.invoke(app, ["meter-report", str(pairs), "--json", str(out), *options])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


# --- the method comparison's numbers ---------------------------------------------------------
def test_method_comparison_json_is_the_library_and_the_papers_definition(tmp_path):
    path, ref, bgm = _small_pairs(tmp_path)
    levels = (70.0, 180.0, 250.0)
    data = _json(tmp_path, path, "--deming-ratio", "1.5", "--decision-levels", "70,180,250")
    found = data["method_comparison"]
    assert (found["x"], found["y"], found["unit"]) == ("reference", "device", "mg/dL")
    library = method_comparison(ref, bgm, error_ratio=1.5, levels=levels).to_dict()
    for key in ("passing_bablok", "deming", "bland_altman"):
        _close(found[key], _as_json(library[key]), key)
    # Passing–Bablok: every pairwise slope, as the paper defines them
    brute = _pb_brute(ref.tolist(), bgm.tolist())
    for key, value in brute.items():
        assert found["passing_bablok"][key] == pytest.approx(value, abs=1e-12), key
    shift = found["passing_bablok"]["shift"]
    assert found["passing_bablok"]["slopes"] > 0 and shift >= 0
    cusum = found["passing_bablok"]["linearity_cusum"]
    assert cusum["above"] + cusum["below"] <= brute["n"] and cusum["critical_value"] == 1.36
    for row in found["passing_bablok"]["bias_at"]:  # the intercept of the line shifted to X_c
        level = row["level"]
        assert row["bias"] == pytest.approx(
            float(np.median(bgm - brute["slope"] * (ref - level))) - level
        )
    # Deming: the closed form and n explicit leave-one-out refits
    dem = _deming_brute(ref, bgm, 1.5, levels)
    for key in ("slope", "slope_lower", "slope_upper", "intercept"):
        assert found["deming"][key] == pytest.approx(dem[key], rel=1e-9), key
    assert found["deming"]["intercept_lower"] == pytest.approx(dem["intercept_lower"], rel=1e-9)
    assert found["deming"]["intercept_upper"] == pytest.approx(dem["intercept_upper"], rel=1e-9)
    assert found["deming"]["error_ratio"] == 1.5
    assert found["deming"]["interval_method"] == "jackknife"
    assert found["deming"]["n"] == found["passing_bablok"]["n"] == 40
    rows = found["deming"]["bias_at"]
    for row, (level, at, low, high) in zip(rows, dem["bias"], strict=True):
        assert (row["level"], row["bias"]) == (level, pytest.approx(at, abs=1e-9))
        assert (row["bias_lower"], row["bias_upper"]) == (pytest.approx(low), pytest.approx(high))
    # the choices, said in the settings and recorded in the provenance
    assert data["settings"]["deming_error_ratio"] == 1.5
    assert data["settings"]["decision_levels"] == [70, 180, 250]
    labels = {k for k in data["provenance"] if "Deming" in k or "decision levels" in k}
    assert len(labels) == 2


def test_a_file_in_mmol_per_l_is_compared_in_mmol_per_l(tmp_path):
    _, ref, bgm = _small_pairs(tmp_path)
    mmol = tmp_path / "mmol.csv"
    pd.DataFrame({"BGM (mmol/L)": bgm / 18.0, "REF (mmol/L)": ref / 18.0}).round(2).to_csv(
        mmol, index=False
    )
    data = _json(tmp_path, mmol)
    found = data["method_comparison"]
    read = pd.read_csv(mmol)
    x, y = read["REF (mmol/L)"].to_numpy(), read["BGM (mmol/L)"].to_numpy()
    library = method_comparison(x, y, unit="mmol/L").to_dict()
    assert found["unit"] == "mmol/L"
    assert found["decision_levels"] == [3.89, 9.99, 13.88] == data["settings"]["decision_levels"]
    for key in ("slope", "slope_lower", "slope_upper", "intercept"):
        assert found["passing_bablok"][key] == pytest.approx(library["passing_bablok"][key])
        assert found["deming"][key] == pytest.approx(library["deming"][key])
    # levels above 600 mg/dL in the file's unit (mg/dL levels given for mmol/L) are refused
    assert 180 > 600 / MGDL_PER_MMOLL
    result = runner.invoke(app, ["meter-report", str(mmol), "--decision-levels", "70,180"])
    assert result.exit_code == 1
    assert result.stderr.strip().startswith("--decision-levels: decision level 1 (70)")
    assert len(result.stderr.strip().splitlines()) == 1 and "mmol/L" in result.stderr


@pytest.mark.parametrize(
    ("levels", "said"),
    [
        ("70,abc", "--decision-levels: decision level 2 ('abc'): not a number"),
        ("70,-5", "--decision-levels: decision level 2 ('-5'): must be a positive number"),
        (",", "--decision-levels: decision levels: give 1 to 20 numbers separated by commas"),
    ],
)
def test_decision_levels_errors_are_one_sentence(levels, said):
    result = runner.invoke(app, ["meter-report", str(SAMPLE), "--decision-levels", levels])
    assert result.exit_code == 1
    assert result.stderr.strip() == said


# --- DGR and precision: by hand on the same readings -----------------------------------------
def test_dgr_and_precision_equal_the_library_on_rates_and_pairs_by_hand(tmp_path):
    study = _study()
    path = tmp_path / "study.csv"
    study.to_csv(path, index=False)
    data = _json(tmp_path, path, "--measuring-range", "none")
    # reference rates by hand: consecutive draws of each sensor, 15 min apart (≤ 30 min gap)
    t_ref = pd.to_datetime(study["reference_time"])
    minutes = t_ref.groupby(study["sensor"]).diff().dt.total_seconds() / 60
    rate = study.groupby("sensor")["REF"].diff() / minutes
    expected = dgr(study["REF"].to_numpy(), rate.to_numpy())
    _close(data["dgr"], _as_json(expected.to_dict()), "dgr")
    assert data["dgr"]["counts"]["total"] == len(study) - study["sensor"].nunique()
    # precision: the two sensors of a subject at one reference time
    wide = study.pivot_table(index=["subject", "reference_time"], columns="sensor", values="BGM")
    rows = [
        (subject, *wide.loc[(subject, time), [f"{subject}-S0", f"{subject}-S1"]])
        for subject, time in wide.index
    ]
    subjects, first, second = (np.array(v) for v in zip(*rows, strict=True))
    expected_precision = sensor_precision(subjects, first, second).to_dict()
    _close(data["precision"], _as_json(expected_precision), "precision")
    assert data["precision"]["pairs"] == len(study) // 2


# --- every rendering ---------------------------------------------------------------------------
def _flat(text: str) -> str:
    return " ".join(text.split())


def _render(tmp_path: Path, pairs: Path) -> tuple[str, dict, str, str, set[str]]:
    """The 80-column terminal, JSON, HTML, PDF text and --out-dir file names of one file."""
    env = {**os.environ, "COLUMNS": "80"}
    env.pop("SEG_TABLE", None)
    outputs = {}
    for suffix in ("html", "pdf"):
        extra = ("--out-dir", str(tmp_path / "files")) if suffix == "html" else ()
        result = subprocess.run(
            [
                *(sys.executable, "-m", "ranking_core.cli", "meter-report", str(pairs)),
                *("--json", str(tmp_path / "r.json"), "--report", str(tmp_path / f"r.{suffix}")),
                *extra,
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=600,
        )
        assert result.returncode == 0, result.stderr
        outputs[suffix] = result.stdout
    pdf = " ".join(p.extract_text() for p in PdfReader(tmp_path / "r.pdf").pages)
    return (
        outputs["pdf"],
        json.loads((tmp_path / "r.json").read_text()),
        (tmp_path / "r.html").read_text(),
        pdf,
        {p.name for p in (tmp_path / "files").iterdir()},
    )


def test_each_section_is_in_every_rendering_where_it_applies(tmp_path):
    path = tmp_path / "study.csv"
    _study().to_csv(path, index=False)
    terminal, data, html, pdf, files = _render(tmp_path, path)
    for key, title in SECTION_TITLES.items():
        assert key in data
        for rendering, text in (("terminal", terminal), ("HTML", html), ("PDF", pdf)):
            assert _flat(title) in _flat(text), f"{title} not in the {rendering}"
    lines = [line for line in terminal.splitlines() if line[:1] in "│┃┏┗└┡┌├┢┣"]
    assert max(len(line) for line in lines) <= 80 and "…" not in terminal
    for name in ("bland_altman", "regression", "dgr"):
        assert {f"{name}.png", f"{name}.pdf"} <= files
    for name in ("passing_bablok", "deming", "bias_at_decision_levels", "dgr", "precision"):
        assert f"{name}.csv" in files
    assert "CGM − reference" not in terminal  # figures are named, not drawn, in the terminal
    assert "figure bland_altman" in terminal and "figure dgr" in terminal


def test_sections_that_do_not_apply_appear_nowhere(tmp_path):
    terminal, data, html, pdf, files = _render(tmp_path, SAMPLE)  # a meter: no times, no subject
    assert "method_comparison" in data
    for key in ("dgr", "precision"):
        title = SECTION_TITLES[key]
        assert key not in data
        for text in (terminal, html, pdf):
            assert _flat(title) not in _flat(text)
    assert not {"dgr.png", "dgr.csv", "precision.csv"} & files
    # one sensor per subject: DGR (the reference has rates), no precision
    one = _study().query("sensor.str.endswith('S0')", engine="python")
    path = tmp_path / "one.csv"
    one.to_csv(path, index=False)
    data = _json(tmp_path, path)
    assert "dgr" in data and "precision" not in data


# --- the learned grid's metadata -------------------------------------------------------------
def test_a_grid_json_of_nested_brackets_is_one_sentence(tmp_path):
    grid = tmp_path / "grid.npy"
    np.save(grid, np.zeros((601, 601)))
    (tmp_path / "grid.json").write_bytes(b"[" * (2 * 2**20))
    result = runner.invoke(app, ["meter-report", str(SAMPLE), "--learned-grid", str(grid)])
    assert result.exit_code == 1, result.output
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in result.output
    assert message.startswith("grid.json beside grid.npy: line 1 nests brackets more than")
