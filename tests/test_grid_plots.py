"""Error-grid plots: every drawn zone line lies on its grid's published boundary."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection

from ranking_core.grids import SEGTable, ZoneGrid, get_grid, grid_names
from ranking_core.meter.drawing.grid_plots import DENSITY_FROM, figure_png, figure_svg, grid_plot

RNG = np.random.default_rng(8)
REF = RNG.integers(20, 600, 300).astype(float)
BGM = np.rint(REF * RNG.lognormal(0, 0.2, 300))


def _zone_lines(fig):
    ax = fig.axes[0]
    return {
        line.get_gid().removeprefix("zone line "): line.get_xydata()
        for line in ax.lines
        if (line.get_gid() or "").startswith("zone line ")
    }


@pytest.mark.parametrize("name", grid_names(ZoneGrid))
def test_drawn_zone_lines_lie_on_the_published_boundaries(name):
    grid = get_grid(name)
    fig = grid_plot(grid, REF, BGM)
    drawn = _zone_lines(fig)
    assert drawn.keys() == grid.lines().keys()
    for key, line in drawn.items():
        for a, b in itertools.pairwise(line):
            d = b - a
            normal = np.array([-d[1], d[0]]) / np.hypot(*d) * 0.05  # 0.05 mg/dL off the line
            for t in np.linspace(0.05, 0.95, 10):
                p = a + t * d
                if not ((0 < p) & (p < 600)).all():
                    continue
                one, other = grid.zone(*(p + normal)), grid.zone(*(p - normal))
                # the zone changes across every drawn segment, and the outer side is the
                # line's zone or a worse one
                assert one != other, (name, key, p)
                assert max(one, other) >= key[0], (name, key, p)


@pytest.mark.parametrize("name", grid_names(ZoneGrid))
def test_zone_letters_sit_in_their_zones(name):
    grid = get_grid(name)
    ax = grid_plot(grid, REF, BGM).axes[0]
    letters = [t for t in ax.texts if (t.get_gid() or "").startswith("zone letter")]
    assert {t.get_text() for t in letters} == set(grid.zones)
    for text in letters:
        assert grid.zone(*text.get_position()) == text.get_text()


def test_axes_units_points_and_density():
    ax = grid_plot("dts", REF, BGM).axes[0]
    assert "mg/dL" in ax.get_xlabel() and "mg/dL" in ax.get_ylabel()
    assert ax.get_xlim() == (0, 600) and ax.get_ylim() == (0, 600)
    assert "DTS Error Grid (300 pairs)" == ax.get_title()
    points = ax.collections[-1]
    assert len(points.get_offsets()) == 300
    many = np.tile(REF, DENSITY_FROM // 300 + 1)
    dense = grid_plot("dts", many, many).axes[0]
    assert any(isinstance(c, PolyCollection) for c in dense.collections)  # hexagonal bins
    assert (
        sum(c.get_array().sum() for c in dense.collections if isinstance(c, PolyCollection))
        == many.size
    )


def test_risk_grid_needs_its_surface_and_exports():
    with pytest.raises(ValueError, match="SEG risk table"):
        grid_plot("seg", REF, BGM)
    surface = np.zeros((601, 601))
    fig = grid_plot("seg", REF, BGM, surface=SEGTable(surface))
    png = figure_png(fig)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(png[16:20], "big")
    assert width == 1280
    assert "Surveillance Error Grid" in figure_svg(fig)


def test_bland_altman_lines_are_the_mean_and_limits_of_the_differences():
    from ranking_core.meter import meter_report
    from ranking_core.meter.drawing.grid_plots import (
        bland_altman,
        bland_altman_caption,
        bland_altman_plot,
    )

    ref = np.array([100.0, 50.0, 200.0, 0.0, 80.0, 300.0])
    bgm = np.array([110.0, 40.0, 190.0, 10.0, 84.0, 330.0])
    data = bland_altman(ref, bgm)
    rel = [10.0, -20.0, -5.0, 5.0, 10.0]  # (BGM − REF)/REF in %, REF = 0 left out
    np.testing.assert_allclose(data.rel, rel)
    sd = np.std(rel, ddof=1)
    assert data.bias == pytest.approx(np.mean(rel))
    assert (data.lower, data.upper) == pytest.approx((0 - 1.96 * sd, 0 + 1.96 * sd), abs=1e-9)
    assert data.left_out == 1 and data.outside == 0 and data.axis == 50.0
    # the same numbers as the report's accuracy table
    report = meter_report(pd.DataFrame({"BGM": bgm, "REF": ref}), None)
    accuracy = report.accuracy.iloc[0]
    assert data.bias == pytest.approx(accuracy["bias_percent"])
    assert data.lower == pytest.approx(accuracy["loa_lower_percent"])
    assert data.upper == pytest.approx(accuracy["loa_upper_percent"])
    lines = {line.get_gid(): line.get_ydata()[0] for line in bland_altman_plot(data).axes[0].lines}
    assert lines["bias"] == pytest.approx(data.bias)
    assert lines["limit of agreement lower"] == pytest.approx(data.lower)
    assert lines["limit of agreement upper"] == pytest.approx(data.upper)
    axes = bland_altman_plot(data).axes[0]
    assert axes.get_ylim() == (-50.0, 50.0) and axes.get_xlim() == (0.0, 600.0)
    caption = bland_altman_caption(data)
    assert "Axis ±50 %" in caption and "1 pair with REF = 0 not drawn" in caption


def test_bland_altman_axis_is_widened_to_hold_every_pair_and_says_so():
    from ranking_core.meter.drawing.grid_plots import (
        bland_altman,
        bland_altman_caption,
        bland_altman_plot,
    )

    ref = np.array([100.0, 100.0, 200.0, 50.0])
    bgm = np.array([173.0, 100.0, 90.0, 50.0])  # +73 % and −55 %: 2 pairs outside ±50 %
    data = bland_altman(ref, bgm)
    assert data.outside == 2 and data.axis == 80.0  # the next 10 % above 73 %
    assert "2 pairs outside ±50 %: axis widened to ±80 %" in bland_altman_caption(data)
    assert bland_altman_plot(data).axes[0].get_ylim() == (-80.0, 80.0)
    edge = bland_altman(np.array([100.0]), np.array([150.0]))  # exactly +50 %: inside
    assert (edge.outside, edge.axis) == (0, 50.0)


def test_bland_altman_of_many_pairs_counts_each_pair_once():
    from ranking_core.meter.drawing.grid_plots import bland_altman, bland_altman_plot, figure_pdf

    rng = np.random.default_rng(4)
    ref = rng.integers(20, 500, DENSITY_FROM + 100).astype(float)
    bgm = np.rint(ref * rng.lognormal(0, 0.1, ref.size))
    figure = bland_altman_plot(bland_altman(ref, bgm), unit="mmol/L")
    cells = next(c for c in figure.axes[0].collections if isinstance(c, PolyCollection))
    counts = np.asarray(cells.get_array())  # pairs per cell (the colours on a log scale)
    assert counts.sum() == pytest.approx(ref.size, rel=1e-9)
    assert figure_pdf(figure).startswith(b"%PDF-")
