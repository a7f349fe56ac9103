"""Risk grids as pictures: every pixel of the grid is the colour of its lattice point, the lines
and points sit where they belong, and the picture reads back as a PNG."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from ranking_core.grids.raster import (
    DIFFERENCE_COLOURS,
    LEFT,
    TOP,
    grade_lines,
    grid_image,
    png_bytes,
)
from ranking_core.grids.risk_scale import risk_rgb

AXIS = np.arange(601.0)


def pixel(image: Image.Image, ref: float, measured: float) -> tuple[int, int, int]:
    """The colour drawn for (REF, measured) in mg/dL: REF across, measured up."""
    return image.getpixel((LEFT + int(ref), TOP + 600 - int(measured)))


def test_each_lattice_point_has_the_colour_of_its_risk_reference_across_measured_up():
    rng = np.random.default_rng(0)
    grid = rng.uniform(0.0, 4.0, size=(601, 601))  # [REF, measured], no symmetry
    image = grid_image(grid, "random")
    refs, measured = rng.integers(0, 601, 200), rng.integers(0, 601, 200)
    drawn = np.array([pixel(image, r, g) for r, g in zip(refs, measured, strict=True)])
    np.testing.assert_array_equal(drawn, risk_rgb(grid[refs, measured]))


def test_values_outside_the_risk_scale_take_the_colour_of_its_ends():
    image = grid_image(np.full((601, 601), 5.0), "above")
    assert pixel(image, 300, 300) == tuple(risk_rgb(4.0).tolist())
    image = grid_image(np.full((601, 601), -1.0), "below")
    assert pixel(image, 300, 300) == tuple(risk_rgb(0.0).tolist())


def test_grade_lines_are_drawn_at_the_closed_form_iso_risk_heights():
    grid = np.tile(AXIS / 150.0, (601, 1))  # risk = measured / 150: grade edges at 75, 225, …
    lines = grade_lines(grid)
    assert len(lines) == 4
    for line, height in zip(lines, (75.0, 225.0, 375.0, 525.0), strict=True):
        np.testing.assert_allclose(line[:, 1], height, atol=1e-9)
        assert line[:, 0].min() == 0 and line[:, 0].max() == 600
    image = grid_image(grid, "linear", lines=lines)
    for ref in (10, 300, 590):
        assert pixel(image, ref, 75) == (0, 0, 0)
        assert pixel(image, ref, 150) == tuple(risk_rgb(1.0).tolist())  # between lines: the grid


def test_rating_points_are_dots_of_their_risk_at_their_place():
    image = grid_image(
        np.zeros((601, 601)), "points", points=([100.0, 400.0], [500.0, 50.0], [4.0, 2.0])
    )
    assert pixel(image, 100, 500) == tuple(risk_rgb(4.0).tolist())
    assert pixel(image, 400, 50) == tuple(risk_rgb(2.0).tolist())
    assert pixel(image, 250, 250) == tuple(risk_rgb(0.0).tolist())


def test_flagged_points_carry_a_black_cross():
    points = ([100.0, 400.0], [500.0, 50.0], [4.0, 2.0])
    image = grid_image(np.zeros((601, 601)), "points", points=points, flagged=[True, False])
    background = tuple(risk_rgb(0.0).tolist())
    # 4 px along each diagonal from the centre: outside the dot (radius 3), on the cross's arms
    for dx, dy in ((4, 4), (-4, -4), (4, -4), (-4, 4)):
        assert pixel(image, 100 + dx, 500 + dy) == (0, 0, 0)
        assert pixel(image, 400 + dx, 50 + dy) == background
    plain = grid_image(np.zeros((601, 601)), "points", points=points)
    assert pixel(plain, 104, 504) == background


def test_differences_use_a_diverging_scale_symmetric_about_zero():
    grid = np.zeros((601, 601))
    grid[:300] = 2.0
    grid[301:] = -1.0
    image = grid_image(grid, "difference", difference=True)
    assert pixel(image, 100, 100) == DIFFERENCE_COLOURS[2]  # +bound: red
    assert pixel(image, 300, 100) == DIFFERENCE_COLOURS[1]  # 0: white
    blue, white = np.array(DIFFERENCE_COLOURS[0]), np.array(DIFFERENCE_COLOURS[1])
    halfway = np.rint(white + (blue - white) / 2)  # −1 of a ±2 scale
    np.testing.assert_array_equal(pixel(image, 500, 100), halfway)


@pytest.mark.parametrize("small", [True, False])
def test_png_bytes_read_back_as_the_same_picture(small):
    image = grid_image(np.random.default_rng(1).uniform(0, 4, (601, 601)), "png")
    with Image.open(io.BytesIO(png_bytes(image, small=small))) as back:
        assert back.format == "PNG"
        np.testing.assert_array_equal(np.asarray(back.convert("RGB")), np.asarray(image))


def test_a_grid_of_another_shape_is_refused():
    with pytest.raises(ValueError, match=r"shape \(601, 601\)"):
        grid_image(np.zeros((600, 601)), "wrong")
