"""The one-click meter accuracy report as a document a clinician can hand on: PDF (ReportLab) or
HTML, built from one content list so that both say the same.

Contents: a title with the data set's name; pairs read, included and excluded; unit, date and
riskgrid version; the small-sample cautions; the criteria of the acceptance profiles judged; the
official SEG tool's six tables; statistics by glucose range; the modified Bland–Altman plot
(:func:`~ranking_core.meter.documents.grid_plots.bland_altman_plot`); for each grid (SEG, DTS,
Clarke, Parkes, learned) its purpose, its zone table with 95 % intervals and its plot
(:mod:`ranking_core.meter.documents.grid_plots`); an appendix naming every registered grid with
its paper. The PDF layout is :mod:`ranking_core.meter.documents.pdf`.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from ranking_core.grids.registry import RiskGrid, get_grid, grids
from ranking_core.grids.seg import MISSING_SEG_MESSAGE, SEGTable
from ranking_core.meter.cgm.cg_diva import CG_DIVA_ABOUT, CG_DIVA_CAPTION, cg_diva_frame
from ranking_core.meter.cgm.cg_ega import CG_EGA_ABOUT
from ranking_core.meter.documents.blocks import (
    VERDICT_COLOURS,
    Block,
    FigureBlock,
    Heading,
    TableBlock,
    Text,
    escaped,
)
from ranking_core.meter.documents.display import acceptance_summary, display_frame, value_text
from ranking_core.meter.documents.grid_plots import (
    bland_altman,
    bland_altman_caption,
    bland_altman_plot,
    cg_diva_plot,
    figure_png,
    grid_plot,
)
from ranking_core.meter.report import SEG_TOOL_TABLES, TABLE_TITLES, MeterReport

__all__ = [
    "REPORT_FORMATS",
    "bland_altman_report_plot",
    "report_blocks",
    "report_figures",
    "report_html",
    "report_pdf",
    "report_pdf_file",
    "write_report",
]

REPORT_FORMATS = (".pdf", ".html")


def report_figures(
    report: MeterReport, seg_table: SEGTable | None = None, learned_risk: ArrayLike | None = None
) -> dict[str, Figure]:
    """The report's error-grid plots by grid name: SEG (with its table), the report's zone grids
    (DTS, Clarke, Parkes), learned (with its surface), each with the included pairs."""
    pairs = report.pairs[report.pairs["included"]]
    ref, bgm = pairs["REF"].to_numpy(), pairs["BGM"].to_numpy()
    surfaces: dict[str, ArrayLike | SEGTable | None] = (
        {"seg": seg_table} if seg_table is not None else {}
    )
    surfaces.update(dict.fromkeys(report.zone_grids.values()))
    if learned_risk is not None:
        surfaces["learned"] = learned_risk
    return {
        name: grid_plot(name, ref, bgm, surface=surface, unit=report.glucose_unit)
        for name, surface in surfaces.items()
    }


def bland_altman_report_plot(report: MeterReport) -> tuple[Figure, str]:
    """The report's modified Bland–Altman plot of its included pairs and its caption (the same
    in the PDF, the HTML, the ``--out-dir`` files and on the dashboard)."""
    pairs = report.pairs[report.pairs["included"]]
    data = bland_altman(pairs["REF"].to_numpy(), pairs["BGM"].to_numpy())
    return bland_altman_plot(data, unit=report.glucose_unit), bland_altman_caption(data)


def figure_caption(name: str, n: int, unit: str = "mg/dL") -> str:
    """What a report's grid plot shows, every drawn line named (one caption per figure)."""
    grid = get_grid(name)
    lines = (
        "black lines: the borders between the risk grades A–E (risk 0.5, 1.5, 2.5, 3.5)"
        if isinstance(grid, RiskGrid)
        else "black lines: the zone borders, zones lettered"
    )
    axes = "; mmol/L on the top and right axes" if unit == "mmol/L" else ""
    return (
        f"{grid.title}: the {n:,} analysed pairs (dots, or pairs per cell where there are "
        f"many) over the grid's colours; {lines}; dotted line: measured = reference"
        f"{axes}."
    )


def cg_diva_blocks(report: MeterReport) -> list[Block]:
    """CG-DIVA's heading, table and figure when the report has it (pairs with sensors)."""
    if report.cg_diva is None:
        return []
    name = "cg_diva"
    return [
        Heading("CG-DIVA"),
        Text(CG_DIVA_ABOUT),
        TableBlock(TABLE_TITLES[name], display_frame(cg_diva_frame(report.cg_diva), name)),
        FigureBlock(CG_DIVA_CAPTION, cg_diva_plot(report.cg_diva)),
    ]


def cg_ega_blocks(report: MeterReport) -> list[Block]:
    """The CG-EGA's heading, its table by glycaemic state and its zone counts, when the report
    has it (pairs with both times: the trend table's rates)."""
    analysis = None if report.trend is None else report.trend.cg_ega
    if analysis is None:
        return []
    return [
        Heading("Continuous glucose-error grid analysis (CG-EGA)"),
        Text(CG_EGA_ABOUT),
        TableBlock(TABLE_TITLES["cg_ega"], display_frame(analysis.frame(), "cg_ega")),
        TableBlock(
            "CG-EGA: pairs in each point (P-EGA) and rate (R-EGA) zone",
            display_frame(analysis.zone_frame(), "cg_ega_zones"),
        ),
    ]


def report_blocks(
    report: MeterReport,
    seg_table: SEGTable | None = None,
    learned_risk: ArrayLike | None = None,
    *,
    name: str | None = None,
    created: datetime | None = None,
) -> list[Block]:
    """The report's content in order: headings, text, tables (as text) and figures.

    ``name`` is the data set's name (default: the report's source); ``created`` the date shown
    (default: now, UTC).
    """
    created = created or datetime.now(UTC)
    name = name or report.source or "meter pairs"
    types = report.pair_types.set_index("pair_type")["count"]
    total, included = int(types["Total"]), int(types["Total included in SEG analysis"])
    titles = report.titles()
    unit = report.glucose_unit
    items = {
        "data set": name,
        "pairs analysed": f"{included:,} of {total:,}",
        "pairs excluded (above 600 mg/dL or below 0)": f"{total - included:,}",
        "glucose unit": (
            unit if unit == "mg/dL" else f"{unit} (converted to mg/dL for the SEG tool's tables)"
        ),
        "Parkes grid": f"type {report.parkes_type} diabetes",
        "SEG risk table": (
            "used" if seg_table is not None else "not configured (SEG tables and plot left out)"
        ),
        "created": created.strftime("%Y-%m-%d %H:%M UTC"),
        **{item: value_text(value) for item, value in report.provenance.items()},
    }
    blocks: list[Block] = [
        Heading(f"Meter accuracy report: {name}", 0),
        TableBlock(
            "Provenance", pd.DataFrame({"Item": list(items), "Value": list(items.values())})
        ),
    ]
    if report.caveats:
        blocks.append(Heading("Caution"))
        blocks.extend(Text(c, caution=True) for c in report.caveats)
    notes = [m for m in report.messages if m != MISSING_SEG_MESSAGE]
    if notes:
        blocks.append(Heading("Notes on the data"))
        blocks.extend(Text(m) for m in notes)
    judged = report.judged_profiles()
    blocks += [
        Heading(f"Acceptance criteria: {', '.join(judged)}" if judged else "Acceptance criteria"),
        *(Text(sentence) for sentence in acceptance_summary(report.acceptance)),
        *(Text(note) for note in report.acceptance_notes),
        TableBlock(titles["acceptance"], display_frame(report.acceptance, "acceptance", unit)),
        Heading("Statistics by glucose range"),
        Text(
            "Ranges of the reference glucose. MARD with a bootstrap 95 % interval; "
            "±15/15 and ±20/20: within 15 (20) mg/dL below 100 mg/dL, within 15 (20) % "
            "from 100 mg/dL on, with Wilson 95 % intervals."
        ),
        TableBlock(titles["ranges"], display_frame(report.ranges, "ranges", unit)),
        Heading("The SEG tool's tables"),
    ]
    tables = report.tables()
    blocks += [
        TableBlock(titles[t], display_frame(tables[t], t, unit))
        for t in SEG_TOOL_TABLES
        if t in tables
    ]
    plot, caption = bland_altman_report_plot(report)
    blocks += [
        Heading("Modified Bland–Altman plot"),
        Text(
            "Each pair's difference BGM − REF in % of REF against REF, with the mean bias and "
            "the 95 % limits of agreement of the accuracy table above (Bland & Altman, Lancet "
            "1986;327:307–310; relative differences, as the official SEG tool draws them)."
        ),
        FigureBlock(caption, plot),
    ]
    # the SEG's grades and categories are among the SEG tool's tables above
    table_of = {**{g: f for f, g in report.zone_grids.items()}, "learned": "learned_categories"}
    figures = report_figures(report, seg_table, learned_risk)
    for name, figure in figures.items():
        grid = get_grid(name)
        blocks += [Heading(grid.title), Text(grid.purpose), Text(f"Source: {grid.citation}")]
        if table_of.get(name) in tables:
            table = table_of[name]
            blocks.append(TableBlock(titles[table], display_frame(tables[table], table, unit)))
        blocks.append(FigureBlock(figure_caption(name, included, unit), figure))
    blocks += cg_diva_blocks(report)
    blocks += cg_ega_blocks(report)
    blocks.append(Heading("Error grids known to riskgrid"))
    for grid in grids():
        used = grid.name in figures
        note = (
            ""
            if used
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
    blocks = report_blocks(report, seg_table, learned_risk, name=name)
    report_progress(1, 2)
    document = report_pdf(blocks)
    report_progress(2, 2)
    return document
