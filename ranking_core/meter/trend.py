"""Trend agreement of a CGM: the sensor's rate of change against the reference's, in the five rate
categories device labelling prints (e.g. the concurrence tables of CGM labelling and the iCGM
submissions): < −2, −2 to −1, −1 to 1, 1 to 2, > 2 mg/dL/min.

Boundaries: a rate of exactly ±1 mg/dL/min is in the middle category, exactly ±2 in the
categories ±1 to ±2 (−2 ≤ r < −1, −1 ≤ r ≤ 1, 1 < r ≤ 2). Rates come from
:func:`ranking_core.meter.acceptance.rates_of_change` (consecutive pairs of one sensor, each
rate over its own times); pairs without both rates are counted, not tabled.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = ["RATE_CATEGORIES", "TrendAgreement", "rate_category", "trend_agreement"]

RATE_CATEGORIES = ("< −2", "−2 to −1", "−1 to 1", "1 to 2", "> 2")  # mg/dL/min


def rate_category(rate: NDArray[np.float64]) -> NDArray[np.intp]:
    """Index 0–4 of each rate's category in :data:`RATE_CATEGORIES`; −1 for NaN."""
    rate = np.asarray(rate, dtype=np.float64)
    index = np.select(
        [rate < -2, rate < -1, rate <= 1, rate <= 2, rate > 2], [0, 1, 2, 3, 4], default=-1
    )
    return index.astype(np.intp)


@dataclass(frozen=True)
class TrendAgreement:
    """counts[i, j]: pairs whose sensor rate is in category i and reference rate in j."""

    counts: NDArray[np.int64]
    without_rate: int

    @property
    def row_percent(self) -> NDArray[np.float64]:
        totals = self.counts.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(totals > 0, 100.0 * self.counts / totals, np.nan)

    @property
    def concurrence_percent(self) -> float:
        """Share of the tabled pairs whose two rates fall in the same category (the diagonal)."""
        total = int(self.counts.sum())
        return 100.0 * float(np.trace(self.counts)) / total if total else float("nan")

    def frame(self) -> pd.DataFrame:
        """The table as printed: one row per sensor category, counts and row percentages per
        reference category, and the row's total."""
        out = pd.DataFrame({"sensor_rate": list(RATE_CATEGORIES)})
        percent = self.row_percent
        for j, name in enumerate(RATE_CATEGORIES):
            out[f"reference {name}"] = [
                f"{c:,} ({p:.1f} %)" if np.isfinite(p) else f"{c:,}"
                for c, p in zip(self.counts[:, j], percent[:, j], strict=True)
            ]
        out["total"] = self.counts.sum(axis=1)
        return out

    def to_dict(self) -> dict:
        percent = self.row_percent
        return {
            "categories": list(RATE_CATEGORIES),
            "unit": "mg/dL/min",
            "rows": "sensor rate category",
            "columns": "reference rate category",
            "counts": self.counts.tolist(),
            "row_percent": [[None if np.isnan(v) else float(v) for v in row] for row in percent],
            "concurrence_percent": None
            if np.isnan(self.concurrence_percent)
            else self.concurrence_percent,
            "pairs_without_rate": self.without_rate,
        }


def trend_agreement(
    sensor_rate: NDArray[np.float64], ref_rate: NDArray[np.float64]
) -> TrendAgreement:
    """The 5 × 5 table of sensor-rate category × reference-rate category."""
    s, r = rate_category(sensor_rate), rate_category(ref_rate)
    both = (s >= 0) & (r >= 0)
    counts = np.zeros((5, 5), dtype=np.int64)
    np.add.at(counts, (s[both], r[both]), 1)
    return TrendAgreement(counts, int(np.count_nonzero(~both)))
