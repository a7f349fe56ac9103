"""The one clinical risk scale: 0 (none) … 4 (extreme), its five grades, its eight categories and
its colours (Klonoff et al., "The Surveillance Error Grid", J Diabetes Sci Technol
2014;8(4):658–672; the grades and categories as the official SEG tool reports them).

* Grades A–E: A [0, 0.5), B [0.5, 1.5), C [1.5, 2.5), D [2.5, 3.5), E ≥ 3.5 (closed below).
* Categories: None [0, 0.5], Slight lower (0.5, 1.0], Slight higher (1.0, 1.5], …, Extreme > 3.5
  (each including its upper bound; negative values, which a learned grid may produce, fall in
  None and values above 4 in Extreme).
* File labels: the categories as written in per-pair files (``--pairs-out``), where category 0
  is "No risk": "None" is one of the texts that pandas, R and spreadsheets read as a missing
  value, which would mix the pairs of no risk with the pairs left out of the analysis.
* Colours: the official SEG heat-map colours at risk 0, 0.4375, 1.0625, 2.75 and 4, linearly
  interpolated in between; zone grids colour zone k (A = 0 … E = 4) like risk k.

The meter report, the grid comparison and the dashboard all read the scale from here.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "RISK_CATEGORIES",
    "RISK_CATEGORY_EDGES",
    "RISK_CATEGORY_FILE_LABELS",
    "RISK_CATEGORY_RANGES",
    "RISK_COLORSCALE",
    "RISK_COLOR_STOPS",
    "RISK_GRADES",
    "RISK_GRADE_EDGES",
    "RISK_GRADE_RANGES",
    "RISK_MAX",
    "risk_category",
    "risk_colour",
    "risk_grade",
    "risk_rgb",
]

RISK_MAX = 4.0
RISK_GRADES = ("A", "B", "C", "D", "E")
RISK_GRADE_RANGES = ("[0, 0.5)", "[0.5, 1.5)", "[1.5, 2.5)", "[2.5, 3.5)", ">= 3.5")
RISK_GRADE_EDGES = np.array([0.5, 1.5, 2.5, 3.5])
RISK_CATEGORIES = (
    "None",
    "Slight, lower",
    "Slight, higher",
    "Moderate, lower",
    "Moderate, higher",
    "Severe, lower",
    "Severe, higher",
    "Extreme",
)
# the categories in per-pair files: no label that a CSV reader takes for a missing value
RISK_CATEGORY_FILE_LABELS = ("No risk", *RISK_CATEGORIES[1:])
RISK_CATEGORY_RANGES = (
    "[0, 0.5]",
    "(0.5, 1.0]",
    "(1.0, 1.5]",
    "(1.5, 2.0]",
    "(2.0, 2.5]",
    "(2.5, 3.0]",
    "(3.0, 3.5]",
    "> 3.5",
)
RISK_CATEGORY_EDGES = 0.5 * np.arange(1, 8)  # inner upper bounds 0.5, 1.0, …, 3.5
# official SEG heat-map colours: risk -> colour
RISK_COLOR_STOPS = (
    (0.0, "#00A500"),
    (0.4375, "#00FF00"),
    (1.0625, "#FFFF00"),
    (2.75, "#FF0000"),
    (4.0, "#800000"),
)
RISK_COLORSCALE = [[risk / RISK_MAX, colour] for risk, colour in RISK_COLOR_STOPS]


def risk_grade(risk: ArrayLike) -> NDArray[np.intp]:
    """Grade index 0..4 (A..E) of each absolute risk: A [0, 0.5), B [0.5, 1.5), …, E ≥ 3.5."""
    return np.digitize(np.asarray(risk, dtype=np.float64), RISK_GRADE_EDGES, right=False)


def risk_category(risk: ArrayLike) -> NDArray[np.intp]:
    """Category index 0..7 of each absolute risk: None [0, 0.5], (0.5, 1.0], …, Extreme > 3.5
    (upper bound inclusive)."""
    return np.digitize(np.asarray(risk, dtype=np.float64), RISK_CATEGORY_EDGES, right=True)


def risk_rgb(risk: ArrayLike) -> NDArray[np.uint8]:
    """RGB (…, 3) uint8 of risk values on the SEG colour scale (clipped to 0..4), vectorised."""
    stops = np.array([s for s, _ in RISK_COLOR_STOPS])
    rgb = np.array(
        [[int(c[i : i + 2], 16) for i in (1, 3, 5)] for _, c in RISK_COLOR_STOPS], dtype=np.float64
    )
    values = np.clip(np.asarray(risk, dtype=np.float64), 0.0, RISK_MAX)
    channels = [np.interp(values, stops, rgb[:, k]) for k in range(3)]
    return np.rint(np.stack(channels, axis=-1)).astype(np.uint8)


def risk_colour(risk: float) -> str:
    """'#RRGGBB' of a risk value on the SEG colour scale (clipped to 0..4)."""
    return "#" + "".join(f"{c:02X}" for c in risk_rgb(risk).tolist())
