"""The bias of the device at medical decision levels, from each regression, with its 95 %
interval (CLSI EP09: the predicted bias at a level X_c is the fitted line's value there minus
X_c, B(X_c) = a + (b − 1)·X_c).

* Deming: the jackknife of B(X_c) — the n leave-one-out fits' a₋ᵢ + (b₋ᵢ − 1)·X_c, SE and
  t-interval around the estimate exactly as for the coefficients (R mcr's ``calcBias`` with
  jackknife intervals).
* Passing–Bablok: the paper's intercept limits of the line with the reference shifted to
  x − X_c (Passing–Bablok's slopes and their limits do not change with a shift of x; the
  intercept of the shifted line is the fitted value at X_c): B = median(y − b·(x − X_c)) − X_c,
  limits median(y − b_U·(x − X_c)) − X_c and median(y − b_L·(x − X_c)) − X_c, the smaller
  first. At X_c = 0 these are the paper's intercept and its limits. (R mcr gives Passing–Bablok
  bias intervals only by bootstrap.)

Default levels: 70, 180 and 250 mg/dL (hypoglycaemia, the top of the target range,
hyperglycaemia), converted when the pairs are in mmol/L.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ranking_core.inputs import MGDL_PER_MMOLL
from ranking_core.meter.comparison.common import CONFIDENCE, check_pairs, json_number
from ranking_core.meter.comparison.deming import Deming, jackknife_fits, jackknife_interval
from ranking_core.meter.comparison.passing_bablok import PassingBablok

__all__ = [
    "DEFAULT_LEVELS_MGDL",
    "BiasAtLevel",
    "bias_table",
    "default_levels",
    "deming_bias",
    "parse_levels",
    "passing_bablok_bias",
]

DEFAULT_LEVELS_MGDL = (70.0, 180.0, 250.0)
MAX_LEVELS = 20


@dataclass(frozen=True)
class BiasAtLevel:
    """The bias B(level) = fitted device value − level (the pairs' unit) and in % of the level,
    with its two-sided ``confidence`` interval, from the regression ``method``."""

    method: str
    level: float
    predicted: float
    bias: float
    bias_lower: float
    bias_upper: float
    confidence: float

    @property
    def bias_percent(self) -> float:
        return 100.0 * self.bias / self.level if self.level else math.nan

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            key: json_number(value) for key, value in vars(self).items() if key != "method"
        }
        out["bias_percent"] = json_number(self.bias_percent)
        return out


def default_levels(unit: str = "mg/dL") -> tuple[float, ...]:
    """70, 180, 250 mg/dL in ``unit`` (mmol/L: divided by the one conversion factor)."""
    if unit == "mmol/L":
        return tuple(round(v / MGDL_PER_MMOLL, 2) for v in DEFAULT_LEVELS_MGDL)
    return DEFAULT_LEVELS_MGDL


def parse_levels(text: str) -> tuple[float, ...]:
    """``"70,180,250"`` as levels: positive finite numbers, at most 20; else ValueError naming
    the item."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not 1 <= len(items) <= MAX_LEVELS:
        raise ValueError(f"decision levels: give 1 to {MAX_LEVELS} numbers separated by commas")
    levels = []
    for k, item in enumerate(items, start=1):
        try:
            value = float(item)
        except ValueError:
            raise ValueError(f"decision level {k} ({item!r}): not a number") from None
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"decision level {k} ({item!r}): must be a positive number")
        levels.append(value)
    return tuple(levels)


def passing_bablok_bias(
    x: ArrayLike, y: ArrayLike, fit: PassingBablok, levels: Sequence[float]
) -> list[BiasAtLevel]:
    """Bias at each level from the Passing–Bablok fit of the same pairs (module docstring)."""
    xs, ys = check_pairs(x, y)
    rows = []
    for level in levels:
        shifted = xs - level

        def at(slope: float, shifted=shifted, level=level) -> float:
            if not math.isfinite(slope):
                return math.nan
            return float(np.median(ys - slope * shifted)) - level

        ends = sorted((at(fit.slope_lower), at(fit.slope_upper)))
        bias = at(fit.slope)
        rows.append(
            BiasAtLevel(
                "Passing–Bablok", level, level + bias, bias, ends[0], ends[1], fit.confidence
            )
        )
    return rows


def deming_bias(
    x: ArrayLike, y: ArrayLike, fit: Deming, levels: Sequence[float]
) -> list[BiasAtLevel]:
    """Bias at each level from the Deming fit of the same pairs, jackknife interval."""
    xs, ys = check_pairs(x, y)
    loo_slopes, loo_intercepts = jackknife_fits(xs, ys, fit.error_ratio)
    rows = []
    for level in levels:
        bias = fit.intercept + (fit.slope - 1.0) * level
        loo = loo_intercepts + (loo_slopes - 1.0) * level
        _, lower, upper = jackknife_interval(bias, loo, fit.confidence)
        rows.append(BiasAtLevel("Deming", level, level + bias, bias, lower, upper, fit.confidence))
    return rows


def bias_table(rows: Sequence[BiasAtLevel], unit: str = "mg/dL") -> pd.DataFrame:
    """The rows as a reader sees them."""
    level = f"{rows[0].confidence:.0%}" if rows else f"{CONFIDENCE:.0%}"
    return pd.DataFrame(
        {
            "regression": [r.method for r in rows],
            f"decision level ({unit})": [r.level for r in rows],
            f"bias ({unit})": [round(r.bias, 2) for r in rows],
            f"{level} lower ({unit})": [round(r.bias_lower, 2) for r in rows],
            f"{level} upper ({unit})": [round(r.bias_upper, 2) for r in rows],
            "bias (% of level)": [round(r.bias_percent, 2) for r in rows],
        }
    )
