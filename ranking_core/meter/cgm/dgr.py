"""Comparator data coverage: the Dynamic Glucose Region (DGR) plot of a CGM study's comparator
readings, the share of readings in each region, the 7.5 % requirement and the exclusion ellipse.

Method: Eichenlaub M, Pleus S, Rothenbühler M, et al., Freckmann G. "Comparator Data
Characteristics and Testing Procedures for the Clinical Performance Evaluation of Continuous
Glucose Monitoring Systems." Diabetes Technol Ther 2024, doi:10.1089/dia.2023.0465; regions as
the IFCC Working Group on CGM's guideline defines them (Pleus S, Eichenlaub M, et al., Freckmann
G. "Clinical assessment and acceptance criteria for continuous glucose monitoring (CGM) system
performance: A proposed guideline by the IFCC Working Group on CGM." Clin Chim Acta 2025).
Ported from their reference implementation (github IfDTUlm/CGM_Performance_Assessment, folder
"Dynamic Glucose Region (DGR) Plot", ``Python/DGR_plot.py`` at commit 1627801c, MIT), rule by
rule. A comparator reading has a glucose value BG (mg/dL) and a rate of change ROC (mg/dL/min);
readings without both are left out; BGP = BG + 30·ROC is the value predicted 30 min ahead.

* low: BG < 70; high: BG > 300;
* alert low: BG ≥ 70, BGP < 80 and ROC < −1; alert high: BG ≤ 300, BGP > 200 and ROC > 1.5;
* stable: 70 ≤ BG ≤ 180 and −1 ≤ ROC ≤ 1 (regions may overlap, each counted on its own).
* Requirement: every region — the stable one included, as their code checks it — holds at
  least ⌈0.075 · total⌉ readings.
* Exclusion ellipse, when the requirement fails: n_ex = ⌈total − min(count)/0.075⌉ readings are
  to be removed, those nearest the centre by D = √(ROC² + ((BG − 185)/115)²) (sorted as pandas
  ``sort_values`` sorts, NumPy's default quicksort: readings with equal D in its order); when
  the n_ex-th smallest D exceeds 1 the ellipse would reach the critical regions and nothing is
  removed ("requirements cannot be fulfilled").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "DGR_REGIONS",
    "REQUIREMENT_PERCENT",
    "DgrCounts",
    "DgrResult",
    "dgr",
    "dgr_plot",
    "region_counts",
]

DGR_REGIONS = ("low", "high", "alert_low", "alert_high", "stable")
REGION_LABELS = {
    "low": "BG low (< 70 mg/dL)",
    "high": "BG high (> 300 mg/dL)",
    "alert_low": "alert low (falling towards < 80 mg/dL in 30 min)",
    "alert_high": "alert high (rising towards > 200 mg/dL in 30 min)",
    "stable": "stable (70–180 mg/dL, −1 to 1 mg/dL/min)",
}
BG_LOW, BG_HIGH = 70.0, 300.0  # mg/dL
ALERT_LOW_BG, ALERT_HIGH_BG = 80.0, 200.0  # mg/dL, predicted 30 min ahead
ALERT_LOW_ROC, ALERT_HIGH_ROC = -1.0, 1.5  # mg/dL/min
STABLE_BG, STABLE_ROC = (70.0, 180.0), (-1.0, 1.0)
HORIZON_MIN = 30.0  # min, the prediction horizon of the alert regions
REQUIREMENT_PERCENT = 7.5  # each region's minimum share
ELLIPSE_ROC, ELLIPSE_BG, ELLIPSE_CENTRE = 1.0, 115.0, 185.0  # a, b (mg/dL/min, mg/dL), BG_c
MAX_READINGS = 10_000_000


@dataclass(frozen=True)
class DgrCounts:
    """Readings per region and ``total`` (readings with BG and ROC)."""

    low: int
    high: int
    alert_low: int
    alert_high: int
    stable: int
    total: int

    def percent(self) -> dict[str, float]:
        """Each region's share of ``total`` in % (NaN without readings)."""
        return {
            r: 100.0 * getattr(self, r) / self.total if self.total else math.nan
            for r in DGR_REGIONS
        }

    def meets(self) -> bool:
        """Every region holds at least ⌈0.075 · total⌉ readings (their rule)."""
        needed = math.ceil(REQUIREMENT_PERCENT / 100 * self.total)
        return all(getattr(self, r) >= needed for r in DGR_REGIONS) and self.total > 0


@dataclass(frozen=True)
class DgrResult:
    """The counts as measured, the verdict, and what the exclusion ellipse does: ``status`` is
    "fulfilled", "excluded" (``excluded`` readings removed, ``after`` the counts without them) or
    "cannot be fulfilled" (the ellipse would reach D = ``exclusion_distance`` > 1)."""

    counts: DgrCounts
    status: str
    to_exclude: int
    excluded: NDArray[np.bool_]
    exclusion_distance: float
    after: DgrCounts
    bg: NDArray[np.float64]
    roc: NDArray[np.float64]

    def to_dict(self) -> dict[str, object]:
        """The JSON of ``dgr``."""
        total = self.counts.total
        return {
            "counts": vars(self.counts).copy(),
            "percent": self.counts.percent(),
            "requirement_percent": REQUIREMENT_PERCENT,
            "meets_requirement": self.counts.meets(),
            "ellipse": {
                "status": self.status,
                "readings_to_remove": self.to_exclude,
                "readings_removed": int(self.excluded.sum()),
                "percent_removed": 100.0 * int(self.excluded.sum()) / total if total else None,
                "distance": self.exclusion_distance if self.status != "fulfilled" else None,
                "counts_after": vars(self.after).copy(),
                "percent_after": self.after.percent(),
            },
        }

    def tables(self) -> dict[str, pd.DataFrame]:
        """Readings and shares per region, as measured and after the ellipse's exclusion."""
        before, after = self.counts.percent(), self.after.percent()
        frame = pd.DataFrame(
            {
                "region": [REGION_LABELS[r] for r in DGR_REGIONS] + ["total with a rate"],
                "readings": [getattr(self.counts, r) for r in DGR_REGIONS] + [self.counts.total],
                "share (%)": [round(before[r], 1) for r in DGR_REGIONS] + [100.0],
                f"≥ {REQUIREMENT_PERCENT} %": [
                    "yes" if before[r] >= REQUIREMENT_PERCENT else "no" for r in DGR_REGIONS
                ]
                + [""],
                "readings after exclusion": [getattr(self.after, r) for r in DGR_REGIONS]
                + [self.after.total],
                "share after exclusion (%)": [round(after[r], 1) for r in DGR_REGIONS] + [100.0],
            }
        )
        return {"Comparator data coverage (Dynamic Glucose Regions)": frame}


def _region_masks(bg: NDArray, roc: NDArray) -> dict[str, NDArray[np.bool_]]:
    predicted = bg + roc * HORIZON_MIN
    return {
        "low": bg < BG_LOW,
        "high": bg > BG_HIGH,
        "alert_low": (bg >= BG_LOW) & (predicted < ALERT_LOW_BG) & (roc < ALERT_LOW_ROC),
        "alert_high": (bg <= BG_HIGH) & (predicted > ALERT_HIGH_BG) & (roc > ALERT_HIGH_ROC),
        "stable": (bg <= STABLE_BG[1])
        & (bg >= STABLE_BG[0])
        & (roc >= STABLE_ROC[0])
        & (roc <= STABLE_ROC[1]),
    }


def region_counts(bg: ArrayLike, roc: ArrayLike) -> DgrCounts:
    """Readings per region of the readings with both ``bg`` (mg/dL) and ``roc`` (mg/dL/min)."""
    b, r = np.asarray(bg, dtype=np.float64), np.asarray(roc, dtype=np.float64)
    keep = np.isfinite(b) & np.isfinite(r)
    masks = _region_masks(b[keep], r[keep])
    return DgrCounts(**{k: int(m.sum()) for k, m in masks.items()}, total=int(keep.sum()))


def dgr(bg: ArrayLike, roc: ArrayLike) -> DgrResult:
    """The DGR analysis of comparator readings (module docstring); ``excluded`` marks, among the
    readings with a rate (in their order), those the ellipse removes."""
    b = np.asarray(bg, dtype=np.float64).ravel()
    r = np.asarray(roc, dtype=np.float64).ravel()
    if b.size != r.size:
        raise ValueError(f"{b.size:,} comparator values but {r.size:,} rates")
    if b.size > MAX_READINGS:
        raise ValueError(f"{b.size:,} readings: at most {MAX_READINGS:,}")
    keep = np.isfinite(b) & np.isfinite(r)
    b, r = b[keep], r[keep]
    counts = region_counts(b, r)
    excluded = np.zeros(b.size, dtype=bool)
    if counts.meets() or counts.total == 0:
        return DgrResult(counts, "fulfilled", 0, excluded, 0.0, counts, b, r)
    smallest = min(min(getattr(counts, k) for k in DGR_REGIONS), counts.total)
    to_exclude = math.ceil(counts.total - smallest / (REQUIREMENT_PERCENT / 100))
    distance = np.sqrt((r / ELLIPSE_ROC) ** 2 + ((b - ELLIPSE_CENTRE) / ELLIPSE_BG) ** 2)
    order = np.argsort(distance, kind="quicksort")  # as pandas sort_values
    limit = float(distance[order[to_exclude - 1]])
    if limit > 1.0:
        return DgrResult(counts, "cannot be fulfilled", to_exclude, excluded, limit, counts, b, r)
    excluded[order[:to_exclude]] = True
    after = region_counts(b[~excluded], r[~excluded])
    return DgrResult(counts, "excluded", to_exclude, excluded, limit, after, b, r)


def _region_polygons() -> dict[str, list[tuple[float, float]]]:
    """(ROC, BG) corners of each region drawn on ROC −5 … 5, BG 0 … 400 (their figure's)."""
    lo, hi = -5.0, 5.0
    low_line = ALERT_LOW_BG - ALERT_LOW_ROC * HORIZON_MIN  # BG where BGP = 80 at ROC = −1
    high_line = ALERT_HIGH_BG - ALERT_HIGH_ROC * HORIZON_MIN
    low_edge = ALERT_LOW_BG - lo * HORIZON_MIN  # at ROC = −5
    high_edge = ALERT_HIGH_BG - hi * HORIZON_MIN  # at ROC = +5
    return {
        "high": [(lo, 400), (hi, 400), (hi, BG_HIGH), (lo, BG_HIGH)],
        "low": [(lo, 0), (hi, 0), (hi, BG_LOW), (lo, BG_LOW)],
        "alert_low": [
            (lo, BG_LOW),
            (ALERT_LOW_ROC, BG_LOW),
            (ALERT_LOW_ROC, low_line),
            (lo, min(low_edge, BG_HIGH)),
        ],
        "alert_high": [
            (hi, BG_HIGH),
            (ALERT_HIGH_ROC, BG_HIGH),
            (ALERT_HIGH_ROC, high_line),
            (hi, max(high_edge, BG_LOW)),
        ],
        "stable": [(-1, 70), (1, 70), (1, 180), (-1, 180)],
    }


def dgr_plot(result: DgrResult, title: str = "Dynamic Glucose Regions"):
    """The DGR plot (matplotlib, the report's style): the regions (critical regions orange and
    red, stable green), each reading's (ROC, BG) as a dot, and beside the plot each region's share
    with the 7.5 % requirement (their figure's layout)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Polygon

    from ranking_core.grids.style import fixed_title, style_figure
    from ranking_core.meter.comparison.plots import FIGURE_INCHES, SHOWN_WIDTH_PX

    fig = Figure(figsize=(FIGURE_INCHES, FIGURE_INCHES * 0.72))
    ax = fig.add_axes((0.12, 0.14, 0.58, 0.76))
    bars = fig.add_axes((0.74, 0.14, 0.23, 0.76))
    colours = {
        "high": ("darkorange", 0.4),
        "low": ("darkorange", 0.4),
        "alert_low": ("red", 0.2),
        "alert_high": ("red", 0.2),
        "stable": ("tab:green", 0.4),
    }
    for name, corners in _region_polygons().items():
        colour, alpha = colours[name]
        ax.add_patch(Polygon(corners, closed=True, facecolor=colour, alpha=alpha, lw=0))
    shown = ~result.excluded
    ax.scatter(result.roc[shown], result.bg[shown], s=3, color="tab:blue", alpha=0.4, lw=0)
    ax.set_xlim(-5, 5)
    ax.set_ylim(0, 400)
    ax.set_xlabel("comparator rate of change (mg/dL/min)")
    ax.set_ylabel("comparator glucose (mg/dL)")
    fixed_title(ax, f"{title} (n = {result.after.total:,})")
    share = result.after.percent()
    order = ("low", "alert_low", "stable", "alert_high", "high")
    bars.barh(
        range(len(order)),
        [share[k] for k in order],
        color=[colours[k][0] for k in order],
        alpha=0.5,
    )
    bars.axvline(REQUIREMENT_PERCENT, color="red", linestyle="--", linewidth=0.8)
    bars.set_yticks(range(len(order)))
    bars.set_yticklabels([k.replace("_", " ") for k in order])
    bars.yaxis.tick_right()
    bars.set_xlabel("share of readings (%)")
    for k, name in enumerate(order):
        bars.annotate(f"{share[name]:.1f} %", (0, k), xytext=(2, 0), textcoords="offset points")
    return style_figure(fig, SHOWN_WIDTH_PX)
