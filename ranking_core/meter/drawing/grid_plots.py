"""Error-grid plots of meter pairs, drawn once and shown alike in the report (PDF, HTML) and on
the dashboard: zone grids (DTS, Clarke, Parkes) with their zone colours, published zone lines and
zone letters; risk grids (SEG, learned) as the risk surface in the colours of the one risk scale
with the grade boundaries; the pairs on top, as points or — from ``DENSITY_FROM`` pairs on — as
density shading. Static (matplotlib, Agg): a PNG of 1280 px takes a fraction of a second, where a
browser-based export (kaleido) needs seconds per figure.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import LinearSegmentedColormap, ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import FixedLocator, NullFormatter
from numpy.typing import ArrayLike, NDArray
from scipy import ndimage

from ranking_core.grids.lattice import GLUCOSE_MAX
from ranking_core.grids.registry import ErrorGrid, RiskGrid, ZoneGrid, get_grid
from ranking_core.grids.risk_scale import RISK_COLOR_STOPS, RISK_GRADE_EDGES, RISK_MAX
from ranking_core.grids.seg import SEGTable
from ranking_core.grids.style import (
    MEASURED_TITLE,
    REF_TITLE,
    RISK_TITLE,
    fixed_title,
    style_figure,
)
from ranking_core.grids.zone_codes import zone_grid
from ranking_core.inputs import MGDL_PER_MMOLL
from ranking_core.meter.cgm.cg_diva import CgDivaRange

__all__ = [
    "DENSITY_FROM",
    "FIGURE_INCHES",
    "PNG_DPI",
    "cg_diva_plot",
    "figure_pdf",
    "figure_png",
    "figure_svg",
    "grid_plot",
    "zone_label_positions",
]

DENSITY_FROM = 2000  # pairs: from here on, density shading instead of points
FIGURE_INCHES = 6.4
PNG_DPI = 200  # 6.4 in × 200 dpi = 1280 px
# px: the narrowest width a page shows these figures at (the Meter page's half column in a
# 1280 px wide window, measured in Chromium); their text is sized for it (style_figure)
SHOWN_WIDTH_PX = 400
ZONE_ALPHA = 0.35
DENSITY_COLOURS = ("#6baed6", "#08306b")  # few → many pairs per cell (blues)
DENSITY_CMAP = LinearSegmentedColormap.from_list("pairs", list(DENSITY_COLOURS))
RISK_CMAP = LinearSegmentedColormap.from_list(
    "risk", [(risk / RISK_MAX, colour) for risk, colour in RISK_COLOR_STOPS]
)
# how a 601 × 601 lattice (rows BGM, columns REF) is drawn below the pairs: one square per mg/dL,
# each picture pixel the value of its nearest lattice point, picked before the colour map (the
# same pixels as picking it after, with one number to resample per point instead of four)
LATTICE_IMAGE: dict[str, Any] = {
    "origin": "lower",
    "extent": (-0.5, GLUCOSE_MAX + 0.5, -0.5, GLUCOSE_MAX + 0.5),
    "interpolation": "nearest",
    "interpolation_stage": "data",
    "zorder": 1,
}


@lru_cache(maxsize=8)
def zone_label_positions(name: str) -> tuple[tuple[str, float, float], ...]:
    """(letter, REF, BGM) in mg/dL where to write each zone letter of a zone grid: the point of
    each connected zone region (of at least 1 % of the lattice) farthest from its border."""
    grid = get_grid(name, ZoneGrid)
    step = 3  # mg/dL: enough for placing a letter, 9× less work than every mg/dL
    codes = zone_grid(name).astype(np.intp)[::step, ::step]
    labels = []
    for code, letter in enumerate(grid.zones):
        regions, count = ndimage.label(codes == code)
        for region in range(1, count + 1):
            mask = regions == region
            if mask.sum() < 0.01 * mask.size:
                continue
            depth = ndimage.distance_transform_edt(np.pad(mask, 1))[1:-1, 1:-1]
            ref, bgm = np.unravel_index(np.argmax(depth), depth.shape)
            labels.append((letter, float(step * ref), float(step * bgm)))
    return tuple(labels)


def _minor_ticks_inside(bar: Axes) -> None:
    """Keep only the minor ticks of a log colour bar that lie inside it: its locator gives 32
    over four decades, each one made and measured at every draw, half of them never drawn (the
    bar looks the same)."""
    low, high = bar.get_ylim()
    minor = bar.yaxis.get_minor_locator()()
    bar.yaxis.set_minor_locator(FixedLocator([v for v in minor if low <= v <= high]))


def _draw_pairs(fig: Figure, ax, bar, ref: NDArray[np.float64], bgm: NDArray[np.float64]) -> None:
    if ref.size >= DENSITY_FROM:
        cells = ax.hexbin(
            ref,
            bgm,
            gridsize=90,
            extent=(0, GLUCOSE_MAX, 0, GLUCOSE_MAX),
            mincnt=1,
            bins="log",
            cmap=DENSITY_CMAP,
            linewidths=0,
            zorder=3,
        )
        if bar is not None:
            scale = fig.colorbar(cells, cax=bar, format="{x:g}", label="pairs per cell (log)")
            scale.ax.yaxis.set_minor_formatter(NullFormatter())  # plain labels, no mathtext
            _minor_ticks_inside(bar)
    else:
        ax.scatter(
            ref, bgm, s=9, c="#08306b", edgecolors="white", linewidths=0.4, zorder=3, label="pairs"
        )


def grid_plot(
    grid: ErrorGrid | str,
    ref: ArrayLike,
    bgm: ArrayLike,
    *,
    surface: ArrayLike | SEGTable | None = None,
    title: str | None = None,
    unit: str = "mg/dL",
) -> Figure:
    """The grid with the (REF, BGM) pairs in mg/dL on top, as a matplotlib figure
    (``FIGURE_INCHES`` square; 1280 px at ``PNG_DPI``).

    Parameters
    ----------
    grid : a registered grid or its name.
    ref, bgm : the pairs to draw (mg/dL); values beyond 600 are clipped to the frame.
    surface : the (601, 601) risk surface of a :class:`RiskGrid` (an array indexed [REF, BGM]
        or a SEG table); ignored for zone grids.
    title : default "<grid title> (n pairs)".
    unit : the input's glucose unit; "mmol/L" adds mmol/L axes on the top and right (the grid
        itself is defined in mg/dL).
    """
    grid = get_grid(grid) if isinstance(grid, str) else grid
    ref = np.asarray(ref, dtype=np.float64)
    bgm = np.asarray(bgm, dtype=np.float64)
    fig = Figure(figsize=(FIGURE_INCHES, FIGURE_INCHES))  # fixed margins: no layout engine
    side = 0.62 if unit == "mmol/L" else 0.7  # square axes; room above for the mmol/L axis
    ax = fig.add_axes((0.13, 0.12, side, side))
    bar: Axes | None = fig.add_axes((0.87, 0.12, 0.022, side))
    if isinstance(grid, ZoneGrid):
        colours = ListedColormap(list(grid.colours))
        ax.imshow(
            zone_grid(grid.name).T,
            cmap=colours,
            vmin=-0.5,
            vmax=len(grid.zones) - 0.5,
            alpha=ZONE_ALPHA,
            **LATTICE_IMAGE,
        )
        for name, line in grid.lines().items():
            ax.plot(
                line[:, 0],
                line[:, 1],
                color="black",
                linewidth=1.2,
                zorder=4,
                gid=f"zone line {name}",
            )
        for letter, x, y in zone_label_positions(grid.name):
            ax.text(
                x,
                y,
                letter,
                fontsize=16,
                fontweight="bold",
                ha="center",
                va="center",
                zorder=5,
                gid=f"zone letter {letter}",
            )
    else:
        assert isinstance(grid, RiskGrid)
        if surface is None:
            raise ValueError(f"grid_plot: {grid.title} needs {grid.needs}")
        values = np.abs(np.asarray(getattr(surface, "absolute", surface), dtype=np.float64))
        image = ax.imshow(values.T, cmap=RISK_CMAP, vmin=0, vmax=RISK_MAX, **LATTICE_IMAGE)
        ax.contour(
            np.arange(GLUCOSE_MAX + 1),
            np.arange(GLUCOSE_MAX + 1),
            values.T,
            levels=RISK_GRADE_EDGES,
            colors="black",
            linewidths=0.7,
            zorder=4,
        )
        fig.colorbar(image, cax=bar, label=RISK_TITLE)
        bar = None  # the pairs' density gets no second colour bar
    ax.plot(
        [0, GLUCOSE_MAX], [0, GLUCOSE_MAX], color="black", linewidth=0.6, linestyle=":", zorder=2
    )
    _draw_pairs(fig, ax, bar, np.clip(ref, 0, GLUCOSE_MAX), np.clip(bgm, 0, GLUCOSE_MAX))
    if bar is not None and not bar.collections:
        bar.set_visible(False)
    ax.set_xlim(0, GLUCOSE_MAX)
    ax.set_ylim(0, GLUCOSE_MAX)
    ax.set_aspect("equal")
    ax.set_xlabel(REF_TITLE)
    ax.set_ylabel(MEASURED_TITLE)
    if unit == "mmol/L":
        to_mmol = (lambda v: v / MGDL_PER_MMOLL, lambda v: v * MGDL_PER_MMOLL)
        ax.secondary_xaxis("top", functions=to_mmol).set_xlabel("reference (mmol/L)")
        ax.secondary_yaxis("right", functions=to_mmol).set_ylabel("measured (mmol/L)")
    shown_title = title or f"{grid.title} ({ref.size} pairs)"
    if unit == "mmol/L":  # above the mmol/L axis on top: matplotlib places it
        ax.set_title(shown_title, pad=24)
    else:
        fixed_title(ax, shown_title, pad=6)
    return style_figure(fig, SHOWN_WIDTH_PX)


def figure_png(fig: Figure, dpi: int = PNG_DPI) -> bytes:
    """PNG bytes of a matplotlib figure (1280 px wide for the default size and dpi)."""
    buffer = io.BytesIO()
    with mpl.rc_context({"path.simplify": True}):
        fig.savefig(buffer, format="png", dpi=dpi, pil_kwargs={"compress_level": 3})
    return buffer.getvalue()


def figure_pdf(fig: Figure) -> bytes:
    """PDF bytes of a matplotlib figure (vector; fonts embedded)."""
    buffer = io.BytesIO()
    with mpl.rc_context({"pdf.fonttype": 42, "path.simplify": True}):
        fig.savefig(buffer, format="pdf", metadata={"Creator": "riskgrid"})
    return buffer.getvalue()


def figure_svg(fig: Figure) -> str:
    """SVG text of a matplotlib figure (vector; text kept as text)."""
    buffer = io.StringIO()
    with mpl.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buffer, format="svg")
    return buffer.getvalue()


def cg_diva_plot(results: Sequence[CgDivaRange], title: str = "CG-DIVA") -> Figure:
    """CG-DIVA's deviation intervals per comparator range (Eichenlaub et al., J Diabetes Sci
    Technol 2022, their Fig. "Deviation Intervals"): the outer interval (98 / 99 / 99 %) as a
    light box, the inner one (85 / 70 / 80 / 87 %) as a dark box, the median as a line across
    them, and to the right of each the between-sensor variability (smallest to largest sensor
    median) as a capped bar. Deviations in mg/dL below comparator 70, % from 70 (total: %)."""
    fig = Figure(figsize=(FIGURE_INCHES, FIGURE_INCHES * 0.8))
    ax = fig.add_axes((0.12, 0.37, 0.85, 0.55))  # below: two-line ticks, axis title, legend
    width = 0.5
    for x, row in enumerate(results, start=1):
        if row.di2_lower is not None and row.di2_upper is not None:
            ax.add_patch(
                Rectangle(
                    (x - width / 2, row.di2_lower),
                    width,
                    row.di2_upper - row.di2_lower,
                    facecolor="0.85",
                    edgecolor="black",
                    label="outer interval (98 / 99 / 99 %)" if x == 1 else None,
                )
            )
        ax.add_patch(
            Rectangle(
                (x - width / 2, row.di1_lower),
                width,
                row.di1_upper - row.di1_lower,
                facecolor="0.45",
                edgecolor="black",
                label="inner interval (85 / 70 / 80 / 87 %)" if x == 1 else None,
            )
        )
        ax.plot([x - width / 3, x + width / 3], [row.median] * 2, color="white", linewidth=2)
        ax.errorbar(
            x + width / 2 + 0.12,
            (row.between_sensor_min + row.between_sensor_max) / 2,
            yerr=(row.between_sensor_max - row.between_sensor_min) / 2,
            color="tab:blue",
            capsize=4,
            label="sensor medians, smallest to largest" if x == 1 else None,
        )
    ax.axhline(0.0, color="0.3", linewidth=0.8)
    ax.set_xlim(0.4, len(results) + 0.7)
    ax.set_xticks(range(1, len(results) + 1))
    ax.set_xticklabels([f"{row.range}\n({row.unit})" for row in results])
    ax.set_xlabel("comparator glucose range (mg/dL)")
    ax.set_ylabel("deviation (mg/dL or %)")
    ax.grid(axis="y", color="0.9")
    ax.set_axisbelow(True)
    ax.autoscale(axis="y")
    ax.margins(y=0.05)
    fig.legend(loc="lower center", ncol=1, frameon=False)
    fixed_title(ax, title)
    return style_figure(fig, SHOWN_WIDTH_PX)
