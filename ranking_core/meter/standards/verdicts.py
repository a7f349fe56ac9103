"""From read pairs to verdicts: which device the pairs come from, the acceptance table over
their values as measured (by group with ``--by``), the trend agreement table and the CG-EGA when
they carry their times, and CG-DIVA when they carry sensors
(:mod:`ranking_core.meter.standards.acceptance`,
:mod:`ranking_core.meter.cgm.trend`, :mod:`ranking_core.meter.cgm.cg_ega`,
:mod:`ranking_core.meter.cgm.cg_diva`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.meter.cgm.cg_diva import CgDivaRange, cg_diva, cg_diva_notes
from ranking_core.meter.cgm.trend import TrendAgreement, trend_agreement
from ranking_core.meter.pairs.readings import MeterPairs, check_groups
from ranking_core.meter.standards.acceptance import (
    AcceptanceData,
    JudgeSettings,
    RateSummary,
    acceptance_table,
    rates_of_change,
)

__all__ = [
    "CG_DIVA_MAX_PAIRS",
    "CG_DIVA_MAX_SENSORS",
    "cg_diva_of",
    "device_of",
    "judge_pairs",
    "pair_rates",
    "trend_of",
]

# CG-DIVA's bootstrap costs resamples × sensors × log(pairs): beyond these it is left out
CG_DIVA_MAX_SENSORS = 500
CG_DIVA_MAX_PAIRS = 200_000


CLUSTER_COLUMNS = ("sensor", "subject")  # the pairs' clusters: a sensor's, else a person's


def _clusters(extra: dict[str, NDArray]) -> tuple[str, NDArray[np.intp] | None]:
    """The cluster column present (:data:`CLUSTER_COLUMNS`, in that order) and its codes."""
    name = next((k for k in CLUSTER_COLUMNS if k in extra), "")
    if not name:
        return "", None
    return name, pd.factorize(pd.Series(extra[name], dtype=object))[0]


def _rates(
    ref: NDArray[np.float64], bgm: NDArray[np.float64], extra: dict[str, NDArray], rate_gap: float
) -> RateSummary | None:
    """Rates of change of pairs carrying both times (consecutive pairs of one cluster)."""
    if "reference_time" not in extra or "sensor_time" not in extra:
        return None
    cluster = _clusters(extra)[1]
    return rates_of_change(
        ref, bgm, extra["reference_time"], extra["sensor_time"], cluster, rate_gap
    )


def pair_rates(
    pairs: MeterPairs, included: NDArray[np.bool_], rate_gap: float
) -> RateSummary | None:
    """The rates of change of the included pairs (values as measured), or None without times:
    computed once per report for the criteria J and K and the trend table."""
    extra = {k: v[included] for k, v in pairs.extra.items()}
    ref, bgm = (v[included] for v in pairs.measured)
    return _rates(ref, bgm, extra, rate_gap)


def trend_of(
    rates: RateSummary | None,
    reference: NDArray[np.float64] | None = None,
    sensor: NDArray[np.float64] | None = None,
) -> TrendAgreement | None:
    """The trend agreement table of :func:`pair_rates` (None without times); with the pairs'
    values (those the rates were computed from) also their CG-EGA."""
    if rates is None:
        return None
    return trend_agreement(rates.sensor_rate, rates.ref_rate, reference, sensor)


def cg_diva_of(
    pairs: MeterPairs, included: NDArray[np.bool_]
) -> tuple[list[CgDivaRange] | None, list[str]]:
    """CG-DIVA of the included pairs with a reference above 0 (reference = comparator, values as
    measured) when they carry a ``sensor`` column (else a ``subject`` one, resampled alike), and
    the report's notes on it; None without either column, without such pairs, or beyond
    :data:`CG_DIVA_MAX_SENSORS` sensors or :data:`CG_DIVA_MAX_PAIRS` pairs (then a note says so)."""
    name = next((k for k in CLUSTER_COLUMNS if k in pairs.extra), "")
    ref, cgm = (v[included] for v in pairs.measured)
    if not name or ref.size == 0:
        return None, []
    keep = ref > 0  # the relative deviation needs a reference above 0
    ref, cgm, sensor = ref[keep], cgm[keep], pairs.extra[name][included][keep]
    n_sensors = len(pd.unique(sensor))
    if ref.size == 0:
        return None, []
    if n_sensors > CG_DIVA_MAX_SENSORS or ref.size > CG_DIVA_MAX_PAIRS:
        return None, [
            f"CG-DIVA left out: {n_sensors:,} {name}s and {ref.size:,} pairs; it is computed "
            f"for at most {CG_DIVA_MAX_SENSORS:,} {name}s and {CG_DIVA_MAX_PAIRS:,} pairs."
        ]
    results = cg_diva(ref, cgm, sensor)
    return results, cg_diva_notes(results)


def device_of(pairs: MeterPairs) -> str:
    """ "cgm" when the pairs carry sensor times or a sensor column, else "bgm"."""
    return "cgm" if ("sensor_time" in pairs.extra or "sensor" in pairs.extra) else "bgm"


def judge_pairs(
    pairs: MeterPairs,
    included: NDArray[np.bool_],
    r: NDArray[np.float64],
    b: NDArray[np.float64],
    count: NDArray[np.int64],
    parkes_type: int,
    judge: JudgeSettings,
    rate_gap: float,
    rates: RateSummary | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """The acceptance table: every standard over the included pairs, values as measured; with a
    group column (``--by``), the pooled verdict over every pair first (``group`` None), then
    every standard again for each group (a ``group`` column first; the groups' pairs sum to the
    pooled ones). ``rates``: :func:`pair_rates` of these pairs, when already computed."""
    extra = {k: v[included] for k, v in pairs.extra.items()}
    ref, bgm = (v[included] for v in pairs.measured)
    groups = extra.get("group")
    if groups is not None:
        check_groups(groups, pairs.group_column)  # the bound, before any standard is judged
    pooled_extra = {k: v for k, v in extra.items() if k != "group"}
    data = _acceptance_data(ref, bgm, pooled_extra, r, b, count, parkes_type, rate_gap, rates)
    pooled, notes = acceptance_table(data, judge)
    if groups is None:
        return pooled, notes
    pooled.insert(0, "group", None)
    frames = [pooled]
    for value in pd.unique(groups):
        mask = groups == value
        part = {k: v[mask] for k, v in extra.items()}
        data = _acceptance_data(ref[mask], bgm[mask], part, None, None, None, parkes_type, rate_gap)
        frame, group_notes = acceptance_table(data, judge, group=f"{pairs.group_column} {value}")
        frame.insert(0, "group", str(value))
        frames.append(frame)
        notes += group_notes
    table = pd.concat(frames, ignore_index=True)
    table["group"] = pd.Series(
        [None if pd.isna(g) else g for g in table["group"]], index=table.index, dtype=object
    )
    return table, notes


def _acceptance_data(
    ref: NDArray[np.float64],
    bgm: NDArray[np.float64],
    extra: dict[str, NDArray],
    r: NDArray[np.float64] | None,
    b: NDArray[np.float64] | None,
    count: NDArray[np.int64] | None,
    parkes_type: int,
    rate_gap: float,
    rates: RateSummary | None = None,
) -> AcceptanceData:
    """What the acceptance criteria read: every pair as measured or, when the values are whole
    mg/dL and the pairs carry no clusters or times, the distinct points with their pairs."""
    cluster_name, cluster = _clusters(extra)
    timed = "reference_time" in extra and "sensor_time" in extra
    whole = (
        r is not None and np.array_equal(ref, np.rint(ref)) and np.array_equal(bgm, np.rint(bgm))
    )
    if not cluster_name and not timed and whole:
        assert r is not None and b is not None
        return AcceptanceData(r, b, weight=count, parkes_type=parkes_type)
    if rates is None:
        rates = _rates(ref, bgm, extra, rate_gap)
    return AcceptanceData(
        ref, bgm, cluster=cluster, cluster_name=cluster_name, rates=rates, parkes_type=parkes_type
    )
