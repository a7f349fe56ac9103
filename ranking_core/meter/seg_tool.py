"""The official SEG tool's tables, exactly (Klonoff et al. 2014; the DTS SEG app): which pairs
are analysed and the pair types, bias, MARD, CV and limits of agreement, the ISO 15197 ranges and
the binomial accuracy test, the SEG risk grades and categories, and every zone table, computed
over the distinct (REF, BGM) points weighted by their pairs
(:func:`~ranking_core.meter.statistics.pair_points`). Percentages in %, 0–100; each count table
with the Wilson 95 % interval of its percentage.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.grids.registry import ZoneGrid
from ranking_core.grids.risk_scale import (
    RISK_CATEGORIES,
    RISK_CATEGORY_RANGES,
    RISK_GRADE_RANGES,
    RISK_GRADES,
    risk_category,
    risk_grade,
)
from ranking_core.grids.seg import GLUCOSE_MAX, SEGTable
from ranking_core.meter.distributions import binomial_quantile
from ranking_core.meter.pairs.readings import MeterPairs, name_rows
from ranking_core.meter.statistics import add_intervals, mean_sd, proportion_interval

__all__ = [
    "ISO_COMPLIANT",
    "ISO_RANGES",
    "accuracy_table",
    "binomial_lower_bound",
    "category_table",
    "counts_table",
    "iso_tables",
    "pair_types",
    "seg_tables",
    "zone_table",
]

# ISO 15197 bands of |BGM − REF| (mg/dL below REF 100, % of REF from 100), upper bound included
ISO_RANGES = (
    "<= 5 % or 5 mg/dL",
    "> 5 - 10 % or mg/dL",
    "> 10 - 15 % or mg/dL",
    "> 15 - 20 % or mg/dL",
    "> 20 % or 20 mg/dL",
)
ISO_EDGES = np.array([5.0, 10.0, 15.0, 20.0])
ISO_COMPLIANT = 15.0  # mg/dL or %, the ISO 15197 / SEG surveillance accuracy limit
BINOMIAL_PROBABILITY, BINOMIAL_QUANTILE = 0.95, 0.05


def binomial_lower_bound(n: int) -> int:
    """Fewest compliant pairs for the SEG surveillance accuracy standard: the 5th percentile of
    Binomial(n, 0.95), i.e. R's ``qbinom(0.05, n, 0.95)`` (smallest k with P(X ≤ k) ≥ 0.05), and
    at least 1: with one pair the quantile is 0, and 0 compliant pairs never meet a standard."""
    return max(1, binomial_quantile(BINOMIAL_QUANTILE, n, BINOMIAL_PROBABILITY)) if n > 0 else 0


def counts_table(
    index: NDArray[np.integer], labels: tuple[str, ...], n: int, count: NDArray[np.int64]
) -> pd.DataFrame:
    """count, percent and its Wilson 95 % interval of each label (``index`` per point, ``count``
    pairs at each point)."""
    tally = np.bincount(index, weights=count, minlength=len(labels)).astype(np.int64)
    percent = 100.0 * tally / n if n else np.full(len(labels), np.nan)
    return add_intervals(pd.DataFrame({"count": tally, "percent": percent}), n)


def category_table(abs_risk: NDArray[np.float64], count: NDArray[np.int64]) -> pd.DataFrame:
    table = counts_table(risk_category(abs_risk), RISK_CATEGORIES, int(count.sum()), count)
    table.insert(0, "abs_risk_range", list(RISK_CATEGORY_RANGES))
    table.insert(0, "category", list(RISK_CATEGORIES))
    table.insert(0, "id", np.arange(len(RISK_CATEGORIES)))
    return table


def zone_table(
    grid: ZoneGrid, index: NDArray[np.integer], count: NDArray[np.int64]
) -> pd.DataFrame:
    table = counts_table(index, grid.zones, int(count.sum()), count)
    table.insert(0, "meaning", list(grid.meanings))
    table.insert(0, "zone", list(grid.zones))
    return table


def pair_types(pairs: MeterPairs) -> tuple[NDArray[np.bool_], pd.DataFrame, list[str]]:
    """Which pairs are analysed (not REF > 600, else BGM > 600, else a value < 0: each counted
    once, under the first rule it meets), the official tool's pair types table, and the
    messages naming the rows left out."""
    ref, bgm = pairs.ref, pairs.bgm
    n_total = len(ref)
    ref_over = ref > GLUCOSE_MAX
    bgm_over = ~ref_over & (bgm > GLUCOSE_MAX)
    negative = ~ref_over & ~bgm_over & ((ref < 0) | (bgm < 0))
    included = ~(ref_over | bgm_over | negative)
    messages = list(pairs.messages)
    kinds = (
        "Total",
        "BGM < REF",
        "BGM = REF",
        "BGM > REF",
        "REF > 600: excluded from SEG analysis",
        "BGM > 600: excluded",
        "REF or BGM < 0: excluded",
        "Total included in SEG analysis",
    )
    counts = [n_total] + [
        np.count_nonzero(mask)
        for mask in (bgm < ref, bgm == ref, bgm > ref, ref_over, bgm_over, negative, included)
    ]
    pair_types = pd.DataFrame({"pair_type": kinds, "count": np.array(counts, dtype=np.int64)})
    pair_types["percent"] = 100.0 * pair_types["count"] / n_total if n_total else np.nan
    for mask, rule in (
        (ref_over, "REF > 600 mg/dL"),
        (bgm_over, "BGM > 600 mg/dL"),
        (negative, "a value below 0 mg/dL"),
    ):
        if mask.any():
            messages.append(
                f"{mask.sum()} pair(s) with {rule} are excluded from the analysis "
                f"({name_rows(pairs.rows[mask], pairs.unit)})"
            )
    return included, pair_types, messages


def accuracy_table(
    r: NDArray[np.float64], b: NDArray[np.float64], count: NDArray[np.int64]
) -> tuple[NDArray[np.float64], pd.DataFrame, list[str]]:
    """rel = (BGM − REF)/REF per point (NaN where REF = 0), the SEG tool's bias, MARD, CV and
    limits of agreement table over the pairs with REF > 0, and a message when REF = 0 pairs
    are left out."""
    n = int(count.sum())
    positive = r > 0
    rel = np.full(r.size, np.nan)
    rel[positive] = (b[positive] - r[positive]) / r[positive]
    n_positive = int(count[positive].sum())
    messages = []
    if n_positive < n:
        messages.append(
            f"{n - n_positive} included pair(s) with REF = 0 are left out of "
            "bias, MARD, CV and the limits of agreement (rel = (BGM − REF)/REF is "
            "undefined; the official tool returns Inf)"
        )
    bias, cv = mean_sd(rel[positive], count[positive])
    accuracy = pd.DataFrame(
        {
            "n": [n_positive],
            "ref_zero_left_out": [n - n_positive],
            "bias_percent": [100 * bias],
            "mard_percent": [100 * mean_sd(np.abs(rel[positive]), count[positive])[0]],
            "cv_percent": [100 * cv],
            "loa_lower_percent": [100 * (bias - 1.96 * cv)],
            "loa_upper_percent": [100 * (bias + 1.96 * cv)],
        }
    )
    return rel, accuracy, messages


def iso_tables(
    diff: NDArray[np.float64], count: NDArray[np.int64]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ISO 15197 ranges of |BGM − REF| and the binomial accuracy test (95 % within 15),
    from each point's ISO difference (mg/dL below REF 100, % from 100)."""
    n = int(count.sum())
    iso_ranges = counts_table(np.digitize(diff, ISO_EDGES, right=True), ISO_RANGES, n, count)
    iso_ranges.insert(0, "range", list(ISO_RANGES))
    iso_ranges.insert(0, "id", np.arange(1, len(ISO_RANGES) + 1))
    compliant = int(count[diff <= ISO_COMPLIANT].sum())
    bound = binomial_lower_bound(n)
    low, high = proportion_interval(compliant, n)
    binomial = pd.DataFrame(
        {
            "n": [n],
            "compliant": [compliant],
            "compliant_percent": [100.0 * compliant / n if n else np.nan],
            "lower_bound": [bound],
            "lower_bound_percent": [100.0 * bound / n if n else np.nan],
            "meets": [bool(n > 0 and compliant >= bound)],
            "ci_lower_percent": [low],
            "ci_upper_percent": [high],
        }
    )
    return iso_ranges, binomial


def seg_tables(
    seg_table: SEGTable, r: NDArray[np.float64], b: NDArray[np.float64], count: NDArray[np.int64]
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, tuple[NDArray, tuple[str, ...] | None]]]:
    """The SEG risk grades and categories of the points, and the per-point columns (the
    absolute risk; grade and category as codes of their names)."""
    abs_risk = seg_table.risk(r, b)
    grade, category = risk_grade(abs_risk), risk_category(abs_risk)
    grades = counts_table(grade, RISK_GRADES, int(count.sum()), count)
    grades.insert(0, "abs_risk_range", list(RISK_GRADE_RANGES))
    grades.insert(0, "grade", list(RISK_GRADES))
    columns: dict[str, tuple[NDArray[Any], tuple[str, ...] | None]] = {
        "abs_risk": (abs_risk, None),
        "risk_grade": (grade, RISK_GRADES),
        "risk_category": (category, RISK_CATEGORIES),
    }
    return grades, category_table(abs_risk, count), columns
