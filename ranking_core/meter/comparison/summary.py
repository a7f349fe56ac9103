"""The method comparison of one set of pairs, computed once: Passing–Bablok and Deming with their
bias at the decision levels, and the Bland–Altman limits of agreement — the section a report
shows as ``method_comparison``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from numpy.typing import ArrayLike

from ranking_core.inputs import MGDL_PER_MMOLL
from ranking_core.meter.comparison.bland_altman import BlandAltmanLimits, bland_altman_limits
from ranking_core.meter.comparison.common import CONFIDENCE, check_pairs
from ranking_core.meter.comparison.decision_levels import (
    BiasAtLevel,
    bias_table,
    default_levels,
    deming_bias,
    passing_bablok_bias,
)
from ranking_core.meter.comparison.deming import Deming, deming
from ranking_core.meter.comparison.passing_bablok import PassingBablok, passing_bablok

__all__ = ["ComparisonSettings", "MethodComparison", "method_comparison"]

GLUCOSE_TOP_MGDL = 600.0  # the report's glucose scale ends here: no decision level above it


@dataclass(frozen=True)
class ComparisonSettings:
    """The choices of a method comparison: the Deming error ratio λ = σ²_x / σ²_y (reference's
    error variance over the device's; 1 by default) and the decision levels in the pairs' unit
    (None: 70, 180, 250 mg/dL in that unit)."""

    error_ratio: float = 1.0
    levels: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.error_ratio) and self.error_ratio > 0):
            raise ValueError(f"Deming error ratio {self.error_ratio}: must be a positive number")

    def levels_in(self, unit: str) -> tuple[float, ...]:
        """The decision levels in ``unit`` (mg/dL or mmol/L, the pairs' unit); ValueError when
        a level lies above 600 mg/dL in that unit (levels in mg/dL given for a file in mmol/L)."""
        if self.levels is None:
            return default_levels(unit)
        top = GLUCOSE_TOP_MGDL / MGDL_PER_MMOLL if unit == "mmol/L" else GLUCOSE_TOP_MGDL
        for k, level in enumerate(self.levels, start=1):
            if level > top:
                raise ValueError(
                    f"decision level {k} ({level:g}) lies above {top:.4g} {unit}: the pairs "
                    f"are in {unit}, so give the levels in {unit}"
                )
        return self.levels


@dataclass(frozen=True)
class MethodComparison:
    """Both regressions of the device on the reference, their bias at the decision levels and the
    Bland–Altman limits, in ``unit``."""

    unit: str
    passing_bablok: PassingBablok
    deming: Deming
    passing_bablok_bias: tuple[BiasAtLevel, ...]
    deming_bias: tuple[BiasAtLevel, ...]
    bland_altman: BlandAltmanLimits

    def to_dict(self) -> dict[str, object]:
        """``method_comparison``: ``passing_bablok`` and ``deming`` each with its ``bias_at``
        rows, ``bland_altman``, the unit and the axes (device y, reference x)."""
        pb = self.passing_bablok.to_dict() | {
            "bias_at": [row.to_dict() for row in self.passing_bablok_bias]
        }
        dem = self.deming.to_dict() | {"bias_at": [row.to_dict() for row in self.deming_bias]}
        return {
            "unit": self.unit,
            "y": "device",
            "x": "reference",
            "passing_bablok": pb,
            "deming": dem,
            "bland_altman": self.bland_altman.to_dict(),
        }

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table of the section, by title."""
        rows = [*self.passing_bablok_bias, *self.deming_bias]
        return {
            **self.passing_bablok.tables(self.unit),
            **self.deming.tables(self.unit),
            "Bias at the decision levels": bias_table(rows, self.unit),
            **self.bland_altman.tables(),
        }


def method_comparison(
    reference: ArrayLike,
    device: ArrayLike,
    *,
    unit: str = "mg/dL",
    error_ratio: float = 1.0,
    levels: Sequence[float] | None = None,
    cut: float | None = None,
    confidence: float = CONFIDENCE,
) -> MethodComparison:
    """The method comparison of every pair: ``device`` on the y axis, ``reference`` on x;
    ``levels`` default 70, 180, 250 mg/dL in ``unit``; ``cut`` default 100 mg/dL in ``unit``."""
    x, y = check_pairs(reference, device)
    chosen = default_levels(unit) if levels is None else tuple(levels)
    pb = passing_bablok(x, y, confidence)
    dem = deming(x, y, error_ratio, confidence)
    return MethodComparison(
        unit=unit,
        passing_bablok=pb,
        deming=dem,
        passing_bablok_bias=tuple(passing_bablok_bias(x, y, pb, chosen)),
        deming_bias=tuple(deming_bias(x, y, dem, chosen)),
        bland_altman=bland_altman_limits(x, y, cut, unit, confidence),
    )
