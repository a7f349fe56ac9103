"""Plotly figures of grids, λ curves and comparison tables (drawing only: values come from
``ranking_core``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike, NDArray

from ranking_core.meter.figures import SEG_COLORSCALE

# boundaries of the SEG risk grades A [0, .5), B [.5, 1.5), C [1.5, 2.5), D [2.5, 3.5), E ≥ 3.5
GRADE_LEVELS = (0.5, 1.5, 2.5, 3.5)
DISPLAY_STEP = 3  # mg/dL between drawn lattice points (601² cells would make a 5 MB figure)

_AXES = {"xaxis_title": "reference glucose (mg/dL)", "yaxis_title": "estimate / BGM (mg/dL)"}


def _thin(grid: ArrayLike, axis: ArrayLike, step: int) -> tuple[NDArray, NDArray]:
    """Every ``step``-th lattice point, transposed so that x = REF and y = estimate."""
    values = np.asarray(grid, dtype=np.float64)[::step, ::step]
    return np.asarray(axis)[::step], values.T


def _lattice_axes(fig: go.Figure, axis: NDArray) -> None:
    """Square axes spanning the lattice (points outside it are not drawn)."""
    span = [float(axis[0]), float(axis[-1])]
    fig.update_xaxes(range=span, constrain="domain")
    fig.update_yaxes(range=span, scaleanchor="x", scaleratio=1, constrain="domain")


def risk_heatmap(
    grid: ArrayLike,
    axis: ArrayLike,
    title: str,
    *,
    contours: ArrayLike | None = None,
    points: tuple[ArrayLike, ArrayLike, ArrayLike] | None = None,
    step: int = DISPLAY_STEP,
) -> go.Figure:
    """A risk grid indexed [REF, estimate] as a heat map in the SEG colours (0..4).

    ``contours``: a reference grid whose grade boundaries (0.5, 1.5, 2.5, 3.5) are drawn on top;
    ``points``: (REF, estimate, rating) training points.
    """
    x, z = _thin(grid, axis, step)
    fig = go.Figure(go.Heatmap(x=x, y=x, z=z, zmin=0, zmax=4, colorscale=SEG_COLORSCALE,
                               colorbar={"title": "risk"}, name=title,
                               hovertemplate="REF %{x}<br>estimate %{y}<br>risk %{z:.2f}"
                                             "<extra></extra>"))
    if contours is not None:
        _, zc = _thin(contours, axis, step)
        fig.add_trace(go.Contour(
            x=x, y=x, z=zc, showscale=False, hoverinfo="skip", name="reference grades",
            contours={"coloring": "lines", "start": GRADE_LEVELS[0], "end": GRADE_LEVELS[-1],
                      "size": 1.0, "showlabels": False},
            line={"color": "black", "width": 1}, colorscale=[[0, "black"], [1, "black"]],
        ))
    if points is not None:
        ref, est, rating = (np.asarray(p) for p in points)
        fig.add_trace(go.Scatter(
            x=ref, y=est, mode="markers", name="ratings",
            marker={"size": 5, "color": rating, "cmin": 0, "cmax": 4,
                    "colorscale": SEG_COLORSCALE, "line": {"width": 0.6, "color": "black"}},
            hovertemplate="REF %{x:.0f}<br>estimate %{y:.0f}<br>rating %{marker.color:.2f}"
                          "<extra></extra>",
        ))
    fig.update_layout(title=title, height=460, margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      showlegend=False, **_AXES)
    _lattice_axes(fig, x)
    return fig


def difference_heatmap(difference: ArrayLike, axis: ArrayLike, title: str,
                       step: int = DISPLAY_STEP) -> go.Figure:
    """Signed difference of two grids (learned − reference) on a diverging scale."""
    x, z = _thin(difference, axis, step)
    bound = float(max(np.max(np.abs(z)), 0.5))
    fig = go.Figure(go.Heatmap(x=x, y=x, z=z, zmid=0, zmin=-bound, zmax=bound,
                               colorscale="RdBu_r", colorbar={"title": "Δ risk"},
                               hovertemplate="REF %{x}<br>estimate %{y}<br>Δ %{z:.2f}"
                                             "<extra></extra>"))
    fig.update_layout(title=title, height=460, margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      **_AXES)
    _lattice_axes(fig, x)
    return fig


def lambda_curve(lams: ArrayLike, curve: ArrayLike, chosen: float, current: float,
                 ylabel: str) -> go.Figure:
    """A criterion over the λ path (log λ axis), the rule's λ and the slider's λ marked."""
    fig = go.Figure(go.Scatter(x=lams, y=curve, mode="lines", name=ylabel))
    fig.add_vline(x=chosen, line_dash="dash", line_color="green",
                  annotation_text=f"rule λ = {chosen:.3g}")
    if not np.isclose(current, chosen):
        fig.add_vline(x=current, line_dash="dot", line_color="red",
                      annotation_text=f"shown λ = {current:.3g}", annotation_position="bottom")
    fig.update_xaxes(type="log", title="λ")
    fig.update_layout(yaxis_title=ylabel, height=340, margin={"l": 10, "r": 10, "t": 30, "b": 10})
    return fig


def apriori_plot(sizes: ArrayLike, lam_plus: ArrayLike, alpha: float, beta: float,
                 m: int) -> go.Figure:
    """λ₊ found on small subsets against m (log–log), the fitted rule α·m^(−β/2) and λ(m)."""
    sizes = np.asarray(sizes, dtype=np.float64)
    lam_plus = np.asarray(lam_plus, dtype=np.float64)
    fig = go.Figure(go.Scatter(x=np.repeat(sizes, lam_plus.shape[1]), y=lam_plus.ravel(),
                               mode="markers", name="λ₊ (hold-out on subsets)"))
    line = np.geomspace(sizes.min(), max(m, sizes.max()), 50)
    fig.add_trace(go.Scatter(x=line, y=alpha * line ** (-beta / 2), mode="lines",
                             name=f"λ(m) = {alpha:.3g}·m^(−{beta:.3g}/2)"))
    fig.add_trace(go.Scatter(x=[m], y=[alpha * m ** (-beta / 2)], mode="markers",
                             marker={"size": 12, "symbol": "star"}, name=f"λ({m})"))
    fig.update_xaxes(type="log", title="m")
    fig.update_yaxes(type="log", title="λ")
    fig.update_layout(height=340, margin={"l": 10, "r": 10, "t": 30, "b": 10})
    return fig


def shares_bar(labels: Sequence[str], shares: ArrayLike, title: str,
               xlabel: str) -> go.Figure:
    """Percentages per bin (e.g. |Δ risk| in Table 3's bins)."""
    pct = 100 * np.asarray(shares, dtype=np.float64)
    fig = go.Figure(go.Bar(x=list(labels), y=pct, text=[f"{p:.1f} %" for p in pct],
                           textposition="outside"))
    fig.update_layout(title=title, xaxis_title=xlabel, yaxis_title="% of lattice points",
                      height=340, margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig


def confusion_heatmap(matrix: ArrayLike, labels: Sequence[str], title: str,
                      row_name: str, column_name: str) -> go.Figure:
    """A confusion matrix of counts, rows = ``row_name``'s classes."""
    counts = np.asarray(matrix)
    fig = go.Figure(go.Heatmap(z=counts, x=list(labels), y=list(labels), colorscale="Blues",
                               text=counts, texttemplate="%{text}", showscale=False))
    fig.update_layout(title=title, xaxis_title=column_name, yaxis_title=row_name, height=420,
                      margin={"l": 10, "r": 10, "t": 40, "b": 10})
    fig.update_yaxes(autorange="reversed")
    return fig


def line_chart(x: ArrayLike, series: dict[str, ArrayLike], title: str, xlabel: str,
               ylabel: str, *, log_x: bool = False, log_y: bool = False,
               errors: dict[str, ArrayLike] | None = None) -> go.Figure:
    """Several named curves over one x axis, with optional error bars."""
    fig = go.Figure()
    for name, values in series.items():
        err = None if errors is None or name not in errors else {"type": "data",
                                                                  "array": errors[name]}
        fig.add_trace(go.Scatter(x=x, y=values, mode="lines+markers", name=name, error_y=err))
    fig.update_xaxes(type="log" if log_x else "linear", title=xlabel)
    fig.update_yaxes(type="log" if log_y else "linear", title=ylabel)
    fig.update_layout(title=title, height=360, margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig
