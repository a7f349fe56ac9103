"""The one style of riskgrid's glucose figures, read by each of its three drawers: Pillow rasters
(:mod:`ranking_core.grids.raster`: ``grid.png`` and the fast grid pictures of the pages),
matplotlib plots (:mod:`ranking_core.meter.drawing.grid_plots`: the report's PNG and PDF
figures, also shown on the Meter page) and Plotly charts
(:mod:`ranking_core.meter.documents.figures`,
``dashboard/figures.py``: the pages' interactive charts and the HTML exports).

The risk colours are the SEG colours of :data:`ranking_core.grids.risk_scale.RISK_COLOR_STOPS`
(one home, read there by every drawer). Here: the axis titles with their unit, and the text
sizes in px **as the page shows the figure**, none below :data:`MIN_TEXT_PX`. A picture drawn
at one size and shown at another has its text scaled with it; :func:`shown_px` and
:func:`text_points` convert.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

REF_TITLE = "Reference glucose (mg/dL)"
MEASURED_TITLE = "Measured glucose (mg/dL)"
RISK_TITLE = "risk (0 none … 4 extreme)"

MIN_TEXT_PX = 11  # px on the page: the smallest text of any figure as a reader sees it
POINTS_PER_INCH = 72.0


@dataclass(frozen=True)
class TextSizes:
    """Text sizes in px as the page shows a figure."""

    note: float = 11.0  # legends, annotations
    tick: float = 11.0  # tick labels (colour bars' too)
    label: float = 12.0  # axis titles
    title: float = 14.0  # the figure's title


TEXT_PX = TextSizes()


def shown_px(size: float, drawn_px: float, shown_width_px: float) -> float:
    """The size in px on the page of text ``size`` px high in a picture ``drawn_px`` wide that
    the page shows ``shown_width_px`` wide."""
    return size * shown_width_px / drawn_px


def text_points(px: float, figure_inches: float, shown_width_px: float) -> float:
    """The font size in points that makes text ``px`` high on the page in a figure
    ``figure_inches`` wide shown ``shown_width_px`` wide (points are 1/72 in of the figure;
    the same points in the PDF, whatever the PNG's dpi)."""
    return px * figure_inches * POINTS_PER_INCH / shown_width_px


def plotly_fonts() -> dict:
    """The text sizes of a Plotly layout (Plotly draws a chart at the size the page shows it,
    so these are the sizes a reader sees): ``go.Layout(**plotly_fonts(), ...)``."""
    return {"font": {"size": TEXT_PX.tick}, "legend": {"font": {"size": TEXT_PX.note}}}


def plotly_title(text: str) -> dict:
    """A Plotly layout's title ``text`` at the title size."""
    return {"text": text, "font": {"size": TEXT_PX.title}}


def fixed_title(ax: Any, text: str, **kwargs: Any) -> None:
    """Title a matplotlib axes ``text`` at a fixed place, just above it (``kwargs``: those of
    ``Axes.set_title``, e.g. ``pad`` in points). Without a fixed place matplotlib measures every
    tick label of the axes at each draw to lift the title above an axis drawn on top; for an
    axes with none (no secondary axis, no ticks on top) that moves nothing, and the draw is
    faster without it."""
    ax.set_title(text, y=1.0, **kwargs)


def style_figure(fig: Any, shown_width_px: float) -> Any:
    """Set the text of a matplotlib figure to the style's sizes as a page shows the figure
    ``shown_width_px`` wide (the same points in its PNG and PDF): tick labels, axis titles,
    titles, legends and annotations of every axes (colour bars and secondary axes included) and
    the figure's own texts (a title over several panels);
    annotations larger than a note (zone letters) keep their size. Returns ``fig``."""
    inches = float(fig.get_size_inches()[0])
    points = {name: text_points(px, inches, shown_width_px) for name, px in vars(TEXT_PX).items()}
    axes = list(fig.get_axes())
    axes += [child for ax in axes for child in ax.child_axes]
    legends = list(fig.legends)
    for ax in axes:
        ax.tick_params(which="both", labelsize=points["tick"])
        ax.xaxis.label.set_fontsize(points["label"])
        ax.yaxis.label.set_fontsize(points["label"])
        ax.title.set_fontsize(points["title"])
        for text in ax.texts:
            text.set_fontsize(max(float(text.get_fontsize()), points["note"]))
        if ax.get_legend() is not None:
            legends.append(ax.get_legend())
    for legend in legends:
        for text in legend.get_texts():
            text.set_fontsize(points["note"])
    for text in fig.texts:  # the figure's own texts: a title over several panels (suptitle)
        text.set_fontsize(max(float(text.get_fontsize()), points["title"]))
    return fig
