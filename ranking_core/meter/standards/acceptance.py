"""Judging pairs by acceptance standards (:mod:`ranking_core.meter.standards.registry`): counts,
shares, lower confidence bounds and verdicts, one row per criterion.

* Values are judged as measured (no rounding), in mg/dL.
* A standard with a measuring range (the FDA iCGM special controls: 40–400 mg/dL, the range of
  every cleared iCGM; outside it the device shows only "LOW" / "HIGH") judges only the pairs
  whose device reading lies inside it, boundaries included; how many were left out is said.
* Lower bounds (criteria with the rule "95 % lower bound > required") come from
  :func:`ranking_core.meter.standards.bounds.lower_bound`: ``cp`` exact Clopper–Pearson, ``kg``
  Korn–Graubard over clusters, ``wilson-cc`` the clustered continuity-corrected Wilson bound,
  ``bootstrap`` a BCa bootstrap over clusters. Clusters are the ``sensor`` or ``subject`` column.
  With clusters, each row also gives the intra-class correlation of its counted pairs within the
  clusters (``icc``, the ANOVA estimator of :func:`~ranking_core.meter.standards.bounds.anova_icc`;
  NaN without clusters): what a study planned after this one starts from.
* Rates of change (criteria J and K) come from consecutive pairs of one sensor at most
  ``rate_gap`` minutes apart, the sensor's rate from its own values and times, the reference's
  from its own (:func:`rates_of_change`); pairs without a rate are counted by reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.meter.standards.bounds import BOUNDS, anova_icc, default_bound, lower_bound
from ranking_core.meter.standards.registry import (
    DEFAULT_STANDARD,
    RULES,
    Criterion,
    PairsView,
    Standard,
    UnknownProfileError,
    get_profile,
    profile_names,
    profiles,
)

__all__ = [
    "ACCEPTANCE_COLUMNS",
    "RATE_GAP_MINUTES",
    "AcceptanceData",
    "JudgeSettings",
    "RateSummary",
    "UnknownProfileError",
    "acceptance_table",
    "get_profile",
    "parse_measuring_range",
    "profile_names",
    "profiles",
    "rates_of_change",
]

RATE_GAP_MINUTES = 30.0  # consecutive pairs of a sensor at most this far apart give a rate
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
    "bound",
    "icc",
    "measuring_range_low",
    "measuring_range_high",
    "pairs_outside_range",
)
COMPANION_COLUMNS = ("count", "n", "percent")


@dataclass(frozen=True)
class RateSummary:
    """Rates of change at each pair (mg/dL/min, NaN where none) and why pairs have none:
    reason → number of pairs."""

    ref_rate: NDArray[np.float64]
    sensor_rate: NDArray[np.float64]
    missing: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class AcceptanceData:
    """What the criteria read, one entry per pair.

    Attributes
    ----------
    ref, bgm : reference and device glucose in mg/dL, as measured.
    weight : pairs at each entry (``None``: one each; distinct points of whole mg/dL values
        carry their number of pairs).
    cluster : optional cluster code per pair (subject or sensor), for the bounds.
    cluster_name : the column the clusters come from ("subject" or "sensor").
    rates : rates of change from :func:`rates_of_change` (``None``: no times in the file).
    parkes_type : diabetes type of the Parkes grid (ISO 15197 criterion 2).
    """

    ref: NDArray[np.float64]
    bgm: NDArray[np.float64]
    weight: NDArray[np.int64] | None = None
    cluster: NDArray[np.intp] | None = None
    cluster_name: str = ""
    rates: RateSummary | None = None
    parkes_type: int = 1

    def view(self, keep: NDArray[np.bool_]) -> PairsView:
        rates = self.rates
        return PairsView(
            self.ref[keep],
            self.bgm[keep],
            None if rates is None else rates.ref_rate[keep],
            None if rates is None else rates.sensor_rate[keep],
            self.parkes_type,
        )


@dataclass(frozen=True)
class JudgeSettings:
    """How to judge: the standards, the measuring range (``"default"``: each standard's own;
    ``None``: every pair; (low, high) in mg/dL: that range for every standard), the bound method
    (``None``: :func:`~ranking_core.meter.standards.bounds.default_bound`, ``kg`` with
    clusters, else ``cp``), bootstrap resamples and seed."""

    standards: tuple[str, ...]
    measuring_range: tuple[float, float] | str | None = "default"
    bound: str | None = None
    resamples: int = 10_000
    seed: int = 1

    def range_of(self, standard: Standard) -> tuple[float, float] | None:
        if isinstance(self.measuring_range, str):  # "default"
            return standard.measuring_range
        return self.measuring_range


def parse_measuring_range(text: str) -> tuple[float, float] | None:
    """``"40-400"`` → (40.0, 400.0); ``"none"`` → None. Raises ValueError with a sentence."""
    if text.strip().lower() == "none":
        return None
    parts = text.replace("–", "-").split("-")
    try:
        low, high = (float(p) for p in parts)
    except ValueError:
        raise ValueError(
            f"--measuring-range: give LOW-HIGH in mg/dL (e.g. 40-400) or none; got {text!r}"
        ) from None
    if not (np.isfinite(low) and np.isfinite(high) and 0 <= low < high <= 3000):
        raise ValueError(f"--measuring-range: need 0 ≤ LOW < HIGH ≤ 3000 mg/dL; got {text!r}")
    return low, high


def default_standards(device: str) -> tuple[str, ...]:
    """The standard a device is judged by when none is named (ISO 15197 for a meter, the FDA
    iCGM special controls for a CGM)."""
    return (DEFAULT_STANDARD[device],)


def _count(
    scope: NDArray[np.bool_], hit: NDArray[np.bool_], weight: NDArray[np.int64] | None
) -> tuple[int, int]:
    """(pairs in scope, pairs in scope that are hits), each entry counted ``weight`` times."""
    if weight is None:
        return int(np.count_nonzero(scope)), int(np.count_nonzero(scope & hit))
    return int(weight[scope].sum()), int(weight[scope & hit].sum())


def _share(count: int, n: int) -> float:
    return 100.0 * count / n if n else float("nan")


def _row(
    standard: Standard,
    criterion: Criterion,
    data: AcceptanceData,
    keep: NDArray[np.bool_],
    settings: JudgeSettings,
    notes: list[str],
) -> dict:
    view = data.view(keep)
    scope, hit = criterion.select(view)
    weight = None if data.weight is None else data.weight[keep]
    n, count = _count(scope, hit, weight)
    percent = _share(count, n)
    row: dict = {
        "profile": standard.name,
        "id": criterion.id,
        "criterion": criterion.label,
        "count": count,
        "n": n,
        "percent": percent,
        "lower_bound_percent": np.nan,
        "required_percent": criterion.required_percent,
        "rule": RULES[criterion.rule],
        "bound": "",
        "icc": np.nan,
    }
    if data.cluster is not None and n:  # the clusters' intra-class correlation of the counts
        row["icc"] = anova_icc(hit[scope], data.cluster[keep][scope])
    if criterion.rule == "lower-bound" and n:
        method = settings.bound or default_bound(data.cluster is not None)
        cluster = None if data.cluster is None else data.cluster[keep][scope]
        hits = hit[scope] if weight is None else np.repeat(hit[scope], weight[scope])
        # the bootstrap resamples every sensor judged (the reference implementation's way),
        # also those without a pair in this criterion's range
        study = None if data.cluster is None else int(np.unique(data.cluster[keep]).size)
        result = lower_bound(
            method,
            hits,
            cluster,
            resamples=settings.resamples,
            seed=settings.seed,
            study_clusters=study,
        )
        row["lower_bound_percent"] = result.lower_percent
        row["bound"] = method
        if result.note and result.note not in notes:
            notes.append(result.note)
    if not n:
        passes = None  # nothing to judge: no verdict
    elif criterion.rule == "share":
        passes = percent >= criterion.required_percent
    elif criterion.rule == "lower-bound":
        passes = bool(row["lower_bound_percent"] > criterion.required_percent)
    elif criterion.rule == "none":
        passes = count == 0
    else:
        passes = percent <= criterion.required_percent
    row["passes"] = passes
    if criterion.companion is not None:
        prefix, label, select = criterion.companion
        scope2, hit2 = select(view)
        n2, count2 = _count(scope2, hit2, weight)
        row.update(
            {f"{prefix}_count": count2, f"{prefix}_n": n2, f"{prefix}_percent": _share(count2, n2)}
        )
        notes.append(
            f"{standard.title} {criterion.id}, {label}: {count2} of {n2}"
            + (f" ({_share(count2, n2):.2f} %)" if n2 else "")
        )
    return row


def _range_mask(
    standard: Standard, data: AcceptanceData, settings: JudgeSettings, notes: list[str], group: str
) -> tuple[NDArray[np.bool_], dict]:
    """The pairs inside the standard's measuring range, and the range's columns of each row
    (``measuring_range_low``/``_high`` in mg/dL, NaN for none; ``pairs_outside_range``)."""
    span = settings.range_of(standard)
    if span is None:
        info = {
            "measuring_range_low": np.nan,
            "measuring_range_high": np.nan,
            "pairs_outside_range": 0,
        }
        return np.ones(data.bgm.size, dtype=bool), info
    keep = (data.bgm >= span[0]) & (data.bgm <= span[1])
    total, inside = _count(np.ones(keep.size, dtype=bool), keep, data.weight)
    notes.append(
        f"{standard.title}{group}: judged inside the measuring range {span[0]:g}–{span[1]:g} "
        f"mg/dL (by the device's reading, boundaries included); {total - inside} of {total} "
        "pairs left out"
    )
    info = {
        "measuring_range_low": span[0],
        "measuring_range_high": span[1],
        "pairs_outside_range": total - inside,
    }
    return keep, info


def acceptance_table(
    data: AcceptanceData, settings: JudgeSettings, group: str = ""
) -> tuple[pd.DataFrame, list[str]]:
    """Every criterion of the chosen standards over ``data``: one row each with the columns of
    :data:`ACCEPTANCE_COLUMNS` (plus ``reference_count/_n/_percent`` for J and K and
    ``above_180_count/_n/_percent`` for I), and notes: the measuring range and the pairs it left
    out, the bound's method, criteria left out, pairs without a rate of change and why.
    ``passes`` is None where no pair is in a criterion's scope. ``group`` names the group in the
    notes (``--by``)."""
    rows: list[dict] = []
    notes: list[str] = []
    where = f" ({group})" if group else ""
    for name in settings.standards:
        standard = get_profile(name)
        keep, info = _range_mask(standard, data, settings, notes, where)
        for criterion in standard.criteria:
            if criterion.needs == "rates" and data.rates is None:
                notes.append(
                    f"{standard.title} {criterion.id}: left out (rate-of-change "
                    "agreement needs reference_time and sensor_time columns, as "
                    "written by riskgrid pair)"
                )
                continue
            rows.append({**_row(standard, criterion, data, keep, settings, notes), **info})
        if standard.device == "cgm" and data.cluster is None:
            notes.append(
                f"warning: {standard.title}{where} judged without a sensor or subject "
                "column: every pair is taken as independent, which overstates the "
                "lower bounds of CGM data (many pairs per sensor)"
            )
    if data.rates is not None and any(r["id"] in ("J", "K") for r in rows):
        missing = data.rates.missing
        total = sum(missing.values())
        if total:
            reasons = "; ".join(f"{k}: {v}" for k, v in missing.items() if v)
            notes.append(
                f"rates of change{where}: {total} of {data.ref.size} pairs have none ({reasons})"
            )
    methods = sorted({r["bound"] for r in rows if r["bound"]})
    for method in methods:
        label = BOUNDS[method].label
        clusters = f" (clusters: {data.cluster_name})" if data.cluster is not None else ""
        notes.append(f"Lower bounds: {label}{clusters}.")
    columns = list(ACCEPTANCE_COLUMNS)
    for row in rows:
        columns += [k for k in row if k not in columns]
    frame = pd.DataFrame(rows, columns=columns)
    frame["passes"] = frame["passes"].astype(object)
    return frame, notes


def rates_of_change(
    ref: NDArray[np.float64],
    bgm: NDArray[np.float64],
    reference_time: NDArray[np.datetime64],
    sensor_time: NDArray[np.datetime64],
    cluster: NDArray[np.intp] | None = None,
    max_gap_minutes: float = RATE_GAP_MINUTES,
) -> RateSummary:
    """Rates of change in mg/dL/min of the reference and of the sensor at each pair, from the
    previous pair of the same sensor (cluster) in reference-time order: ΔREF/Δt_reference and
    ΔBGM/Δt_sensor, each over its own times, when both times advance by more than 0 and at most
    ``max_gap_minutes``. NaN elsewhere, counted by reason."""
    n = ref.size
    group = np.zeros(n, dtype=np.intp) if cluster is None else np.asarray(cluster)
    t_ref = reference_time.astype("datetime64[ns]").astype(np.int64) / 6e10  # minutes
    t_sen = sensor_time.astype("datetime64[ns]").astype(np.int64) / 6e10
    order = np.lexsort((t_sen, t_ref, group))
    ref_rate = np.full(n, np.nan)
    sensor_rate = np.full(n, np.nan)
    first = "first pair of its sensor" if cluster is not None else "first pair of the file"
    missing = {
        first: min(n, 1),
        "reference time not after the previous pair's": 0,
        "sensor time not after the previous pair's": 0,
        f"more than {max_gap_minutes:g} min after the previous pair": 0,
    }
    if n < 2:
        return RateSummary(ref_rate, sensor_rate, missing)
    now, before = order[1:], order[:-1]
    same = group[now] == group[before]
    gap = t_ref[now] - t_ref[before]
    sensor_gap = t_sen[now] - t_sen[before]
    ref_ok = gap > 0
    sensor_ok = sensor_gap > 0
    near = (gap <= max_gap_minutes) & (sensor_gap <= max_gap_minutes)
    ok = same & ref_ok & sensor_ok & near
    ref_rate[now[ok]] = (ref[now[ok]] - ref[before[ok]]) / gap[ok]
    sensor_rate[now[ok]] = (bgm[now[ok]] - bgm[before[ok]]) / sensor_gap[ok]
    missing[first] += int(np.count_nonzero(~same))
    missing["reference time not after the previous pair's"] = int(np.count_nonzero(same & ~ref_ok))
    missing["sensor time not after the previous pair's"] = int(
        np.count_nonzero(same & ref_ok & ~sensor_ok)
    )
    missing[f"more than {max_gap_minutes:g} min after the previous pair"] = int(
        np.count_nonzero(same & ref_ok & sensor_ok & ~near)
    )
    return RateSummary(ref_rate, sensor_rate, missing)
