"""Risk grids as raster images drawn with Pillow: one pixel per mg/dL, with axes, a colour bar,
the iso-risk lines of a reference grid and rating points on top.

A 601 × 601 grid becomes an 817 × 723 px image in a few tens of milliseconds, without a plotting
library and without drawing work in the browser: the dashboard's grid view (redrawn on every λ
step) and the ``grid.png`` file (:mod:`ranking_core.grids.files`) are this image.
"""

from __future__ import annotations

import importlib.util
import io
from functools import lru_cache
from pathlib import Path
from typing import cast

import contourpy
import numpy as np
from numpy.typing import ArrayLike, NDArray
from PIL import Image, ImageDraw, ImageFont

from ranking_core.grids.lattice import GLUCOSE_MAX
from ranking_core.grids.risk_scale import RISK_GRADE_EDGES, RISK_MAX, risk_rgb
from ranking_core.grids.style import MEASURED_TITLE, REF_TITLE

__all__ = ["DIFFERENCE_COLOURS", "GRADE_LEVELS", "grade_lines", "grid_image", "png_bytes"]

SIZE = GLUCOSE_MAX + 1  # px of the grid: one per mg/dL
LEFT, TOP, RIGHT, BOTTOM = 96, 48, 120, 74  # px around the grid: ticks, titles, colour bar
BAR_WIDTH = 24  # px
# boundaries of the risk grades A [0, .5), B [.5, 1.5), C [1.5, 2.5), D [2.5, 3.5), E ≥ 3.5
GRADE_LEVELS = tuple(RISK_GRADE_EDGES.tolist())
# a diverging scale for differences of risk: negative (blue), 0 (white), positive (red)
DIFFERENCE_COLOURS = ((33, 102, 172), (247, 247, 247), (178, 24, 43))
POINT_RADIUS = 3  # px
FONT_SIZE = 19  # px: legible when a page shows the picture at two thirds of its size
# px: the narrowest width a page shows a grid picture at (measured in Chromium at a 1280 px
# wide window); FONT_SIZE shown there stays at least the style's MIN_TEXT_PX
SHOWN_WIDTH_PX = 560


@lru_cache(maxsize=1)
def _font() -> ImageFont.FreeTypeFont:
    """DejaVu Sans (shipped with Matplotlib): Pillow's built-in font lacks "−" and "Δ". The
    file is found in Matplotlib's package data without importing Matplotlib (0.1 s)."""
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or spec.origin is None:
        raise RuntimeError("Matplotlib, which ships the DejaVu Sans font, is not installed")
    path = Path(spec.origin).parent / "mpl-data" / "fonts" / "ttf" / "DejaVuSans.ttf"
    return ImageFont.truetype(str(path), size=FONT_SIZE)


def grade_lines(
    grid: ArrayLike, step: int = 1, levels: tuple[float, ...] = GRADE_LEVELS
) -> list[NDArray[np.float64]]:
    """The iso-risk lines of |grid| (indexed [REF, measured], 0..600 mg/dL in steps of 1) at
    ``levels``, on every ``step``-th lattice point: a list of (k, 2) vertex arrays of
    (REF, measured) in mg/dL."""
    z = np.abs(np.asarray(grid, dtype=np.float64))[::step, ::step].T
    axis = np.arange(0, SIZE, step, dtype=np.float64)
    generator = contourpy.contour_generator(
        x=axis, y=axis, z=z, line_type=contourpy.LineType.Separate
    )
    # LineType.Separate: lines(level) is a list of (k, 2) float64 vertex arrays.
    return [
        line for level in levels for line in cast(list[NDArray[np.float64]], generator.lines(level))
    ]


def _difference_rgb(values: NDArray[np.float64], bound: float) -> NDArray[np.uint8]:
    stops = np.array([-bound, 0.0, bound])
    colours = np.array(DIFFERENCE_COLOURS, dtype=np.float64)
    channels = [np.interp(values, stops, colours[:, k]) for k in range(3)]
    return np.rint(np.stack(channels, axis=-1)).astype(np.uint8)


def _pixel(ref: ArrayLike, measured: ArrayLike) -> tuple[NDArray, NDArray]:
    """Image coordinates of (REF, measured) in mg/dL: REF across, measured up."""
    return LEFT + np.asarray(ref, dtype=np.float64), TOP + GLUCOSE_MAX - np.asarray(
        measured, dtype=np.float64
    )


def grid_image(
    grid: ArrayLike,
    title: str,
    *,
    difference: bool = False,
    lines: list[NDArray[np.float64]] | None = None,
    points: tuple[ArrayLike, ArrayLike, ArrayLike] | None = None,
    flagged: ArrayLike | None = None,
    pale: ArrayLike | None = None,
) -> Image.Image:
    """The grid (601 × 601, indexed [REF, measured] in mg/dL) as an RGB image, REF across and the
    measured glucose up, ticks every 100 mg/dL and a colour bar.

    ``difference``: the values are differences of risk, drawn on a diverging scale symmetric
    about 0 (at least ±0.5); otherwise risk, clipped to 0..4, in the SEG colours. ``lines``:
    iso-risk lines (:func:`grade_lines`) drawn in black. ``points``: (REF, measured, risk)
    drawn as dots in the colour of their risk with a black rim; ``flagged`` (a boolean per point)
    marks points, such as ratings flagged as outlying, with a black cross over the dot.
    ``pale``: a boolean grid of the same shape; its points are drawn half-way to white (for
    example where an uncertainty band leaves the risk category open).
    """
    values = np.asarray(grid, dtype=np.float64)
    if values.shape != (SIZE, SIZE):
        raise ValueError(f"a risk grid has shape ({SIZE}, {SIZE}); got {values.shape}")
    scale = np.linspace(1.0, 0.0, SIZE)[:, None].repeat(BAR_WIDTH, axis=1)  # top = high
    if difference:
        bound = max(float(np.max(np.abs(values))), 0.5)
        surface, bar = (
            _difference_rgb(values, bound),
            _difference_rgb(bound * (2 * scale - 1), bound),
        )
        labels = [
            (f"{v:+.2g}".replace("-", "−") if v else "0", 1 - (v + bound) / (2 * bound))
            for v in (bound, bound / 2, 0.0, -bound / 2, -bound)
        ]
        bar_title = "Δ risk"
    else:
        surface, bar = risk_rgb(values), risk_rgb(RISK_MAX * scale)
        labels = [(str(risk), 1 - risk / RISK_MAX) for risk in range(int(RISK_MAX) + 1)]
        bar_title = "risk"
    if pale is not None:
        surface = np.where(
            np.asarray(pale, dtype=bool)[..., None], (surface.astype(np.uint16) + 255) // 2, surface
        ).astype(np.uint8)
    image = Image.new("RGB", (LEFT + SIZE + RIGHT, TOP + SIZE + BOTTOM), "white")
    image.paste(
        Image.fromarray(np.ascontiguousarray(surface.transpose(1, 0, 2)[::-1]), "RGB"), (LEFT, TOP)
    )  # row 0 = measured 600 mg/dL
    image.paste(Image.fromarray(bar, "RGB"), (LEFT + SIZE + 20, TOP))
    draw = ImageDraw.Draw(image)
    for line in lines or ():
        x, y = _pixel(line[:, 0], line[:, 1])
        draw.line(list(zip(x.tolist(), y.tolist(), strict=True)), fill="black", width=1)
    if points is not None:
        ref, measured, risk = (np.asarray(p, dtype=np.float64) for p in points)
        x, y = _pixel(ref, measured)
        marked = np.zeros(x.size, bool) if flagged is None else np.asarray(flagged, bool)
        for px, py, colour, cross in zip(
            x.tolist(), y.tolist(), risk_rgb(risk).tolist(), marked.tolist(), strict=True
        ):
            draw.ellipse(
                (px - POINT_RADIUS, py - POINT_RADIUS, px + POINT_RADIUS, py + POINT_RADIUS),
                fill=tuple(colour),
                outline="black",
            )
            if cross:
                arm = POINT_RADIUS + 2
                draw.line((px - arm, py - arm, px + arm, py + arm), fill="black", width=2)
                draw.line((px - arm, py + arm, px + arm, py - arm), fill="black", width=2)
    font = _font()
    draw.text((LEFT, 10), title, fill="black", font=font)
    draw.rectangle((LEFT - 1, TOP - 1, LEFT + SIZE, TOP + SIZE), outline="black")
    for tick in range(0, GLUCOSE_MAX + 1, 100):
        tick_x, tick_y = LEFT + tick, TOP + GLUCOSE_MAX - tick
        draw.line((tick_x, TOP + SIZE, tick_x, TOP + SIZE + 5), fill="black")
        draw.text((tick_x, TOP + SIZE + 8), str(tick), fill="black", font=font, anchor="mt")
        draw.line((LEFT - 6, tick_y, LEFT, tick_y), fill="black")
        draw.text((LEFT - 9, tick_y), str(tick), fill="black", font=font, anchor="rm")
    for label, height in labels:
        draw.text(
            (LEFT + SIZE + 52, TOP + round(height * GLUCOSE_MAX)),
            label,
            fill="black",
            font=font,
            anchor="lm",
        )
    draw.text((LEFT + SIZE + 20, TOP + SIZE + 8), bar_title, fill="black", font=font)
    draw.text(
        (LEFT + SIZE // 2, TOP + SIZE + 40),
        REF_TITLE,
        fill="black",
        font=font,
        anchor="mt",
    )
    axis_label = Image.new("RGB", (SIZE, 28), "white")
    ImageDraw.Draw(axis_label).text(
        (SIZE // 2, 14), MEASURED_TITLE, fill="black", font=font, anchor="mm"
    )
    image.paste(axis_label.rotate(90, expand=True), (8, TOP))
    return image


def png_bytes(image: Image.Image, *, small: bool = True) -> bytes:
    """PNG bytes of ``image``: ``small``, zlib's default level for a file (a learned grid's
    picture: 70 kB in 0.024 s, where Pillow's ``optimize`` made 64 kB in 0.17 s); otherwise the
    fastest encoding (a screen redrawn on every step: 96 kB in 0.012 s)."""
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=6 if small else 1)
    return out.getvalue()
