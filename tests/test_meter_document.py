"""The one-click report: the PDF opens, its text names every grid; HTML says the same."""

from __future__ import annotations

import io
import os
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest
from pypdf import PdfReader

from ranking_core.grids import SEGTable, grids
from ranking_core.meter import meter_report
from ranking_core.meter.acceptance import get_profile, profiles
from ranking_core.meter.display import display_frame
from ranking_core.meter.document import (
    report_blocks,
    report_html,
    report_pdf,
    write_report,
)
from ranking_core.version import riskgrid_version

RNG = np.random.default_rng(12)
REF = RNG.integers(30, 500, 400)
BGM = np.rint(REF * RNG.lognormal(0, 0.12, 400)).astype(int)
BGM[:3] = [700, 650, 610]  # excluded pairs
INCLUDED = int((BGM <= 600).sum())


@pytest.fixture(scope="module")
def parts():
    seg = SEGTable(np.abs(np.subtract.outer(np.arange(601.0), np.arange(601.0))) / 150, "toy")
    report = meter_report(pd.DataFrame({"BGM": BGM, "REF": REF}), seg)
    blocks = report_blocks(
        report,
        seg,
        np.zeros((601, 601)),
        name="study <A>.csv",
        created=datetime(2026, 1, 2, 3, 4, tzinfo=UTC),
    )
    return report, blocks


def test_pdf_opens_and_names_every_grid_and_the_data(parts):
    report, blocks = parts
    reader = PdfReader(io.BytesIO(report_pdf(blocks)))
    assert len(reader.pages) >= 3
    text = " ".join(" ".join(page.extract_text().split()) for page in reader.pages)
    for grid in grids():
        assert grid.title in text, grid.title
    for needle in (
        "study <A>.csv",
        f"pairs analysed {INCLUDED} of 400",
        f"(above 600 mg/dL or below 0) {400 - INCLUDED}",
        "mg/dL",
        "2026-01-02 03:04 UTC",
        riskgrid_version(),
        "ISO 15197:2013",
        "Pair types",
        "SEG risk grades",
        "SEG risk categories",
        "ISO 15197 ranges",
        "Binomial accuracy test",
        "by glucose range",
        "≥ 100 mg/dL",
    ):
        assert needle in text, needle
    counts = report.zones["dts"]["count"].tolist()
    assert f"A no risk {counts[0]}" in text


def test_html_escapes_text_and_embeds_the_same_figures(parts):
    _, blocks = parts
    page = report_html(blocks)
    assert "study &lt;A&gt;.csv" in page and "<A>" not in page
    figures = sum(1 for b in blocks if type(b).__name__ == "FigureBlock")
    assert figures == 5  # SEG, DTS, Clarke, Parkes type 1, learned
    assert page.count("data:image/png;base64,") == figures
    for grid in grids():
        assert grid.title in page


def test_small_samples_show_the_caution_in_the_document():
    report = meter_report(pd.DataFrame({"BGM": [110, 95], "REF": [100, 100]}), None)
    blocks = report_blocks(report)
    page = report_html(blocks)
    assert '<p class="caution">Only 2 pairs' in page
    assert "Not in this report: it needs the SEG risk table" in page


def test_display_frame_reads_like_the_tables():
    frame = pd.DataFrame({"zone": ["A", "B"], "percent": [99.98, 0.02], "meets": [True, False]})
    shown = display_frame(frame)
    assert shown.to_dict("list") == {
        "Zone": ["A", "B"],
        "Share (%)": ["99.98", "0.02"],
        "Verdict": ["meets", "fails"],
    }
    wide = pd.DataFrame({"range": ["low", "high"], **{f"c{i}": [i, np.nan] for i in range(9)}})
    shown = display_frame(wide)
    assert list(shown.columns) == ["Measure", "low", "high"]
    assert shown.iloc[1].tolist() == ["c1", "1.0", "—"]
    # intervals in one column, glucose in mmol/L with mg/dL beside it
    frame = pd.DataFrame(
        {
            "range": ["< 70 mg/dL", "70–180 mg/dL"],
            "count": [3, 1234],
            "ci_lower_percent": [1.25, 2.0],
            "ci_upper_percent": [9.0, 30.0],
        }
    )
    shown = display_frame(frame, unit="mmol/L")
    assert shown.to_dict("list") == {
        "Range": ["< 3.9 mmol/L (70 mg/dL)", "3.9–10.0 mmol/L (70–180 mg/dL)"],
        "Pairs": ["3", "1,234"],
        "95 % CI (%)": ["1.2–9.0", "2.0–30.0"],
    }


def test_display_frame_names_every_acceptance_profile_by_its_title():
    """The acceptance table shows each registered profile under its title (the registry's), and
    a name the registry does not know as it is."""
    names = [profile.name for profile in profiles()] + ["unregistered"]
    shown = display_frame(pd.DataFrame({"profile": names, "count": range(len(names))}))
    assert list(shown.iloc[:, 0])[: len(names)] == [get_profile(n).title for n in names[:-1]] + [
        "unregistered"
    ]


def test_write_report_chooses_the_format_by_suffix(tmp_path, parts):
    report, _ = parts
    pdf = write_report(tmp_path / "out" / "r.pdf", report)
    assert pdf.read_bytes()[:5] == b"%PDF-"
    html = write_report(tmp_path / "r.html", report)
    assert html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    with pytest.raises(ValueError, match=r"\.pdf or \.html"):
        write_report(tmp_path / "r.docx", report)


@pytest.mark.skipif(not os.environ.get("SEG_TABLE"), reason="SEG_TABLE is not set")
def test_cli_writes_the_pdf(tmp_path):
    from typer.testing import CliRunner

    from ranking_core.cli import app

    data = tmp_path / "pairs.csv"
    pd.DataFrame({"BGM": BGM, "REF": REF}).to_csv(data, index=False)
    out = tmp_path / "report.pdf"
    result = CliRunner().invoke(app, ["meter-report", str(data), "--report", str(out)])
    assert result.exit_code == 0, result.output
    text = " ".join(page.extract_text() for page in PdfReader(out).pages)
    assert "pairs.csv" in text and "Surveillance Error Grid" in text
    bad = CliRunner().invoke(app, ["meter-report", str(data), "--report", str(tmp_path / "r.doc")])
    assert bad.exit_code == 1 and ".pdf or .html" in bad.output
