"""The figures a laboratory expects beside a method comparison (matplotlib, the report's style of
:mod:`ranking_core.meter.drawing.grid_plots`): the regression plot — device against reference,
the identity line and both fitted lines — and the Bland–Altman plot with the 95 % intervals of
its limits of agreement as bands, one panel per part (absolute below the cut, relative from it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids.style import REF_TITLE, fixed_title, style_figure
from ranking_core.inputs import MGDL_PER_MMOLL
from ranking_core.meter.comparison.bland_altman import BlandAltmanLimits
from ranking_core.meter.comparison.summary import MethodComparison
from ranking_core.meter.statistics import AgreementLimit

__all__ = ["bland_altman_limits_plot", "regression_plot"]

# the report's figure width (in) and the narrowest width a page shows it at (px): the values of
# ranking_core.meter.drawing.grid_plots (which imports meter/cgm, so not imported here; a test
# checks they are equal)
FIGURE_INCHES, SHOWN_WIDTH_PX = 6.4, 400
_PB_COLOUR, _DEMING_COLOUR = "#b42318", "#1f6feb"
RASTER_FROM = 5_000  # from this many pairs the dots are drawn as one image (small PDF files)


def regression_plot(
    reference: ArrayLike,
    device: ArrayLike,
    result: MethodComparison,
    title: str | None = None,
    *,
    device_name: str = "Device",
) -> Figure:
    """Device (y) against reference (x): the pairs, the identity line (dotted), the
    Passing–Bablok line (solid) and the Deming line (dashed), the equations in the legend;
    ``device_name`` labels the y axis (BGM, CGM)."""
    x = np.asarray(reference, dtype=np.float64)
    y = np.asarray(device, dtype=np.float64)
    fig = Figure(figsize=(FIGURE_INCHES, FIGURE_INCHES * 0.8))
    ax = fig.add_axes((0.13, 0.12, 0.82, 0.78))
    ax.scatter(
        x, y, s=6, color="#08306b", alpha=0.35, lw=0, zorder=2, rasterized=x.size >= RASTER_FROM
    )
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
    ax.set_xlabel(REF_TITLE.replace("mg/dL", result.unit))  # the one style's title
    ax.set_ylabel(f"{device_name} ({result.unit})")
    ax.legend(loc="upper left", frameon=False)
    fixed_title(ax, title or f"Method comparison ({pb.n:,} pairs)")
    return style_figure(fig, SHOWN_WIDTH_PX)


def _standard_limit(
    limit: AgreementLimit, x: NDArray[np.float64], unit: str, relative: bool
) -> NDArray[np.float64]:
    """A standard's limit at each reference ``x`` (the pairs' unit): in % of the reference
    (``relative``), else in the pairs' unit."""
    factor = MGDL_PER_MMOLL if unit == "mmol/L" else 1.0
    ref_mgdl = np.maximum(x * factor, 1e-9)
    percent = limit.percent_at(ref_mgdl)
    return percent if relative else percent / 100.0 * x


def bland_altman_limits_plot(
    result: BlandAltmanLimits,
    title: str | None = None,
    *,
    device_name: str = "Device",
    limits: Sequence[AgreementLimit] = (),
) -> Figure:
    """Differences against the reference, one panel per part: the bias (solid), the limits of
    agreement (dashed) and each one's 95 % interval as a shaded band; ``limits``, a standard's
    accuracy limits, dotted; ``device_name`` names the difference (BGM − REF, CGM − REF)."""
    fig = Figure(figsize=(FIGURE_INCHES, FIGURE_INCHES * 0.55))
    below = result.x < result.cut
    raster = result.x.size >= RASTER_FROM
    for k, (part, mask) in enumerate(zip(result.parts, (below, ~below), strict=True)):
        ax = fig.add_axes((0.1 + 0.47 * k, 0.17, 0.38, 0.68))
        xs = result.x[mask]
        ax.scatter(
            xs, result.difference[mask], s=5, color="#08306b", alpha=0.35, lw=0, rasterized=raster
        )
        if np.isfinite(part.sd):
            for value, low, high, style in (
                (part.bias, part.bias_lower, part.bias_upper, "-"),
                (part.lower_limit, part.lower_limit_lower, part.lower_limit_upper, "--"),
                (part.upper_limit, part.upper_limit_lower, part.upper_limit_upper, "--"),
            ):
                ax.axhline(value, color=_PB_COLOUR, linestyle=style, linewidth=1.1)
                ax.axhspan(low, high, color=_PB_COLOUR, alpha=0.15, linewidth=0)
        if xs.size:
            line = np.linspace(xs.min(), xs.max(), 200)
            for limit in limits:
                edge = _standard_limit(limit, line, result.unit, relative=k == 1)
                for sign in (1.0, -1.0):
                    ax.plot(line, sign * edge, color="0.35", linestyle=":", linewidth=0.9)
        ax.axhline(0.0, color="0.6", linewidth=0.6)
        ax.set_xlabel(REF_TITLE.replace("mg/dL", result.unit))  # the one style's title
        ax.set_ylabel(f"{device_name} − reference ({part.unit})")
        fixed_title(ax, f"{part.part} ({part.n:,})")
    fig.suptitle(title or "Bland–Altman limits of agreement with their 95 % intervals")
    return style_figure(fig, SHOWN_WIDTH_PX)
