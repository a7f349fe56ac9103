"""The figures a laboratory expects beside a method comparison (matplotlib, the report's style of
:mod:`ranking_core.meter.drawing.grid_plots`): the regression plot — device against reference,
the identity line and both fitted lines — and the Bland–Altman plot with the 95 % intervals of
its limits of agreement as bands, one panel per part (absolute below the cut, relative from it).
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from ranking_core.grids.style import style_figure
from ranking_core.meter.comparison.bland_altman import BlandAltmanLimits
from ranking_core.meter.comparison.summary import MethodComparison

__all__ = ["bland_altman_limits_plot", "regression_plot"]

# the report's figure width (in) and the narrowest width a page shows it at (px): the values of
# ranking_core.meter.drawing.grid_plots (which imports meter/cgm, so not imported here; a test
# checks they are equal)
FIGURE_INCHES, SHOWN_WIDTH_PX = 6.4, 400
_PB_COLOUR, _DEMING_COLOUR = "#b42318", "#1f6feb"


def regression_plot(
    reference: ArrayLike, device: ArrayLike, result: MethodComparison, title: str | None = None
) -> Figure:
    """Device (y) against reference (x): the pairs, the identity line (dotted), the
    Passing–Bablok line (solid) and the Deming line (dashed), the equations in the legend."""
    x = np.asarray(reference, dtype=np.float64)
    y = np.asarray(device, dtype=np.float64)
    fig = Figure(figsize=(FIGURE_INCHES, FIGURE_INCHES * 0.8))
    ax = fig.add_axes((0.13, 0.12, 0.82, 0.78))
    ax.scatter(x, y, s=6, color="#08306b", alpha=0.35, linewidths=0, zorder=2)
    top = float(max(x.max(), y.max())) * 1.05
    line = np.array([0.0, top])
    ax.plot(line, line, color="0.4", linestyle=":", linewidth=1.0, label="identity y = x")
    pb, dem = result.passing_bablok, result.deming
    ax.plot(
        line,
        pb.intercept + pb.slope * line,
        color=_PB_COLOUR,
        linewidth=1.4,
        label=f"Passing–Bablok y = {pb.intercept:.2f} + {pb.slope:.4f}·x",
    )
    ax.plot(
        line,
        dem.intercept + dem.slope * line,
        color=_DEMING_COLOUR,
        linewidth=1.4,
        linestyle="--",
        label=f"Deming (λ = {dem.error_ratio:g}) y = {dem.intercept:.2f} + {dem.slope:.4f}·x",
    )
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.set_xlabel(f"Reference ({result.unit})")
    ax.set_ylabel(f"Device ({result.unit})")
    ax.legend(loc="upper left", frameon=False)
    ax.set_title(title or f"Method comparison ({pb.n:,} pairs)")
    return style_figure(fig, SHOWN_WIDTH_PX)


def bland_altman_limits_plot(result: BlandAltmanLimits, title: str | None = None) -> Figure:
    """Differences against the reference, one panel per part: the bias (solid), the limits of
    agreement (dashed) and each one's 95 % interval as a shaded band."""
    fig = Figure(figsize=(FIGURE_INCHES, FIGURE_INCHES * 0.55))
    below = result.x < result.cut
    for k, (part, mask) in enumerate(zip(result.parts, (below, ~below), strict=True)):
        ax = fig.add_axes((0.1 + 0.47 * k, 0.17, 0.38, 0.68))
        ax.scatter(result.x[mask], result.difference[mask], s=5, color="#08306b", alpha=0.35)
        if np.isfinite(part.sd):
            for value, low, high, style in (
                (part.bias, part.bias_lower, part.bias_upper, "-"),
                (part.lower_limit, part.lower_limit_lower, part.lower_limit_upper, "--"),
                (part.upper_limit, part.upper_limit_lower, part.upper_limit_upper, "--"),
            ):
                ax.axhline(value, color=_PB_COLOUR, linestyle=style, linewidth=1.1)
                ax.axhspan(low, high, color=_PB_COLOUR, alpha=0.15, linewidth=0)
        ax.axhline(0.0, color="0.6", linewidth=0.6)
        ax.set_xlabel(f"Reference ({result.unit})")
        ax.set_ylabel(f"Device − reference ({part.unit})")
        ax.set_title(f"{part.part} ({part.n:,})")
    fig.suptitle(title or "Bland–Altman limits of agreement with their 95 % intervals")
    return style_figure(fig, SHOWN_WIDTH_PX)
