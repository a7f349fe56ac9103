"""Figures of the meter accuracy report as Plotly figures (data, not UI): the SEG heat map with
the pairs on top and the modified Bland–Altman plot."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ranking_core.grids.seg import GLUCOSE_MAX, SEGTable
from ranking_core.meter.report import ISO_COMPLIANT, MeterReport

__all__ = ["SEG_COLORSCALE", "SEG_COLOR_STOPS", "bland_altman_figure", "risk_heatmap",
           "seg_heatmap"]

# official SEG heat-map colours: abs_risk -> colour (Klonoff et al. 2014)
SEG_COLOR_STOPS = ((0.0, "#00A500"), (0.4375, "#00FF00"), (1.0625, "#FFFF00"),
                   (2.75, "#FF0000"), (4.0, "#800000"))
RISK_MAX = 4.0
SEG_COLORSCALE = [[risk / RISK_MAX, colour] for risk, colour in SEG_COLOR_STOPS]


def risk_heatmap(
    absolute_risk: ArrayLike,
    report: MeterReport | None = None,
    title: str = "Surveillance Error Grid",
    step: int = 1,
) -> go.Figure:
    """Heat map of a (601, 601) risk surface indexed [REF, BGM] (mg/dL) in the official SEG
    colours on 0..4, with the included pairs of ``report`` on top.

    ``step`` > 1 keeps every step-th mg/dL on both axes (smaller HTML files).
    """
    surface = np.abs(np.asarray(absolute_risk, dtype=np.float32))
    size = GLUCOSE_MAX + 1
    if surface.shape != (size, size):
        raise ValueError(f"risk_heatmap: the risk surface must have shape ({size}, {size}) "
                         f"indexed [REF, BGM]; got {surface.shape}")
    axis = np.arange(0, size, step)
    fig = go.Figure(go.Heatmap(
        x=axis, y=axis, z=surface[np.ix_(axis, axis)].T, zmin=0.0, zmax=RISK_MAX,
        colorscale=SEG_COLORSCALE, colorbar={"title": {"text": "risk"}},
        hovertemplate="REF %{x} mg/dL<br>BGM %{y} mg/dL<br>risk %{z:.2f}<extra></extra>",
    ))
    if report is not None:
        pairs = report.pairs[report.pairs["included"]]
        fig.add_trace(go.Scatter(
            x=pairs["REF"], y=pairs["BGM"], mode="markers", name="pairs",
            marker={"size": 5, "color": "white", "line": {"color": "black", "width": 1}},
            hovertemplate="REF %{x} mg/dL<br>BGM %{y} mg/dL<extra></extra>",
        ))
    fig.update_layout(title=title, xaxis_title="Reference glucose (mg/dL)",
                      yaxis_title="Meter glucose (mg/dL)", width=720, height=640)
    fig.update_xaxes(range=[0, GLUCOSE_MAX], constrain="domain")
    fig.update_yaxes(range=[0, GLUCOSE_MAX], scaleanchor="x", scaleratio=1)
    return fig


def seg_heatmap(seg_table: SEGTable, report: MeterReport | None = None, step: int = 1
                ) -> go.Figure:
    """The SEG heat map (abs_risk, official colours) with the report's pairs on top."""
    return risk_heatmap(seg_table.absolute, report, "Surveillance Error Grid", step)


def bland_altman_figure(report: MeterReport, title: str = "Modified Bland–Altman") -> go.Figure:
    """rel = (BGM − REF)/REF in % against REF (mg/dL), with the ISO 15197 bounds: ±15 mg/dL
    (±1500/REF %) below REF 100 and ±15 % from REF 100 on. Pairs with REF = 0 are not drawn."""
    pairs = report.pairs[report.pairs["rel"].notna()]
    rel = 100.0 * pairs["rel"].to_numpy()
    ref_axis = np.arange(10.0, GLUCOSE_MAX + 1)
    bound = np.where(ref_axis < 100, 100.0 * ISO_COMPLIANT / ref_axis, ISO_COMPLIANT)
    fig = go.Figure(go.Scatter(
        x=pairs["REF"], y=rel, mode="markers", name="pairs", marker={"size": 5},
        hovertemplate="REF %{x} mg/dL<br>rel %{y:.1f} %<extra></extra>",
    ))
    for sign, name in ((1, "+15 mg/dL / +15 %"), (-1, "−15 mg/dL / −15 %")):
        fig.add_trace(go.Scatter(x=ref_axis, y=sign * bound, mode="lines", name=name,
                                 line={"color": "black", "dash": "dash"}))
    limit = max(50.0, 1.1 * float(np.abs(rel).max())) if rel.size else 50.0
    fig.update_layout(title=title, xaxis_title="Reference glucose (mg/dL)",
                      yaxis_title="(BGM − REF) / REF (%)", width=760, height=480)
    fig.update_xaxes(range=[0, GLUCOSE_MAX])
    fig.update_yaxes(range=[-min(limit, 300.0), min(limit, 300.0)])
    return fig
