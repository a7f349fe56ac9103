"""Bland–Altman limits of agreement with their 95 % intervals, absolute below a cut and relative
from it on, as meter evaluations report them.

Bland JM, Altman DG. "Measuring agreement in method comparison studies." Stat Methods Med Res
1999;8:135–160 (and Lancet 1986;327:307–310): the differences dᵢ of a part, their mean d̄ (the
bias) and SD s; the 95 % limits of agreement d̄ ∓ 1.96·s; the interval of the bias
d̄ ∓ t_(0.975, n−1)·s/√n; the interval of each limit, whose standard error is approximately
√(3s²/n), limit ∓ t_(0.975, n−1)·√(3s²/n).

Parts, split by the reference (x) at ``cut`` (default 100 mg/dL, as ISO 15197:2013 splits its
criteria; 5.55 mmol/L for pairs in mmol/L): below it the difference y − x in the pairs' unit,
from it on 100·(y − x)/x in %.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ranking_core.inputs import MGDL_PER_MMOLL
from ranking_core.meter.comparison.common import CONFIDENCE, check_pairs, json_number
from ranking_core.meter.distributions import t_quantile

__all__ = [
    "CUT_MGDL",
    "LIMIT_Z",
    "AgreementPart",
    "BlandAltmanLimits",
    "agreement_part",
    "bland_altman_limits",
    "default_cut",
]

CUT_MGDL = 100.0  # ISO 15197:2013's split of absolute (below) and relative (from) criteria
LIMIT_Z = 1.96  # the limits of agreement: bias ∓ 1.96 SD
MIN_PART_PAIRS = 2  # a part with fewer pairs has no SD: its numbers are NaN
MAX_DIFFERENCES = 10_000_000  # O(n) in time and memory: the report's pairs, bounded


@dataclass(frozen=True)
class AgreementPart:
    """One part's differences (``unit``: the pairs' unit, or "%"): bias, SD and the limits of
    agreement, each with its interval."""

    part: str
    unit: str
    n: int
    bias: float
    bias_lower: float
    bias_upper: float
    sd: float
    lower_limit: float
    lower_limit_lower: float
    lower_limit_upper: float
    upper_limit: float
    upper_limit_lower: float
    upper_limit_upper: float

    def to_dict(self) -> dict[str, object]:
        return {
            key: value if isinstance(value, str) else json_number(value)
            for key, value in vars(self).items()
        }


@dataclass(frozen=True)
class BlandAltmanLimits:
    """Both parts, the ``cut`` (the pairs' unit) and the level of the intervals; ``x`` and
    ``difference`` (unit or % by part) are what the plot draws."""

    cut: float
    unit: str
    confidence: float
    parts: tuple[AgreementPart, ...]
    x: NDArray[np.float64]
    difference: NDArray[np.float64]

    def to_dict(self) -> dict[str, object]:
        """The JSON of ``method_comparison.bland_altman``."""
        return {
            "cut": self.cut,
            "unit": self.unit,
            "confidence": self.confidence,
            "limit_z": LIMIT_Z,
            "interval_method": "Bland & Altman 1999: limit SE sqrt(3 s^2 / n), t with n - 1 df",
            "parts": [part.to_dict() for part in self.parts],
        }

    def tables(self) -> dict[str, pd.DataFrame]:
        """One row per part: bias and limits of agreement with their intervals."""
        level = f"{self.confidence:.0%}"
        rows = []
        for p in self.parts:
            rows.append(
                {
                    "part": p.part,
                    "pairs": p.n,
                    "difference in": p.unit,
                    "bias": round(p.bias, 2),
                    f"bias {level} interval": f"{p.bias_lower:.2f} to {p.bias_upper:.2f}",
                    "SD": round(p.sd, 2),
                    "lower limit of agreement": round(p.lower_limit, 2),
                    f"lower limit {level} interval": f"{p.lower_limit_lower:.2f} to "
                    f"{p.lower_limit_upper:.2f}",
                    "upper limit of agreement": round(p.upper_limit, 2),
                    f"upper limit {level} interval": f"{p.upper_limit_lower:.2f} to "
                    f"{p.upper_limit_upper:.2f}",
                }
            )
        return {"Bland–Altman limits of agreement": pd.DataFrame(rows)}


def default_cut(unit: str = "mg/dL") -> float:
    """100 mg/dL in ``unit``."""
    return round(CUT_MGDL / MGDL_PER_MMOLL, 2) if unit == "mmol/L" else CUT_MGDL


def agreement_part(
    part: str, unit: str, differences: ArrayLike, confidence: float = CONFIDENCE
) -> AgreementPart:
    """Bias, SD, limits of agreement and their intervals of one part's ``differences``."""
    d = np.asarray(differences, dtype=np.float64)
    n = int(d.size)
    if n < MIN_PART_PAIRS:
        nan = math.nan
        bias = float(d.mean()) if n else nan
        return AgreementPart(part, unit, n, bias, *([nan] * 9))
    bias, sd = float(d.mean()), float(d.std(ddof=1))
    t = float(t_quantile(0.5 + confidence / 2, n - 1))
    half_bias = t * sd / math.sqrt(n)
    half_limit = t * math.sqrt(3.0 * sd**2 / n)
    low, high = bias - LIMIT_Z * sd, bias + LIMIT_Z * sd
    return AgreementPart(
        part,
        unit,
        n,
        bias,
        bias - half_bias,
        bias + half_bias,
        sd,
        low,
        low - half_limit,
        low + half_limit,
        high,
        high - half_limit,
        high + half_limit,
    )


def bland_altman_limits(
    x: ArrayLike,
    y: ArrayLike,
    cut: float | None = None,
    unit: str = "mg/dL",
    confidence: float = CONFIDENCE,
) -> BlandAltmanLimits:
    """Limits of agreement of ``y`` (device) against ``x`` (reference): absolute below ``cut``
    (default 100 mg/dL in ``unit``), relative (%) from it on."""
    xs, ys = check_pairs(x, y, minimum=1, maximum=MAX_DIFFERENCES)
    cut = default_cut(unit) if cut is None else float(cut)
    if not (math.isfinite(cut) and cut > 0):
        raise ValueError(f"cut {cut}: must be a positive number")
    below = xs < cut
    difference = np.where(below, ys - xs, 100.0 * (ys - xs) / np.where(below, 1.0, xs))
    parts = (
        agreement_part(f"reference < {cut:g} {unit}", unit, difference[below], confidence),
        agreement_part(f"reference ≥ {cut:g} {unit}", "%", difference[~below], confidence),
    )
    return BlandAltmanLimits(cut, unit, confidence, parts, xs, difference)
