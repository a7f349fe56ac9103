"""The meter report as PDF (ReportLab), laid out so that nothing leaves the page: A4 portrait,
every table's columns sized from the measured width of their texts and wrapped to the page's
width (a table too wide even then goes on a landscape page of its own), a running header (the
report's title with the data set's name) and "page N of M" on every page.

The content comes from :func:`ranking_core.meter.documents.document.report_blocks`, the same as
the HTML (the pieces are those of :mod:`ranking_core.meter.documents.blocks`).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image as PILImage
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.units import cm
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Flowable

from ranking_core.grids.style import POINTS_PER_INCH
from ranking_core.inputs.text import printable
from ranking_core.meter.documents.blocks import (
    VERDICT_COLOURS,
    Block,
    FigureBlock,
    Heading,
    TableBlock,
    Text,
    escaped,
)
from ranking_core.version import riskgrid_version

__all__ = ["CELL_POINTS", "column_widths", "report_pdf"]

FONT, BOLD = "DejaVuSans", "DejaVuSans-Bold"
CELL_POINTS = 7.5  # font size of table cells
CELL_PADDING = 3.0  # points left and right of a cell's text
MAX_COLUMN = 220.0  # points: a column of long texts wraps beyond this even when there is room
MARGIN = 1.5 * cm
HEADER_GAP = 0.7 * cm  # between the running header's baseline and the page's top edge
FIGURE_CM = 12.5  # a square figure: a grid's heading, text, zone table and plot fit on one page
WIDE_FIGURE_CM = 16.0  # a wide figure (the Bland–Altman plot)
PRINT_PPI = 150  # pixels per inch of every figure at the size the page prints it


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


def _text_width(text: str, bold: bool = False, size: float = CELL_POINTS) -> float:
    from reportlab.pdfbase.pdfmetrics import stringWidth

    _fonts()
    return float(stringWidth(printable(text), BOLD if bold else FONT, size))


def column_widths(
    frame: pd.DataFrame, width: float, bold: Callable[[str], bool] = lambda text: False
) -> list[float] | None:
    """Column widths in points that fit ``width``, or None when the table cannot fit without
    cutting words.

    Each column is at least as wide as its longest word (header in bold, cells in bold where
    ``bold(text)``), so that no word is cut, and at most as wide as its longest cell (at most
    ``MAX_COLUMN``; headers wrap at their words). When that does not fit, the widest columns
    are narrowed to a common width, found by bisection, at which the table fills ``width``
    exactly; their texts wrap.
    """
    pad = 2 * CELL_PADDING + 1.0
    floors, naturals = [], []
    for column in frame.columns:
        cells = [(str(v), bold(str(v))) for v in frame[column]]
        words = [(w, b) for t, b in [(str(column), True), *cells] for w in t.split()]
        floors.append(max((_text_width(w, b) for w, b in words), default=0.0) + pad)
        longest = max((_text_width(t, b) for t, b in cells), default=0.0)
        naturals.append(min(longest + pad, MAX_COLUMN))
    floor = np.array(floors)
    natural = np.maximum(np.array(naturals), floor)
    if natural.sum() <= width:
        return natural.tolist()
    if floor.sum() > width:
        return None
    low, high = 0.0, float(natural.max())
    for _ in range(60):  # the common width of the narrowed columns, to well below 0.001 pt
        cap = (low + high) / 2
        if np.maximum(floor, np.minimum(natural, cap)).sum() > width:
            high = cap
        else:
            low = cap
    return np.maximum(floor, np.minimum(natural, low)).tolist()


def _raster(fig: Figure, width: float) -> PILImage.Image:
    """The figure drawn by Agg as an RGB image of ``PRINT_PPI`` pixels per inch at its printed
    ``width`` (points): 738 px wide for a 12.5 cm figure, 945 px for a 16 cm one (no PNG
    encoding and decoding on the way)."""
    fig.set_dpi(PRINT_PPI * width / POINTS_PER_INCH / fig.get_size_inches()[0])
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return PILImage.fromarray(np.asarray(canvas.buffer_rgba())[..., :3])


class _Picture(Flowable):
    """A raster image ``width`` × ``height`` points, handed to ReportLab already decoded."""

    def __init__(self, image: PILImage.Image, width: float, height: float) -> None:
        super().__init__()
        self.image, self.width, self.height = image, width, height

    def wrap(self, available_width: float, available_height: float) -> tuple[float, float]:
        return self.width, self.height

    def draw(self) -> None:
        self.canv.drawImage(ImageReader(self.image), 0, 0, self.width, self.height)


def _clipped(text: str, width: float, size: float) -> str:
    """``text`` shortened with "…" so that it is at most ``width`` points wide."""
    if _text_width(text, size=size) <= width:
        return text
    while text and _text_width(text + "…", size=size) > width:
        text = text[:-1]
    return text + "…"


def _page_canvas(header: str) -> type[Canvas]:
    """A canvas class that holds its pages back until the last one, then writes on each the
    running header (``header``, left), the riskgrid version (bottom left) and "page N of M"
    (bottom right)."""
    version = f"riskgrid {riskgrid_version()}"

    class PageCanvas(Canvas):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._pages: list[dict] = []

        def showPage(self) -> None:
            self._pages.append(dict(self.__dict__))
            self._startPage()  # type: ignore[attr-defined]  # ReportLab's own, not in its stubs

        def save(self) -> None:
            total = len(self._pages)
            for number, page in enumerate(self._pages, 1):
                self.__dict__.update(page)
                self._decorate(number, total)
                super().showPage()
            super().save()

        def _decorate(self, number: int, total: int) -> None:
            page_width, page_height = self._pagesize  # type: ignore[attr-defined]  # as above
            size = 7.5
            self.saveState()
            self.setFont(FONT, size)
            self.setFillColorRGB(0.35, 0.35, 0.35)
            self.setStrokeColorRGB(0.7, 0.7, 0.7)
            self.setLineWidth(0.4)
            top = page_height - HEADER_GAP
            self.drawString(MARGIN, top, _clipped(header, page_width - 2 * MARGIN, size))
            self.line(MARGIN, top - 3, page_width - MARGIN, top - 3)
            bottom = MARGIN / 2
            self.drawString(MARGIN, bottom, version)
            self.drawRightString(page_width - MARGIN, bottom, f"page {number} of {total}")
            self.restoreState()

    return PageCanvas


def report_pdf(blocks: list[Block], header: str | None = None) -> bytes:
    """The report as PDF bytes (ReportLab; A4; DejaVu Sans; square figures 12.5 cm wide, wide
    ones 16 cm; each heading kept on the page of the table or figure that follows it; a table
    wider than the portrait page on a landscape page; ``header``, default the first heading, at
    the top of every page and "page N of M" at the bottom)."""
    from reportlab import rl_config
    from reportlab.lib import colors
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import (
        BaseDocTemplate,
        CondPageBreak,
        Frame,
        KeepTogether,
        NextPageTemplate,
        PageBreak,
        PageTemplate,
        Paragraph,
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
    cell = ParagraphStyle("cell", fontName=font, fontSize=CELL_POINTS, leading=9)
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
        return Paragraph(escaped(text), style)

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

    portrait, wide = A4[0] - 2 * MARGIN, A4[1] - 2 * MARGIN
    is_verdict = VERDICT_COLOURS.__contains__
    for block, following in zip(blocks, [*blocks[1:], None], strict=True):
        if isinstance(block, Heading):
            story.extend(pending)
            pending[:] = [para(block.text, headings[min(block.level, 2)])]
        elif isinstance(block, Text):
            (pending if pending else story).append(
                para(block.text, caution if block.caution else body)
            )
        elif isinstance(block, TableBlock):
            frame = block.frame.astype(str)
            widths = column_widths(frame, portrait, is_verdict)
            turned = widths is None
            if turned:  # too wide for a portrait page: a landscape page, words cut if need be
                widths = column_widths(frame, wide, is_verdict)
                if widths is None:
                    widths = [wide / len(frame.columns)] * len(frame.columns)
            rows = [[para(str(c), head) for c in frame.columns]]
            rows += [
                [para(v, verdicts.get(v, cell)) for v in row]
                for row in frame.itertuples(index=False)
            ]
            table = Table(rows, repeatRows=1, hAlign="LEFT", colWidths=widths)
            table.setStyle(
                TableStyle(
                    [
                        ("GRID", (0, 0), (-1, -1), 0.4, colors.HexColor("#999999")),
                        ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eeeeee")),
                        ("VALIGN", (0, 0), (-1, -1), "TOP"),
                        ("LEFTPADDING", (0, 0), (-1, -1), CELL_PADDING),
                        ("RIGHTPADDING", (0, 0), (-1, -1), CELL_PADDING),
                    ]
                )
            )
            caption = para(block.title, headings[2])
            if turned:
                story.extend([NextPageTemplate("landscape"), PageBreak(), *pending])
                story.extend([caption, table, NextPageTemplate("portrait"), PageBreak()])
                pending.clear()
            elif isinstance(following, FigureBlock):  # a grid's zone table stays with its plot
                pending.extend([caption, table, Spacer(1, 4)])
            else:
                place(caption, table, Spacer(1, 2))
        else:
            inches = block.figure.get_size_inches()
            figure_width = min(
                portrait, (WIDE_FIGURE_CM if inches[0] > inches[1] else FIGURE_CM) * cm
            )
            picture = _Picture(
                _raster(block.figure, figure_width),
                figure_width,
                figure_width * inches[1] / inches[0],
            )
            place(picture, para(block.caption, body))
    story.extend(pending)
    title = next((b.text for b in blocks if isinstance(b, Heading)), "Meter accuracy report")
    templates = [
        PageTemplate(
            id=name,
            pagesize=size,
            frames=[
                Frame(
                    MARGIN,
                    MARGIN,
                    size[0] - 2 * MARGIN,
                    size[1] - 2 * MARGIN,
                    leftPadding=0,
                    rightPadding=0,
                    topPadding=0,
                    bottomPadding=0,
                    id=name,
                )
            ],
        )
        for name, size in (("portrait", A4), ("landscape", landscape(A4)))
    ]
    buffer = io.BytesIO()
    document = BaseDocTemplate(
        buffer,
        pagesize=A4,
        pageTemplates=templates,
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=MARGIN,
        bottomMargin=MARGIN,
        title=printable(title),
        author=f"riskgrid {riskgrid_version()}",
    )
    document.build(story, canvasmaker=_page_canvas(printable(header or title)))
    return buffer.getvalue()
