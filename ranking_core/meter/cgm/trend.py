"""Trend agreement of a CGM: the sensor's rate of change against the reference's, in the five rate
categories device labelling prints (e.g. the concurrence tables of CGM labelling and the iCGM
submissions): < −2, −2 to −1, −1 to 1, 1 to 2, > 2 mg/dL/min.

Boundaries: a rate of exactly ±1 mg/dL/min is in the middle category, exactly ±2 in the
categories ±1 to ±2 (−2 ≤ r < −1, −1 ≤ r ≤ 1, 1 < r ≤ 2). Rates come from
:func:`ranking_core.meter.standards.acceptance.rates_of_change` (consecutive pairs of one sensor,
each rate over its own times); pairs without both rates are counted, not tabled.

With it, the measures of the Clinical Trend Concurrence Analysis (CTCA; Eichenlaub M, Pleus S,
Freckmann G, "A proposal for the clinical characterization of CGM trend arrow accuracy", J
Diabetes Sci Technol; reference code: github IfDTUlm/CGM_Performance_Assessment, "Clinical Trend
Concurrence Analysis", ``CTCA.py``): the comparator's rate in seven categories (< −3, −3 to < −2,
−2 to < −1, −1 to +1, > +1 to +2, > +2 to +3, > +3 mg/dL/min) against the sensor's in seven
(:data:`CTCA_CATEGORIES`, the same edges), each cell in the zone A–D of their concurrence matrix
(:data:`CTCA_ZONES`), the share of pairs in each zone, each cell's share of its comparator column
and the mean absolute rate of change of the comparator (MARoC, mg/dL/min).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.meter.cgm.cg_ega import CgEga, cg_ega

__all__ = [
    "CTCA_CATEGORIES",
    "CTCA_ZONES",
    "RATE_CATEGORIES",
    "TrendAgreement",
    "TrendConcurrence",
    "ctca_category",
    "rate_category",
    "trend_agreement",
    "trend_concurrence",
]

RATE_CATEGORIES = ("< −2", "−2 to −1", "−1 to 1", "1 to 2", "> 2")  # mg/dL/min
CTCA_CATEGORIES = (
    "< −3",
    "−3 to < −2",
    "−2 to < −1",
    "−1 to +1",
    "> +1 to +2",
    "> +2 to +3",
    "> +3",
)  # mg/dL/min
# zone of each (sensor category row, comparator category column), their ``get_params(7)``
CTCA_ZONES = (
    "AABCDDD",
    "AAACDDD",
    "BAABCDD",
    "DCBABCC",
    "DDCBAAB",
    "DDDCAAA",
    "DDDCBAA",
)
ZONES = "ABCD"


def rate_category(rate: NDArray[np.float64]) -> NDArray[np.intp]:
    """Index 0–4 of each rate's category in :data:`RATE_CATEGORIES`; −1 for NaN."""
    rate = np.asarray(rate, dtype=np.float64)
    index = np.select(
        [rate < -2, rate < -1, rate <= 1, rate <= 2, rate > 2], [0, 1, 2, 3, 4], default=-1
    )
    return index.astype(np.intp)


def ctca_category(rate: NDArray[np.float64]) -> NDArray[np.intp]:
    """Index 0–6 of each rate's category in :data:`CTCA_CATEGORIES` (−3 ≤ r < −2, −2 ≤ r < −1,
    −1 ≤ r ≤ 1, 1 < r ≤ 2, 2 < r ≤ 3); −1 for NaN."""
    rate = np.asarray(rate, dtype=np.float64)
    index = np.select(
        [rate < -3, rate < -2, rate < -1, rate <= 1, rate <= 2, rate <= 3, rate > 3],
        [0, 1, 2, 3, 4, 5, 6],
        default=-1,
    )
    return index.astype(np.intp)


def share_percent(counts: NDArray[np.int64], axis: int) -> NDArray[np.float64]:
    """Each cell of a table of ``counts`` as a share (%) of its column (``axis=0``) or row
    (``axis=1``); NaN where that column or row is empty."""
    totals = counts.sum(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0, 100.0 * counts / totals, np.nan)


@dataclass(frozen=True)
class TrendConcurrence:
    """CTCA: counts[i, j] pairs with the sensor's rate in category i and the comparator's in j
    (:data:`CTCA_CATEGORIES`); ``maroc`` the comparator's mean absolute rate (mg/dL/min)."""

    counts: NDArray[np.int64]
    maroc: float

    @property
    def column_percent(self) -> NDArray[np.float64]:
        """Each cell's share of its comparator column (%), NaN in an empty column."""
        return share_percent(self.counts, axis=0)

    @property
    def zone_counts(self) -> dict[str, int]:
        """Pairs in each zone A–D of :data:`CTCA_ZONES`."""
        zone = np.array([list(row) for row in CTCA_ZONES])
        return {z: int(self.counts[zone == z].sum()) for z in ZONES}

    @property
    def zone_percent(self) -> dict[str, float]:
        total = int(self.counts.sum())
        return {
            z: 100.0 * c / total if total else float("nan") for z, c in self.zone_counts.items()
        }

    def frame(self) -> pd.DataFrame:
        """As printed: zones A–D with their pairs and share (%, one decimal), then MARoC
        (mg/dL/min, two decimals)."""
        percent = self.zone_percent
        values = [f"{p:.1f} %" if np.isfinite(p) else "—" for p in percent.values()]
        maroc = f"{self.maroc:.2f} mg/dL/min" if np.isfinite(self.maroc) else "—"
        return pd.DataFrame(
            {
                "measure": [*(f"zone {z}" for z in ZONES), "MARoC"],
                "pairs": [f"{c:,}" for c in self.zone_counts.values()] + [""],
                "value": [*values, maroc],
            }
        )

    def to_dict(self) -> dict:
        def clean(v: float) -> float | None:
            return None if np.isnan(v) else float(v)

        return {
            "method": "Clinical Trend Concurrence Analysis (Eichenlaub, Pleus, Freckmann)",
            "categories": list(CTCA_CATEGORIES),
            "unit": "mg/dL/min",
            "rows": "sensor rate category",
            "columns": "reference rate category",
            "zones": list(CTCA_ZONES),
            "counts": self.counts.tolist(),
            "column_percent": [[clean(v) for v in row] for row in self.column_percent],
            "zone_counts": self.zone_counts,
            "zone_percent": {z: clean(v) for z, v in self.zone_percent.items()},
            "maroc": clean(self.maroc),
        }


def trend_concurrence(
    sensor_category: NDArray[np.intp], ref_category: NDArray[np.intp], ref_rate: NDArray
) -> TrendConcurrence:
    """CTCA of pairs given their categories (index into :data:`CTCA_CATEGORIES`, −1: none);
    MARoC: the mean |rate| over the finite comparator rates given (their code: every row)."""
    s, r = np.asarray(sensor_category), np.asarray(ref_category)
    both = (s >= 0) & (r >= 0)
    counts = np.zeros((7, 7), dtype=np.int64)
    np.add.at(counts, (s[both], r[both]), 1)
    rate = np.asarray(ref_rate, dtype=np.float64)
    finite = rate[np.isfinite(rate)]
    return TrendConcurrence(counts, float(np.abs(finite).mean()) if finite.size else float("nan"))


@dataclass(frozen=True)
class TrendAgreement:
    """counts[i, j]: pairs whose sensor rate is in category i and reference rate in j; with the
    CTCA measures of the same rates (``concurrence``) and, given the pairs' values, their CG-EGA
    (``cg_ega``, :mod:`ranking_core.meter.cgm.cg_ega`)."""

    counts: NDArray[np.int64]
    without_rate: int
    concurrence: TrendConcurrence | None = None
    cg_ega: CgEga | None = None

    def tables(self) -> dict[str, pd.DataFrame]:
        """The report tables of these rates, by name: the 5 × 5 table, CTCA, CG-EGA by state."""
        out = {"trend_agreement": self.frame()}
        if self.concurrence is not None:
            out["trend_concurrence"] = self.concurrence.frame()
        if self.cg_ega is not None:
            out["cg_ega"] = self.cg_ega.frame()
        return out

    def json_blocks(self) -> dict[str, dict]:
        """The JSON report's blocks: ``trend_agreement`` and, with it, ``cg_ega``."""
        out = {"trend_agreement": self.to_dict()}
        if self.cg_ega is not None:
            out["cg_ega"] = self.cg_ega.to_dict()
        return out

    @property
    def row_percent(self) -> NDArray[np.float64]:
        """Each cell's share of its sensor-rate row (%), NaN in an empty row."""
        return share_percent(self.counts, axis=1)

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
            "clinical_trend_concurrence": None
            if self.concurrence is None
            else self.concurrence.to_dict(),
        }


def trend_agreement(
    sensor_rate: NDArray[np.float64],
    ref_rate: NDArray[np.float64],
    reference: NDArray[np.float64] | None = None,
    sensor: NDArray[np.float64] | None = None,
) -> TrendAgreement:
    """The 5 × 5 table of sensor-rate category × reference-rate category; with the pairs'
    ``reference`` and ``sensor`` values (mg/dL, aligned with the rates) also their CG-EGA."""
    s, r = rate_category(sensor_rate), rate_category(ref_rate)
    both = (s >= 0) & (r >= 0)
    counts = np.zeros((5, 5), dtype=np.int64)
    np.add.at(counts, (s[both], r[both]), 1)
    concurrence = trend_concurrence(
        ctca_category(sensor_rate), ctca_category(ref_rate), np.asarray(ref_rate)[both]
    )
    analysis = None
    if reference is not None and sensor is not None:
        analysis = cg_ega(reference, sensor, ref_rate, sensor_rate)
    return TrendAgreement(counts, int(np.count_nonzero(~both)), concurrence, analysis)
