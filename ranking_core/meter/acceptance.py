"""Acceptance profiles: the accuracy criteria a regulator or a standard sets for glucose monitors,
one registry beside the grids (:mod:`ranking_core.grids.registry`).

* ``iso15197`` — ISO 15197:2013 §6.3 (blood glucose meters): at least 95 % of results within
  ±15 mg/dL of the reference below 100 mg/dL and ±15 % from 100 mg/dL on, and at least 99 % in
  zones A and B of the Parkes (consensus) error grid. The standard's rule: the observed share
  reaches the required share.
* ``icgm`` — the FDA special controls for integrated continuous glucose monitors, 21 CFR
  862.1355(b)(1)(ii): A–G, shares within ±15, ±40 and ±20 mg/dL or % by the iCGM's own reading
  (< 70, 70–180, > 180 mg/dL), each passing when its one-sided 95 % lower confidence bound
  exceeds the required share; H (when the iCGM reads < 70 mg/dL, no reference above
  180 mg/dL) and I (when the iCGM reads > 250 mg/dL, no reference below 70 mg/dL); J and K,
  rate-of-change agreement (fewer than 1 % of iCGM rates of change above +1 mg/dL/min when the
  reference falls faster than 2 mg/dL/min, and below −1 mg/dL/min when it rises faster than
  2 mg/dL/min), computed only when the pairs carry their times (``riskgrid pair`` output).

Bounds. A share k/n carries the exact one-sided 95 % Clopper–Pearson lower bound, the 5 %
quantile of Beta(k, n − k + 1) (Clopper & Pearson, Biometrika 1934;26:404–413; 0 when k = 0;
equal to the lower end of ``statsmodels`` ``proportion_confint(k, n, 0.10, "beta")``). When the
pairs come in clusters (a ``subject`` or ``sensor`` column: several pairs per person or sensor
are not independent), the bound is Clopper–Pearson on the Korn–Graubard effective sample size
n* = p̂(1 − p̂)/v̂, where v̂ is the between-cluster (ratio-estimator) variance of p̂; n* ≤ n
(Korn & Graubard, Survey Methodology 1998;24:193–201). Percentages are of the pairs in each
criterion's scope; every pair counts with its weight.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.stats import beta

from ranking_core.grids.registry import get_grid
from ranking_core.meter.statistics import within

__all__ = [
    "ACCEPTANCE_COLUMNS",
    "BOUND_METHODS",
    "RATE_GAP_MINUTES",
    "AcceptanceData",
    "AcceptanceProfile",
    "Criterion",
    "UnknownProfileError",
    "acceptance_table",
    "clopper_pearson_lower",
    "get_profile",
    "profile_names",
    "profiles",
]

CONFIDENCE = 0.95
RATE_GAP_MINUTES = 15.0  # consecutive references at most this far apart give a rate of change
BOUND_METHODS = {
    "clopper-pearson": "exact one-sided 95 % Clopper–Pearson",
    "korn-graubard": "one-sided 95 % Clopper–Pearson on the Korn–Graubard effective sample size "
    "(clusters: {cluster})",
}
ACCEPTANCE_COLUMNS = (
    "profile",
    "id",
    "criterion",
    "count",
    "n",
    "percent",
    "lower_bound_percent",
    "required_percent",
    "rule",
    "passes",
)
# how a criterion's verdict is reached (the words the report prints)
RULES = {
    "share": "observed share ≥ required",
    "lower-bound": "95 % lower bound > required",
    "none": "no pair allowed",
    "below": "observed share < required",
}


class UnknownProfileError(ValueError):
    """No acceptance profile of that name; the message lists the registered names."""


@dataclass(frozen=True)
class AcceptanceData:
    """What the criteria read, one entry per pair (or per distinct pair with its weight).

    Attributes
    ----------
    ref, bgm : reference and meter / sensor glucose in mg/dL.
    weight : pairs at each entry (1 each by default).
    cluster : optional cluster code per entry (subject or sensor), for the bounds.
    cluster_name : the column the clusters come from ("subject" or "sensor").
    ref_rate, sensor_rate : optional rates of change in mg/dL/min (NaN where none), from
        :func:`rates_of_change`.
    parkes_type : diabetes type of the Parkes grid (ISO criterion 2).
    """

    ref: NDArray[np.float64]
    bgm: NDArray[np.float64]
    weight: NDArray[np.int64] | None = None
    cluster: NDArray[np.intp] | None = None
    cluster_name: str = ""
    ref_rate: NDArray[np.float64] | None = None
    sensor_rate: NDArray[np.float64] | None = None
    parkes_type: int = 1

    @property
    def weights(self) -> NDArray[np.int64]:
        return (
            np.ones(self.ref.size, dtype=np.int64)
            if self.weight is None
            else np.asarray(self.weight, dtype=np.int64)
        )


@dataclass(frozen=True)
class Criterion:
    """One acceptance criterion.

    ``select(data)`` gives (scope, hit): the pairs the criterion is over and, among them, those
    it counts (within the limit; for ``rule="none"`` and ``"below"``, the errors). ``rule`` is a
    key of :data:`RULES`; ``needs`` names data the criterion cannot do without ("rates").
    """

    id: str
    label: str
    required_percent: float
    rule: str
    select: Callable[[AcceptanceData], tuple[NDArray[np.bool_], NDArray[np.bool_]]] = field(
        repr=False
    )
    needs: str = ""


@dataclass(frozen=True)
class AcceptanceProfile:
    """A named set of criteria with its source."""

    name: str
    title: str
    citation: str
    criteria: tuple[Criterion, ...]


def clopper_pearson_lower(
    count: ArrayLike, n: ArrayLike, confidence: float = CONFIDENCE
) -> NDArray[np.float64]:
    """Exact one-sided lower confidence bound of count / n, as a share 0–1: the (1 − confidence)
    quantile of Beta(count, n − count + 1); 0 when count = 0, NaN when n = 0. Non-integer
    ``count`` and ``n`` (an effective sample size) are allowed."""
    k = np.asarray(count, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        bound = beta.ppf(1.0 - confidence, k, n - k + 1.0)
    bound = np.where(k <= 0, 0.0, bound)
    return np.where(n <= 0, np.nan, bound)


def _effective_n(
    hit: NDArray[np.float64], scope_weight: NDArray[np.float64], cluster: NDArray[np.intp]
) -> float:
    """Korn–Graubard effective sample size of the share Σhit/Σweight over clusters: n* =
    p̂(1 − p̂)/v̂ with v̂ = C/(C − 1) · Σ_c (y_c − p̂ m_c)² / m², capped at n (no gain from
    clustering); n when p̂ is 0 or 1 or there is one cluster."""
    n = float(scope_weight.sum())
    p = float(hit.sum()) / n
    codes, inverse = np.unique(cluster, return_inverse=True)
    clusters = codes.size
    if clusters < 2 or p in (0.0, 1.0):
        return n
    y = np.bincount(inverse, weights=hit, minlength=clusters)
    m = np.bincount(inverse, weights=scope_weight, minlength=clusters)
    variance = clusters / (clusters - 1) * float(((y - p * m) ** 2).sum()) / n**2
    return n if variance <= 0 else min(n, p * (1 - p) / variance)


def _row(profile: str, criterion: Criterion, data: AcceptanceData) -> dict:
    scope, hit = criterion.select(data)
    weights = data.weights
    n = int(weights[scope].sum())
    count = int(weights[scope & hit].sum())
    percent = 100.0 * count / n if n else np.nan
    lower = np.nan
    if criterion.rule in ("share", "lower-bound") and n:
        n_eff = float(n)
        if data.cluster is not None:
            n_eff = _effective_n(
                (weights * hit)[scope].astype(np.float64),
                weights[scope].astype(np.float64),
                data.cluster[scope],
            )
        lower = 100.0 * float(clopper_pearson_lower(count / n * n_eff, n_eff))
    if not n:
        passes = None  # nothing to judge: no verdict
    elif criterion.rule == "share":
        passes = percent >= criterion.required_percent
    elif criterion.rule == "lower-bound":
        passes = lower > criterion.required_percent
    elif criterion.rule == "none":
        passes = count == 0
    else:
        passes = percent < criterion.required_percent
    return {
        "profile": profile,
        "id": criterion.id,
        "criterion": criterion.label,
        "count": count,
        "n": n,
        "percent": percent,
        "lower_bound_percent": lower,
        "required_percent": criterion.required_percent,
        "rule": RULES[criterion.rule],
        "passes": passes,
    }


def acceptance_table(
    data: AcceptanceData, names: tuple[str, ...] | list[str]
) -> tuple[pd.DataFrame, list[str]]:
    """Every criterion of the named profiles over ``data``: one row each with the columns of
    :data:`ACCEPTANCE_COLUMNS`, and notes on what was left out (J/K without times) and on the
    bound's method. ``passes`` is None where no pair is in a criterion's scope."""
    rows, notes = [], []
    for name in names:
        profile = get_profile(name)
        for criterion in profile.criteria:
            if criterion.needs == "rates" and data.ref_rate is None:
                notes.append(
                    f"{profile.title} {criterion.id}: left out (rate-of-change "
                    "agreement needs reference_time and sensor_time columns, as "
                    "written by riskgrid pair)"
                )
                continue
            rows.append(_row(profile.name, criterion, data))
    method = (
        BOUND_METHODS["korn-graubard"].format(cluster=data.cluster_name)
        if data.cluster is not None
        else BOUND_METHODS["clopper-pearson"]
    )
    if rows:
        notes.append(f"Lower bounds: {method}.")
    frame = pd.DataFrame(rows, columns=list(ACCEPTANCE_COLUMNS))
    frame["passes"] = frame["passes"].astype(object)
    return frame, notes


def rates_of_change(
    ref: NDArray[np.float64],
    bgm: NDArray[np.float64],
    reference_time: NDArray[np.datetime64],
    sensor_time: NDArray[np.datetime64],
    cluster: NDArray[np.intp] | None = None,
    max_gap_minutes: float = RATE_GAP_MINUTES,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Rates of change in mg/dL/min of the reference and of the sensor at each pair, from the
    previous pair of the same cluster in reference-time order when its reference is at most
    ``max_gap_minutes`` earlier: ΔREF/Δt_reference and ΔBGM/Δt_sensor; NaN for the first pair of
    a run, larger gaps, and pairs whose sensor times do not advance."""
    n = ref.size
    group = np.zeros(n, dtype=np.intp) if cluster is None else np.asarray(cluster)
    t_ref = reference_time.astype("datetime64[ns]").astype(np.int64) / 6e10  # minutes
    t_sen = sensor_time.astype("datetime64[ns]").astype(np.int64) / 6e10
    order = np.lexsort((t_ref, group))
    ref_rate = np.full(n, np.nan)
    sensor_rate = np.full(n, np.nan)
    if n < 2:
        return ref_rate, sensor_rate
    now, before = order[1:], order[:-1]
    gap = t_ref[now] - t_ref[before]
    sensor_gap = t_sen[now] - t_sen[before]
    ok = (group[now] == group[before]) & (gap > 0) & (gap <= max_gap_minutes) & (sensor_gap > 0)
    ref_rate[now[ok]] = (ref[now[ok]] - ref[before[ok]]) / gap[ok]
    sensor_rate[now[ok]] = (bgm[now[ok]] - bgm[before[ok]]) / sensor_gap[ok]
    return ref_rate, sensor_rate


# --- the profiles -----------------------------------------------------------------------------


def _iso_within(d: AcceptanceData) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    return np.ones(d.ref.size, dtype=bool), within(d.ref, d.bgm, 15.0)


def _iso_parkes(d: AcceptanceData) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    zone = get_grid(f"parkes-type{d.parkes_type}").zone_index(d.ref, d.bgm)
    return np.ones(d.ref.size, dtype=bool), zone <= 1


# the iCGM ranges, by the iCGM's own reading (mg/dL)
_ICGM_RANGES: dict[str, Callable[[NDArray[np.float64]], NDArray[np.bool_]]] = {
    "< 70": lambda bgm: bgm < 70,
    "70–180": lambda bgm: (bgm >= 70) & (bgm <= 180),
    "> 180": lambda bgm: bgm > 180,
    "all": lambda bgm: np.ones(bgm.size, dtype=bool),
}


def _icgm(
    reading: str, limit: float, relative: bool
) -> Callable[[AcceptanceData], tuple[NDArray[np.bool_], NDArray[np.bool_]]]:
    """Pairs whose iCGM reading is in the range ``reading``, and those within ``limit`` mg/dL of
    the reference (or ``limit`` % of it when ``relative``; compared as 100·|BGM − REF| ≤
    limit·REF, exact for whole mg/dL)."""

    def select(d: AcceptanceData) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        gap = np.abs(d.bgm - d.ref)
        hit = 100.0 * gap <= limit * d.ref if relative else gap <= limit
        return _ICGM_RANGES[reading](d.bgm), hit

    return select


ISO15197 = AcceptanceProfile(
    name="iso15197",
    title="ISO 15197:2013",
    citation="ISO 15197:2013, In vitro diagnostic test systems — Requirements for blood-glucose "
    "monitoring systems for self-testing in managing diabetes mellitus, §6.3",
    criteria=(
        Criterion(
            "1",
            "within ±15 mg/dL (REF < 100 mg/dL) or ±15 % (REF ≥ 100 mg/dL)",
            95.0,
            "share",
            _iso_within,
        ),
        Criterion("2", "in Parkes error grid zones A and B", 99.0, "share", _iso_parkes),
    ),
)
ICGM = AcceptanceProfile(
    name="icgm",
    title="FDA iCGM",
    citation="21 CFR 862.1355(b)(1)(ii), integrated continuous glucose monitoring system "
    "(iCGM) special controls; ranges by the iCGM reading, limits around the reference",
    criteria=(
        Criterion(
            "A", "iCGM < 70 mg/dL: within ±15 mg/dL", 85.0, "lower-bound", _icgm("< 70", 15, False)
        ),
        Criterion(
            "B", "iCGM 70–180 mg/dL: within ±15 %", 70.0, "lower-bound", _icgm("70–180", 15, True)
        ),
        Criterion(
            "C", "iCGM > 180 mg/dL: within ±15 %", 80.0, "lower-bound", _icgm("> 180", 15, True)
        ),
        Criterion(
            "D", "iCGM < 70 mg/dL: within ±40 mg/dL", 98.0, "lower-bound", _icgm("< 70", 40, False)
        ),
        Criterion(
            "E", "iCGM 70–180 mg/dL: within ±40 %", 99.0, "lower-bound", _icgm("70–180", 40, True)
        ),
        Criterion(
            "F", "iCGM > 180 mg/dL: within ±40 %", 99.0, "lower-bound", _icgm("> 180", 40, True)
        ),
        Criterion(
            "G", "all iCGM readings: within ±20 %", 87.0, "lower-bound", _icgm("all", 20, True)
        ),
        Criterion(
            "H",
            "iCGM < 70 mg/dL: reference > 180 mg/dL",
            0.0,
            "none",
            lambda d: (d.bgm < 70, d.ref > 180),
        ),
        Criterion(
            "I",
            "iCGM > 250 mg/dL: reference < 70 mg/dL",
            0.0,
            "none",
            lambda d: (d.bgm > 250, d.ref < 70),
        ),
        Criterion(
            "J",
            "reference falling > 2 mg/dL/min: iCGM rising > 1 mg/dL/min",
            1.0,
            "below",
            lambda d: (d.ref_rate < -2, d.sensor_rate > 1),
            needs="rates",
        ),
        Criterion(
            "K",
            "reference rising > 2 mg/dL/min: iCGM falling > 1 mg/dL/min",
            1.0,
            "below",
            lambda d: (d.ref_rate > 2, d.sensor_rate < -1),
            needs="rates",
        ),
    ),
)
_PROFILES = {p.name: p for p in (ISO15197, ICGM)}


def profiles() -> tuple[AcceptanceProfile, ...]:
    """Every registered acceptance profile, in order."""
    return tuple(_PROFILES.values())


def profile_names() -> tuple[str, ...]:
    """Names of the registered profiles ("iso15197", "icgm")."""
    return tuple(_PROFILES)


def get_profile(name: str) -> AcceptanceProfile:
    """The profile registered under ``name``; :class:`UnknownProfileError` lists the choices."""
    if name not in _PROFILES:
        raise UnknownProfileError(
            f"unknown acceptance profile {name!r}; choose one of {', '.join(_PROFILES)} or all"
        )
    return _PROFILES[name]
