"""Deming regression of a device (y) on its reference (x) with jackknife 95 % intervals.

Closed form (Cornbleet PJ, Gochman N. "Incorrect least-squares regression coefficients in
method-comparison analysis." Clin Chem 1979;25:432–438; Linnet K. "Estimation of the linear
relationship between the measurements of two methods with proportional errors." Stat Med
1990;9:1463–1473): with x̄, ȳ the means, u = Σ(x − x̄)², q = Σ(y − ȳ)², p = Σ(x − x̄)(y − ȳ) and
the error ratio λ = σ²_x / σ²_y (the reference's error variance over the device's, as R mcr's
``error.ratio``; 1 by default),

    slope b = (λq − u + √((u − λq)² + 4λp²)) / (2λp),    intercept a = ȳ − b·x̄.

Intervals (R mcr's default for Deming, ``method.ci = "jackknife"``): the n leave-one-out fits
θ₋ᵢ, their mean θ̄, SE = √((n − 1)/n · Σ(θ₋ᵢ − θ̄)²), and θ ± t_(1−α/2, n−1)·SE around the
estimate θ from every pair. The leave-one-out sums come from the full ones in O(n)
(Σ₋ᵢ(x − x̄₋ᵢ)² = u − n/(n − 1)·(xᵢ − x̄)², likewise q and p), the same numbers as n refits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ranking_core.meter.comparison.common import CONFIDENCE, check_pairs, json_number
from ranking_core.meter.distributions import t_quantile

__all__ = [
    "Deming",
    "deming",
    "deming_fit",
    "jackknife_fits",
    "jackknife_interval",
]

INTERVAL_METHOD = "jackknife (leave-one-out refits, t with n − 1 df; R mcr's default)"


@dataclass(frozen=True)
class Deming:
    """Deming fit y = intercept + slope·x with its jackknife limits; ``error_ratio`` λ."""

    slope: float
    slope_lower: float
    slope_upper: float
    intercept: float
    intercept_lower: float
    intercept_upper: float
    slope_se: float
    intercept_se: float
    n: int
    error_ratio: float
    confidence: float

    def to_dict(self) -> dict[str, object]:
        """The JSON of ``method_comparison.deming``."""
        out: dict[str, object] = {key: json_number(value) for key, value in vars(self).items()}
        out["interval_method"] = "jackknife"
        out["interval_method_text"] = INTERVAL_METHOD
        return out

    def tables(self, unit: str = "mg/dL") -> dict[str, pd.DataFrame]:
        """The estimates with their standard errors and limits, as a reader sees them."""
        level = f"{self.confidence:.0%}"
        frame = pd.DataFrame(
            {
                "parameter": ["slope", f"intercept ({unit})"],
                "estimate": [round(self.slope, 4), round(self.intercept, 2)],
                "jackknife SE": [round(self.slope_se, 4), round(self.intercept_se, 2)],
                f"{level} lower": [round(self.slope_lower, 4), round(self.intercept_lower, 2)],
                f"{level} upper": [round(self.slope_upper, 4), round(self.intercept_upper, 2)],
                "error ratio λ": [self.error_ratio, self.error_ratio],
            }
        )
        return {"Deming regression": frame}


def _slope(u: NDArray | float, q: NDArray | float, p: NDArray | float, ratio: float):
    with np.errstate(divide="ignore", invalid="ignore"):
        return (ratio * q - u + np.sqrt((u - ratio * q) ** 2 + 4.0 * ratio * p**2)) / (
            2.0 * ratio * p
        )


def _check_ratio(error_ratio: float) -> None:
    if not (math.isfinite(error_ratio) and error_ratio > 0):
        raise ValueError(f"error ratio {error_ratio}: must be a positive number")


def deming_fit(x: ArrayLike, y: ArrayLike, error_ratio: float = 1.0) -> tuple[float, float]:
    """(slope, intercept) of the Deming line by the closed form (module docstring)."""
    _check_ratio(error_ratio)
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    dx, dy = xs - xs.mean(), ys - ys.mean()
    slope = float(_slope(dx @ dx, dy @ dy, dx @ dy, error_ratio))
    return slope, float(ys.mean() - slope * xs.mean())


def jackknife_fits(
    x: ArrayLike, y: ArrayLike, error_ratio: float = 1.0
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The n leave-one-out fits (slopes, intercepts), fit i without pair i, in O(n)."""
    _check_ratio(error_ratio)
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n = xs.size
    mx, my = xs.mean(), ys.mean()
    dx, dy = xs - mx, ys - my
    factor = n / (n - 1.0)
    u = dx @ dx - factor * dx**2
    q = dy @ dy - factor * dy**2
    p = dx @ dy - factor * dx * dy
    slopes = _slope(u, q, p, error_ratio)
    intercepts = (my - dy / (n - 1.0)) - slopes * (mx - dx / (n - 1.0))
    return np.asarray(slopes, dtype=np.float64), intercepts


def jackknife_interval(
    estimate: float, leave_one_out: NDArray[np.float64], confidence: float = CONFIDENCE
) -> tuple[float, float, float]:
    """(SE, lower, upper): SE = √((n − 1)/n · Σ(θ₋ᵢ − θ̄)²), limits estimate ∓ t·SE; not a
    number when a leave-one-out estimate is infinite (a vertical line without one pair)."""
    n = leave_one_out.size
    with np.errstate(invalid="ignore"):  # ∞ − ∞: the SE is not a number, said as such
        spread = float(np.sum((leave_one_out - leave_one_out.mean()) ** 2))
    se = math.sqrt((n - 1) / n * spread)
    half = float(t_quantile(0.5 + confidence / 2, n - 1)) * se
    return se, estimate - half, estimate + half


def deming(
    x: ArrayLike, y: ArrayLike, error_ratio: float = 1.0, confidence: float = CONFIDENCE
) -> Deming:
    """Deming regression of ``y`` (device) on ``x`` (reference), every pair read, with jackknife
    limits at ``confidence``; ``error_ratio`` λ = σ²_x / σ²_y."""
    xs, ys = check_pairs(x, y)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence {confidence}: must lie between 0 and 1")
    slope, intercept = deming_fit(xs, ys, error_ratio)
    loo_slopes, loo_intercepts = jackknife_fits(xs, ys, error_ratio)
    slope_se, slope_lo, slope_hi = jackknife_interval(slope, loo_slopes, confidence)
    int_se, int_lo, int_hi = jackknife_interval(intercept, loo_intercepts, confidence)
    return Deming(
        slope=slope,
        slope_lower=slope_lo,
        slope_upper=slope_hi,
        intercept=intercept,
        intercept_lower=int_lo,
        intercept_upper=int_hi,
        slope_se=slope_se,
        intercept_se=int_se,
        n=int(xs.size),
        error_ratio=float(error_ratio),
        confidence=confidence,
    )
