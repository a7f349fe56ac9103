"""Error-grid plots: every drawn zone line lies on its grid's published boundary."""

from __future__ import annotations

import itertools

import numpy as np
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
