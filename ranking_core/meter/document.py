"""The one-click meter accuracy report as a document a clinician can hand on: PDF (ReportLab) or
HTML, built from one content list so that both say the same.

Contents: a title with the data set's name; pairs read, included and excluded; unit, date and
riskgrid version; the small-sample cautions; the ISO 15197:2013 criteria; the official SEG tool's
six tables; statistics by glucose range; for each grid (SEG, DTS, Clarke, Parkes, learned) its
purpose, its zone table with 95 % intervals and its plot (:mod:`ranking_core.meter.grid_plots`);
an appendix naming every registered grid with its paper.
"""

from __future__ import annotations

import base64
import html
import io
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from numpy.typing import ArrayLike
from PIL import Image as PILImage
from reportlab.lib.utils import ImageReader
from reportlab.platypus import Flowable

from ranking_core.grids.registry import RiskGrid, get_grid, grids
from ranking_core.grids.seg import MISSING_SEG_MESSAGE, SEGTable
from ranking_core.meter.grid_plots import figure_png, grid_plot
from ranking_core.meter.report import MeterReport
from ranking_core.version import riskgrid_version

__all__ = ["REPORT_FORMATS", "display_frame", "report_blocks", "report_figures", "report_html",
           "report_pdf", "write_report"]

REPORT_FORMATS = (".pdf", ".html")
SEG_TOOL_TABLES = ("pair_types", "accuracy", "risk_grades", "risk_categories", "iso_ranges",
                   "binomial")
WIDE = 8  # tables with more columns are shown transposed


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 1


@dataclass(frozen=True)
class Text:
    text: str
    caution: bool = False


@dataclass(frozen=True)
class TableBlock:
    title: str
    frame: pd.DataFrame  # already formatted as text (display_frame)


@dataclass(frozen=True)
class FigureBlock:
    caption: str
    figure: Figure


Block = Heading | Text | TableBlock | FigureBlock


def _cell(value: object) -> str:
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, float | np.floating):
        if np.isnan(value):
            return "—"
        text = f"{value:.1f}"
        # never show 99.98 % as 100.0 or 0.02 % as 0.0
        return f"{value:.2f}" if float(text) != value and float(text) in (0.0, 100.0) else text
    return str(value)


def display_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A table as text for reading: numbers to one decimal, NaN as '—', booleans as yes/no,
    underscores in names as spaces; one-row tables as measure / value and tables wider than
    ``WIDE`` columns transposed (one column per row of the original, named by its first cell)."""
    text = frame.map(_cell)
    text.columns = [str(c).replace("_", " ") for c in frame.columns]
    if len(frame) == 1:
        return pd.DataFrame({"measure": text.columns, "value": text.iloc[0].tolist()})
    if len(frame.columns) > WIDE:
        first = text.columns[0]
        body = text.set_index(first).T
        body.columns = [f"{first} {c}" for c in body.columns]
        return body.reset_index(names="measure")
    return text


def report_figures(report: MeterReport, seg_table: SEGTable | None = None,
                   learned_risk: ArrayLike | None = None) -> dict[str, Figure]:
    """The report's error-grid plots by grid name: SEG (with its table), the report's zone grids
    (DTS, Clarke, Parkes), learned (with its surface), each with the included pairs."""
    pairs = report.pairs[report.pairs["included"]]
    ref, bgm = pairs["REF"].to_numpy(), pairs["BGM"].to_numpy()
    surfaces = {"seg": seg_table} if seg_table is not None else {}
    surfaces.update(dict.fromkeys(report.zone_grids.values()))
    if learned_risk is not None:
        surfaces["learned"] = learned_risk
    return {name: grid_plot(name, ref, bgm, surface=surface) for name, surface in surfaces.items()}


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
    blocks: list[Block] = [
        Heading(f"Meter accuracy report: {name}", 0),
        TableBlock("Data", pd.DataFrame({"item": [
            "data set", "pairs read", "pairs included", "pairs excluded", "unit",
            "Parkes grid", "SEG risk table", "created", "riskgrid version"], "value": [
            name, str(total), str(included), str(total - included), "mg/dL",
            f"type {report.parkes_type} diabetes", "used" if seg_table is not None else
            "not configured (SEG tables and plot left out)", created.strftime("%Y-%m-%d %H:%M UTC"),
            riskgrid_version()]})),
    ]
    if report.caveats:
        blocks.append(Heading("Caution"))
        blocks.extend(Text(c, caution=True) for c in report.caveats)
    notes = [m for m in report.messages if m != MISSING_SEG_MESSAGE]
    if notes:
        blocks.append(Heading("Notes on the data"))
        blocks.extend(Text(m) for m in notes)
    blocks += [Heading("ISO 15197:2013 accuracy criteria"),
               Text("A criterion passes when its observed share reaches the required share; "
                    "the 95 % interval (Wilson) shows how sure that is."),
               TableBlock(titles["iso_criteria"], display_frame(report.iso_criteria)),
               Heading("Statistics by glucose range"),
               Text("Ranges of the reference glucose. MARD with a bootstrap 95 % interval; "
                    "±15/15 and ±20/20: within 15 (20) mg/dL below 100 mg/dL, within 15 (20) % "
                    "from 100 mg/dL on, with Wilson 95 % intervals."),
               TableBlock(titles["ranges"], display_frame(report.ranges)),
               Heading("The SEG tool's tables")]
    tables = report.tables()
    blocks += [TableBlock(titles[t], display_frame(tables[t])) for t in SEG_TOOL_TABLES
               if t in tables]
    # the SEG's grades and categories are among the SEG tool's tables above
    table_of = {**{g: f for f, g in report.zone_grids.items()}, "learned": "learned_categories"}
    figures = report_figures(report, seg_table, learned_risk)
    for name, figure in figures.items():
        grid = get_grid(name)
        blocks += [Heading(grid.title), Text(grid.purpose), Text(f"Source: {grid.citation}")]
        if table_of.get(name) in tables:
            blocks.append(TableBlock(titles[table_of[name]], display_frame(tables[table_of[name]])))
        blocks.append(FigureBlock(figure.axes[0].get_title(), figure))
    blocks.append(Heading("Error grids known to riskgrid"))
    for grid in grids():
        used = grid.name in figures
        note = "" if used else (" Not in this report: it needs " + grid.needs + "."
                                if isinstance(grid, RiskGrid) else
                                " Not in this report (another diabetes type was chosen).")
        blocks.append(Text(f"{grid.title}. {grid.purpose} {grid.citation}{note}"))
    return blocks


# --- HTML -------------------------------------------------------------------------------------

_CSS = """body{font-family:DejaVu Sans,Arial,sans-serif;max-width:1000px;margin:2em auto;
color:#111}table{border-collapse:collapse;margin:.5em 0 1.2em;font-size:.85em}
td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}th{background:#eee}
td:first-child,th:first-child{text-align:left}.caution{background:#fff3cd;padding:.4em;
border-left:4px solid #e0a800}img{width:100%;max-width:760px}h4{margin:.8em 0 .2em}"""


def report_html(blocks: list[Block]) -> str:
    """A standalone HTML page of the report (figures embedded as PNG; all text escaped)."""
    parts = []
    for block in blocks:
        if isinstance(block, Heading):
            level = block.level + 1
            parts.append(f"<h{level}>{html.escape(block.text)}</h{level}>")
        elif isinstance(block, Text):
            css = ' class="caution"' if block.caution else ""
            parts.append(f"<p{css}>{html.escape(block.text)}</p>")
        elif isinstance(block, TableBlock):
            table = block.frame.to_html(index=False, escape=True, border=0)
            parts.append(f"<h4>{html.escape(block.title)}</h4>{table}")
        else:
            data = base64.b64encode(figure_png(block.figure)).decode("ascii")
            parts.append(f'<figure><img alt="{html.escape(block.caption)}" '
                         f'src="data:image/png;base64,{data}"><figcaption>'
                         f"{html.escape(block.caption)}</figcaption></figure>")
    title = next((b.text for b in blocks if isinstance(b, Heading)), "Meter accuracy report")
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
            f"{html.escape(title)}</title><style>{_CSS}</style></head><body>"
            + "\n".join(parts) + "</body></html>")


# --- PDF --------------------------------------------------------------------------------------

FONT, BOLD = "DejaVuSans", "DejaVuSans-Bold"


@lru_cache(maxsize=1)
def _fonts() -> tuple[str, str]:
    """Register DejaVu Sans (shipped with matplotlib) so that ±, ≥, ≤, – print in the PDF."""
    import matplotlib
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    folder = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    pdfmetrics.registerFont(TTFont(FONT, str(folder / "DejaVuSans.ttf")))
    pdfmetrics.registerFont(TTFont(BOLD, str(folder / "DejaVuSans-Bold.ttf")))
    pdfmetrics.registerFontFamily(FONT, normal=FONT, bold=BOLD)
    return FONT, BOLD


PDF_DPI = 150  # 960 px for a 15 cm figure: 160 dpi in print


def _raster(fig: Figure, dpi: int = PDF_DPI) -> PILImage.Image:
    """The figure drawn by Agg as an RGB image (no PNG encoding and decoding on the way)."""
    fig.set_dpi(dpi)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return PILImage.fromarray(np.asarray(canvas.buffer_rgba())[..., :3])


def _widths(frame: pd.DataFrame, width: float) -> list[float]:
    """Column widths (points) by the longest text of each column, at most the page width."""
    natural = np.array([4.6 * min(max(len(str(c)), *(len(v) for v in frame[c]), 4), 60) + 8
                        for c in frame.columns])
    if natural.sum() <= width:
        return natural.tolist()
    short = natural <= 70  # numbers keep their width; long texts wrap
    room = max(width - natural[short].sum(), 60.0 * (~short).sum())
    natural[~short] *= room / natural[~short].sum()
    return natural.tolist()


class _Picture(Flowable):
    """A square raster image ``side`` points wide, handed to ReportLab already decoded."""

    def __init__(self, image: PILImage.Image, side: float) -> None:
        super().__init__()
        self.image, self.side = image, side

    def wrap(self, available_width: float, available_height: float) -> tuple[float, float]:
        return self.side, self.side

    def draw(self) -> None:
        self.canv.drawImage(ImageReader(self.image), 0, 0, self.side, self.side)


def report_pdf(blocks: list[Block]) -> bytes:
    """The report as PDF bytes (ReportLab; A4; DejaVu Sans; figures 15 cm wide)."""
    from reportlab import rl_config
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.lib.units import cm
    from reportlab.platypus import (
        KeepTogether,
        Paragraph,
        SimpleDocTemplate,
        Spacer,
        Table,
        TableStyle,
    )

    rl_config.useA85 = 0  # binary image streams: ASCII85 is pure Python here and slow
    font, bold = _fonts()
    body = ParagraphStyle("body", fontName=font, fontSize=9, leading=12, spaceAfter=4)
    caution = ParagraphStyle("caution", parent=body, backColor=colors.HexColor("#fff3cd"),
                             borderPadding=3, spaceBefore=3, spaceAfter=6)
    cell = ParagraphStyle("cell", fontName=font, fontSize=7.5, leading=9)
    head = ParagraphStyle("head", parent=cell, fontName=bold)
    headings = {level: ParagraphStyle(f"h{level}", fontName=bold, fontSize=size, leading=size + 4,
                                      spaceBefore=8 if level else 0, spaceAfter=6)
                for level, size in ((0, 16), (1, 12.5), (2, 10.5))}

    def para(text: str, style: ParagraphStyle) -> Paragraph:
        return Paragraph(html.escape(text), style)

    story = []
    width = A4[0] - 3 * cm
    for block in blocks:
        if isinstance(block, Heading):
            story.append(para(block.text, headings[min(block.level, 2)]))
        elif isinstance(block, Text):
            story.append(para(block.text, caution if block.caution else body))
        elif isinstance(block, TableBlock):
            rows = [[para(str(c), head) for c in block.frame.columns]]
            rows += [[para(v, cell) for v in row] for row in block.frame.itertuples(index=False)]
            table = Table(rows, repeatRows=1, hAlign="LEFT", colWidths=_widths(block.frame, width))
            table.setStyle(TableStyle([
                ("GRID", (0, 0), (-1, -1), 0.4, colors.HexColor("#999999")),
                ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eeeeee")),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("LEFTPADDING", (0, 0), (-1, -1), 3), ("RIGHTPADDING", (0, 0), (-1, -1), 3),
            ]))
            story.append(KeepTogether([para(block.title, headings[2]), table]))
        else:
            side = min(width, 15 * cm)
            story.append(KeepTogether([_Picture(_raster(block.figure), side),
                                       para(block.caption, body)]))
        story.append(Spacer(1, 2))
    buffer = io.BytesIO()
    title = next((b.text for b in blocks if isinstance(b, Heading)), "Meter accuracy report")
    SimpleDocTemplate(buffer, pagesize=A4, leftMargin=1.5 * cm, rightMargin=1.5 * cm,
                      topMargin=1.5 * cm, bottomMargin=1.5 * cm, title=title,
                      author=f"riskgrid {riskgrid_version()}").build(story)
    return buffer.getvalue()


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
        raise ValueError(f"write_report: the report file must end in {' or '.join(REPORT_FORMATS)}"
                         f"; got {path.name!r}")
    blocks = report_blocks(report, seg_table, learned_risk, name=name)
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".pdf":
        path.write_bytes(report_pdf(blocks))
    else:
        path.write_text(report_html(blocks), encoding="utf-8")
    return path
