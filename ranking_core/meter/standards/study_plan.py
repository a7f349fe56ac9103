"""Planning an accuracy study: the probability that a device passes a standard's criteria, each
and all together, given how many sensors take part, how many pairs each gives in every
criterion's range, the agreement the device is expected to reach, and how strongly the pairs of
one sensor agree with each other.

The model (:mod:`ranking_core.meter.standards.plan_simulation` states it in full):

* Sensor s has one quality, shared by every criterion: its agreement in criterion c is the
  quantile of that quality in Beta(a, b) with mean p_c (``--agreement``) and intra-class
  correlation R = 1/(a + b + 1) (``--icc``). R = 0: every pair independently with probability
  p_c.
* Each sensor gives M pairs in each criterion's range; criteria over the same range count the
  same pairs, nested where their rules nest (a pair within ±15 mg/dL is within ±40 mg/dL).
* The verdict is the standard's own rule on the count
  (:mod:`ranking_core.meter.standards.acceptance`): lower bound > required (by the bound method,
  by default the one ``meter-report`` judges clustered pairs by when R > 0:
  :func:`~ranking_core.meter.standards.bounds.default_bound`), share ≥ required, no error, or at
  most the required share of errors. All criteria pass together in one study.

Exact where a closed form exists: a criterion alone at R = 0 with a verdict on the count alone
(Clopper–Pearson or the observed share) sums the binomial distribution over the counts that pass;
all criteria together at R = 0 when no two count the same pairs is the product of those. Else
simulated jointly (seeded, :data:`SIMULATIONS` studies, common random numbers across study
sizes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd
from scipy.stats import binom

from ranking_core.meter.standards.bound_methods import BOUNDS, PLAN_BOUNDS, default_bound
from ranking_core.meter.standards.bounds import equal_clusters_exceed
from ranking_core.meter.standards.plan_simulation import JointSimulation
from ranking_core.meter.standards.registry import Criterion, get_profile


class JudgedReport(Protocol):
    """What a plan starts from: a report's acceptance table
    (:class:`ranking_core.meter.report.MeterReport` is one)."""

    @property
    def acceptance(self) -> pd.DataFrame: ...


__all__ = [
    "MAX_PAIRS",
    "MAX_SENSORS",
    "MODEL",
    "PLAN_BOUNDS",
    "CriterionPlan",
    "PlanStart",
    "StudyPlan",
    "cp_with_clusters_warning",
    "plan",
    "plan_start",
]

MAX_SENSORS = 5_000
MAX_PAIRS = 10_000  # per sensor
MAX_TOTAL = 2_000_000  # pairs per criterion
SIMULATIONS = 4_000
# the shares a plan takes: an observed 0 or 100 % starts just inside
START_SHARES = (0.001, 0.999)
_COUNTED_RULES = ("share", "lower-bound")  # the others count errors
MODEL = (
    "S sensors x M pairs in each criterion's range; a sensor's agreement in every criterion is "
    "the quantile of one shared sensor quality in Beta(mean = agreement, ICC = R); criteria over "
    "the same range count the same pairs, nested where their rules nest (within 15 inside "
    "within 40); all = every criterion passing in the same study"
)


@dataclass(frozen=True)
class CriterionPlan:
    id: str
    label: str
    agreement: float
    probability_pass: float
    method: str  # "exact" or "simulated (N studies)"


@dataclass(frozen=True)
class StudyPlan:
    """A plan: the settings (``bound`` the key judged, ``bound_default`` when it was not
    chosen), each criterion's probability of passing, all of them together (``all``, computed
    as ``all_method`` says), the sensors needed for ``target`` and ``notes`` (warnings, one
    sentence each)."""

    profile: str
    sensors: int
    pairs_per_sensor: int
    icc: float
    bound: str
    criteria: tuple[CriterionPlan, ...]
    all: float
    all_method: str
    sensors_needed: int | None = None
    target: float | None = None
    bound_default: bool = False
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {
            "profile": self.profile,
            "sensors": self.sensors,
            "pairs_per_sensor": self.pairs_per_sensor,
            "icc": self.icc,
            "bound": self.bound,
            "bound_label": BOUNDS[self.bound].label,
            "bound_default": self.bound_default,
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
            "all_method": self.all_method,
            "target": self.target,
            "sensors_needed": self.sensors_needed,
            "model": MODEL,
            "notes": list(self.notes),
        }


def cp_with_clusters_warning(icc: float) -> str:
    """The sentence said when Clopper–Pearson is planned with an intra-class correlation."""
    return (
        f"--bound cp with --icc {icc:g}: Clopper–Pearson ignores the clustering of a sensor's "
        f"pairs and overstates the chance of passing; meter-report judges clustered pairs by "
        f"{default_bound(True)}."
    )


def _cp_threshold(n: int, need: float) -> int:
    """Fewest counted pairs of ``n`` whose Clopper–Pearson lower bound exceeds ``need`` %
    (n + 1 when none does), by bisection on the monotone bound."""
    lo, hi = 0, n + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if mid <= n and bool(
            equal_clusters_exceed("cp", np.array(mid), np.array(0), n, 1, need / 100.0)
        ):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _exact(criterion: Criterion, agreement: float, n: int) -> float:
    """P(the criterion passes) with the count Binomial(n, agreement): the binomial summed over
    the counts that pass."""
    need = criterion.required_percent
    if criterion.rule == "lower-bound":  # Clopper–Pearson
        return float(binom.sf(_cp_threshold(n, need) - 1, n, agreement))
    ks = np.arange(n + 1)
    if criterion.rule == "share":
        passing = 100.0 * ks / n >= need
    elif criterion.rule == "none":
        passing = ks == n  # every pair free of the error
    else:  # at-most
        passing = 100.0 * (n - ks) / n <= need
    return float(binom.pmf(ks[passing], n, agreement).sum())


class _Planner:
    """The probabilities at any number of sensors for one set of criteria and settings."""

    def __init__(
        self,
        criteria: tuple[Criterion, ...],
        agreement: tuple[float, ...],
        pairs: int,
        icc: float,
        bound: str,
        seed: int,
    ) -> None:
        self.criteria, self.agreement, self.pairs = criteria, agreement, pairs
        self.exact = [icc == 0 and (c.rule != "lower-bound" or bound == "cp") for c in criteria]
        self.simulation = JointSimulation(criteria, agreement, pairs, icc, bound, SIMULATIONS, seed)
        self.joint = not (all(self.exact) and not self.simulation.structure.shared)
        self.no_error = tuple(i for i, c in enumerate(criteria) if c.rule == "none")
        self.simulated = f"simulated ({SIMULATIONS:,} studies)"

    def at(self, sensors: int) -> tuple[tuple[float, ...], float]:
        n = sensors * self.pairs
        exact = [
            _exact(c, p, n) if e else None
            for c, p, e in zip(self.criteria, self.agreement, self.exact, strict=True)
        ]
        if not self.joint:
            known = [e for e in exact if e is not None]  # every one: all exact
            return tuple(known), float(np.prod(known))
        each, together = self.simulation.probabilities(sensors)
        return tuple(float(s) if e is None else e for e, s in zip(exact, each, strict=True)), (
            together
        )

    def methods(self) -> tuple[tuple[str, ...], str]:
        each = tuple("exact" if e else self.simulated for e in self.exact)
        if not self.joint:
            return each, "product (exact: ICC 0 and no two criteria count the same pairs)"
        return each, f"simulated jointly ({SIMULATIONS:,} studies)"


def _checked(
    standard_name: str,
    sensors: int,
    pairs_per_sensor: int,
    agreement: dict[str, float],
    icc: float,
    bound: str | None,
    target: float | None,
) -> dict[str, Criterion]:
    """The standard's criteria by id; ``ValueError`` names the argument and the rule."""
    standard = get_profile(standard_name)
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
    if bound is not None and bound not in PLAN_BOUNDS:
        raise ValueError(f"--bound: choose one of {', '.join(PLAN_BOUNDS)}; got {bound!r}")
    if not 0 <= icc < 1:
        raise ValueError(f"--icc: between 0 and 1 (exclusive of 1); got {icc}")
    if target is not None and not 0 < target < 1:
        raise ValueError(f"--target: a probability between 0 and 1; got {target}")
    return criteria


def plan(
    profile: str,
    sensors: int,
    pairs_per_sensor: int,
    agreement: dict[str, float],
    icc: float = 0.0,
    bound: str | None = None,
    target: float | None = None,
    seed: int = 1,
) -> StudyPlan:
    """The probability of passing each criterion named in ``agreement`` (id → expected share,
    0–1) and all of them, for ``sensors`` × ``pairs_per_sensor``; with ``target``, the fewest
    sensors (up to :data:`MAX_SENSORS`) whose probability of passing all reaches it.
    ``bound`` None: :func:`~ranking_core.meter.standards.bounds.default_bound` of
    ``icc > 0`` (the report's rule for clustered pairs). ``ValueError`` names the argument and
    the rule on bad input."""
    criteria = _checked(profile, sensors, pairs_per_sensor, agreement, icc, bound, target)
    chosen = bound or default_bound(icc > 0)
    notes = (cp_with_clusters_warning(icc),) if chosen == "cp" and icc > 0 else ()
    planner = _Planner(
        tuple(criteria[k] for k in agreement),
        tuple(agreement.values()),
        pairs_per_sensor,
        icc,
        chosen,
        seed,
    )
    each, together = planner.at(sensors)
    methods, all_method = planner.methods()
    rows = tuple(
        CriterionPlan(key, criteria[key].label, value, p, how)
        for (key, value), p, how in zip(agreement.items(), each, methods, strict=True)
    )
    needed = None
    if target is not None:
        beyond = hoeffding_limit(planner.criteria, planner.agreement, target)
        needed = _sensors_needed(
            planner.at,
            target,
            pairs_per_sensor,
            planner.no_error,
            beyond=None if beyond is None else beyond[0],
        )
        if needed is None and beyond is not None:
            limit, i = beyond
            note = _unreachable_note(planner.criteria[i], planner.agreement[i], limit, target)
            notes = (*notes, note)
    return StudyPlan(
        profile,
        sensors,
        pairs_per_sensor,
        icc,
        chosen,
        rows,
        together,
        all_method,
        needed,
        target,
        bound_default=bound is None,
        notes=notes,
    )


def passing_share(criterion: Criterion) -> float:
    """The observed share (0–1) of counted pairs a study must exceed, or reach, to pass
    ``criterion``: its required share for a lower bound (every bound of :data:`PLAN_BOUNDS` lies
    at or below the observed share) and for a share, one less the allowed share of errors for
    "at most", every pair for "none"."""
    need = criterion.required_percent / 100.0
    if criterion.rule == "at-most":
        return 1.0 - need
    if criterion.rule == "none":
        return 1.0
    return need


def hoeffding_limit(
    criteria: tuple[Criterion, ...], agreement: tuple[float, ...], target: float
) -> tuple[int, int] | None:
    """(Sensors beyond which no study reaches ``target``, the index of the criterion that sets
    it), by Hoeffding's inequality; None when every expected agreement reaches its criterion's
    passing share.

    A study passes criterion c only if its observed share p̂ of counted pairs reaches
    :func:`passing_share` s_c. Under the model, p̂ is the mean of S independent sensors' shares
    in [0, 1] with mean p_c, so for p_c < s_c, P(p̂ ≥ s_c) ≤ exp(−2·S·(s_c − p_c)²) (Hoeffding
    1963, Theorem 1), below ``target`` once S > ln(1/target) / (2·(s_c − p_c)²). Passing all
    criteria is no likelier than passing that one."""
    limits = [
        (int(np.floor(np.log(1.0 / target) / (2.0 * (passing_share(c) - p) ** 2))), i)
        for i, (c, p) in enumerate(zip(criteria, agreement, strict=True))
        if p < passing_share(c)
    ]
    return min(limits) if limits else None


def _unreachable_note(criterion: Criterion, agreement: float, limit: int, target: float) -> str:
    return (
        f"{criterion.id}: the expected agreement {100 * agreement:.1f} % is below the "
        f"{100 * passing_share(criterion):g} % a passing study must observe, so past {limit:,} "
        f"sensors no study reaches P(pass) ≥ {target:g} (Hoeffding's inequality)."
    )


def _sensors_needed(
    at: Callable[[int], tuple[tuple[float, ...], float]],
    target: float,
    pairs: int,
    no_error: tuple[int, ...] = (),
    beyond: int | None = None,
) -> int | None:
    """Fewest sensors whose probability of passing all reaches ``target``: doubling, then
    bisection (the probability grows with the sensors but for the count's discreteness; the
    simulated one is compared on common random numbers). The doubling stops early when a
    criterion that allows no error (indices ``no_error``) passes with less than ``target``: more
    sensors only add pairs that may err, so no larger study reaches it; and it looks no further
    than ``beyond`` sensors, past which no study reaches it (:func:`hoeffding_limit`)."""
    limit = min(MAX_SENSORS, MAX_TOTAL // pairs, MAX_SENSORS if beyond is None else beyond)
    if limit < 1:
        return None

    def ok(s: int) -> bool | None:  # None: neither this study nor a larger one reaches it
        each, together = at(s)
        if any(each[i] < target for i in no_error):
            return None
        return together >= target

    high = 1
    while high <= limit and not (reached := ok(high)):
        if reached is None:
            return None
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


@dataclass(frozen=True)
class PlanStart:
    """Where a plan after a study starts: the agreement observed in each criterion (id → share
    0–1; for "no error" and "at most" criteria the share free of the error), the intra-class
    correlation, the bound and one sentence on where each came from."""

    agreement: dict[str, float]
    icc: float
    bound: str
    notes: tuple[str, ...] = ()


def plan_start(report: JudgedReport, profile: str) -> PlanStart:
    """The plan's starting settings from ``report``'s acceptance table for the standard
    ``profile``: each criterion's observed share (within :data:`START_SHARES`), the intra-class
    correlation the report estimated (its ``icc`` column: the agreement criteria's values
    weighted by their pairs; 0 without clusters) and the bound the report judged by
    (:func:`~ranking_core.meter.standards.bounds.default_bound` of the clustering when it judged
    by one a plan cannot simulate). With ``--by`` groups, the pooled rows (no group) when the
    table has them, else the groups' counts added up."""
    table = report.acceptance
    rows = table[table["profile"] == profile] if "profile" in table else table.iloc[:0]
    if "group" in rows and rows["group"].isna().any():
        rows = rows[rows["group"].isna()]
    rows = rows[rows["n"] > 0]
    rule = {c.id: c.rule for c in get_profile(profile).criteria}
    low, high = START_SHARES
    agreement = {}
    # groups without a pooled row: their pairs add up to the file's
    for key, r in rows.groupby("id", sort=False)[["count", "n"]].sum().iterrows():
        share = r["count"] / r["n"]
        share = share if rule.get(str(key)) in _COUNTED_RULES else 1 - share
        agreement[str(key)] = float(np.clip(share, low, high))
    agreeing = rows[[rule.get(str(i)) in _COUNTED_RULES for i in rows["id"]]]
    known = agreeing[np.isfinite(agreeing["icc"].astype(float))] if "icc" in rows else rows[:0]
    icc = float(np.average(known["icc"], weights=known["n"])) if len(known) else 0.0
    icc = min(round(icc, 3), 0.99)
    used = [b for b in rows.get("bound", pd.Series(dtype=object)) if b]
    notes = []
    if used and used[0] in PLAN_BOUNDS:
        bound = str(used[0])
    else:
        bound = default_bound(icc > 0)
        if used:
            notes.append(
                f"The report's {BOUNDS[used[0]].label} bound is too costly to simulate; the "
                f"plan starts with {bound}."
            )
    return PlanStart(agreement, icc, bound, tuple(notes))
