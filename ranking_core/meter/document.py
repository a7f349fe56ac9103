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
from ranking_core.inputs.text import printable
from ranking_core.meter.cg_diva import CG_DIVA_ABOUT, CG_DIVA_CAPTION, cg_diva_frame
from ranking_core.meter.display import FAILS, MEETS, PASSES, display_frame
from ranking_core.meter.grid_plots import cg_diva_plot, figure_png, grid_plot
from ranking_core.meter.report import TABLE_TITLES, MeterReport
from ranking_core.version import riskgrid_version

__all__ = [
    "REPORT_FORMATS",
    "report_blocks",
    "report_figures",
    "report_html",
    "report_pdf",
    "write_report",
]

REPORT_FORMATS = (".pdf", ".html")
SEG_TOOL_TABLES = (
    "pair_types",
    "accuracy",
    "risk_grades",
    "risk_categories",
    "iso_ranges",
    "binomial",
)


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


def report_figures(
    report: MeterReport, seg_table: SEGTable | None = None, learned_risk: ArrayLike | None = None
) -> dict[str, Figure]:
    """The report's error-grid plots by grid name: SEG (with its table), the report's zone grids
    (DTS, Clarke, Parkes), learned (with its surface), each with the included pairs."""
    pairs = report.pairs[report.pairs["included"]]
    ref, bgm = pairs["REF"].to_numpy(), pairs["BGM"].to_numpy()
    surfaces = {"seg": seg_table} if seg_table is not None else {}
    surfaces.update(dict.fromkeys(report.zone_grids.values()))
    if learned_risk is not None:
        surfaces["learned"] = learned_risk
    return {
        name: grid_plot(name, ref, bgm, surface=surface, unit=report.glucose_unit)
        for name, surface in surfaces.items()
    }


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
        **{k: f"{v:,}" if isinstance(v, int) else str(v) for k, v in report.provenance.items()},
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
    blocks += [
        Heading("Acceptance criteria"),
        Text(
            "ISO 15197:2013 (blood glucose meters): a criterion passes when its observed "
            "share reaches the required share. FDA iCGM special controls (21 CFR "
            "862.1355; ranges by the sensor's reading): A–G pass when the one-sided 95 % "
            "lower confidence bound exceeds the required share; H and I allow no pair."
        ),
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


# verdicts in the colour of their meaning (green passes, red fails), in every document
VERDICT_COLOURS = {PASSES: "#1a7f37", MEETS: "#1a7f37", FAILS: "#b42318"}

# --- HTML -------------------------------------------------------------------------------------

_CSS = """body{font-family:DejaVu Sans,Arial,sans-serif;max-width:1000px;margin:2em auto;
color:#111}table{border-collapse:collapse;margin:.5em 0 1.2em;font-size:.85em}
td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}th{background:#eee}
td:first-child,th:first-child{text-align:left}.caution{background:#fff3cd;padding:.4em;
border-left:4px solid #e0a800}img{width:100%;max-width:760px}h4{margin:.8em 0 .2em}"""


def _escaped(text: object) -> str:
    """Text for HTML or a ReportLab paragraph: control and bidi characters shown escaped
    (:func:`~ranking_core.inputs.text.printable`), then HTML-escaped."""
    return html.escape(printable(text))


def _printable_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The table with control and bidi characters in its text cells and headers escaped."""
    shown = frame.rename(columns=lambda column: printable(column))
    for column in shown.columns:
        if shown[column].dtype == object:
            shown[column] = shown[column].map(lambda v: printable(v) if isinstance(v, str) else v)
    return shown


def report_html(blocks: list[Block]) -> str:
    """A standalone HTML page of the report (figures embedded as PNG; all text escaped)."""
    parts = []
    for block in blocks:
        if isinstance(block, Heading):
            level = block.level + 1
            parts.append(f"<h{level}>{_escaped(block.text)}</h{level}>")
        elif isinstance(block, Text):
            css = ' class="caution"' if block.caution else ""
            parts.append(f"<p{css}>{_escaped(block.text)}</p>")
        elif isinstance(block, TableBlock):
            table = _printable_frame(block.frame).to_html(index=False, escape=True, border=0)
            for verdict, colour in VERDICT_COLOURS.items():
                table = table.replace(
                    f"<td>{verdict}</td>",
                    f'<td style="color:{colour};font-weight:bold">{verdict}</td>',
                )
            parts.append(f"<h4>{_escaped(block.title)}</h4>{table}")
        else:
            data = base64.b64encode(figure_png(block.figure)).decode("ascii")
            parts.append(
                f'<figure><img alt="{_escaped(block.caption)}" '
                f'src="data:image/png;base64,{data}"><figcaption>'
                f"{_escaped(block.caption)}</figcaption></figure>"
            )
    title = next((b.text for b in blocks if isinstance(b, Heading)), "Meter accuracy report")
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>'
        f"{_escaped(title)}</title><style>{_CSS}</style></head><body>"
        + "\n".join(parts)
        + "</body></html>"
    )


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


FIGURE_CM = 12.5  # a grid's heading, text, zone table and plot fit on one A4 page
PDF_DPI = 150  # 960 px for a 15 cm figure: 160 dpi in print


def _raster(fig: Figure, dpi: int = PDF_DPI) -> PILImage.Image:
    """The figure drawn by Agg as an RGB image (no PNG encoding and decoding on the way)."""
    fig.set_dpi(dpi)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return PILImage.fromarray(np.asarray(canvas.buffer_rgba())[..., :3])


def _widths(frame: pd.DataFrame, width: float) -> list[float]:
    """Column widths (points) by the longest text of each column, at most the page width: when
    the table is too wide, the columns of long texts wrap, never narrower than their longest
    word (no word is cut)."""

    def points(chars: int) -> float:  # DejaVu Sans Bold at 7.5 pt, with the cell's padding
        return 5.2 * chars + 10

    texts = {c: [str(c), *frame[c]] for c in frame.columns}
    floor = np.array(
        [points(max(len(w) for v in t for w in (v.split() or [""]))) for t in texts.values()]
    )
    natural = np.maximum(floor, [points(min(max(4, *map(len, t)), 60)) for t in texts.values()])
    if natural.sum() <= width:
        return natural.tolist()
    long = natural > floor + 1  # columns whose texts can wrap
    room = width - natural[~long].sum()
    shrunk = natural[long] * max(room, 0.0) / natural[long].sum()
    natural[long] = np.maximum(shrunk, floor[long])
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
    """The report as PDF bytes (ReportLab; A4; DejaVu Sans; figures 12.5 cm wide; each heading
    kept on the page of the table or figure that follows it)."""
    from reportlab import rl_config
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.lib.units import cm
    from reportlab.platypus import (
        CondPageBreak,
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
    caution = ParagraphStyle(
        "caution",
        parent=body,
        backColor=colors.HexColor("#fff3cd"),
        borderPadding=3,
        spaceBefore=3,
        spaceAfter=6,
    )
    cell = ParagraphStyle("cell", fontName=font, fontSize=7.5, leading=9)
    head = ParagraphStyle("head", parent=cell, fontName=bold)
    headings = {
        level: ParagraphStyle(
            f"h{level}",
            fontName=bold,
            fontSize=size,
            leading=size + 4,
            spaceBefore=8 if level else 0,
            spaceAfter=6,
        )
        for level, size in ((0, 16), (1, 12.5), (2, 10.5))
    }

    verdicts = {
        text: ParagraphStyle(
            f"verdict {text}", parent=cell, fontName=bold, textColor=colors.HexColor(colour)
        )
        for text, colour in VERDICT_COLOURS.items()
    }

    def para(text: str, style: ParagraphStyle) -> Paragraph:
        return Paragraph(_escaped(text), style)

    story: list = []
    # a heading and the text under it go on the page of the table or figure that follows
    pending: list = []

    def place(*flowables: Flowable) -> None:
        """A heading, its text and a table flow on (a long table splits, its header row
        repeated) after a page break when less than 6 cm are left; with a figure, they move
        to the next page together."""
        if any(isinstance(f, _Picture) for f in flowables):
            story.append(KeepTogether([*pending, *flowables]))
        else:
            story.extend([CondPageBreak(6 * cm), *pending, *flowables])
        pending.clear()

    width = A4[0] - 3 * cm
    for block, following in zip(blocks, [*blocks[1:], None], strict=True):
        if isinstance(block, Heading):
            story.extend(pending)
            pending[:] = [para(block.text, headings[min(block.level, 2)])]
        elif isinstance(block, Text):
            (pending if pending else story).append(
                para(block.text, caution if block.caution else body)
            )
        elif isinstance(block, TableBlock):
            rows = [[para(str(c), head) for c in block.frame.columns]]
            rows += [
                [para(v, verdicts.get(v, cell)) for v in row]
                for row in block.frame.itertuples(index=False)
            ]
            table = Table(rows, repeatRows=1, hAlign="LEFT", colWidths=_widths(block.frame, width))
            table.setStyle(
                TableStyle(
                    [
                        ("GRID", (0, 0), (-1, -1), 0.4, colors.HexColor("#999999")),
                        ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eeeeee")),
                        ("VALIGN", (0, 0), (-1, -1), "TOP"),
                        ("LEFTPADDING", (0, 0), (-1, -1), 3),
                        ("RIGHTPADDING", (0, 0), (-1, -1), 3),
                    ]
                )
            )
            if isinstance(following, FigureBlock):  # a grid's zone table stays with its plot
                pending.extend([para(block.title, headings[2]), table, Spacer(1, 4)])
            else:
                place(para(block.title, headings[2]), table, Spacer(1, 2))
        else:
            side = min(width, FIGURE_CM * cm)
            place(_Picture(_raster(block.figure), side), para(block.caption, body))
    story.extend(pending)
    buffer = io.BytesIO()
    title = next((b.text for b in blocks if isinstance(b, Heading)), "Meter accuracy report")
    SimpleDocTemplate(
        buffer,
        pagesize=A4,
        leftMargin=1.5 * cm,
        rightMargin=1.5 * cm,
        topMargin=1.5 * cm,
        bottomMargin=1.5 * cm,
        title=title,
        author=f"riskgrid {riskgrid_version()}",
    ).build(story)
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
