"""Figures of grids, λ curves and comparison tables (drawing only: values come from
``ranking_core``): interactive Plotly figures, and pictures (PNG, matplotlib) of the λ curves for
pages that open without loading Plotly in the browser."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator
from numpy.typing import ArrayLike

from ranking_core.grids.style import TEXT_PX, plotly_fonts, plotly_title, text_points
from ranking_core.meter.documents.figures import (
    DISPLAY_STEP,
    lattice_layout,
    risk_heatmap,
    thin_grid,
)
from ranking_core.meter.drawing.grid_plots import figure_png

__all__ = [
    "apriori_figure",
    "apriori_picture",
    "apriori_plot",
    "band_width_heatmap",
    "confusion_heatmap",
    "difference_heatmap",
    "error_bars",
    "lambda_curve",
    "lambda_curve_figure",
    "lambda_curve_picture",
    "line_chart",
    "proposed_pairs",
    "risk_heatmap",
    "shares_bar",
]

PICTURE_DPI = 100  # px per inch of the pictures: 8 in = 800 px, the width of a grid picture
PICTURE_INCHES = 8.0
PICTURE_SHOWN_PX = (
    560  # px: the width the Learn page shows a picture at (measured in Chromium, 1280 px window)
)


def difference_heatmap(
    difference: ArrayLike, axis: ArrayLike, title: str, step: int = DISPLAY_STEP, height: int = 460
) -> go.Figure:
    """Signed difference of two grids (learned − reference) on a diverging scale."""
    x, z = thin_grid(difference, axis, step)
    bound = float(max(np.max(np.abs(z)), 0.5))
    return go.Figure(
        go.Heatmap(
            x=x,
            y=x,
            z=z,
            zmid=0,
            zmin=-bound,
            zmax=bound,
            colorscale="RdBu_r",
            colorbar={"title": "Δ risk"},
            hovertemplate="REF %{x}<br>estimate %{y}<br>Δ %{z:.2f}<extra></extra>",
        ),
        lattice_layout(x, title, height),
    )


def lambda_curve(
    lams: ArrayLike, curve: ArrayLike, chosen: float, ylabel: str, height: int = 280
) -> go.Figure:
    """A criterion over the λ path, λ increasing to the right on a log axis that spans exactly
    the candidates (so that a slider over them below runs the same way), the rule's λ marked."""
    lams = np.asarray(lams, dtype=np.float64)
    fig = go.Figure(
        go.Scatter(
            x=lams,
            y=curve,
            mode="lines",
            name=ylabel,
            hovertemplate="λ %{x:.3g}<br>%{y:.2f}<extra></extra>",
        )
    )
    fig.add_vline(
        x=chosen, line_dash="dash", line_color="green", annotation_text=f"chosen λ = {chosen:.3g}"
    )
    fig.update_xaxes(type="log", title="λ", range=np.log10([lams.min(), lams.max()]).tolist())
    fig.update_layout(
        **plotly_fonts(),
        yaxis_title=ylabel,
        height=height,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
    )
    return fig


def _picture_points() -> dict[str, float]:
    """The style's text sizes (px as the page shows them) in points for a picture of
    :data:`PICTURE_INCHES` shown :data:`PICTURE_SHOWN_PX` wide."""
    return {
        name: text_points(px, PICTURE_INCHES, PICTURE_SHOWN_PX)
        for name, px in vars(TEXT_PX).items()
    }


def lambda_curve_figure(
    lams: ArrayLike, curve: ArrayLike, chosen: float, ylabel: str, height: int = 280
) -> Figure:
    """:func:`lambda_curve` as a matplotlib figure of 800 × ``height`` px at
    :data:`PICTURE_DPI`."""
    lams = np.asarray(lams, dtype=np.float64)
    points = _picture_points()
    fig = Figure(figsize=(PICTURE_INCHES, height / PICTURE_DPI))
    # fixed margins in px: a layout engine measuring every label doubled the drawing time
    fig.subplots_adjust(left=80 / 800, right=1 - 20 / 800, top=1 - 10 / height, bottom=60 / height)
    ax = fig.add_subplot()
    ax.plot(lams, curve, color="#1f77b4")
    ax.axvline(chosen, color="green", linestyle="--")
    ax.annotate(
        f"chosen λ = {chosen:.3g}",
        (chosen, 1.0),
        xycoords=("data", "axes fraction"),
        xytext=(4, -4),
        textcoords="offset points",
        va="top",
        color="green",
        fontsize=points["note"],
    )
    ax.set(xscale="log", xlim=(lams.min(), lams.max()))
    ax.set_xlabel("λ", fontsize=points["label"])
    ax.set_ylabel(ylabel, fontsize=points["label"])
    ax.tick_params(labelsize=points["tick"])
    ax.xaxis.set_minor_locator(NullLocator())  # decades only: a third of the drawing time
    ax.grid(alpha=0.3)
    return fig


def lambda_curve_picture(
    lams: ArrayLike, curve: ArrayLike, chosen: float, ylabel: str, height: int = 280
) -> bytes:
    """:func:`lambda_curve_figure` as PNG bytes."""
    return figure_png(lambda_curve_figure(lams, curve, chosen, ylabel, height), dpi=PICTURE_DPI)


def apriori_plot(
    sizes: ArrayLike, lam_plus: ArrayLike, alpha: float, beta: float, m: int
) -> go.Figure:
    """λ₊ found on small subsets against m (log–log), the fitted rule α·m^(−β/2) and λ(m)."""
    sizes = np.asarray(sizes, dtype=np.float64)
    lam_plus = np.asarray(lam_plus, dtype=np.float64)
    fig = go.Figure(
        go.Scatter(
            x=np.repeat(sizes, lam_plus.shape[1]),
            y=lam_plus.ravel(),
            mode="markers",
            name="λ₊ (hold-out on subsets)",
        )
    )
    line = np.geomspace(sizes.min(), max(m, sizes.max()), 50)
    fig.add_trace(
        go.Scatter(
            x=line,
            y=alpha * line ** (-beta / 2),
            mode="lines",
            name=f"λ(m) = {alpha:.3g}·m^(−{beta:.3g}/2)",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[m],
            y=[alpha * m ** (-beta / 2)],
            mode="markers",
            marker={"size": 12, "symbol": "star"},
            name=f"λ({m})",
        )
    )
    fig.update_xaxes(type="log", title="m")
    fig.update_yaxes(type="log", title="λ")
    fig.update_layout(**plotly_fonts(), height=340, margin={"l": 10, "r": 10, "t": 30, "b": 10})
    return fig


def apriori_figure(
    sizes: ArrayLike, lam_plus: ArrayLike, alpha: float, beta: float, m: int
) -> Figure:
    """:func:`apriori_plot` as a matplotlib figure of 800 × 340 px at :data:`PICTURE_DPI`."""
    sizes = np.asarray(sizes, dtype=np.float64)
    lam_plus = np.asarray(lam_plus, dtype=np.float64)
    points = _picture_points()
    fig = Figure(figsize=(PICTURE_INCHES, 3.4), layout="constrained")
    ax = fig.add_subplot()
    ax.scatter(
        np.repeat(sizes, lam_plus.shape[1]),
        lam_plus.ravel(),
        s=12,
        label="λ₊ (hold-out on subsets)",
    )
    line = np.geomspace(sizes.min(), max(m, sizes.max()), 50)
    ax.plot(
        line,
        alpha * line ** (-beta / 2),
        color="#ff7f0e",
        label=f"λ(m) = {alpha:.3g}·m^(−{beta:.3g}/2)",
    )
    ax.scatter(
        [m],
        [alpha * m ** (-beta / 2)],
        marker="*",
        s=150,
        color="#2ca02c",
        zorder=3,
        label=f"λ({m})",
    )
    ax.set(xscale="log", yscale="log")
    ax.set_xlabel("m", fontsize=points["label"])
    ax.set_ylabel("λ", fontsize=points["label"])
    ax.tick_params(labelsize=points["tick"])
    ax.legend(loc="best", fontsize=points["note"])
    ax.grid(alpha=0.3)
    return fig


def apriori_picture(
    sizes: ArrayLike, lam_plus: ArrayLike, alpha: float, beta: float, m: int
) -> bytes:
    """:func:`apriori_figure` as PNG bytes."""
    return figure_png(apriori_figure(sizes, lam_plus, alpha, beta, m), dpi=PICTURE_DPI)


def shares_bar(labels: Sequence[str], shares: ArrayLike, title: str, xlabel: str) -> go.Figure:
    """Percentages per bin (e.g. |Δ risk| in Table 3's bins)."""
    pct = 100 * np.asarray(shares, dtype=np.float64)
    fig = go.Figure(
        go.Bar(x=list(labels), y=pct, text=[f"{p:.1f} %" for p in pct], textposition="outside")
    )
    fig.update_layout(
        **plotly_fonts(),
        title=plotly_title(title),
        xaxis_title=xlabel,
        yaxis_title="% of lattice points",
        height=340,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )
    return fig


def confusion_heatmap(
    matrix: ArrayLike, labels: Sequence[str], title: str, row_name: str, column_name: str
) -> go.Figure:
    """A confusion matrix of counts, rows = ``row_name``'s classes."""
    counts = np.asarray(matrix)
    fig = go.Figure(
        go.Heatmap(
            z=counts,
            x=list(labels),
            y=list(labels),
            colorscale="Blues",
            text=counts,
            # counts in three significant digits ("361k"), at a readable fixed size: plotly would
            # shrink them to fit 64 cells of a half-page figure (6 px)
            texttemplate="%{text:.3s}",
            textfont={"size": TEXT_PX.tick},
            showscale=False,
        )
    )
    fig.update_layout(
        **plotly_fonts(),
        title=plotly_title(title),
        xaxis_title=column_name,
        yaxis_title=row_name,
        height=480,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )
    fig.update_yaxes(autorange="reversed")
    return fig


def line_chart(
    x: ArrayLike,
    series: Mapping[str, ArrayLike],
    title: str,
    xlabel: str,
    ylabel: str,
    *,
    log_x: bool = False,
    log_y: bool = False,
    errors: Mapping[str, ArrayLike] | None = None,
) -> go.Figure:
    """Several named curves over one x axis, with optional error bars."""
    fig = go.Figure()
    for name, values in series.items():
        err = (
            None
            if errors is None or name not in errors
            else {"type": "data", "array": errors[name]}
        )
        fig.add_trace(go.Scatter(x=x, y=values, mode="lines+markers", name=name, error_y=err))
    fig.update_xaxes(type="log" if log_x else "linear", title=xlabel)
    fig.update_yaxes(type="log" if log_y else "linear", title=ylabel)
    fig.update_layout(
        **plotly_fonts(),
        title=plotly_title(title),
        height=360,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )
    return fig


def error_bars(
    labels: Iterable[str], values: ArrayLike, errors: ArrayLike, title: str, ylabel: str
) -> go.Figure:
    """One bar per label with ± ``errors`` whiskers (e.g. misranking mean ± sd per learner)."""
    fig = go.Figure(
        go.Bar(
            x=list(labels),
            y=np.asarray(values, dtype=np.float64),
            error_y={"type": "data", "array": np.asarray(errors, dtype=np.float64)},
        )
    )
    fig.update_layout(
        **plotly_fonts(),
        title=plotly_title(title),
        yaxis_title=ylabel,
        height=360,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )
    return fig


def band_width_heatmap(
    width: ArrayLike,
    axis: ArrayLike,
    title: str,
    points: tuple[ArrayLike, ArrayLike] | None = None,
    step: int = DISPLAY_STEP,
) -> go.Figure:
    """Width of a learned grid's uncertainty band (risk units) on a sequential scale, with the
    pairs proposed next drawn on top."""
    x, z = thin_grid(width, axis, step)
    fig = go.Figure(
        go.Heatmap(
            x=x,
            y=x,
            z=z,
            zmin=0,
            colorscale="Viridis",
            colorbar={"title": {"text": "band width"}},
            hovertemplate="REF %{x} mg/dL<br>estimate %{y} mg/dL<br>"
            "band width %{z:.2f}<extra></extra>",
        ),
        lattice_layout(x, title, 560, showlegend=False),
    )
    if points is not None:
        fig.add_trace(_next_pairs(points))
    return fig


def proposed_pairs(points: tuple[ArrayLike, ArrayLike], axis: ArrayLike, title: str) -> go.Figure:
    """The pairs proposed for rating on the glucose square (mg/dL), with its diagonal (an exact
    reading), where no learned grid is drawn under them."""
    values = np.asarray(axis, dtype=np.float64)
    span = [float(values[0]), float(values[-1])]
    fig = go.Figure(
        go.Scatter(
            x=span,
            y=span,
            mode="lines",
            name="exact reading",
            line={"color": "grey", "dash": "dot"},
            hoverinfo="skip",
        ),
        lattice_layout(np.asarray(axis), title, 480, showlegend=False),
    )
    fig.add_trace(_next_pairs(points, fill="black"))
    return fig


def _next_pairs(points: tuple[ArrayLike, ArrayLike], fill: str = "white") -> go.Scatter:
    return go.Scatter(
        x=points[0],
        y=points[1],
        mode="markers",
        name="next pairs",
        marker={"size": 7, "color": fill, "symbol": "x", "line": {"color": "black", "width": 1}},
        hovertemplate="REF %{x} mg/dL<br>estimate %{y} mg/dL<extra></extra>",
    )
