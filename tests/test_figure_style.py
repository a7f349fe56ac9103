"""One grid style for every drawer (Pillow, matplotlib, Plotly): the glucose axes titled with
their unit, the SEG colours, and no text smaller than MIN_TEXT_PX as the page shows it."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from dashboard import figures as page_figures
from ranking_core.grids import raster
from ranking_core.grids.learned import GLUCOSE_AXIS
from ranking_core.grids.risk_scale import RISK_COLOR_STOPS, risk_rgb
from ranking_core.grids.style import (
    MEASURED_TITLE,
    MIN_TEXT_PX,
    REF_TITLE,
    TEXT_PX,
    shown_px,
    text_points,
)
from ranking_core.meter.cgm.cg_diva import CgDivaRange
from ranking_core.meter.comparison.bland_altman import bland_altman_limits
from ranking_core.meter.comparison.plots import bland_altman_limits_plot
from ranking_core.meter.documents import figures as meter_figures
from ranking_core.meter.drawing import grid_plots
from ranking_core.panels import parkes_surface

SURFACE = parkes_surface()
rng = np.random.default_rng(0)
REF = rng.uniform(40, 400, 60)
BGM = REF * rng.uniform(0.8, 1.2, 60)


def test_text_size_conversions():
    # 12 px in a 6.4 in figure shown 512 px wide: 512 px / 6.4 in = 80 px/in, 12 px = 0.15 in
    assert text_points(12, 6.4, 512) == pytest.approx(0.15 * 72)
    assert shown_px(19, 900, 600) == pytest.approx(19 * 2 / 3)
    assert min(vars(TEXT_PX).values()) >= MIN_TEXT_PX


# -- Plotly: drawn at the size the page shows ------------------------------------------------------
def _plotly_sizes(fig) -> list[float]:
    """Every font size a Plotly figure sets or inherits (layout font default 12 px)."""
    layout = fig.layout
    base = layout.font.size or 12
    sizes = [base, layout.title.font.size or 17, layout.legend.font.size or base]
    for axis in (layout.xaxis, layout.yaxis):
        sizes += [axis.title.font.size or base, axis.tickfont.size or base]
    for trace in fig.data:
        font = getattr(trace, "textfont", None)
        if font is not None and font.size is not None:
            sizes.append(font.size)
    return sizes


def _plotly_figures():
    grid = SURFACE
    return {
        "risk_heatmap": meter_figures.risk_heatmap(grid, GLUCOSE_AXIS, "grid", step=10),
        "difference_heatmap": page_figures.difference_heatmap(grid - 1, GLUCOSE_AXIS, "Δ", 10),
        "band_width_heatmap": page_figures.band_width_heatmap(grid, GLUCOSE_AXIS, "band", step=10),
        "proposed_pairs": page_figures.proposed_pairs((REF, BGM), GLUCOSE_AXIS, "next"),
        "lambda_curve": page_figures.lambda_curve([1e-3, 1e-2, 1e-1], [3, 2, 4], 1e-2, "err"),
        "apriori_plot": page_figures.apriori_plot([20, 30], np.ones((2, 3)), 1.0, 1.0, 100),
        "shares_bar": page_figures.shares_bar(["a", "b"], [0.4, 0.6], "shares", "bin"),
        "confusion_heatmap": page_figures.confusion_heatmap(
            np.eye(2) * 5, ["x", "y"], "confusion", "rows", "columns"
        ),
        "line_chart": page_figures.line_chart([1, 2], {"a": [1, 2]}, "lines", "m", "y"),
        "error_bars": page_figures.error_bars(["a"], [1.0], [0.1], "bars", "y"),
    }


@pytest.mark.parametrize("name", sorted(_plotly_figures()))
def test_plotly_charts_use_the_style_sizes(name):
    fig = _plotly_figures()[name]
    assert min(_plotly_sizes(fig)) >= MIN_TEXT_PX
    assert fig.layout.font.size == TEXT_PX.tick
    if fig.layout.title.text:
        assert fig.layout.title.font.size == TEXT_PX.title


@pytest.mark.parametrize(
    "name", ["risk_heatmap", "difference_heatmap", "band_width_heatmap", "proposed_pairs"]
)
def test_every_lattice_chart_has_the_glucose_axes_with_their_unit(name):
    fig = _plotly_figures()[name]
    assert (fig.layout.xaxis.title.text, fig.layout.yaxis.title.text) == (REF_TITLE, MEASURED_TITLE)
    assert "mg/dL" in REF_TITLE and "mg/dL" in MEASURED_TITLE


def test_the_lattice_heat_map_and_the_raster_use_the_seg_colours():
    fig = meter_figures.risk_heatmap(SURFACE, GLUCOSE_AXIS, "grid", step=10)
    scale = [(round(stop * 4, 6), colour.lower()) for stop, colour in fig.data[0].colorscale]
    assert scale == [(float(risk), colour.lower()) for risk, colour in RISK_COLOR_STOPS]
    image = np.asarray(raster.grid_image(np.zeros((601, 601)), "zero risk"))
    zero = tuple(risk_rgb(np.array([0.0]))[0])
    assert tuple(image[raster.TOP + 300, raster.LEFT + 300]) == zero


# -- matplotlib: drawn in inches, shown scaled to the page's width ---------------------------------
def _texts_px(fig: Figure, shown_width_px: float) -> dict[str, float]:
    """Every visible text of ``fig`` → its height in px when the figure is shown
    ``shown_width_px`` wide (its size in points is 1/72 in of the figure)."""
    fig.canvas.draw()  # tick labels exist once drawn
    width_in = fig.get_size_inches()[0]
    return {
        text.get_text(): text.get_fontsize() / 72 * shown_width_px / width_in
        for text in fig.findobj(lambda artist: hasattr(artist, "get_fontsize"))
        if text.get_visible() and text.get_text().strip()
    }


def _report_plots() -> dict[str, Figure]:
    cg = CgDivaRange(
        range="<70", unit="mg/dL", pairs=30, sensors=3, median=1.0, di1_lower=-5.0,
        di1_upper=6.0, di2_lower=-9.0, di2_upper=10.0, between_sensor_min=-2.0,
        between_sensor_max=3.0, within_sensor_90=4.0,
    )  # fmt: skip
    return {
        "seg": grid_plots.grid_plot("seg", REF, BGM, surface=SURFACE),
        "clarke": grid_plots.grid_plot("clarke", REF, BGM),
        "bland_altman": bland_altman_limits_plot(bland_altman_limits(REF, BGM), device_name="BGM"),
        "cg_diva": grid_plots.cg_diva_plot([cg]),
    }


@pytest.mark.parametrize("name", ["seg", "clarke", "bland_altman", "cg_diva"])
def test_report_plots_are_readable_at_the_width_the_meter_page_shows_them(name):
    """The Meter page shows the report's own plots (the PNG and PDF's code) in a half column
    (grid_plots.SHOWN_WIDTH_PX, measured in Chromium at a 1280 px wide window)."""
    plot = _report_plots()[name]
    texts = _texts_px(plot, grid_plots.SHOWN_WIDTH_PX)
    small = {text: round(px, 1) for text, px in texts.items() if px < MIN_TEXT_PX - 1e-9}
    assert not small, f"text smaller than {MIN_TEXT_PX} px on the page: {small}"
    if name != "cg_diva":
        assert REF_TITLE in texts


def test_the_learn_pages_pictures_are_readable_at_their_width():
    curve = page_figures.lambda_curve_picture([1e-3, 1e-2, 1e-1], [3, 2, 4], 1e-2, "err")
    assert curve[:8] == b"\x89PNG\r\n\x1a\n"
    width = page_figures.PICTURE_SHOWN_PX
    for figure in (
        page_figures.lambda_curve_figure([1e-3, 1e-2, 1e-1], [3, 2, 4], 1e-2, "err"),
        page_figures.apriori_figure([20, 30], np.ones((2, 3)), 1.0, 1.0, 100),
    ):
        small = {t: round(px, 1) for t, px in _texts_px(figure, width).items() if px < MIN_TEXT_PX}
        assert not small, small


def test_the_raster_pictures_text_is_readable_as_the_pages_show_it():
    assert (
        shown_px(raster.FONT_SIZE, raster.LEFT + raster.SIZE + raster.RIGHT, raster.SHOWN_WIDTH_PX)
        >= MIN_TEXT_PX
    )


# -- the report's plots skip two of matplotlib's measurements, and draw the same ------------------
def _pixels(fig: Figure) -> np.ndarray:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba()).copy()


def _every_report_plot() -> dict[str, Figure]:
    """One plot of each kind the report draws, the grids with density shading and its colour
    bar (2,500 pairs)."""
    from ranking_core.meter.cgm.dgr import dgr, dgr_plot
    from ranking_core.meter.comparison.plots import regression_plot
    from ranking_core.meter.comparison.summary import method_comparison

    draws = np.random.default_rng(3)
    ref = np.round(draws.uniform(40, 400, 2500))
    bgm = np.round(ref * draws.normal(1.0, 0.08, ref.size))
    roc = draws.normal(0.0, 1.5, ref.size)
    return {
        **_report_plots(),
        "dts": grid_plots.grid_plot("dts", ref, bgm),
        "seg density": grid_plots.grid_plot("seg", ref, bgm, surface=SURFACE),
        "regression": regression_plot(ref, bgm, method_comparison(ref, bgm)),
        "dgr": dgr_plot(dgr(ref, roc)),
    }


def test_the_plots_shortcuts_draw_what_matplotlib_draws_without_them(monkeypatch):
    """Titles at a fixed place (matplotlib would measure every tick label to place them), only
    the colour bar's minor ticks inside it, and the lattice's nearest points picked before the
    colour map: every plot is the same, pixel for pixel, as when matplotlib places the titles
    itself, makes every tick of its locator and colours the lattice before resampling it."""
    from ranking_core.grids import style
    from ranking_core.meter.comparison import plots

    fast = {name: _pixels(fig) for name, fig in _every_report_plot().items()}

    def placed_by_matplotlib(ax, text, **kwargs):
        ax.set_title(text, **kwargs)

    for module in (style, plots, grid_plots):
        monkeypatch.setattr(module, "fixed_title", placed_by_matplotlib)
    monkeypatch.setattr(grid_plots, "_minor_ticks_inside", lambda bar: None)
    monkeypatch.setitem(grid_plots.LATTICE_IMAGE, "interpolation_stage", "rgba")
    plain = {name: _pixels(fig) for name, fig in _every_report_plot().items()}
    for name, pixels in fast.items():
        assert np.array_equal(pixels, plain[name]), name
