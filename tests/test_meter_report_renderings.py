"""One report, every rendering, through the command: on a 30-sensor CGM study with times and on
meter pairs, every section whose keys are in the JSON is in the 80-column terminal, the HTML and
the PDF's text; no table line is wider than 80 columns and no cell is cut ("…"); a CGM judged by
iCGM shows no ISO binomial test and a meter does; ``--measuring-range none`` is said in the
terminal and the PDF; no JSON number is text."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pypdf import PdfReader

from ranking_core.meter import read_pairs
from ranking_core.meter.pipeline import ReportRequest, report_from_pairs
from tests.test_meter_standards import _cgm_study

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample_meter_pairs.csv"
BOX = "│┃┏┗└┡┌├┢┣"
NUMBER_TEXT = re.compile(r"[-+−]?[\d,]*\d(\.\d+)?\s*%?")


def _run(tmp_path: Path, pairs: Path, *options: str) -> tuple[str, dict, str, str]:
    out = {s: tmp_path / f"{pairs.stem}.{s}" for s in ("json", "html", "pdf")}
    env = {**os.environ, "COLUMNS": "80"}
    env.pop("SEG_TABLE", None)
    terminal = ""
    for suffix in ("html", "pdf"):  # one run per document (--report takes one file)
        result = subprocess.run(
            [
                *(sys.executable, "-m", "ranking_core.cli", "meter-report", str(pairs)),
                *("--json", str(out["json"]), "--report", str(out[suffix]), *options),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=600,
        )
        assert result.returncode == 0, result.stderr
        terminal = result.stdout
    pdf = " ".join(p.extract_text() for p in PdfReader(out["pdf"]).pages)
    return terminal, json.loads(out["json"].read_text()), out["html"].read_text(), pdf


def _flat(text: str) -> str:
    return " ".join(text.split())


def _numbers_as_text(value: object, path: str = "") -> list[str]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _numbers_as_text(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _numbers_as_text(v, f"{path}[{i}]")]
    if isinstance(value, str) and NUMBER_TEXT.fullmatch(value.strip()) and not path.endswith(".id"):
        return [f"{path} = {value!r}"]
    return []


@pytest.fixture(scope="module")
def cgm_study(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cgm") / "cgm_study.csv"
    _cgm_study(np.random.default_rng(5), sensors=30, jitter_seconds=60).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("case", ["cgm", "meter"])
def test_every_section_in_the_json_is_in_every_rendering(case, cgm_study, tmp_path):
    pairs = cgm_study if case == "cgm" else SAMPLE
    terminal, data, html, pdf = _run(tmp_path, pairs, "--measuring-range", "none")
    device = "cgm" if case == "cgm" else "bgm"
    assert data["device"] == device
    report = report_from_pairs(read_pairs(pairs), None, None, ReportRequest(measuring_range="none"))
    views = report.views()
    assert {k for v in views for k in v.json} <= set(data)  # the command's JSON is the report's
    if case == "cgm":  # the CGM analyses of a study with times and sensors
        assert {"trend_agreement", "trend_concurrence", "cg_ega", "cg_diva"} <= set(data)
    for view in views:
        for rendering, text in (("terminal", terminal), ("HTML", html), ("PDF", pdf)):
            assert _flat(view.title) in _flat(text), f"{view.title} not in the {rendering}"
        for table in view.tables:
            assert _flat(table.title) in _flat(terminal)
    # a CGM judged by iCGM: no ISO binomial test anywhere; a meter (ISO 15197): everywhere
    binomial = "Binomial accuracy test"
    shown = [binomial in _flat(t) for t in (terminal, html, pdf)] + ["binomial" in data]
    assert shown == [case == "meter"] * 4
    # the choice of judging every pair is said in the terminal and the PDF
    assert "none: every pair judged" in _flat(terminal) and "none: every pair judged" in _flat(pdf)
    assert data["settings"]["measuring_range"] == "none: every pair judged"
    # fit the medium: no table line wider than 80 columns, no cell cut
    lines = [line for line in terminal.splitlines() if line[:1] in BOX]
    assert lines and max(len(line) for line in lines) <= 80 and "…" not in terminal
    assert _numbers_as_text(data) == []


def test_trend_concurrence_json_holds_numbers_that_add_up(cgm_study, tmp_path):
    _, data, _, _ = _run(tmp_path, cgm_study)
    rows = {r["measure"]: r for r in data["trend_concurrence"]}
    ctca = data["trend_agreement"]["clinical_trend_concurrence"]
    counts = np.array(ctca["counts"])
    total = int(counts.sum())
    for zone in "ABCD":
        assert rows[f"zone {zone}"]["pairs"] == ctca["zone_counts"][zone]
        assert rows[f"zone {zone}"]["value"] == pytest.approx(
            100 * ctca["zone_counts"][zone] / total
        )
    assert sum(rows[f"zone {z}"]["pairs"] for z in "ABCD") == total
    assert rows["MARoC"]["value"] == pytest.approx(ctca["maroc"])
