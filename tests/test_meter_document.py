"""The one-click report: the PDF opens, its text names every grid; HTML says the same."""

from __future__ import annotations

import gc
import io
import os
import weakref
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest
from pypdf import PdfReader

from ranking_core.grids import SEGTable, grids
from ranking_core.meter import meter_report
from ranking_core.meter.documents.blocks import FigureBlock
from ranking_core.meter.documents.document import (
    collecting_new_objects_only,
    report_blocks,
    report_html,
    report_pdf,
    write_report,
)
from ranking_core.meter.drawing.display import display_frame
from ranking_core.meter.standards.acceptance import get_profile, profiles
from ranking_core.version import riskgrid_version

RNG = np.random.default_rng(12)
REF = RNG.integers(30, 500, 400)
BGM = np.rint(REF * RNG.lognormal(0, 0.12, 400)).astype(int)
BGM[:3] = [700, 650, 610]  # excluded pairs
INCLUDED = int((BGM <= 600).sum())


@pytest.fixture(scope="module")
def parts():
    seg = SEGTable(np.abs(np.subtract.outer(np.arange(601.0), np.arange(601.0))) / 150, "toy")
    # the report holds its grids: the learned one is drawn because the report counted it
    report = meter_report(pd.DataFrame({"BGM": BGM, "REF": REF}), seg, np.zeros((601, 601)))
    blocks = report_blocks(
        report,
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
        "Bland–Altman plot: BGM − REF against REF",
        "95 % limits of agreement",
        "Passing–Bablok regression",
        "Deming regression",
    ):
        assert needle in text, needle
    counts = report.zones["dts"]["count"].tolist()
    assert f"A no risk {counts[0]}" in text


def test_pdf_figures_have_150_pixels_per_inch_as_printed(parts):
    """Square figures print 12.5 cm wide, wide ones 16 cm; each is rastered for that size at
    150 pixels per inch (738 and 944 px wide), not larger."""
    _, blocks = parts
    reader = PdfReader(io.BytesIO(report_pdf(blocks)))
    sizes = [image.image.size for page in reader.pages for image in page.images]
    figures = [block.figure for block in blocks if isinstance(block, FigureBlock)]
    assert len(sizes) == len(figures) >= 5
    for (width, height), figure in zip(sizes, figures, strict=True):
        inches_wide, inches_high = figure.get_size_inches()
        printed_cm = 12.5 if inches_wide == inches_high else 16.0
        assert width == int(150 * printed_cm / 2.54)
        assert height == pytest.approx(width * inches_high / inches_wide, abs=1)


class _Node:
    """An object in a reference cycle: only the garbage collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_a_document_is_written_with_older_objects_frozen_then_thawed():
    older = _Node()
    with collecting_new_objects_only():
        assert gc.get_freeze_count() > 0
        made_inside = weakref.ref(_Node())
        gc.collect()
        assert made_inside() is None  # new garbage is still collected
    assert gc.get_freeze_count() == 0
    left = weakref.ref(older)
    del older
    gc.collect()
    assert left() is None  # the frozen objects are collected again afterwards
    gc.freeze()  # someone else's freeze is left alone
    try:
        frozen = gc.get_freeze_count()
        with collecting_new_objects_only():
            pass
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_html_escapes_text_and_embeds_the_same_figures(parts):
    _, blocks = parts
    page = report_html(blocks)
    assert "study &lt;A&gt;.csv" in page and "<A>" not in page
    figures = sum(1 for b in blocks if type(b).__name__ == "FigureBlock")
    assert figures == 7  # regression, Bland–Altman, SEG, DTS, Clarke, Parkes type 1, learned
    assert page.count("data:image/png;base64,") == figures
    assert "<figcaption>Bland–Altman plot: BGM − REF against REF" in page
    assert "<h2>Method comparison: Passing–Bablok, Deming and Bland–Altman</h2>" in page
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


def _text_runs(page) -> list[tuple[str, float, float]]:
    """(text, left, right) in points of every text run drawn on a PDF page, its width measured
    with the font it is drawn in (DejaVu Sans or DejaVu Sans Bold)."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    from ranking_core.meter.documents.pdf import BOLD, FONT, _fonts

    _fonts()
    runs = []

    def visit(text, cm, tm, font, size):
        if not text.strip():
            return
        scale = (tm[0] ** 2 + tm[1] ** 2) ** 0.5 * cm[0]
        left = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
        bold = "Bold" in str((font or {}).get("/BaseFont", ""))
        width = stringWidth(text.strip(), BOLD if bold else FONT, size * scale)
        runs.append((text.strip(), left, left + width))

    page.extract_text(visitor_text=visit)
    return runs


def test_pdf_keeps_every_column_inside_the_page_with_header_and_page_numbers(parts):
    from ranking_core.meter.documents.pdf import MARGIN

    report, blocks = parts
    reader = PdfReader(io.BytesIO(report_pdf(blocks)))
    total = len(reader.pages)
    drawn = []
    for number, page in enumerate(reader.pages, 1):
        runs = _text_runs(page)
        width = float(page.mediabox.width)
        outside = [(t, round(right)) for t, _, right in runs if right > width - MARGIN + 2]
        assert not outside, f"page {number}: text beyond the right margin: {outside[:3]}"
        assert min(left for _, left, _ in runs) >= MARGIN - 0.5
        texts = [t for t, _, _ in runs]
        assert f"page {number} of {total}" in texts
        assert "Meter accuracy report: study <A>.csv" in texts  # the running header
        drawn += texts
    # every verdict of the acceptance table printed whole, in order, under its header
    verdicts = display_frame(report.acceptance, "acceptance")["Verdict"].tolist()
    verdicts.append("meets" if report.binomial["meets"].iloc[0] else "fails")  # binomial test
    words = ("passes", "fails", "meets", "no pairs in range")
    assert [t for t in drawn if t in words] == verdicts
    assert {"passes", "fails"} <= set(verdicts)  # the data have both
    assert "Verdict" in drawn  # the column header, whole


def test_a_table_too_wide_for_a_portrait_page_gets_a_landscape_page():
    from ranking_core.meter.documents.document import Heading, TableBlock, Text
    from ranking_core.meter.documents.pdf import MARGIN

    words = [f"column{i}-unbroken" for i in range(8)]  # 8 × ~85 pt: landscape only
    frame = pd.DataFrame({w: [f"value{i}-row{r}" for r in range(3)] for i, w in enumerate(words)})
    blocks = [
        Heading("Wide tables", 0),
        Text("before"),
        TableBlock("eight long columns", frame),
        Text("after the wide table"),
    ]
    reader = PdfReader(io.BytesIO(report_pdf(blocks, header="header text")))
    shapes = [(float(p.mediabox.width), float(p.mediabox.height)) for p in reader.pages]
    assert shapes[0][0] < shapes[0][1] and shapes[-1][0] < shapes[-1][1]  # portrait around it
    turned = [i for i, (w, h) in enumerate(shapes) if w > h]
    assert len(turned) == 1
    page = reader.pages[turned[0]]
    runs = _text_runs(page)
    texts = [t for t, _, _ in runs]
    assert set(words) <= set(texts) and "value7-row2" in texts  # every word whole
    assert max(right for _, _, right in runs) <= shapes[turned[0]][0] - MARGIN + 2
    assert "after the wide table" in reader.pages[turned[0] + 1].extract_text()
    assert f"page {turned[0] + 1} of {len(shapes)}" in texts and "header text" in texts


def test_column_widths_fill_the_width_and_never_cut_a_word():
    from ranking_core.meter.documents.pdf import _text_width, column_widths

    frame = pd.DataFrame(
        {"a": ["short"], "b": ["a much longer text that can wrap over several lines " * 3]}
    )
    natural = column_widths(frame, 10_000)
    assert natural[1] == pytest.approx(220.0)  # a long text wraps even when there is room
    widths = column_widths(frame, 150)
    assert sum(widths) == pytest.approx(150, abs=0.01)
    assert widths[0] == pytest.approx(natural[0])  # the narrow column keeps its width
    assert widths[1] >= _text_width("several") + 7  # the longest word of the wrapped column
    assert column_widths(pd.DataFrame({"x": ["unbreakable-word-" * 10]}), 100) is None


def test_headings_name_only_the_profiles_judged():
    from ranking_core.meter.standards.acceptance import get_profile

    icgm, iso = get_profile("icgm"), get_profile("iso15197")
    report = meter_report(pd.DataFrame({"BGM": BGM, "REF": REF}), None, profiles=("icgm",))
    # one table per standard judged (and per group with --by), under the section's heading
    assert report.titles()["acceptance"] == f"{icgm.title} acceptance criteria"
    blocks = report_blocks(report)
    headings = [b.text for b in blocks if type(b).__name__ == "Heading"]
    assert f"Acceptance criteria ({icgm.title})" in headings
    named = headings + [b.title for b in blocks if type(b).__name__ == "TableBlock"]
    assert not [h for h in named if iso.title in h]
    summary = [b.text for b in blocks if type(b).__name__ == "Text" and "Verdicts" in b.text]
    assert len(summary) == 1 and summary[0].startswith(f"{icgm.title}: {icgm.citation}")
    page = report_html(blocks)
    assert f"<h2>Acceptance criteria ({icgm.title})</h2>" in page
    assert f"<h4>{icgm.title} acceptance criteria</h4>" in page
    both = meter_report(pd.DataFrame({"BGM": BGM, "REF": REF}), None, profiles=("iso15197", "icgm"))
    both_headings = [b.text for b in report_blocks(both) if type(b).__name__ == "Heading"]
    assert f"Acceptance criteria ({iso.title}, {icgm.title})" in both_headings
