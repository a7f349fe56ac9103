"""Passing–Bablok regression of a device (y) on its reference (x), with its 95 % intervals and the
CUSUM test for linearity.

Method: Passing H, Bablok W. "A new biometrical procedure for testing the equality of
measurements from two different analytical methods. Application of linear regression procedures
for method comparison studies in clinical chemistry, Part I." J Clin Chem Clin Biochem 1983;
21:709–720. As the paper defines it:

* Slopes S_ij = (y_i − y_j) / (x_i − x_j) for every 1 ≤ i < j ≤ n (i, j in the order the pairs
  were read). A pair with x_i = x_j and y_i = y_j (0/0) gives no slope; a vertical pair
  (x_i = x_j, y_i ≠ y_j) gives +∞ when y_i > y_j and −∞ when y_i < y_j; slopes of exactly −1
  (y_i − y_j = −(x_i − x_j)) are left out. N is the number of slopes kept.
* K = the number of slopes below −1; the slope b is the median of the sorted slopes shifted by K:
  S_((N+1)/2 + K) for N odd, ½(S_(N/2 + K) + S_(N/2 + 1 + K)) for N even (1-based ranks).
* Its two-sided confidence limits (normal approximation of Kendall's statistic):
  C = z_(1−α/2) · √(n(n − 1)(2n + 5)/18), M1 = round((N − C)/2) (halves rounded up),
  M2 = N − M1 + 1; b_L = S_(M1 + K), b_U = S_(M2 + K). A rank outside 1 … N leaves the limit
  undefined (NaN; too few pairs).
* Intercept a = median(y_i − b·x_i); its limits a_L = median(y_i − b_U·x_i),
  a_U = median(y_i − b_L·x_i).
* Linearity (the paper's cumulative-sum test): with l pairs above the line y = a + b·x and L
  below it, each pair above scores √(L/l), each below −√(l/L), each on it 0; the scores are
  summed in the order of D_i = (y_i + x_i/b − a)/√(1 + 1/b²) (ties in read order); the line is
  linear when max|cusum| / √(L + 1) ≤ 1.36 (the Kolmogorov–Smirnov quantile at 5 %), as R mcr's
  ``calcCUSUM`` tests it.

Where conventions differ: R mcr (``mcreg(method.reg = "PaBa")``) counts every vertical pair as
+∞ (it assumes positive correlation), treats differences below 1e-12 relative as zero, and by
default averages the two middle slopes of an even N as angles (``slope.measure = "radian"``); its
large-data variant bins the angles. Here the paper: vertical pairs by the sign of y_i − y_j,
exact float arithmetic, and the mean of the two middle slopes themselves. The sign given to a
vertical pair does not change b or its limits (nor, so, the order the pairs were read in): a −∞
adds one slope below every other and one to K, a +∞ one slope above every other, and either way
the shifted ranks fall on the same finite slopes (−∞ and +∞ are one direction; the shift by K is
the median of the slopes' angles taken modulo π). Only a rank that lands on an infinite slope
itself, which needs more than half of the slopes below −1, could tell them apart. The slopes are
the IEEE quotients (y_i − y_j)/(x_i − x_j), compared exactly. mcr (and Roche's calanas, whose
results mcr's tests quote) takes the limits' ranks as quantiles like the median's, round(N ∓ C +
2K) on a doubled index with the mean of two slopes for an even one, where the paper rounds
(N − C)/2 and takes one slope: the estimates agree, the limits can differ by about a rank
(tests/test_passing_bablok_published.py).

Cost: pairs of whole numbers (glucose in whole mg/dL) in a box of values small against the
pairs (more than :data:`LATTICE_PAIRS_PER_CELL` pairs of pairs per cell) give their slopes as a
weighted multiset, exactly, from the autocorrelation of their count lattice
(:mod:`ranking_core.meter.comparison.slope_lattice`; 10,000 meter pairs, 5·10⁷ slopes, in
about 0.1 s). Otherwise every slope is computed, O(n²) time, in blocks of at most
``block_slopes`` values, so the memory stays O(block + n) however many pairs: 10,000 pairs
(5·10⁷ slopes) take two passes (a random sample of slopes brackets each wanted rank, one full
pass counts the slopes below each bracket and keeps those inside it, then an exact selection;
the randomised bracketing of order statistics as in Dillencourt, Mount & Netanyahu 1992 and
Matoušek 1991). The result is exact whatever the sample; a bracket that misses its rank is
widened and the pass repeated. Both ways give the same numbers, bit for bit
(tests/test_passing_bablok_lattice.py); a slope of 0 is +0.0 either way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtri

from ranking_core.meter.comparison.common import CONFIDENCE, check_pairs, json_number
from ranking_core.meter.comparison.slope_lattice import lattice_slopes

__all__ = [
    "CUSUM_CRITICAL",
    "CusumTest",
    "PassingBablok",
    "cusum_test",
    "passing_bablok",
    "slope_ranks",
]

CUSUM_CRITICAL = 1.36  # Kolmogorov–Smirnov quantile at α = 5 % (Passing & Bablok 1983)
BLOCK_SLOPES = 250_000  # slopes computed at once (2 MB per array: in cache, no page faults)
DIRECT_SLOPES = 4_000_000  # up to this many pairs of pairs: every slope held and partitioned
SAMPLE_SLOPES = 400_000  # random pairs that bracket the wanted ranks
BRACKET_SDS = 5.0  # a bracket's half-width in sampling SDs of a quantile (at most 1/(2√m))
LATTICE_PAIRS_PER_CELL = 4  # whole numbers with more pairs of pairs per box cell: the lattice
_SEED = 20_231_983  # the bracketing sample's seed (the result does not depend on it)


@dataclass(frozen=True)
class CusumTest:
    """The CUSUM test for linearity: ``statistic`` = max|cusum| / √(L + 1), ``critical`` 1.36,
    ``above`` (l) and ``below`` (L) the pairs above and below the line."""

    statistic: float
    critical: float
    linear: bool
    above: int
    below: int

    def to_dict(self) -> dict[str, object]:
        return {
            "statistic": json_number(self.statistic),
            "critical_value": self.critical,
            "linear": self.linear,
            "above": self.above,
            "below": self.below,
        }


@dataclass(frozen=True)
class PassingBablok:
    """Passing–Bablok fit y = intercept + slope·x (y: device, x: reference, in the pairs' unit)
    with its two-sided ``confidence`` limits; ``slopes`` is N, ``shift`` K."""

    slope: float
    slope_lower: float
    slope_upper: float
    intercept: float
    intercept_lower: float
    intercept_upper: float
    n: int
    slopes: int
    shift: int
    confidence: float
    linearity: CusumTest

    def to_dict(self) -> dict[str, object]:
        """The JSON of ``method_comparison.passing_bablok`` (undefined limits as null)."""
        out: dict[str, object] = {
            key: json_number(getattr(self, key))
            for key in (
                "slope",
                "slope_lower",
                "slope_upper",
                "intercept",
                "intercept_lower",
                "intercept_upper",
                "n",
                "slopes",
                "shift",
                "confidence",
            )
        }
        out["interval_method"] = "Passing-Bablok 1983 (ranks of the slopes)"
        out["linearity_cusum"] = self.linearity.to_dict()
        return out

    def tables(self, unit: str = "mg/dL") -> dict[str, pd.DataFrame]:
        """The estimates with their limits, and the linearity test, as a reader sees them."""
        level = f"{self.confidence:.0%}"
        estimates = pd.DataFrame(
            {
                "parameter": ["slope", f"intercept ({unit})"],
                "estimate": [round(self.slope, 4), round(self.intercept, 2)],
                f"{level} lower": [round(self.slope_lower, 4), round(self.intercept_lower, 2)],
                f"{level} upper": [round(self.slope_upper, 4), round(self.intercept_upper, 2)],
            }
        )
        test = self.linearity
        linearity = pd.DataFrame(
            {
                "pairs": [self.n],
                "above the line": [test.above],
                "below the line": [test.below],
                "max |cusum| / √(below + 1)": [round(test.statistic, 3)],
                "critical value (5 %)": [test.critical],
                "linear": ["yes" if test.linear else "no"],
            }
        )
        return {"Passing–Bablok regression": estimates, "Passing–Bablok linearity": linearity}


def _row_slopes(x: NDArray[np.float64], y: NDArray[np.float64], r0: int, r1: int) -> NDArray:
    """The kept slopes S_ij of rows r0 ≤ i < r1, every j > i (flattened, row by row)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        dx = x[r0:r1, None] - x[None, r0 + 1 :]
        dy = y[r0:r1, None] - y[None, r0 + 1 :]
        s = dy / dx  # x_i = x_j: ±∞ by the sign of y_i − y_j (dx is +0.0), 0/0: NaN
    upper = np.arange(dx.shape[1])[None, :] >= np.arange(r1 - r0)[:, None]  # j > i
    keep = upper & ~np.isnan(s) & (dy != -dx)
    return s[keep]


def _blocks(n: int, block_slopes: int) -> list[tuple[int, int]]:
    """Row ranges whose slope arrays hold at most about ``block_slopes`` cells."""
    out, r0 = [], 0
    while r0 < n - 1:
        rows = max(1, block_slopes // max(1, n - r0 - 1))
        out.append((r0, min(n - 1, r0 + rows)))
        r0 = out[-1][1]
    return out


def slope_ranks(n_slopes: int, shift: int, n: int, confidence: float) -> tuple[int, ...]:
    """1-based ranks (among the sorted kept slopes) of: the median's two middle slopes (one
    rank twice for odd N), the lower limit and the upper limit (shifted by K = ``shift``), for
    ``n`` pairs."""
    half = n_slopes // 2
    median = (half + 1 + shift,) * 2 if n_slopes % 2 else (half + shift, half + 1 + shift)
    c = float(ndtri(0.5 + confidence / 2)) * math.sqrt(n * (n - 1) * (2 * n + 5) / 18.0)
    m1 = math.floor((n_slopes - c) / 2.0 + 0.5)
    m2 = n_slopes - m1 + 1
    return (*median, m1 + shift, m2 + shift)


def _select_direct(x: NDArray, y: NDArray, block_slopes: int) -> tuple[int, int, NDArray]:
    """N, K and every kept slope (small problems)."""
    slopes = np.concatenate([_row_slopes(x, y, a, b) for a, b in _blocks(x.size, block_slopes)])
    return slopes.size, int(np.count_nonzero(slopes < -1.0)), slopes


def _bracket_pass(
    x: NDArray, y: NDArray, lo: float, hi: float, block_slopes: int
) -> tuple[int, int, int, NDArray]:
    """One pass over every slope: N, K, the slopes below ``lo`` and those in [lo, hi] (kept)."""
    total = below_minus_one = below = 0
    inside = []
    for a, b in _blocks(x.size, block_slopes):
        s = _row_slopes(x, y, a, b)
        total += s.size
        below_minus_one += int(np.count_nonzero(s < -1.0))
        low = s < lo
        below += int(np.count_nonzero(low))
        inside.append(s[~low & (s <= hi)])
    return total, below_minus_one, below, np.concatenate(inside)


def _sample_slopes(x: NDArray, y: NDArray, size: int) -> NDArray:
    rng = np.random.default_rng(_SEED)
    i = rng.integers(0, x.size, size)
    j = rng.integers(0, x.size, size)
    i, j = np.minimum(i, j), np.maximum(i, j)
    i, j = i[i != j], j[i != j]
    dx, dy = x[i] - x[j], y[i] - y[j]
    with np.errstate(divide="ignore", invalid="ignore"):
        s = dy / dx
    return np.sort(s[~np.isnan(s) & (dy != -dx)])


def _select_bracketed(
    x: NDArray, y: NDArray, confidence: float, block_slopes: int
) -> tuple[int, int, dict[int, float]]:
    """N, K and the slopes at the wanted ranks: a random sample of slopes brackets the ranks,
    one pass counts the slopes below the bracket and keeps those inside, a selection among
    those gives each rank exactly; a bracket that misses is widened and the pass repeated."""
    sample = _sample_slopes(x, y, SAMPLE_SLOPES)
    m = sample.size
    pairs = x.size * (x.size - 1) // 2
    est_n = max(1, round(pairs * m / SAMPLE_SLOPES))
    est_k = round(est_n * np.count_nonzero(sample < -1.0) / max(1, m))
    wanted = slope_ranks(est_n, est_k, x.size, confidence)
    quantiles = [min(max(r / est_n, 0.0), 1.0) for r in wanted]
    width = BRACKET_SDS / math.sqrt(max(m, 1))
    for _ in range(6):
        lo_q, hi_q = max(min(quantiles) - width, 0.0), min(max(quantiles) + width, 1.0)
        lo = -np.inf if lo_q == 0.0 or m == 0 else float(sample[int(lo_q * (m - 1))])
        hi = np.inf if hi_q == 1.0 or m == 0 else float(sample[math.ceil(hi_q * (m - 1))])
        total, shift, below, inside = _bracket_pass(x, y, lo, hi, block_slopes)
        ranks = [r for r in slope_ranks(total, shift, x.size, confidence) if 1 <= r <= total]
        positions = sorted({r - below for r in ranks})
        if all(1 <= p <= inside.size for p in positions):
            chosen = np.partition(inside, [p - 1 for p in positions]) if positions else inside
            return total, shift, {p + below: float(chosen[p - 1]) for p in positions}
        width = 4.0 * width + 1.0 / math.sqrt(max(m, 1))
    raise RuntimeError("Passing–Bablok: the slope brackets did not close (please report)")


def _slope_at(slopes: dict[int, float], sorted_or_none: NDArray | None, rank: int, n_slopes: int):
    if not 1 <= rank <= n_slopes:
        return math.nan
    if sorted_or_none is not None:
        return float(np.partition(sorted_or_none, rank - 1)[rank - 1])
    return slopes[rank]


def _ranked_slopes(
    x: NDArray, y: NDArray, confidence: float, block_slopes: int
) -> tuple[int, int, list[float]]:
    """N, K and the slopes at :func:`slope_ranks` (NaN outside 1 … N): from the count lattice
    when the pairs are whole numbers in a small box, else read pair by pair (held, or
    bracketed when there are many). A slope of 0 is +0.0 whichever way it was computed."""
    pairs = x.size * (x.size - 1) // 2
    lattice = None
    if pairs > LATTICE_PAIRS_PER_CELL * (np.ptp(x) + 1) * (np.ptp(y) + 1):
        lattice = lattice_slopes(x, y)
    if lattice is not None:
        total, shift = lattice.total, lattice.below_minus_one
        ranks = slope_ranks(total, shift, x.size, confidence) if total else ()
        return total, shift, [lattice.at_rank(r) + 0.0 for r in ranks]
    held: NDArray | None = None
    found: dict[int, float] = {}
    if pairs <= DIRECT_SLOPES:
        total, shift, held = _select_direct(x, y, block_slopes)
    else:
        total, shift, found = _select_bracketed(x, y, confidence, block_slopes)
    ranks = slope_ranks(total, shift, x.size, confidence) if total else ()
    return total, shift, [_slope_at(found, held, r, total) + 0.0 for r in ranks]


def passing_bablok(
    x: ArrayLike,
    y: ArrayLike,
    confidence: float = CONFIDENCE,
    *,
    block_slopes: int = BLOCK_SLOPES,
) -> PassingBablok:
    """Passing–Bablok regression of ``y`` (device) on ``x`` (reference), every pair read, with
    two-sided ``confidence`` limits (module docstring: the paper's definitions). Time O(n²),
    memory O(n + ``block_slopes``); for whole numbers in a box of A cells with more than
    4·A pairs of pairs, O(A log A + n log² n) and memory O(A + n) from the count lattice."""
    xs, ys = check_pairs(x, y)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence {confidence}: must lie between 0 and 1")
    total, shift, values = _ranked_slopes(xs, ys, confidence, block_slopes)
    if total == 0:
        raise ValueError("no two pairs differ: Passing–Bablok needs at least one slope")
    slope = 0.5 * (values[0] + values[1])
    lower, upper = values[-2], values[-1]
    intercept = float(np.median(ys - slope * xs)) if math.isfinite(slope) else math.nan
    a_low = float(np.median(ys - upper * xs)) if math.isfinite(upper) else math.nan
    a_high = float(np.median(ys - lower * xs)) if math.isfinite(lower) else math.nan
    return PassingBablok(
        slope=float(slope),
        slope_lower=float(lower),
        slope_upper=float(upper),
        intercept=intercept,
        intercept_lower=a_low,
        intercept_upper=a_high,
        n=int(xs.size),
        slopes=int(total),
        shift=int(shift),
        confidence=confidence,
        linearity=cusum_test(xs, ys, intercept, float(slope)),
    )


def cusum_test(x: ArrayLike, y: ArrayLike, intercept: float, slope: float) -> CusumTest:
    """Passing & Bablok's CUSUM test for linearity of the line y = intercept + slope·x (module
    docstring); not linear when the line is undefined (NaN) or its slope is 0."""
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if not (math.isfinite(intercept) and math.isfinite(slope)) or slope == 0.0:
        return CusumTest(math.nan, CUSUM_CRITICAL, False, 0, 0)
    residual = ys - (intercept + slope * xs)
    above, below = int(np.count_nonzero(residual > 0)), int(np.count_nonzero(residual < 0))
    score = np.zeros(xs.size)
    if above and below:
        score[residual > 0] = math.sqrt(below / above)
        score[residual < 0] = -math.sqrt(above / below)
    distance = (ys + xs / slope - intercept) / math.sqrt(1.0 + 1.0 / slope**2)
    cusum = np.cumsum(score[np.argsort(distance, kind="stable")])
    statistic = float(np.abs(cusum).max()) / math.sqrt(below + 1)
    return CusumTest(statistic, CUSUM_CRITICAL, statistic <= CUSUM_CRITICAL, above, below)
