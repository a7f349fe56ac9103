"""The one rule set for SEG-method answers (Klonoff et al., J Diabetes Sci Technol 2014;8:658):
what a cut point and a score are, which values and types are taken, and how many raters,
scenarios and maps are read. The survey's pages and storage
(:mod:`ranking_core.surveys.seg_method`, :mod:`ranking_core.surveys.seg_storage`) and
``riskgrid elicit`` (:mod:`ranking_core.elicit.answers`) all check answers here, so an answer
the survey refuses is refused by ``elicit`` too, and the other way round.

Cut points
    the highest glucose at which a clinician takes action A, B, C and D: whole mg/dL in
    :data:`CUT_LOW` .. :data:`CUT_HIGH` (0..599), strictly increasing from A to D; E runs from
    above D's cut point to :data:`GLUCOSE_TOP` (600 mg/dL), so E's range is never empty.
Scores
    the risk of "the meter says the range of action i, the truth is the range of action j":
    whole numbers :data:`SCORE_MIN` .. :data:`SCORE_MAX` (1..9); a diagonal cell is 1 (no risk).
Types
    a value is a real number (``int``, ``float``, a NumPy number) or, in a table, text that reads
    as one; ``True``/``False``, text and other objects given to the library are refused (a
    boolean is not 1 mg/dL). NaN and infinities are not numbers.
Limits
    :data:`MAX_RATERS` raters, :data:`MAX_SCENARIOS` scenarios and :data:`MAX_MAPS` rater ×
    scenario maps (each a 601 × 601 grid) per survey or pair of answer files, checked before
    any map is built.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids.lattice import GLUCOSE_MAX

__all__ = [
    "ACTIONS",
    "ACTION_LABELS",
    "CUT_ACTIONS",
    "CUT_HIGH",
    "CUT_LOW",
    "DIAGONAL_RULE",
    "GLUCOSE_TOP",
    "INCREASING_RULE",
    "MAX_MAPS",
    "MAX_RATERS",
    "MAX_SCENARIOS",
    "SCORE_MAX",
    "SCORE_MIN",
    "cut_problems",
    "first_not_increasing",
    "number_or_none",
    "score_problems",
    "whole_problems",
]

ACTIONS = ("A", "B", "C", "D", "E")
ACTION_LABELS = {
    "A": "emergency treatment of a low",
    "B": "oral glucose",
    "C": "no action",
    "D": "insulin, or exercise and eat less",
    "E": "emergency treatment of a high",
}
CUT_ACTIONS = ACTIONS[:-1]  # E has no cut point: it runs to 600 mg/dL
GLUCOSE_TOP = GLUCOSE_MAX  # 600 mg/dL, the top of E's range and of the grid
CUT_LOW, CUT_HIGH = 0, GLUCOSE_TOP - 1  # whole mg/dL
SCORE_MIN, SCORE_MAX = 1, 9
MAX_RATERS = 2_000  # the SEG had 206 clinicians in its survey
MAX_SCENARIOS = 20  # the SEG had 4
MAX_MAPS = 10_000  # rater × scenario maps, each a 601 × 601 grid
INCREASING_RULE = "max_A < max_B < max_C < max_D"
DIAGONAL_RULE = f"a diagonal cell (measured = actual) scores {SCORE_MIN} (no risk)"


def number_or_none(value: object, what: str) -> float | None:
    """``value`` as a float, None when it is missing (None or NaN); ``ValueError`` naming
    ``what`` when it is a boolean, text or any other non-number (module notes: types)."""
    if value is None:
        return None
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        shown = "true/false" if isinstance(value, bool | np.bool_) else type(value).__name__
        raise ValueError(f"{what} must be a number; got {shown}")
    number = float(value)
    return None if math.isnan(number) else number


def whole_problems(values: ArrayLike, low: int, high: int) -> NDArray[np.object_]:
    """The rule each value breaks ("" for none), vectorised: ``"is not a number"`` (NaN,
    infinite), ``"is not a whole number"``, ``"is outside low..high"``."""
    x = np.asarray(values, dtype=np.float64)
    out = np.full(x.shape, "", dtype=object)
    finite = np.isfinite(x)
    out[~finite] = "is not a number"
    whole = finite & (x == np.rint(np.where(finite, x, 0.0)))
    out[finite & ~whole] = "is not a whole number"
    out[whole & ((x < low) | (x > high))] = f"is outside {low}..{high}"
    return out


def cut_problems(values: ArrayLike) -> NDArray[np.object_]:
    """:func:`whole_problems` for cut points in mg/dL (:data:`CUT_LOW` .. :data:`CUT_HIGH`)."""
    return whole_problems(values, CUT_LOW, CUT_HIGH)


def score_problems(values: ArrayLike) -> NDArray[np.object_]:
    """:func:`whole_problems` for scores (:data:`SCORE_MIN` .. :data:`SCORE_MAX`)."""
    return whole_problems(values, SCORE_MIN, SCORE_MAX)


def first_not_increasing(cuts: Sequence[float] | NDArray[np.float64]) -> int | None:
    """The index (1..3) of the first cut point not above the one before it, None when the four
    increase strictly (:data:`INCREASING_RULE`)."""
    for i in range(1, len(cuts)):
        if not cuts[i] > cuts[i - 1]:
            return i
    return None
