"""Accuracy statistics of meter pairs with their uncertainty: 95 % intervals on every percentage,
and MARD, bias and the share within ±15/15 and ±20/20 by glucose range.

* Percentages of pairs (zones, grades, criteria) carry the Wilson score 95 % interval
  (Wilson, J Am Stat Assoc 1927;22:209–212; the closed form of
  ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``), which keeps its coverage near
  95 % for small n and shares near 0 or 100 %.
* MARD carries a percentile bootstrap 95 % interval (``scipy.stats.bootstrap``'s, computed by
  :func:`~ranking_core.meter.distributions.percentile_bootstrap_mean`; 1,000 resamples, fixed
  seed so that a report is reproducible). Beyond :data:`BOOTSTRAP_MAX_PAIRS` pairs the
  bootstrap (time O(pairs × resamples)) is replaced by the normal interval mean ± z·s/√n, to which
  the percentile bootstrap of a mean converges as the pairs grow (central limit theorem); just
  above the limit the two differ by a few % of the interval's width (checked in the tests).
* The acceptance criteria (ISO 15197:2013, FDA iCGM) live in
:mod:`ranking_core.meter.standards.acceptance`.
* Glucose ranges by reference: < 70, 70–180 and > 180 mg/dL (the consensus ranges for
  hypoglycaemia, target range and hyperglycaemia).
* Many pairs: every statistic here is a function of the pairs' multiset, so each function takes
  an optional ``count`` (pairs at each (REF, BGM) given). :func:`pair_points` groups whole mg/dL
  pairs on the 601 × 601 lattice by counting, in one pass and without sorting; the report then
  computes everything over the distinct points (at most 361,201) instead of over 10⁶–10⁷ pairs,
  and the bootstrap resamples the pairs in (REF, BGM) order, so that a report does not depend on
  the order of the rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtri

from ranking_core.meter.distributions import percentile_bootstrap_mean

__all__ = [
    "CONFIDENCE",
    "GLUCOSE_RANGES",
    "MIN_PAIRS",
    "MIN_PAIRS_PER_RANGE",
    "AgreementLimit",
    "PairPoints",
    "add_intervals",
    "caveats",
    "iso_difference",
    "mard_interval",
    "mean_sd",
    "pair_points",
    "proportion_interval",
    "range_statistics",
    "within",
]

CONFIDENCE = 0.95
MIN_PAIRS = 100  # fewer pairs in all: a visible caveat
MIN_PAIRS_PER_RANGE = 20  # fewer pairs in a glucose range: a visible caveat
GLUCOSE_RANGES = ("< 70 mg/dL", "70–180 mg/dL", "> 180 mg/dL")  # of REF, 70 and 180 in the middle
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_MAX_PAIRS = 20_000  # more pairs: the normal interval of the mean (see the notes)
BOOTSTRAP_BATCH_VALUES = 1_000_000  # resampled values held at once (8 MB)
_LATTICE = 601  # whole mg/dL 0..600 on each axis (the SEG's grid)


@dataclass(frozen=True)
class PairPoints:
    """Pairs grouped by their distinct (REF, BGM) point in mg/dL.

    Attributes
    ----------
    ref, bgm : (p,) the distinct points.
    count : (p,) pairs at each point (≥ 1).
    inverse : (n,) the point of each pair, in the pairs' order: ``values[inverse]`` spreads a
        value per point to the pairs.
    """

    ref: NDArray[np.float64]
    bgm: NDArray[np.float64]
    count: NDArray[np.int64]
    inverse: NDArray[np.integer]


def pair_points(ref: ArrayLike, bgm: ArrayLike) -> PairPoints:
    """Group (REF, BGM) pairs by point: whole mg/dL in 0..600 on the 601 × 601 lattice by
    counting (O(n), no sort, 32-bit keys), other values by ``np.unique`` (O(n log n))."""
    ref = np.asarray(ref, dtype=np.float64)
    bgm = np.asarray(bgm, dtype=np.float64)
    if ref.size and min(ref.min(), bgm.min()) >= 0 and max(ref.max(), bgm.max()) < _LATTICE:
        key = ref.astype(np.int32)
        key *= _LATTICE
        key += bgm.astype(np.int32)
        whole = np.array_equal(key // _LATTICE, ref) and np.array_equal(key % _LATTICE, bgm)
        if whole:
            count = np.bincount(key, minlength=_LATTICE * _LATTICE)
            points = np.flatnonzero(count)
            position = np.zeros(count.size, dtype=np.int32)
            position[points] = np.arange(points.size, dtype=np.int32)
            point_ref, point_bgm = np.divmod(points, _LATTICE)
            return PairPoints(
                point_ref.astype(np.float64),
                point_bgm.astype(np.float64),
                count[points],
                position[key],
            )
    unique, inverse, count = np.unique(
        np.column_stack([ref, bgm]), axis=0, return_inverse=True, return_counts=True
    )
    return PairPoints(unique[:, 0].copy(), unique[:, 1].copy(), count, inverse.ravel())


def mean_sd(values: NDArray[np.float64], count: NDArray[np.int64]) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof = 1) of pairs given as values with counts; NaN
    when there are too few pairs. Sums of products, not ``np.dot``: BLAS threads cost more than
    the sum at these sizes."""
    n = int(count.sum())
    mean = float((count * values).sum() / n) if n else np.nan
    sd = float(np.sqrt((count * (values - mean) ** 2).sum() / (n - 1))) if n > 1 else np.nan
    return mean, sd


def _counts(count: ArrayLike | None, size: int) -> NDArray[np.int64]:
    return np.ones(size, dtype=np.int64) if count is None else np.asarray(count, dtype=np.int64)


def _wilson(count: NDArray, n: int, confidence: float) -> tuple[NDArray, NDArray]:
    """Wilson score bounds (shares, 0–1) of each count out of n > 0, without continuity
    correction (Newcombe 1998, method 3; the formula of ``binomtest(...).proportion_ci(
    method="wilson")``, vectorised and without the test's p-value)."""
    z = ndtri(0.5 + confidence / 2)
    p = np.asarray(count, dtype=np.float64) / n
    denom = 2 * (n + z**2)
    center = (2 * n * p + z**2) / denom
    delta = z / denom * np.sqrt(4 * n * p * (1 - p) + z**2)
    return (np.where(p == 0, 0.0, center - delta), np.where(p == 1, 1.0, center + delta))


def proportion_interval(count: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval (lower, upper) of the share count / n, in % (NaN when n = 0)."""
    if n <= 0:
        return np.nan, np.nan
    low, high = _wilson(np.array([count]), int(n), confidence)
    return 100.0 * float(low[0]), 100.0 * float(high[0])


def add_intervals(table: pd.DataFrame, n: int) -> pd.DataFrame:
    """The table with ``ci_lower_percent`` and ``ci_upper_percent`` (Wilson, 95 %) of each
    row's ``count`` out of ``n``."""
    out = table.copy()
    if n <= 0:
        out["ci_lower_percent"] = out["ci_upper_percent"] = np.nan
        return out
    low, high = _wilson(table["count"].to_numpy(), int(n), CONFIDENCE)
    out["ci_lower_percent"], out["ci_upper_percent"] = 100.0 * low, 100.0 * high
    return out


def iso_difference(ref: ArrayLike, bgm: ArrayLike) -> NDArray[np.float64]:
    """ISO 15197 difference: |BGM − REF| in mg/dL when REF < 100, in % of REF when REF ≥ 100."""
    ref = np.asarray(ref, dtype=np.float64)
    gap = np.subtract(np.asarray(bgm, dtype=np.float64), ref)
    np.abs(gap, out=gap)
    percent = ~(ref < 100)
    np.divide(100.0 * gap, ref, out=gap, where=percent)  # in place: few copies for 10^7 pairs
    return gap


def within(ref: ArrayLike, bgm: ArrayLike, limit: float) -> NDArray[np.bool_]:
    """|BGM − REF| ≤ limit mg/dL when REF < 100 mg/dL, ≤ limit % of REF from 100 mg/dL on."""
    return iso_difference(ref, bgm) <= limit


def mard_interval(
    ref: ArrayLike,
    bgm: ArrayLike,
    confidence: float = CONFIDENCE,
    random_state: int = 0,
    count: ArrayLike | None = None,
) -> tuple[float, float, float]:
    """MARD = mean |BGM − REF| / REF in % over pairs with REF > 0, and its percentile bootstrap
    interval (lower, upper); NaN where there are too few pairs (< 2 for the interval). Beyond
    :data:`BOOTSTRAP_MAX_PAIRS` pairs the interval is the normal one, mean ± z·s/√n. ``count``:
    pairs at each (REF, BGM) given (default one each; the bootstrap resamples the pairs in the
    order given)."""
    ref = np.asarray(ref, dtype=np.float64)
    bgm = np.asarray(bgm, dtype=np.float64)
    count = _counts(count, ref.size)
    keep = (ref > 0) & (count > 0)
    ard = 100.0 * np.abs(bgm[keep] - ref[keep]) / ref[keep]
    count = count[keep]
    n = int(count.sum())
    if n == 0:
        return np.nan, np.nan, np.nan
    mean, sd = mean_sd(ard, count)
    if n < 2 or np.all(ard == ard[0]):
        return mean, mean, mean
    if n > BOOTSTRAP_MAX_PAIRS:
        half = float(ndtri(0.5 + confidence / 2) * sd / np.sqrt(n))
        return mean, mean - half, mean + half
    sample = ard if ard.size == n else np.repeat(ard, count)
    # resamples per batch: about 10^6 values (8 MB) whatever the number of pairs. The batches
    # draw the same integers in the same order as one call would (the generator's stream is
    # consumed value by value), so the interval does not depend on the batch; small batches
    # stay in cache and spare the page faults of fresh 80 MB arrays (10 × faster at 10^4 pairs)
    batch = max(1, min(BOOTSTRAP_RESAMPLES, BOOTSTRAP_BATCH_VALUES // n))
    low, high = percentile_bootstrap_mean(
        sample, confidence, BOOTSTRAP_RESAMPLES, batch, np.random.default_rng(random_state)
    )
    return mean, low, high


def range_statistics(
    ref: ArrayLike, bgm: ArrayLike, count: ArrayLike | None = None
) -> pd.DataFrame:
    """MARD (with bootstrap interval), bias and the shares within ±15/15 and ±20/20 (with Wilson
    intervals) for each glucose range of the reference and for all pairs.

    Bias is the mean of BGM − REF in mg/dL and of (BGM − REF)/REF in %; MARD and the relative
    bias leave out REF = 0. ±15/15 means ±15 mg/dL below REF 100 mg/dL, ±15 % from 100 on.
    ``count``: pairs at each (REF, BGM) given (default one each; see :func:`pair_points`).
    """
    ref = np.asarray(ref, dtype=np.float64)
    bgm = np.asarray(bgm, dtype=np.float64)
    count = _counts(count, ref.size)
    rows = []
    masks = (ref < 70, (ref >= 70) & (ref <= 180), ref > 180, None)
    for label, mask in zip((*GLUCOSE_RANGES, "all"), masks, strict=True):
        r, b, c = (ref, bgm, count) if mask is None else (ref[mask], bgm[mask], count[mask])
        n = int(c.sum())
        mard, low, high = mard_interval(r, b, count=c)
        positive = r > 0
        row = {
            "range": label,
            "n": n,
            "mard_percent": mard,
            "mard_ci_lower_percent": low,
            "mard_ci_upper_percent": high,
            "bias_mg_dl": mean_sd(b - r, c)[0],
            "bias_percent": 100
            * mean_sd((b[positive] - r[positive]) / r[positive], c[positive])[0],
        }
        diff = iso_difference(r, b)
        for limit in (15, 20):
            inside = int(c[diff <= limit].sum())  # within(r, b, limit)
            ci = proportion_interval(inside, n)
            row[f"within_{limit}_count"] = inside
            row[f"within_{limit}_percent"] = 100.0 * inside / n if n else np.nan
            row[f"within_{limit}_ci_lower_percent"], row[f"within_{limit}_ci_upper_percent"] = ci
        rows.append(row)
    return pd.DataFrame(rows)


def caveats(ranges: pd.DataFrame) -> tuple[str, ...]:
    """Visible warnings for small samples: fewer than 100 pairs in all, or fewer than 20 in a
    glucose range (from a :func:`range_statistics` table)."""
    notes = []
    total = int(ranges.loc[ranges["range"] == "all", "n"].iloc[0])
    if total < MIN_PAIRS:
        notes.append(
            f"Only {total} pairs (fewer than {MIN_PAIRS}): every percentage is "
            "imprecise; read the 95 % intervals, not the point values."
        )
    rest = ranges[ranges["range"] != "all"]
    for label, n in zip(rest["range"].tolist(), rest["n"].tolist(), strict=True):
        if n < MIN_PAIRS_PER_RANGE:
            have = "no pairs" if n == 0 else f"only {n} pair" + "s" * (n > 1)
            notes.append(
                f"Range {label} has {have} (fewer than {MIN_PAIRS_PER_RANGE}): "
                "its MARD, bias and shares are unreliable."
            )
    return tuple(notes)


@dataclass(frozen=True)
class AgreementLimit:
    """A standard's limit drawn on the Bland–Altman plot: ±``mgdl`` mg/dL below ``cut`` mg/dL
    of the reference, ±``percent`` % from ``cut`` on (``cut`` 0: ±``percent`` % everywhere)."""

    mgdl: float
    percent: float
    cut: float

    def text(self) -> str:
        if self.cut <= 0:
            return f"±{self.percent:g} %"
        return (
            f"±{self.mgdl:g} mg/dL below {self.cut:g} mg/dL and ±{self.percent:g} % from "
            f"{self.cut:g} mg/dL on"
        )

    def percent_at(self, ref: NDArray[np.float64]) -> NDArray[np.float64]:
        """The limit in % of the reference at each reference glucose (mg/dL, > 0)."""
        return np.where(ref < self.cut, 100.0 * self.mgdl / ref, self.percent)
