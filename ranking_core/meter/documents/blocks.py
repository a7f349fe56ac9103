"""The pieces of a meter report document, shared by the HTML
(:mod:`ranking_core.meter.documents.document`) and the PDF
(:mod:`ranking_core.meter.documents.pdf`): headings, text, tables already formatted as text,
figures; the verdicts' colours; text escaped for HTML and ReportLab paragraphs."""

from __future__ import annotations

import html
from dataclasses import dataclass

import pandas as pd
from matplotlib.figure import Figure

from ranking_core.inputs.text import printable
from ranking_core.meter.drawing.display import FAILS, MEETS, PASSES

__all__ = [
    "VERDICT_COLOURS",
    "Block",
    "FigureBlock",
    "Heading",
    "TableBlock",
    "Text",
    "escaped",
]

# verdicts in the colour of their meaning (green passes, red fails), in every document
VERDICT_COLOURS = {PASSES: "#1a7f37", MEETS: "#1a7f37", FAILS: "#b42318"}


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


def escaped(text: object) -> str:
    """Text for HTML or a ReportLab paragraph: control and bidi characters shown escaped
    (:func:`~ranking_core.inputs.text.printable`), then HTML-escaped."""
    return html.escape(printable(text))
