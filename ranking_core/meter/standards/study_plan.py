"""Planning an accuracy study: the probability that a device passes a standard's criteria, given
how many sensors take part, how many pairs each gives, the agreement the device is expected to
reach, and how strongly the pairs of one sensor agree with each other.

The model, stated once:

* Each criterion is judged over its own sample of S sensors × M pairs (the pairs in its range).
* A pair counts for the criterion (within its limit; for the criteria that allow no error or at
  most a share of errors, *free of the error*) with probability p_s for sensor s; p_s is drawn
  from Beta(a, b) with mean p (the ``--agreement``) and intra-class correlation R = 1/(a + b + 1)
  (``--icc``). R = 0: every pair independently with probability p, the count Binomial(S·M, p).
* The verdict is the standard's own rule on the count
(:mod:`ranking_core.meter.standards.acceptance`):
  lower bound > required (by the chosen bound method), share ≥ required, no error, or at most the
  required share of errors.
* All criteria together: the product of their probabilities (the samples independent).

Exact where a closed form exists (R = 0 and a verdict that depends on the count alone:
Clopper–Pearson or the observed share; the binomial distribution is summed over the counts that
pass); simulated otherwise (seeded; ``simulations`` draws of the S sensor counts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

from ranking_core.meter.standards.bounds import lower_bound
from ranking_core.meter.standards.registry import Criterion, get_profile

__all__ = [
    "MAX_PAIRS",
    "MAX_SENSORS",
    "PLAN_BOUNDS",
    "CriterionPlan",
    "StudyPlan",
    "pass_probability",
    "plan",
]

MAX_SENSORS = 5_000
MAX_PAIRS = 10_000  # per sensor
MAX_TOTAL = 2_000_000  # pairs per criterion
SIMULATIONS = 4_000
# the bound methods a plan simulates (the bootstrap's 10,000 resamples per draw are too costly)
PLAN_BOUNDS = ("cp", "kg", "wilson-cc")


@dataclass(frozen=True)
class CriterionPlan:
    id: str
    label: str
    agreement: float
    probability_pass: float
    method: str  # "exact" or "simulated (N draws)"


@dataclass(frozen=True)
class StudyPlan:
    profile: str
    sensors: int
    pairs_per_sensor: int
    icc: float
    bound: str
    criteria: tuple[CriterionPlan, ...]
    sensors_needed: int | None = None
    target: float | None = None

    @property
    def all(self) -> float:
        return float(np.prod([c.probability_pass for c in self.criteria]))

    def to_dict(self) -> dict:
        return {
            "profile": self.profile,
            "sensors": self.sensors,
            "pairs_per_sensor": self.pairs_per_sensor,
            "icc": self.icc,
            "bound": self.bound,
            "criteria": [
                {
                    "id": c.id,
                    "criterion": c.label,
                    "agreement": c.agreement,
                    "probability_pass": c.probability_pass,
                    "method": c.method,
                }
                for c in self.criteria
            ],
            "all": self.all,
            "target": self.target,
            "sensors_needed": self.sensors_needed,
            "model": "each criterion over S sensors x M pairs; a pair counts with probability "
            "p_s ~ Beta(mean = agreement, ICC = R); all = product over the criteria",
        }


def _passes(
    criterion: Criterion, count: np.ndarray, n: int, bound: str, per_sensor: np.ndarray | None
) -> np.ndarray:
    """The verdict for each enumerated or simulated count (``count`` pairs counted of ``n``;
    ``per_sensor``: the counts of each sensor, one row per draw, for the clustered bounds)."""
    need = criterion.required_percent
    if criterion.rule == "share":
        return 100.0 * count / n >= need
    if criterion.rule == "none":
        return count == n  # every pair free of the error
    if criterion.rule == "at-most":
        return 100.0 * (n - count) / n <= need
    assert per_sensor is not None  # a clustered bound: the sensors' counts are needed
    sensors = per_sensor.shape[1]
    pairs = n // sensors
    cluster = np.repeat(np.arange(sensors), 2)
    hit = np.tile([True, False], sensors)
    out = []
    for row in per_sensor:  # each sensor as two entries: its counted pairs and the others
        weight = np.column_stack([row, pairs - row]).ravel()
        out.append(lower_bound(bound, hit, cluster, weight=weight).lower_percent > need)
    return np.array(out)


def _cp_threshold(n: int, need: float) -> int:
    """Fewest counted pairs of ``n`` whose Clopper–Pearson lower bound exceeds ``need`` %
    (n + 1 when none does), by bisection on the monotone bound."""
    lo, hi = 0, n + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if mid <= n and lower_bound("cp", np.arange(n) < mid).lower_percent > need:
            hi = mid
        else:
            lo = mid + 1
    return lo


def pass_probability(
    criterion: Criterion,
    agreement: float,
    sensors: int,
    pairs: int,
    icc: float,
    bound: str = "cp",
    simulations: int = SIMULATIONS,
    seed: int = 1,
) -> tuple[float, str]:
    """P(the criterion passes) under the module's model, and how it was computed."""
    n = sensors * pairs
    count_only = criterion.rule != "lower-bound" or bound == "cp"
    if icc == 0 and count_only:
        if criterion.rule == "lower-bound":
            k = _cp_threshold(n, criterion.required_percent)
            return float(binom.sf(k - 1, n, agreement)), "exact"
        ks = np.arange(n + 1)
        passing = _passes(criterion, ks, n, bound, None)
        return float(binom.pmf(ks[passing], n, agreement).sum()), "exact"
    rng = np.random.default_rng(seed)
    draws = simulations if count_only else min(simulations, 1_000)
    if icc == 0:
        p_s = np.full((draws, sensors), agreement)
    else:
        scale = 1.0 / icc - 1.0
        p_s = rng.beta(agreement * scale, (1 - agreement) * scale, size=(draws, sensors))
    per_sensor = rng.binomial(pairs, p_s)
    count = per_sensor.sum(axis=1)
    if count_only and criterion.rule == "lower-bound":
        passing = count >= _cp_threshold(n, criterion.required_percent)
    else:
        passing = _passes(criterion, count, n, bound, per_sensor)
    return float(passing.mean()), f"simulated ({draws:,} draws)"


def plan(
    profile: str,
    sensors: int,
    pairs_per_sensor: int,
    agreement: dict[str, float],
    icc: float = 0.0,
    bound: str = "cp",
    target: float | None = None,
    seed: int = 1,
) -> StudyPlan:
    """The probability of passing each criterion named in ``agreement`` (id → expected share,
    0–1) and all of them, for ``sensors`` × ``pairs_per_sensor``; with ``target``, the fewest
    sensors (up to :data:`MAX_SENSORS`) whose probability of passing all reaches it.
    ``ValueError`` names the argument and the rule on bad input."""
    standard = get_profile(profile)
    criteria = {c.id: c for c in standard.criteria}
    unknown = [k for k in agreement if k not in criteria]
    if unknown:
        raise ValueError(
            f"--agreement: {', '.join(unknown)} is not a criterion of "
            f"{standard.title} (choose from {', '.join(criteria)})"
        )
    if not agreement:
        raise ValueError("--agreement: name at least one criterion, e.g. A=0.90")
    for key, value in agreement.items():
        if not 0 < value < 1:
            raise ValueError(
                f"--agreement {key}={value}: the expected share must be between 0 and 1 (exclusive)"
            )
    if not 1 <= sensors <= MAX_SENSORS:
        raise ValueError(f"--sensors: between 1 and {MAX_SENSORS:,}; got {sensors}")
    if not 1 <= pairs_per_sensor <= MAX_PAIRS:
        raise ValueError(f"--pairs-per-sensor: between 1 and {MAX_PAIRS:,}; got {pairs_per_sensor}")
    if sensors * pairs_per_sensor > MAX_TOTAL:
        raise ValueError(f"--sensors × --pairs-per-sensor: at most {MAX_TOTAL:,} pairs")
    if bound not in PLAN_BOUNDS:
        raise ValueError(f"--bound: choose one of {', '.join(PLAN_BOUNDS)}; got {bound!r}")
    if not 0 <= icc < 1:
        raise ValueError(f"--icc: between 0 and 1 (exclusive of 1); got {icc}")
    if target is not None and not 0 < target < 1:
        raise ValueError(f"--target: a probability between 0 and 1; got {target}")

    def at(s: int) -> tuple[CriterionPlan, ...]:
        return tuple(
            CriterionPlan(
                key,
                criteria[key].label,
                value,
                *pass_probability(criteria[key], value, s, pairs_per_sensor, icc, bound, seed=seed),
            )
            for key, value in agreement.items()
        )

    result = at(sensors)
    needed = None
    if target is not None:
        needed = _sensors_needed(at, target, pairs_per_sensor)
    return StudyPlan(profile, sensors, pairs_per_sensor, icc, bound, result, needed, target)


def _sensors_needed(
    at: Callable[[int], tuple[CriterionPlan, ...]], target: float, pairs: int
) -> int | None:
    """Fewest sensors whose probability of passing all reaches ``target``: doubling, then
    bisection (the probability grows with the sensors but for the count's discreteness, so the
    answer is checked at the sensors found and one fewer)."""
    limit = min(MAX_SENSORS, MAX_TOTAL // pairs)

    def ok(s: int) -> bool:
        return float(np.prod([c.probability_pass for c in at(s)])) >= target

    high = 1
    while high <= limit and not ok(high):
        high *= 2
    if high > limit:
        high = limit
        if not ok(high):
            return None
    low = high // 2 + 1 if high > 1 else 1
    while low < high:
        mid = (low + high) // 2
        if ok(mid):
            high = mid
        else:
            low = mid + 1
    return high
