"""The recipe of docs/ARCHITECTURE.md ("How to add a report section"), on a throw-away section:
one module-level ``Section`` and one entry in ``ranking_core.meter.sections.SECTIONS``, and the
terminal, the JSON, the HTML, the PDF and ``--out-dir`` of ``riskgrid meter-report`` all show it
with nothing else edited. Its number is checked against a plain computation from the file."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from pypdf import PdfReader
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.meter import sections
from ranking_core.meter.sections.base import (
    ReportFigure,
    ReportTable,
    Section,
    SectionInputs,
    SectionView,
)

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample_meter_pairs.csv"


# --- the throw-away section, as its module would define it ------------------------------------
def _compute(inputs: SectionInputs) -> pd.DataFrame | None:
    ref, device = inputs.measured
    if ref.size == 0:
        return None
    difference = np.abs(device - ref)
    return pd.DataFrame({"pairs": [ref.size], "mean_abs_difference_mg_dl": [difference.mean()]})


def _draw(table: pd.DataFrame) -> Figure:
    figure = Figure(figsize=(3, 2))
    figure.add_subplot().bar(["MAD"], table["mean_abs_difference_mg_dl"])
    return figure


def _view(table: pd.DataFrame, report) -> SectionView:
    value = float(table["mean_abs_difference_mg_dl"].iloc[0])
    return SectionView(
        key="throwaway_mad",
        title="Throw-away mean absolute difference",
        summary=f"mean |device − REF| {value:.2f} mg/dL",
        json={"throwaway_mad": {"pairs": int(table["pairs"].iloc[0]), "mg_dl": value}},
        tables=(ReportTable("throwaway_mad", "Throw-away mean absolute difference", table),),
        figures=(ReportFigure("throwaway_mad", "Throw-away bar", lambda: _draw(table)),),
    )


THROWAWAY = Section("throwaway_mad", "Throw-away", _compute, _view)


@pytest.fixture
def registered(monkeypatch):
    """The recipe's one registry entry (the list is read when a report is made)."""
    monkeypatch.setattr(sections, "SECTIONS", [*sections.SECTIONS, THROWAWAY])


def test_a_registered_section_is_in_every_rendering(registered, tmp_path, monkeypatch):
    monkeypatch.delenv("SEG_TABLE", raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    frame = pd.read_csv(SAMPLE)
    expected = float(np.abs(frame["BGM"] - frame["REF"]).mean())  # every sample pair valid
    out_json, out_html, out_pdf = (tmp_path / f"r.{s}" for s in ("json", "html", "pdf"))
    out_dir = tmp_path / "files"
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "meter-report",
            str(SAMPLE),
            "--json",
            str(out_json),
            "--report",
            str(out_html),
            "--out-dir",
            str(out_dir),
        ],
    )
    assert result.exit_code == 0, result.output
    title = "Throw-away mean absolute difference"
    assert title in result.output and f"{expected:.2f} mg/dL" in result.output
    data = json.loads(out_json.read_text())
    assert data["throwaway_mad"]["mg_dl"] == pytest.approx(expected)
    assert data["throwaway_mad"]["pairs"] == len(frame)
    assert title in out_html.read_text() and "Throw-away bar" in out_html.read_text()
    assert {"throwaway_mad.csv", "throwaway_mad.png", "throwaway_mad.pdf"} <= {
        p.name for p in out_dir.iterdir()
    }
    written = pd.read_csv(out_dir / "throwaway_mad.csv")
    assert written["mean_abs_difference_mg_dl"].iloc[0] == pytest.approx(expected)
    result = runner.invoke(app, ["meter-report", str(SAMPLE), "--report", str(out_pdf)])
    assert result.exit_code == 0, result.output
    text = " ".join(
        page.extract_text() for page in PdfReader(io.BytesIO(out_pdf.read_bytes())).pages
    )
    assert title in " ".join(text.split())


def test_a_section_that_does_not_apply_is_in_no_rendering(monkeypatch, tmp_path):
    never = Section("never", "Never shown", lambda inputs: None, _view)
    monkeypatch.setattr(sections, "SECTIONS", [*sections.SECTIONS, never])
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["meter-report", str(SAMPLE), "--json", str(out)])
    assert result.exit_code == 0 and "Never shown" not in result.output
    assert "throwaway_mad" not in json.loads(out.read_text())
