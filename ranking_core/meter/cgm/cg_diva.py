"""Continuous Glucose Deviation Interval and Variability Analysis (CG-DIVA) of a CGM study.

Method: Eichenlaub M, Stephan P, Waldenmaier D, Pleus S, Rothenbühler M, Haug C, Hinzmann R,
Thomas A, Jendle J, Diem P, Freckmann G. "Continuous Glucose Deviation Interval and Variability
Analysis (CG-DIVA): A Novel Approach for the Statistical Accuracy Assessment of Continuous Glucose
Monitoring Systems." J Diabetes Sci Technol 2022, doi:10.1177/19322968221134639 (Institut für
Diabetes-Technologie, Ulm; Freckmann et al.'s group). Ported from their reference implementation
(github IfDTUlm/CGM_Performance_Assessment, folder "CG-DIVA", ``CG_DIVA.py`` v1.0, MIT):

* Ranges by the **comparator** value: ``<70`` (comp < 70 mg/dL), ``70-180`` (70 ≤ comp ≤ 180),
  ``>180`` (comp > 180) and ``total`` (every pair).
* Deviation of a pair: CGM − comp in mg/dL when comp < 70, else 100 · (CGM − comp) / comp in %;
  in ``total`` the relative deviation (%) of every pair.
* Median: the median deviation of the range's pairs.
* Deviation intervals: the central quantile intervals of the deviations whose sizes are the
  share limits of the FDA iCGM criteria (21 CFR 862.1355(b)(1)(ii)) — inner (DI1) 85 % / 70 % /
  80 % of criteria A / B / C and 87 % of G (total); outer (DI2) 98 % / 99 % / 99 % of D / E / F
  (none for total). Each limit is widened to its 95 % confidence bound: the lower limit to the
  2.5 % and the upper to the 97.5 % bias-corrected and accelerated (BCa) bootstrap quantile
  (DiCiccio & Efron, Stat Sci 1996; as R ``bootstrap::bcanon``), bootstrapping whole sensors
  (10,000 resamples, NumPy's legacy generator seeded with 1, the same resample for every range),
  the acceleration from the jackknife leaving out one sensor of the range at a time; the plain
  percentile quantile when BCa cannot be applied (every resample on one side of the estimate).
* Between-sensor variability: the smallest and largest median deviation of a sensor with at least
  3 pairs in the range. Within-sensor variability: the median, over sensors with at least 10
  pairs in the range, of the width of the sensor's central 90 % (95th − 5th percentile).

Quantiles are NumPy's default (linear interpolation, R type 7); the pooled quantiles go through
percent as pandas does (``q · 100 / 100``). The bootstrap is vectorised: a resample of sensors is
a count per sensor, and a quantile of the resampled pairs is the weighted order statistic of the
range's sorted deviations (:func:`resampled_quantiles`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ranking_core.meter.distributions import normal_cdf, normal_quantile

__all__ = [
    "CG_DIVA_ABOUT",
    "CG_DIVA_CAPTION",
    "CG_DIVA_RANGES",
    "CONFIDENCE",
    "INNER_SIZES",
    "MIN_RANGE_PAIRS",
    "OUTER_SIZES",
    "RESAMPLES",
    "SEED",
    "CgDivaRange",
    "bca_quantile",
    "cg_diva",
    "cg_diva_frame",
    "cg_diva_notes",
    "deviations",
    "jackknife_acceleration",
    "resampled_quantiles",
]

CG_DIVA_RANGES = ("<70", "70-180", ">180", "total")
RANGE_UNITS = ("mg/dL", "%", "%", "%")
LOW, HIGH = 70.0, 180.0  # mg/dL, comparator range edges (70 in the middle range, 180 too)
INNER_SIZES = (0.85, 0.70, 0.80, 0.87)  # criteria A, B, C (ranges) and G (total)
OUTER_SIZES: tuple[float | None, ...] = (0.98, 0.99, 0.99, None)  # criteria D, E, F
CONFIDENCE = 0.95  # two-sided level of the bootstrap bounds of each interval limit
RESAMPLES, SEED = 10_000, 1  # the reference implementation's defaults
MIN_SENSOR_MEDIAN_PAIRS = 3  # a sensor's median counts with at least this many pairs in range
MIN_SENSOR_SPREAD_PAIRS = 10  # a sensor's 90 % range counts with at least this many
MIN_RANGE_PAIRS = 100  # the reference refuses a range with fewer pairs
MAX_RESAMPLES = 100_000
CG_DIVA_ABOUT = (
    "Continuous Glucose Deviation Interval and Variability Analysis (Eichenlaub et al., J "
    "Diabetes Sci Technol 2022, doi:10.1177/19322968221134639), by comparator range. Deviation: "
    "CGM − comparator in mg/dL below 70 mg/dL, in % of the comparator from 70 (total: %). The "
    "inner interval holds the central 85 / 70 / 80 / 87 % of the deviations (the shares of the "
    "FDA iCGM criteria A, B, C and G), the outer the central 98 / 99 / 99 % (criteria D, E, F); "
    "each limit is its 95 % BCa bootstrap bound over sensors (10,000 resamples, seed 1). "
    "Between-sensor variability: the smallest and largest sensor median (sensors with at least "
    "3 pairs in the range); within-sensor: the median width of a sensor's central 90 % (at "
    "least 10 pairs)."
)
CG_DIVA_CAPTION = (
    "CG-DIVA by comparator range: outer deviation interval (light box), inner deviation "
    "interval (dark box), median deviation (white line), and the smallest to largest sensor "
    "median (blue bar); mg/dL below 70 mg/dL, % from 70 and in total."
)
_CHUNK_CELLS = 4_000_000  # most array cells held at once by a step of the bootstrap
_BLOCK = 32  # sorted values per block of the order-statistic search


@dataclass(frozen=True)
class CgDivaRange:
    """CG-DIVA of one comparator range. Deviations in ``unit`` (mg/dL for ``<70``, % else);
    ``di2_*`` is None for ``total``; a number is NaN when the range has too few pairs or
    sensors for it."""

    range: str
    unit: str
    pairs: int
    sensors: int
    median: float
    di1_lower: float
    di1_upper: float
    di2_lower: float | None
    di2_upper: float | None
    between_sensor_min: float
    between_sensor_max: float
    within_sensor_90: float

    def to_dict(self) -> dict[str, object]:
        """JSON-ready (NaN → None)."""
        out: dict[str, object] = {}
        for key, value in self.__dict__.items():
            if isinstance(value, float) and not np.isfinite(value):
                value = None
            out[key] = value
        return out


def deviations(
    comp: NDArray[np.float64], cgm: NDArray[np.float64]
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64]]:
    """(range index 0–2 by the comparator, the range's deviation, the relative deviation in %)
    of every pair: mg/dL below comparator 70, % from 70."""
    comp, cgm = np.asarray(comp, dtype=np.float64), np.asarray(cgm, dtype=np.float64)
    absolute = cgm - comp
    relative = absolute / comp * 100.0
    index = np.where(comp < LOW, 0, np.where(comp <= HIGH, 1, 2)).astype(np.intp)
    return index, np.where(comp < LOW, absolute, relative), relative


def _pandas_q(q: Sequence[float]) -> NDArray[np.float64]:
    """q as pandas hands it to NumPy (through percent), for bit-level agreement."""
    return np.asarray(q, dtype=np.float64) * 100.0 / 100.0


def _lerp(a: NDArray[np.float64], b: NDArray[np.float64], t: NDArray[np.float64]) -> NDArray:
    """NumPy's linear interpolation between order statistics (the same floating arithmetic)."""
    diff = b - a
    return np.where(t >= 0.5, b - diff * (1.0 - t), a + diff * t)


def resampled_quantiles(
    values: NDArray[np.float64],
    cluster: NDArray[np.intp],
    counts: NDArray[np.int64],
    q: Sequence[float] | NDArray[np.float64],
) -> NDArray[np.float64]:
    """Quantiles ``q`` (linear, R type 7) of each resample of clusters.

    values, cluster: the pairs' deviations and cluster index (0 … C−1); counts[b, c]: how often
    cluster c is in resample b. A resample's pairs are every pair of cluster c taken counts[b, c]
    times, so its quantile interpolates between two weighted order statistics of the sorted
    values. The j-th (from 0) is found by bisection over blocks of :data:`_BLOCK` sorted values
    (the resample's pairs before a block: counts · the clusters' pairs before it), then within
    the block. Returns (B, len(q)); NaN for a resample without pairs.
    """
    order = np.argsort(values, kind="stable")
    v, g = np.asarray(values, dtype=np.float64)[order], np.asarray(cluster)[order]
    counts = np.asarray(counts, dtype=np.int64)
    b_count, n, width = counts.shape[0], v.size, counts.shape[1]
    quantiles = np.asarray(q, dtype=np.float64)
    out = np.full((b_count, quantiles.size), np.nan)
    if n == 0 or b_count == 0:
        return out
    starts = np.arange(0, n, _BLOCK)
    before = np.zeros((starts.size, width), dtype=np.int64)  # pairs of each cluster before block
    one_hot = np.zeros((n, width), dtype=np.int64) if n * width <= _CHUNK_CELLS else None
    if one_hot is not None:
        one_hot[np.arange(n), g] = 1
        before[1:] = np.cumsum(one_hot, axis=0)[starts[1:] - 1]
    else:
        for m in range(1, starts.size):
            before[m] = before[m - 1] + np.bincount(g[starts[m - 1] : starts[m]], minlength=width)
    rows_per_chunk = max(1, _CHUNK_CELLS // (2 * quantiles.size * max(width, _BLOCK)))
    for first in range(0, b_count, rows_per_chunk):
        part = counts[first : first + rows_per_chunk]
        total = part @ np.bincount(g, minlength=width)
        live = np.flatnonzero(total > 0)
        c, t_all = part[live], total[live]
        h = (t_all[:, None] - 1) * quantiles[None, :]
        low = np.floor(h)
        gamma = h - low
        j_low = low.astype(np.int64)
        j_high = np.minimum(j_low + 1, t_all[:, None] - 1)
        target = np.concatenate([j_low, j_high], axis=1)  # (b, 2q)
        k = _order_statistic_index(c, g, before, target, n)
        half = quantiles.size
        out[first + live] = _lerp(v[k[:, :half]], v[k[:, half:]], gamma)
    return out


def _order_statistic_index(
    c: NDArray[np.int64],
    g: NDArray[np.intp],
    before: NDArray[np.int64],
    target: NDArray[np.int64],
    n: int,
) -> NDArray[np.int64]:
    """Sorted position of the target-th (from 0) pair of each resample (rows of ``c``)."""
    blocks = before.shape[0]
    low = np.zeros(target.shape, dtype=np.int64)  # block whose start count ≤ target
    high = np.full(target.shape, blocks, dtype=np.int64)
    rows = np.arange(c.shape[0])[:, None]
    while np.any(high - low > 1):
        mid = (low + high) // 2
        done = high - low <= 1
        mid = np.where(done, low, mid)
        seen = np.einsum("bs,bts->bt", c, before[mid])
        ok = (seen <= target) & ~done
        low = np.where(ok, mid, low)
        high = np.where(ok | done, high, mid)
    base = np.einsum("bs,bts->bt", c, before[low])
    position = low[..., None] * _BLOCK + np.arange(_BLOCK)  # (b, t, block)
    inside = position < n
    weight = np.where(inside, c[rows[..., None], g[np.minimum(position, n - 1)]], 0)
    reached = base[..., None] + np.cumsum(weight, axis=-1)
    return low * _BLOCK + np.count_nonzero(reached <= target[..., None], axis=-1)


def jackknife_acceleration(
    values: NDArray[np.float64], cluster: NDArray[np.intp], q: Sequence[float]
) -> NDArray[np.float64]:
    """BCa acceleration of each quantile ``q`` from the jackknife leaving out one cluster at a
    time (DiCiccio & Efron 1996; ``bootstrap::bcanon``): a = Σu³ / (6 (Σu²)^{3/2}) with u the
    mean of the leave-one-out quantiles minus each. NaN with fewer than two clusters."""
    present = np.unique(cluster)
    if present.size < 2:
        return np.full(len(q), np.nan)
    width = int(cluster.max()) + 1
    counts = np.ones((present.size, width), dtype=np.int64)
    counts[np.arange(present.size), present] = 0
    u = resampled_quantiles(values, cluster, counts, _pandas_q(q))
    uu = u.mean(axis=0) - u
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sum(uu**3, axis=0) / (6.0 * np.sum(uu**2, axis=0) ** 1.5)


def bca_quantile(
    samples: NDArray[np.float64], estimate: float, acceleration: float, level: float
) -> float:
    """The BCa bootstrap quantile ``level`` (0–1) of ``samples`` around ``estimate``:
    Φ(z0 + (z0 + z_α) / (1 − a (z0 + z_α))) with z0 = Φ⁻¹(share of samples < estimate); the plain
    percentile quantile when every sample is on one side of the estimate or ``a`` is NaN."""
    data = samples[~np.isnan(samples)]
    if data.size == 0 or not np.isfinite(estimate):
        return float("nan")
    if data.min() >= estimate or data.max() <= estimate or np.isnan(acceleration):
        return float(np.quantile(data, level))
    z0 = normal_quantile(np.count_nonzero(data < estimate) / data.size)
    if np.isinf(z0):
        return float("nan")
    z = z0 + normal_quantile(level)
    return float(np.quantile(data, normal_cdf(z0 + z / (1.0 - acceleration * z))))


def _sensor_spread(
    values: NDArray[np.float64], cluster: NDArray[np.intp]
) -> tuple[float, float, float]:
    """(smallest, largest) sensor median over sensors with ≥ 3 pairs, and the median of the
    sensors' 95th − 5th percentile over sensors with ≥ 10 pairs (NaN when none)."""
    medians, spreads = [], []
    order = np.argsort(cluster, kind="stable")
    v, c = values[order], cluster[order]
    for part in np.split(v, np.flatnonzero(np.diff(c)) + 1):
        if part.size >= MIN_SENSOR_MEDIAN_PAIRS:
            medians.append(np.median(part))
            if part.size >= MIN_SENSOR_SPREAD_PAIRS:
                low, high = np.quantile(part, [0.05, 0.95])
                spreads.append(high - low)
    if not medians:
        return float("nan"), float("nan"), float("nan")
    spread = float(np.median(spreads)) if spreads else float("nan")
    return float(min(medians)), float(max(medians)), spread


def _interval_q(r: int) -> list[float]:
    """Quantiles of range r's interval limits: DI1 lower, upper, DI2 lower, upper."""
    inner, outer = INNER_SIZES[r], OUTER_SIZES[r]
    out = [(1 - inner) / 2, (1 + inner) / 2]
    if outer is not None:
        out += [(1 - outer) / 2, (1 + outer) / 2]
    return out


def _sorted_sensors(ids: NDArray) -> tuple[NDArray, NDArray[np.intp]]:
    """(distinct sensor ids in the reference's order, each pair's index into them). The
    reference sorts the ids as pandas read them: numbers when every id is a number (``2`` before
    ``10``), else text."""
    distinct, cluster = np.unique(ids, return_inverse=True)
    numbers = pd.to_numeric(pd.Series(distinct), errors="coerce").to_numpy(dtype=float)
    if distinct.size and np.isfinite(numbers).all():
        order = np.lexsort((np.arange(distinct.size), numbers))
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        distinct, cluster = distinct[order], rank[cluster]
    return distinct, cluster.reshape(-1).astype(np.intp)


def cg_diva(
    comp: ArrayLike,
    cgm: ArrayLike,
    sensor: ArrayLike,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> list[CgDivaRange]:
    """CG-DIVA of paired comparator and CGM values (mg/dL) with each pair's sensor: one
    :class:`CgDivaRange` per range of :data:`CG_DIVA_RANGES`.

    Sensors are resampled as the reference implementation does: sorted distinct sensor ids
    (as numbers when all are numbers),
    ``numpy.random.RandomState(seed)``, each resample ``choice(sensors, size=len(sensors))``
    — the same random numbers, so the same resamples, as theirs with that seed.
    """
    comp_a = np.asarray(comp, dtype=np.float64)
    cgm_a = np.asarray(cgm, dtype=np.float64)
    if comp_a.shape != cgm_a.shape or comp_a.ndim != 1:
        raise ValueError("cg_diva: comp and cgm must be 1-D arrays of one length")
    if not (np.isfinite(comp_a).all() and np.isfinite(cgm_a).all()) or (comp_a <= 0).any():
        raise ValueError("cg_diva: comp must be positive and every value finite (mg/dL)")
    if not 1 <= resamples <= MAX_RESAMPLES:
        raise ValueError(f"cg_diva: resamples must be 1 to {MAX_RESAMPLES:,}; got {resamples}")
    names = np.asarray(sensor)
    if names.shape != comp_a.shape:
        raise ValueError("cg_diva: one sensor per pair")
    ids = pd.Series(names, dtype=object).astype(str).to_numpy()
    distinct, cluster = _sorted_sensors(ids)
    n_sensors = distinct.size
    index, deviation, relative = deviations(comp_a, cgm_a)
    scopes = [index == 0, index == 1, index == 2, np.ones(comp_a.size, dtype=bool)]
    data = [(deviation[s], cluster[s]) for s in scopes[:3]] + [(relative, cluster)]
    qs = [_pandas_q(_interval_q(r)) for r in range(4)]
    samples = [np.full((resamples, q.size), np.nan) for q in qs]
    if n_sensors:
        rng = np.random.RandomState(seed)
        chunk = max(1, min(resamples, _CHUNK_CELLS // (8 * n_sensors)))
        for start in range(0, resamples, chunk):
            size = min(chunk, resamples - start)
            draws = rng.randint(0, n_sensors, size=(size, n_sensors))
            counts = np.zeros((size, n_sensors), dtype=np.int64)
            np.add.at(counts, (np.repeat(np.arange(size), n_sensors), draws.ravel()), 1)
            for r, (values, clusters) in enumerate(data):
                samples[r][start : start + size] = resampled_quantiles(
                    values, clusters, counts, qs[r]
                )
    results = []
    levels = [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2]
    for r, (values, clusters) in enumerate(data):
        if values.size:
            estimate = np.quantile(values, qs[r])
            accel = jackknife_acceleration(values, clusters, _interval_q(r))
            limits = [
                bca_quantile(samples[r][:, j], float(estimate[j]), float(accel[j]), level)
                for j, level in enumerate(levels * (qs[r].size // 2))
            ]
            median = float(np.median(values))
        else:
            limits, median = [float("nan")] * qs[r].size, float("nan")
        low, high, spread = (
            _sensor_spread(values, clusters) if values.size else (np.nan, np.nan, np.nan)
        )
        results.append(
            CgDivaRange(
                range=CG_DIVA_RANGES[r],
                unit=RANGE_UNITS[r],
                pairs=int(values.size),
                sensors=int(np.unique(clusters).size),
                median=median,
                di1_lower=limits[0],
                di1_upper=limits[1],
                di2_lower=limits[2] if len(limits) > 2 else None,
                di2_upper=limits[3] if len(limits) > 2 else None,
                between_sensor_min=float(low),
                between_sensor_max=float(high),
                within_sensor_90=float(spread),
            )
        )
    return results


def cg_diva_notes(results: Sequence[CgDivaRange]) -> list[str]:
    """A sentence for each range with fewer pairs than the method asks (the reference refuses
    such data; riskgrid reports the numbers with this note)."""
    return [
        f"CG-DIVA range {row.range}: {row.pairs} pairs, fewer than the {MIN_RANGE_PAIRS} the "
        "method asks for; its deviation intervals are unreliable."
        for row in results
        if row.pairs < MIN_RANGE_PAIRS
    ]


def cg_diva_frame(results: Sequence[CgDivaRange]) -> pd.DataFrame:
    """The CG-DIVA table as printed: one row per range (NaN/None shown empty by the callers)."""
    return pd.DataFrame([row.to_dict() for row in results])
