"""One-sided lower confidence bounds of an agreement rate (the share of pairs within a limit), by
the methods the field uses side by side (the registry
:data:`~ranking_core.meter.standards.bound_methods.BOUNDS`); :func:`lower_bound` computes any of
them.

* ``cp`` — exact Clopper–Pearson: the (1 − confidence) quantile of Beta(k, n − k + 1), 0 when
  k = 0 (Clopper & Pearson, Biometrika 1934;26:404–413). Pairs are taken as independent.
* ``kg`` — Korn–Graubard: Clopper–Pearson on the effective sample size of a cluster sample,
  exactly as R ``survey::svyciprop(method = "beta")`` computes it (Korn & Graubard, Survey
  Methodology 1998;24:193–201; survey 4.5, ``R/svyttest.R``)::

      p̂ = Σ w y / Σ w,   v̂ = C/(C − 1) · Σ_c (Σ_{i∈c} w_i (y_i − p̂))² / (Σ w)²
      n* = p̂(1 − p̂)/v̂ · (t_{α/2, n − 1} / t_{α/2, C − 1})²
      lower = qbeta(α/2, n* p̂, n*(1 − p̂) + 1)

  with C clusters, n = Σ w pairs and a two-sided level 1 − α = 2·confidence − 1 (one-sided 95 %
  is the lower end of the two-sided 90 % interval). n* is not capped at n (the reference does
  not cap it either). Without a cluster column every pair is its own cluster (n* = n − 1).
* ``wilson-cc`` — the clustered continuity-corrected Wilson bound of Short et al., "A novel
  confidence interval for a single proportion in the presence of clustered binary outcome
  data", Stat Methods Med Res 2020;29(1):111–121, computed as the IfDTUlm reference
  implementation does (github IfDTUlm/CGM_Performance_Assessment, "Confidence Intervals",
  ``CI_WilsonCC``; Stephan et al., Diabetes Technol Ther 2022, doi:10.1089/dia.2022.0331): with
  per-cluster pairs m_c and hits x_c, M1 = Σ m, M2 = Σ m², the intra-class correlation
  ρ̂ = (BMS − WMS)/(BMS + (n₀ − 1) WMS) (ANOVA estimator, 1 when p̂ ∈ {0, 1}, 0 when negative),
  the variance inflation ξ = 1 + ρ̂ (M2 − M1)/M1 and, with z the one-sided normal quantile::

      lower = (2 M1 p̂ + ξ z² − 1 − √ξ z √(ξ z² − 2 − 1/M1 + 4 p̂ (M1 (1 − p̂) + 1)))
              / (2 (M1 + ξ z²))

  The bound is 0 when no pair is a hit (Newcombe's rule for the continuity-corrected Wilson
  interval, Stat Med 1998;17:857–872; the reference's formula gives a small positive number).
* ``bootstrap`` — the bias-corrected and accelerated (BCa) bootstrap over clusters (sensors):
  ``resamples`` resamples of the clusters with replacement, the rate in % of each, the bias
  correction z₀ = Φ⁻¹(share of resampled rates below the rate) and the jackknife acceleration
  a = Σ u³ / (6 (Σ u²)^{3/2}) over leave-one-cluster-out rates (DiCiccio & Efron, Stat Sci
  1996;11:189–228; as R ``bootstrap::bcanon`` and the IfDTUlm ``CI_Bootstrapping`` compute it);
  the bound is the Φ(z₀ + (z₀ + z_α)/(1 − a (z₀ + z_α))) quantile of the resampled rates
  (linear interpolation, R's type 7). At a rate of 0 or 100 % it is Clopper–Pearson, as in the
  reference. Seeded: the same seed gives the same bound (the reference's R and Python differ in
  the second decimal from their random numbers).

Weights are pairs per entry (a distinct pair occurring w times); every method treats an entry of
weight w as w pairs of its cluster.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ranking_core.meter.distributions import (
    beta_cdf,
    beta_quantile,
    normal_cdf,
    normal_quantile,
    t_quantile,
)
from ranking_core.meter.standards.bound_methods import BOUNDS, BoundMethod, default_bound

__all__ = [
    "BOUNDS",
    "MAX_RESAMPLES",
    "MIN_BOOTSTRAP_CLUSTERS",
    "BoundMethod",
    "BoundResult",
    "anova_icc",
    "default_bound",
    "equal_clusters_exceed",
    "lower_bound",
]

MIN_BOOTSTRAP_CLUSTERS = 5  # C(2C − 1, C) = 126 distinct resamples at 5 clusters
MAX_RESAMPLES = 1_000_000
_CHUNK_CELLS = 2_000_000  # resampled cluster indices held at once (16 MB)


@dataclass(frozen=True)
class BoundResult:
    """A lower bound: ``lower_percent`` in % (NaN when it cannot be computed: no pairs, or too
    few clusters for a bootstrap), the method's key, the clusters the pairs came in (each pair is
    its own cluster when no cluster column is given), the intra-class correlation the
    ``wilson-cc`` bound used (None for other methods) and a note ("" or one sentence on a
    fallback)."""

    lower_percent: float
    method: str
    clusters: int
    icc: float | None = None
    note: str = ""


def _clopper_pearson(k: float, n: float, confidence: float) -> float:
    """Share 0–1: the (1 − confidence) quantile of Beta(k, n − k + 1); 0 when k = 0."""
    if k <= 0:
        return 0.0
    return float(beta_quantile(1.0 - confidence, k, n - k + 1.0))


def _korn_graubard(
    y: NDArray[np.float64], m: NDArray[np.float64], n: float, confidence: float
) -> tuple[float, str]:
    """Share 0–1 from per-cluster hits ``y`` and pairs ``m`` (``n`` pairs in all)."""
    clusters = y.size
    k = float(y.sum())
    p = k / n
    if clusters < 2:
        return _clopper_pearson(k, n, confidence), (
            "one cluster: the clustered bound equals Clopper–Pearson"
        )
    if p in (0.0, 1.0):
        return _clopper_pearson(k, n, confidence), (
            f"every pair {'a hit' if p == 1 else 'a miss'}: no between-cluster variance, the "
            "bound is Clopper–Pearson"
        )
    variance = clusters / (clusters - 1) * float(((y - p * m) ** 2).sum()) / n**2
    if variance <= 0:
        return _clopper_pearson(k, n, confidence), (
            "no between-cluster variance: the bound is Clopper–Pearson"
        )
    alpha = 2.0 * (1.0 - confidence)  # two-sided level of the one-sided bound
    n_eff = _kg_effective_size(p, variance, n, clusters, confidence)
    return float(beta_quantile(alpha / 2, n_eff * p, n_eff * (1 - p) + 1.0)), ""


def _kg_effective_size(
    p: ArrayLike, variance: ArrayLike, n: ArrayLike, clusters: ArrayLike, confidence: float
) -> NDArray[np.float64]:
    """Korn–Graubard's n* = p̂(1 − p̂)/v̂ · (t_{α/2, n − 1} / t_{α/2, C − 1})² (elementwise)."""
    alpha = 2.0 * (1.0 - confidence)
    ratio = t_quantile(alpha / 2, np.asarray(n) - 1) / t_quantile(
        alpha / 2, np.asarray(clusters) - 1
    )
    return np.asarray(p) * (1 - np.asarray(p)) / np.asarray(variance) * ratio**2


def _wilson_cc(
    x: NDArray[np.float64], m: NDArray[np.float64], confidence: float, clustered: bool
) -> tuple[float, float, str]:
    """(share 0–1, ICC, note) from per-cluster hits ``x`` and pairs ``m``."""
    clusters = x.size
    m1, m2 = float(m.sum()), float((m**2).sum())
    p = float(x.sum()) / m1
    note = ""
    within_df = float((m - 1).sum())
    if not clustered:
        rho = 0.0
    elif p in (0.0, 1.0):
        rho = 1.0
    elif within_df <= 0:
        rho, note = 0.0, "one pair per cluster: no intra-class correlation, taken as 0"
    else:
        raw = float(_anova_icc(float(x.sum()), float((x**2 / m).sum()), m1, m2, clusters))
        if raw < 0:
            note = "negative intra-class correlation, set to 0 as in the reference"
        rho = max(raw, 0.0)
    if p == 0.0:
        return 0.0, rho, note
    return float(_wilson_lower(p, m1, m2, rho, confidence)), rho, note


def _anova_icc(
    total: ArrayLike, sq_over_m: ArrayLike, m1: ArrayLike, m2: ArrayLike, clusters: ArrayLike
) -> NDArray[np.float64]:
    """The ANOVA estimator ρ̂ = (BMS − WMS)/(BMS + (n₀ − 1) WMS) from the hits Σx, Σx²/m, the
    pairs M1 = Σm, M2 = Σm² and the clusters C (elementwise; negative values kept)."""
    total, sq, m1, m2, c = (
        np.asarray(v, dtype=np.float64) for v in (total, sq_over_m, m1, m2, clusters)
    )
    bms = (sq - total**2 / m1) / (c - 1)
    wms = (total - sq) / (m1 - c)
    n0 = (m1**2 - m2) / ((c - 1) * m1)
    return (bms - wms) / (bms + (n0 - 1) * wms)


def _wilson_lower(
    p: ArrayLike, m1: ArrayLike, m2: ArrayLike, rho: ArrayLike, confidence: float
) -> NDArray[np.float64]:
    """The clustered continuity-corrected Wilson lower bound, share 0–1 (elementwise; 0 when
    negative)."""
    p, m1, m2, rho = (np.asarray(v, dtype=np.float64) for v in (p, m1, m2, rho))
    xi = 1.0 + rho * (m2 - m1) / m1
    z = float(normal_quantile(confidence))
    root = xi * z**2 - 2.0 - 1.0 / m1 + 4.0 * p * (m1 * (1.0 - p) + 1.0)
    lower = (2 * m1 * p + xi * z**2 - 1 - np.sqrt(xi) * z * np.sqrt(np.maximum(root, 0.0))) / (
        2 * (m1 + xi * z**2)
    )
    return np.maximum(lower, 0.0)


def anova_icc(hit: ArrayLike, cluster: ArrayLike) -> float:
    """The intra-class correlation of the hits (0/1 per pair) within the clusters (whole-number
    codes ≥ 0 per pair), by the ANOVA estimator the ``wilson-cc`` bound uses (negative
    estimates set to 0). NaN where the pairs tell nothing of it: every pair or no pair a hit
    (the ``wilson-cc`` bound then takes 1, as its reference does), fewer than 2 clusters or one
    pair per cluster."""
    hits = np.asarray(hit, dtype=np.float64).ravel()
    codes = np.asarray(cluster, dtype=np.intp).ravel()
    m = np.bincount(codes, minlength=1).astype(np.float64)
    x = np.bincount(codes, weights=hits, minlength=1)[m > 0]
    m = m[m > 0]
    clusters = m.size
    if clusters < 2 or hits.size <= clusters:
        return float("nan")
    if x.sum() in (0.0, float(hits.size)):
        return float("nan")
    raw = _anova_icc(x.sum(), (x**2 / m).sum(), m.sum(), (m**2).sum(), clusters)
    return max(float(raw), 0.0)


def equal_clusters_exceed(
    method: str,
    hits: NDArray[np.int64],
    hits_squared: NDArray[np.int64],
    clusters: int,
    pairs: int,
    required: float,
    confidence: float = 0.95,
) -> NDArray[np.bool_]:
    """Whether the ``method`` lower bound exceeds ``required`` (share 0–1) for many samples at
    once, each of ``clusters`` clusters of ``pairs`` pairs, given per sample the hits Σx and Σx²
    over the clusters (integers, any shape). The same verdict as :func:`lower_bound` on each
    sample (``cp``, ``kg``, ``wilson-cc``), by comparing the bound's beta quantile through its
    distribution function (a quantile exceeds r exactly when the distribution at r is below the
    quantile's level)."""
    k = np.asarray(hits, dtype=np.float64)
    n = float(clusters * pairs)
    p = k / n
    level = 1.0 - confidence
    cp_shape = np.where(k > 0, k, 1.0)  # k = 0 bounds to 0: never exceeds
    out = (k > 0) & (beta_cdf(required, cp_shape, n - k + 1.0) < level)
    if method == "cp" or clusters < 2:
        return out
    if method == "kg":
        # Σ(x − p m)² = (C Σx² − (Σx)²)/C, exact in integers
        spread = clusters * np.asarray(hits_squared, dtype=np.int64) - np.asarray(hits) ** 2
        variance = clusters / (clusters - 1) * spread / clusters / n**2
        clustered = (spread > 0) & (k > 0) & (k < n)
        safe_p = np.where(clustered, p, 0.5)
        n_eff = _kg_effective_size(
            safe_p, np.where(clustered, variance, 1.0), n, clusters, confidence
        )
        kg = beta_cdf(required, n_eff * safe_p, n_eff * (1 - safe_p) + 1.0) < level
        return np.where(clustered, kg, out)
    if method == "wilson-cc":
        m1, m2 = n, float(clusters * pairs**2)
        if pairs < 2:
            rho = np.zeros_like(p)
        else:
            with np.errstate(invalid="ignore", divide="ignore"):  # all alike: 0/0, taken as 0
                raw = _anova_icc(k, np.asarray(hits_squared) / pairs, m1, m2, clusters)
            rho = np.where((k == 0) | (k == n), 1.0, np.maximum(np.nan_to_num(raw), 0.0))
        return (k > 0) & (_wilson_lower(p, m1, m2, rho, confidence) > required)
    raise ValueError(f"equal_clusters_exceed: no vectorised form of the {method!r} bound")


def _quantile_type7(values: NDArray[np.float64], q: float) -> float:
    """R's default quantile (linear interpolation between order statistics)."""
    return float(np.quantile(values, min(max(q, 0.0), 1.0)))


def _bootstrap(
    y: NDArray[np.float64],
    m: NDArray[np.float64],
    confidence: float,
    resamples: int,
    seed: int | None,
    absent: int = 0,
) -> float:
    """Rate in % from per-cluster hits ``y`` and pairs ``m``: the BCa lower bound. ``absent``
    more clusters of the study, without a pair here, are resampled too (adding nothing; a
    resample holding none of the clusters with pairs is dropped)."""
    with_pairs = y.size
    if absent:
        y, m = np.r_[y, np.zeros(absent)], np.r_[m, np.zeros(absent)]
    clusters = y.size
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_CELLS // clusters)
    rates = np.empty(resamples)
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        index = rng.integers(0, clusters, size=(rows, clusters))
        pairs = m[index].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            rates[start : start + rows] = 100.0 * y[index].sum(axis=1) / pairs
    rates = rates[np.isfinite(rates)]
    y, m = y[:with_pairs], m[:with_pairs]
    theta = 100.0 * float(y.sum()) / float(m.sum())
    # jackknife over the clusters with pairs: leave one out
    leave_out = 100.0 * (y.sum() - y) / (m.sum() - m)
    u = leave_out.mean() - leave_out
    spread = float((u**2).sum())
    accel = float((u**3).sum()) / (6.0 * spread**1.5) if spread > 0 else 0.0
    return _bca_quantile(rates, theta, accel, confidence)


def _bca_quantile(rates: NDArray[np.float64], theta: float, accel: float, conf: float) -> float:
    """The BCa lower quantile of the resampled ``rates`` around the estimate ``theta``."""
    z0 = float(normal_quantile(np.count_nonzero(rates < theta) / rates.size))
    z_alpha = float(normal_quantile(1.0 - conf))
    shifted = z0 + z_alpha
    level = float(normal_cdf(z0 + shifted / (1.0 - accel * shifted)))
    if not np.isfinite(level):
        level = 0.0 if z0 < 0 else 1.0
    return _quantile_type7(rates, level)


def _bootstrap_independent(
    k: float, n: int, confidence: float, resamples: int, seed: int | None
) -> float:
    """BCa over independent pairs: a resample of n pairs holds Binomial(n, k/n) hits (exact, no
    index matrix); the jackknife leaves one pair out."""
    rng = np.random.default_rng(seed)
    p = k / n
    rates = 100.0 * rng.binomial(n, p, size=resamples) / n
    theta = 100.0 * p
    # leave-one-out rates: (k − 1)/(n − 1) for the k hits, k/(n − 1) for the n − k misses
    hit_rate, miss_rate = 100.0 * (k - 1) / (n - 1), 100.0 * k / (n - 1)
    mean = (k * hit_rate + (n - k) * miss_rate) / n
    u_hit, u_miss = mean - hit_rate, mean - miss_rate
    spread = k * u_hit**2 + (n - k) * u_miss**2
    accel = (k * u_hit**3 + (n - k) * u_miss**3) / (6.0 * spread**1.5) if spread > 0 else 0.0
    return _bca_quantile(rates, theta, accel, confidence)


def _checked(
    hit: ArrayLike, cluster: ArrayLike | None, weight: ArrayLike | None
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.intp] | None]:
    """hits 0/1 and weights as floats, cluster codes 0..C−1 (entries of weight 0 dropped)."""
    hits = np.asarray(hit, dtype=np.float64).ravel()
    if not np.all((hits == 0) | (hits == 1)):
        raise ValueError("hit must hold 0/1 (or False/True) per pair")
    weights = np.ones(hits.size) if weight is None else np.asarray(weight, dtype=np.float64).ravel()
    if weights.size != hits.size:
        raise ValueError(f"weight has {weights.size} entries, hit has {hits.size}")
    if not np.all(np.isfinite(weights) & (weights >= 0) & (weights == np.round(weights))):
        raise ValueError("weight must be whole numbers of pairs, 0 or more")
    keep = weights > 0
    codes = None
    if cluster is not None:
        labels = np.asarray(cluster).ravel()
        if labels.size != hits.size:
            raise ValueError(f"cluster has {labels.size} entries, hit has {hits.size}")
        # codes in the labels' sorted order (the bootstrap's draws depend on it); labels that do
        # not sort together (text and numbers) in order of appearance; missing: a cluster
        series = pd.Series(labels[keep], dtype=object)
        try:
            codes = pd.factorize(series, sort=True, use_na_sentinel=False)[0]
        except TypeError:
            codes = pd.factorize(series, use_na_sentinel=False)[0]
    return hits[keep], weights[keep], codes


def lower_bound(
    method: str,
    hit: ArrayLike,
    cluster: ArrayLike | None = None,
    *,
    weight: ArrayLike | None = None,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int | None = 1,
    study_clusters: int | None = None,
) -> BoundResult:
    """The one-sided lower confidence bound, in %, of the share of hits among the pairs.

    Parameters
    ----------
    method : a key of :data:`BOUNDS` ("cp", "kg", "wilson-cc", "bootstrap").
    hit : per pair (or per entry with ``weight``), True/1 when the pair counts (within the
        limit).
    cluster : optional per-pair cluster label (sensor or subject); without it each pair is its
        own cluster (the pairs are independent).
    weight : optional pairs per entry (whole numbers ≥ 0).
    confidence : one-sided level, 0.5–1 (0.95: the 5 % quantile).
    resamples : bootstrap resamples (1 to :data:`MAX_RESAMPLES`).
    seed : bootstrap random seed (None: fresh randomness).
    study_clusters : bootstrap only: the clusters of the whole study, when some have no pair
        among these (a range they never read in). The reference implementation resamples every
        sensor of the study for each range, so the number of sensors a resample holds in the
        range varies; without it only the clusters given are resampled.

    ``ValueError`` names the argument and the rule on bad input. With no pair the bound is NaN.
    """
    if method not in BOUNDS:
        raise ValueError(f"unknown bound method {method!r}; choose one of {', '.join(BOUNDS)}")
    if not 0.5 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0.5 and 1, not {confidence}")
    if not 1 <= resamples <= MAX_RESAMPLES:
        raise ValueError(f"resamples must be between 1 and {MAX_RESAMPLES:,}, not {resamples}")
    hits, weights, codes = _checked(hit, cluster, weight)
    n = float(weights.sum())
    if n == 0:
        return BoundResult(float("nan"), method, 0, None, "no pairs: no bound")
    k = float((hits * weights).sum())
    y: NDArray[np.float64]
    m: NDArray[np.float64]
    if codes is None:
        clusters = int(n)
        y, m = hits * weights, weights  # entries; expanded below where it matters
    else:
        clusters = int(codes.max()) + 1
        y = np.bincount(codes, weights=hits * weights, minlength=clusters).astype(np.float64)
        m = np.bincount(codes, weights=weights, minlength=clusters).astype(np.float64)

    if method == "cp":
        return BoundResult(100.0 * _clopper_pearson(k, n, confidence), method, clusters)
    if codes is not None and clusters < 2 and method in ("kg", "wilson-cc"):
        return BoundResult(
            100.0 * _clopper_pearson(k, n, confidence),
            method,
            clusters,
            None,
            "one cluster: the clustered bound equals Clopper–Pearson",
        )
    if method == "kg":
        if codes is None:  # each pair its own cluster: hits and misses as single pairs
            y = np.repeat([1.0, 0.0], [int(k), int(n - k)])
            m = np.ones(y.size)
        share, note = _korn_graubard(y, m, n, confidence)
        return BoundResult(100.0 * share, method, clusters, None, note)
    if method == "wilson-cc":
        if codes is None:
            y, m = np.array([k]), np.array([n])  # ρ = 0: the ordinary Wilson bound
        share, rho, note = _wilson_cc(y, m, confidence, clustered=codes is not None)
        if codes is None:
            rho = 0.0
        return BoundResult(100.0 * share, method, clusters, rho, note)
    # bootstrap
    if k in (0.0, n):
        return BoundResult(
            100.0 * _clopper_pearson(k, n, confidence),
            method,
            clusters,
            None,
            f"rate {100.0 * k / n:g} %: no bootstrap spread, the bound is Clopper–Pearson "
            "(as in the reference)",
        )
    if clusters < MIN_BOOTSTRAP_CLUSTERS:
        return BoundResult(
            float("nan"),
            method,
            clusters,
            None,
            f"too few clusters ({clusters}) for a bootstrap over sensors; at least "
            f"{MIN_BOOTSTRAP_CLUSTERS} needed",
        )
    if codes is None:
        value = _bootstrap_independent(k, int(n), confidence, resamples, seed)
    else:
        absent = 0 if study_clusters is None else study_clusters - clusters
        if absent < 0:
            raise ValueError(
                f"study_clusters ({study_clusters}) is fewer than the clusters with pairs "
                f"({clusters})"
            )
        value = _bootstrap(y, m, confidence, resamples, seed, absent)
    return BoundResult(value, method, clusters)
