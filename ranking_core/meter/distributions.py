"""The distribution functions of the report's intervals, without importing ``scipy.stats``.

``scipy.stats`` costs about 0.5 s at every start of a command (measured on the 2-core machine,
``python -X importtime``), more than the whole report of 10,000 pairs once the pairs are read.
Its distributions compute their quantiles with ``scipy.special``'s functions after checking
their arguments; this module calls the same functions with the same checks, so each value is
the one ``scipy.stats`` gives (tests/test_meter_distributions.py compares them over grids of
arguments, edge values included):

* Student's t quantile ``t.ppf(q, df)``: ``stdtrit(df, q)``;
* the normal quantile and distribution ``norm.ppf`` / ``norm.cdf``: ``ndtri`` / ``ndtr``;
* the beta quantile and distribution ``beta.ppf(q, a, b)`` / ``beta.cdf(x, a, b)``:
  ``betaincinv(a, b, q)`` (Boost's inverse of the incomplete beta function, as ``beta.ppf``'s
  own) / ``betainc(a, b, x)``;
* the binomial quantile ``binom.ppf(q, n, p)``: the smallest k with P(X ≤ k) ≥ q, stepped from
  the normal approximation with ``bdtr`` (the definition; equal to ``binom.ppf`` for every n
  up to 300,000 at the report's q and p, checked);
* the percentile bootstrap of a mean (``scipy.stats.bootstrap(..., method="percentile")``): the
  same resamples drawn in the same order from the same generator, their means, and the
  quantiles of Hyndman & Fan's type 7 as ``scipy.stats.quantile`` computes them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import bdtr, betainc, betaincinv, ndtr, ndtri, stdtrit

__all__ = [
    "beta_cdf",
    "beta_quantile",
    "binomial_quantile",
    "normal_cdf",
    "normal_quantile",
    "percentile_bootstrap_mean",
    "t_quantile",
]


def _floats(value: ArrayLike) -> NDArray[np.float64]:
    return np.asarray(value, dtype=np.float64)


def _quantile(
    q: NDArray[np.float64],
    shapes: tuple[NDArray[np.float64], ...],
    support: tuple[float, float],
    inside: NDArray[np.float64],
) -> Any:
    """``scipy.stats``' continuous ``ppf`` around its ``_ppf`` values ``inside``: NaN where a
    shape is not positive or q is outside [0, 1], the support's ends at q = 0 and 1; the
    values ``inside`` plus 0.0 (its ``x·scale + loc``, which turns −0.0 into 0.0). A scalar
    for scalar arguments, as scipy gives."""
    valid = np.ones(np.broadcast(q, *shapes).shape, dtype=bool)
    for shape in shapes:
        valid &= shape > 0
    with np.errstate(invalid="ignore"):
        out = np.where(valid & (q > 0) & (q < 1), inside + 0.0, np.nan)
    out = np.where(valid & (q == 0), support[0], out)
    return np.where(valid & (q == 1), support[1], out)[()]


def t_quantile(q: ArrayLike, df: ArrayLike) -> Any:
    """Student's t quantile at ``q`` with ``df`` degrees of freedom (``scipy.stats.t.ppf``)."""
    q, df = _floats(q), _floats(df)
    with np.errstate(invalid="ignore"):
        inside = np.asarray(stdtrit(df, q), dtype=np.float64)
    return _quantile(q, (df,), (-math.inf, math.inf), inside)


def normal_quantile(q: ArrayLike) -> Any:
    """The standard normal quantile at ``q`` (``scipy.stats.norm.ppf``)."""
    q = _floats(q)
    return _quantile(q, (), (-math.inf, math.inf), np.asarray(ndtri(q), dtype=np.float64))


def normal_cdf(x: ArrayLike) -> Any:
    """The standard normal distribution function at ``x`` (``scipy.stats.norm.cdf``)."""
    return np.asarray(ndtr(_floats(x)), dtype=np.float64)[()]


def beta_quantile(q: ArrayLike, a: ArrayLike, b: ArrayLike) -> Any:
    """The Beta(a, b) quantile at ``q`` (``scipy.stats.beta.ppf``)."""
    q, a, b = _floats(q), _floats(a), _floats(b)
    with np.errstate(invalid="ignore"):
        inside = np.asarray(betaincinv(a, b, q), dtype=np.float64)
    return _quantile(q, (a, b), (0.0, 1.0), inside)


def beta_cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike) -> Any:
    """The Beta(a, b) distribution function at ``x`` (``scipy.stats.beta.cdf``): 0 below the
    support, 1 above it, NaN where a or b is not positive or x is NaN."""
    x, a, b = _floats(x), _floats(a), _floats(b)
    valid = (a > 0) & (b > 0)
    with np.errstate(invalid="ignore"):
        inside = betainc(a, b, np.clip(x, 0.0, 1.0))
    out = np.where(valid & (x > 0) & (x < 1), inside, 0.0)
    out = np.where(valid & (x >= 1), 1.0, out)
    return np.where(~valid | np.isnan(x), np.nan, out)[()]


def binomial_quantile(q: float, n: int, p: float) -> int:
    """The smallest k with P(X ≤ k) ≥ ``q`` for X ~ Binomial(``n``, ``p``), 0 < q < 1, n ≥ 0,
    0 ≤ p ≤ 1 (``scipy.stats.binom.ppf``, whose q = 0 and 1 ends the report never asks);
    ValueError otherwise."""
    if not (0.0 < q < 1.0 and n >= 0 and 0.0 <= p <= 1.0):
        raise ValueError(f"binomial quantile: need 0 < q < 1, n ≥ 0, 0 ≤ p ≤ 1; got {q}, {n}, {p}")
    count = np.int64(n)
    guess = n * p + float(ndtri(q)) * math.sqrt(n * p * (1.0 - p))
    k = float(min(max(math.floor(guess), 0), n))
    while k > 0 and bdtr(k - 1.0, count, p) >= q:
        k -= 1.0
    while bdtr(k, count, p) < q:
        k += 1.0
    return int(k)


def _type7(sorted_values: NDArray[np.float64], levels: NDArray[np.float64]) -> NDArray[np.float64]:
    """Hyndman & Fan's type-7 quantiles of sorted values, as ``scipy.stats.quantile`` computes
    them: j + 1 = ⌊p·n + 1 − p⌋, g its fraction, (1 − g)·y_j + g·y_(j+1)."""
    n = float(sorted_values.size)
    position = levels * n + (1 - levels)
    above = position // 1
    below = above - 1
    fraction = np.where(below < 0, 0.0, position % 1)
    below = np.clip(below, 0.0, n - 1).astype(np.int64)
    above = np.clip(above, 0.0, n - 1).astype(np.int64)
    return (1 - fraction) * sorted_values[below] + fraction * sorted_values[above]


def percentile_bootstrap_mean(
    sample: NDArray[np.float64],
    confidence: float,
    resamples: int,
    batch: int,
    rng: np.random.Generator,
) -> tuple[float, float]:
    """The percentile bootstrap interval (lower, upper) of the mean of ``sample`` (at least two
    values): ``resamples`` resamples with replacement drawn ``batch`` at a time as
    ``rng.integers(0, n, (batch, n))`` (the batches draw the same integers in the same order as
    one call would), the (1 − confidence)/2 and (1 + confidence)/2 type-7 quantiles of their
    means: ``scipy.stats.bootstrap((sample,), np.mean, method="percentile", ...)``."""
    n = sample.size
    means = [
        np.mean(sample[rng.integers(0, n, (min(batch, resamples - start), n))], axis=-1)
        for start in range(0, resamples, batch)
    ]
    alpha = (1 - confidence) / 2
    levels = np.array([alpha, 1 - alpha])
    low, high = _type7(np.sort(np.concatenate(means)), levels)
    return float(low), float(high)
