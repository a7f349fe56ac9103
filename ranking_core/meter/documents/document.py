"""The one-click meter / CGM accuracy report as a document a clinician can hand on: PDF
(ReportLab) or HTML, built from one content list so that both say the same.

Contents: a title with the data set's name and the date; the summary line of every section;
then each section of :data:`~ranking_core.meter.sections.SECTIONS` in order (the settings, the
verdicts of the standards judged, point accuracy, the method comparison with the Bland–Altman
plot, the error grids, the CGM analyses, the notes and the provenance), each with its heading,
text, tables and figures; an appendix naming every registered grid with its paper. The PDF
layout is :mod:`ranking_core.meter.documents.pdf`.
"""

from __future__ import annotations

import base64
import gc
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from ranking_core.grids.registry import RiskGrid, grids
from ranking_core.grids.seg import SEGTable
from ranking_core.meter.documents.blocks import (
    VERDICT_COLOURS,
    Block,
    FigureBlock,
    Heading,
    TableBlock,
    Text,
    escaped,
)
from ranking_core.meter.drawing.grid_plots import figure_png
from ranking_core.meter.report import MeterReport
from ranking_core.meter.sections.base import SectionView
from ranking_core.meter.sections.grids import figure_caption
from ranking_core.version import riskgrid_version

__all__ = [
    "REPORT_FORMATS",
    "collecting_new_objects_only",
    "figure_caption",
    "report_blocks",
    "report_figures",
    "report_html",
    "report_pdf",
    "report_pdf_file",
    "report_title",
    "write_report",
]

REPORT_FORMATS = (".pdf", ".html")


@contextmanager
def collecting_new_objects_only() -> Iterator[None]:
    """Inside the block, Python's garbage collector scans only the objects made in it
    (``gc.freeze``; they are all scanned again after it). Writing a document makes matplotlib
    and ReportLab objects by the hundred thousand, which set off full collections, and each one
    would also walk every object already there (the report, pandas, matplotlib's modules):
    0.06–0.09 s of the 10,000-pair report's PDF. Objects someone else froze stay frozen."""
    owner = gc.get_freeze_count() == 0
    if owner:
        gc.freeze()
    try:
        yield
    finally:
        if owner:
            gc.unfreeze()


def report_figures(
    report: MeterReport, seg_table: SEGTable | None = None, learned_risk: ArrayLike | None = None
) -> dict[str, Figure]:
    """Every figure of the report's sections by name (the error grids, the Bland–Altman plot,
    CG-DIVA ...), drawn. ``seg_table`` and ``learned_risk`` are read from the report (kept for
    callers that pass them)."""
    del seg_table, learned_risk
    return {figure.name: figure.draw() for view in report.views() for figure in view.figures}


def _section_blocks(view: SectionView, unit: str) -> list[Block]:
    """One section as blocks: its heading, summary, cautions and paragraphs, each table (with
    its caption) and each figure."""
    blocks: list[Block] = [Heading(view.title), Text(view.summary)]
    blocks += [Text(caution, caution=True) for caution in view.cautions]
    blocks += [Text(paragraph) for paragraph in view.about]
    for table in view.tables:
        blocks.append(TableBlock(table.title, table.reader(unit)))
        if table.caption:
            blocks.append(Text(table.caption))
    blocks += [FigureBlock(figure.caption, figure.draw()) for figure in view.figures]
    return blocks


def report_title(report: MeterReport) -> str:
    """The document's title: what was measured (a meter's or a CGM's accuracy report)."""
    return "CGM accuracy report" if report.device == "cgm" else "Meter accuracy report"


def report_blocks(
    report: MeterReport,
    seg_table: SEGTable | None = None,
    learned_risk: ArrayLike | None = None,
    *,
    name: str | None = None,
    created: datetime | None = None,
) -> list[Block]:
    """The report's content in order: the title, the summary of every section, then each
    section of :data:`~ranking_core.meter.sections.SECTIONS` (heading, text, tables as text,
    figures), then the error grids known to riskgrid.

    ``name`` is the data set's name (default: the report's source); ``created`` the date shown
    (default: now, UTC). ``seg_table`` and ``learned_risk`` are read from the report.
    """
    del seg_table, learned_risk
    created = created or datetime.now(UTC)
    name = name or report.source or "meter pairs"
    views = report.views()
    blocks: list[Block] = [
        Heading(f"{report_title(report)}: {name}", 0),
        Text(f"Created {created.strftime('%Y-%m-%d %H:%M UTC')} by riskgrid {riskgrid_version()}."),
        Heading("Summary"),
        *(Text(f"{view.title}: {view.summary}") for view in views),
    ]
    for view in views:
        blocks += _section_blocks(view, report.glucose_unit)
    used = {figure.name for view in views for figure in view.figures}
    blocks.append(Heading("Error grids known to riskgrid"))
    for grid in grids():
        note = (
            ""
            if grid.name in used
            else (
                " Not in this report: it needs " + grid.needs + "."
                if isinstance(grid, RiskGrid)
                else " Not in this report (another diabetes type was chosen)."
            )
        )
        blocks.append(Text(f"{grid.title}. {grid.purpose} {grid.citation}{note}"))
    return blocks


# --- HTML -------------------------------------------------------------------------------------

_CSS = """body{font-family:DejaVu Sans,Arial,sans-serif;max-width:1000px;margin:2em auto;
color:#111}table{border-collapse:collapse;margin:.5em 0 1.2em;font-size:.85em}
td,th{border:1px solid #bbb;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#eee}td.number{text-align:right;white-space:nowrap}.caution{background:#fff3cd;
padding:.4em;border-left:4px solid #e0a800}img{width:100%;max-width:760px}
h4{margin:.8em 0 .2em}"""
_NUMBER = re.compile(r"[-+−]?[\d,]*\d(\.\d+)?( / [\d,]+)?|[\d.]+–[\d.]+|—")


def _html_table(frame: pd.DataFrame) -> str:
    """A table of text as HTML: every header and cell escaped; columns of numbers (counts,
    shares, intervals) right-aligned, text left-aligned and wrapped; verdicts in their colour."""
    head = "".join(f"<th>{escaped(c)}</th>" for c in frame.columns)
    numbers = [all(_NUMBER.fullmatch(str(v)) for v in frame[column]) for column in frame.columns]
    rows = []
    for row in frame.itertuples(index=False):
        cells = []
        for value, number in zip(map(str, row), numbers, strict=True):
            if value in VERDICT_COLOURS:
                style = f' style="color:{VERDICT_COLOURS[value]};font-weight:bold"'
            else:
                style = ' class="number"' if number else ""
            cells.append(f"<td{style}>{escaped(value)}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def report_html(blocks: list[Block]) -> str:
    """A standalone HTML page of the report (figures embedded as PNG; all text escaped)."""
    parts = []
    for block in blocks:
        if isinstance(block, Heading):
            level = block.level + 1
            parts.append(f"<h{level}>{escaped(block.text)}</h{level}>")
        elif isinstance(block, Text):
            css = ' class="caution"' if block.caution else ""
            parts.append(f"<p{css}>{escaped(block.text)}</p>")
        elif isinstance(block, TableBlock):
            parts.append(f"<h4>{escaped(block.title)}</h4>{_html_table(block.frame)}")
        else:
            data = base64.b64encode(figure_png(block.figure)).decode("ascii")
            parts.append(
                f'<figure><img alt="{escaped(block.caption)}" '
                f'src="data:image/png;base64,{data}"><figcaption>'
                f"{escaped(block.caption)}</figcaption></figure>"
            )
    title = next((b.text for b in blocks if isinstance(b, Heading)), "Meter accuracy report")
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>'
        f"{escaped(title)}</title><style>{_CSS}</style></head><body>"
        + "\n".join(parts)
        + "</body></html>"
    )


# --- PDF --------------------------------------------------------------------------------------


def report_pdf(blocks: list[Block], header: str | None = None) -> bytes:
    """The report as PDF bytes: :func:`ranking_core.meter.documents.pdf.report_pdf` (A4, every
    column inside the page, a running header and "page N of M" on every page)."""
    from ranking_core.meter.documents.pdf import report_pdf as pdf

    return pdf(blocks, header)


def write_report(
    path: str | os.PathLike,
    report: MeterReport,
    seg_table: SEGTable | None = None,
    learned_risk: ArrayLike | None = None,
    *,
    name: str | None = None,
) -> Path:
    """Write the report as PDF or HTML, chosen by the file's suffix (.pdf or .html)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in REPORT_FORMATS:
        raise ValueError(
            f"write_report: the report file must end in {' or '.join(REPORT_FORMATS)}"
            f"; got {path.name!r}"
        )
    with collecting_new_objects_only():
        blocks = report_blocks(report, seg_table, learned_risk, name=name)
        path.parent.mkdir(parents=True, exist_ok=True)
        if suffix == ".pdf":
            path.write_bytes(report_pdf(blocks))
        else:
            path.write_text(report_html(blocks), encoding="utf-8")
    return path


def report_pdf_file(
    report: MeterReport,
    seg_table: SEGTable | None = None,
    learned_risk: ArrayLike | None = None,
    *,
    name: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> bytes:
    """The report as PDF bytes (:func:`report_blocks`, then :func:`report_pdf`), each of the two
    steps reported to ``progress(done, 2)``: a long job for a server's runner
    (:mod:`ranking_core.jobs`), which may stop it between the steps."""
    report_progress = progress or (lambda done, total: None)
    report_progress(0, 2)
    with collecting_new_objects_only():
        blocks = report_blocks(report, seg_table, learned_risk, name=name)
        report_progress(1, 2)
        document = report_pdf(blocks)
    report_progress(2, 2)
    return document
