"""Interactive (Plotly) figures of grids and meter reports (data, not UI): the one risk heat map
(any risk grid on the 0..4 scale, optionally with grade contours, ratings or meter pairs on top)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids.learned import GLUCOSE_AXIS
from ranking_core.grids.raster import grade_lines
from ranking_core.grids.risk_scale import RISK_COLORSCALE, RISK_MAX
from ranking_core.grids.seg import SEGTable
from ranking_core.grids.style import MEASURED_TITLE, REF_TITLE, plotly_fonts, plotly_title
from ranking_core.meter.report import MeterReport

__all__ = [
    "DISPLAY_STEP",
    "grade_line_vertices",
    "lattice_layout",
    "risk_heatmap",
    "seg_heatmap",
    "thin_grid",
]

DISPLAY_STEP = 3  # mg/dL between drawn lattice points (601² cells would make a 5 MB figure)
# px around a lattice heat map: title (top), tick labels and axis titles (left, bottom), colour bar
LATTICE_MARGIN = {"l": 70, "r": 100, "t": 40, "b": 55, "autoexpand": False}


def thin_grid(grid: ArrayLike, axis: ArrayLike, step: int) -> tuple[NDArray, NDArray]:
    """Every ``step``-th lattice point, transposed so that x = REF and y = estimate; values in
    single precision (the figure sends half the bytes; risk to 7 digits is more than shown)."""
    values = np.asarray(grid, dtype=np.float32)[::step, ::step]
    return np.asarray(axis)[::step], values.T


def grade_line_vertices(grid: ArrayLike, step: int = DISPLAY_STEP) -> tuple[NDArray, NDArray]:
    """The iso-risk lines at the grade boundaries of ``grid`` (indexed [REF, estimate], 0..600
    mg/dL) on every ``step``-th lattice point, as (x = REF, y = estimate) vertices with NaN between
    lines: one light line trace instead of a contour trace that sends the whole grid to the
    browser."""
    pieces = [np.vstack([line, [np.nan, np.nan]]) for line in grade_lines(grid, step)]
    if not pieces:
        return np.empty(0), np.empty(0)
    vertices = np.vstack(pieces).astype(np.float32)
    return vertices[:, 0], vertices[:, 1]


def lattice_layout(axis: NDArray, title: str, height: int, *, showlegend: bool = True) -> go.Layout:
    """The layout of a heat map over the glucose lattice: square axes spanning it (points
    outside are not drawn), REF across and the estimate up, in fixed margins that hold the
    title, the axis titles and the colour bar, so that the browser draws the figure once instead
    of drawing it again after measuring its margins. Built in one piece: Plotly's ``update_*``
    calls cost more than the whole heat map."""
    span = [float(axis[0]), float(axis[-1])]
    return go.Layout(
        **plotly_fonts(),
        title=plotly_title(title),
        height=height,
        margin=LATTICE_MARGIN,
        showlegend=showlegend,
        xaxis={
            "title": {"text": REF_TITLE},
            "range": span,
            "constrain": "domain",
            "automargin": False,
        },
        yaxis={
            "title": {"text": MEASURED_TITLE},
            "range": span,
            "scaleanchor": "x",
            "scaleratio": 1,
            "constrain": "domain",
            "automargin": False,
        },
    )


def risk_heatmap(
    grid: ArrayLike,
    axis: ArrayLike = GLUCOSE_AXIS,
    title: str = "Surveillance Error Grid",
    *,
    contours: ArrayLike | None = None,
    points: tuple[ArrayLike, ArrayLike, ArrayLike] | None = None,
    flagged: ArrayLike | None = None,
    pairs: MeterReport | None = None,
    step: int = DISPLAY_STEP,
    height: int = 560,
) -> go.Figure:
    """A risk grid indexed [REF, estimate] (mg/dL) as a heat map in the colours of the one risk
    scale (0..4), the one heat map of riskgrid.

    ``contours``: a reference grid whose grade boundaries (0.5, 1.5, 2.5, 3.5) are drawn on top;
    ``points``: (REF, estimate, rating) training points coloured by rating, those ``flagged``
    (a boolean per point, e.g. flagged as outlying) drawn as crosses; ``pairs``: a meter
    report whose included (REF, BGM) pairs are drawn on top; ``step``: mg/dL between drawn
    lattice points; ``height`` in px.
    """
    surface = np.abs(np.asarray(grid, dtype=np.float64))
    axis = np.asarray(axis, dtype=np.float64)
    if surface.shape != (axis.size, axis.size):
        raise ValueError(
            f"risk_heatmap: the risk grid must have shape ({axis.size}, "
            f"{axis.size}) indexed [REF, estimate]; got {surface.shape}"
        )
    x, z = thin_grid(surface, axis, step)
    fig = go.Figure(
        go.Heatmap(
            x=x,
            y=x,
            z=z,
            zmin=0,
            zmax=RISK_MAX,
            colorscale=RISK_COLORSCALE,
            colorbar={"title": {"text": "risk"}},
            name=title,
            hovertemplate="REF %{x} mg/dL<br>estimate %{y} mg/dL<br>risk %{z:.2f}<extra></extra>",
        ),
        lattice_layout(x, title, height, showlegend=False),
    )
    if contours is not None:
        line_x, line_y = grade_line_vertices(contours, step)
        fig.add_trace(
            go.Scatter(
                x=line_x,
                y=line_y,
                mode="lines",
                hoverinfo="skip",
                name="reference grades",
                line={"color": "black", "width": 1},
            )
        )
    if points is not None:
        ref, est, rating = (np.asarray(p) for p in points)
        marked = np.zeros(ref.size, bool) if flagged is None else np.asarray(flagged, bool)
        for rows, name, symbol in (
            (~marked, "ratings", "circle"),
            (marked, "flagged as outlying", "x"),
        ):
            if rows.any():
                fig.add_trace(
                    go.Scatter(
                        x=ref[rows],
                        y=est[rows],
                        mode="markers",
                        name=name,
                        marker={
                            "size": 5 if symbol == "circle" else 9,
                            "symbol": symbol,
                            "color": rating[rows],
                            "cmin": 0,
                            "cmax": RISK_MAX,
                            "colorscale": RISK_COLORSCALE,
                            "line": {"width": 0.6, "color": "black"},
                        },
                        hovertemplate=f"REF %{{x:.0f}}<br>estimate %{{y:.0f}}<br>rating "
                        f"%{{marker.color:.2f}} ({name})<extra></extra>",
                    )
                )
    if pairs is not None:
        included = pairs.pairs[pairs.pairs["included"]]
        fig.add_trace(
            go.Scatter(
                x=included["REF"],
                y=included["BGM"],
                mode="markers",
                name="pairs",
                marker={"size": 5, "color": "white", "line": {"color": "black", "width": 1}},
                hovertemplate="REF %{x} mg/dL<br>BGM %{y} mg/dL<extra></extra>",
            )
        )
    return fig


def seg_heatmap(
    seg_table: SEGTable, report: MeterReport | None = None, step: int = DISPLAY_STEP
) -> go.Figure:
    """The SEG heat map (abs_risk, official colours) with the report's pairs on top."""
    return risk_heatmap(
        seg_table.absolute, title="Surveillance Error Grid", pairs=report, step=step
    )
