"""The meter accuracy report: the official SEG tool's tables, exactly, plus the zone counts of
every registered zone grid (DTS, Clarke, Parkes) and of a learned grid (the references are
Klonoff et al. 2014 for the SEG, ISO 15197:2013 for the accuracy ranges, and each grid's paper in
:mod:`ranking_core.grids.registry`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids.registry import RiskGrid, get_grid, report_grids
from ranking_core.grids.seg import GLUCOSE_MAX, MISSING_SEG_MESSAGE, SEGTable
from ranking_core.meter.cgm.cg_diva import CgDivaRange
from ranking_core.meter.cgm.trend import TrendAgreement
from ranking_core.meter.comparison.summary import ComparisonSettings
from ranking_core.meter.pairs.readings import MeterPairs, pairs_from_frame
from ranking_core.meter.sections import (
    SectionInputs,
    SectionView,
    compute_sections,
    section_views,
)
from ranking_core.meter.sections.base import ReportSetting, json_ready
from ranking_core.meter.sections.settings import report_settings
from ranking_core.meter.seg_tool import (
    accuracy_table,
    category_table,
    iso_tables,
    pair_types,
    seg_tables,
    zone_table,
)
from ranking_core.meter.standards.acceptance import (
    RATE_GAP_MINUTES,
    JudgeSettings,
    default_standards,
    get_profile,
)
from ranking_core.meter.standards.registry import profile_title
from ranking_core.meter.standards.verdicts import (
    cg_diva_of,
    device_of,
    judge_pairs,
    pair_rates,
    trend_of,
)
from ranking_core.meter.statistics import (
    caveats,
    iso_difference,
    pair_points,
    range_statistics,
)
from ranking_core.version import riskgrid_version

__all__ = [
    "HYPO_MISSED_RULE",
    "PAIR_RESULT_COLUMNS",
    "MeterReport",
    "iso_difference",
    "meter_report",
]

HYPO_LIMIT = 70.0  # mg/dL: below it, hypoglycaemia (level 1, the consensus threshold)
HYPO_MISSED_RULE = "reference < 70 mg/dL while the meter / sensor reads ≥ 70 mg/dL"
# the per-pair results file (--pairs-out), its columns and what each holds
PAIR_RESULT_COLUMNS = {
    "line": "file line (text files; the header is line 1 when nothing is above it) or sheet row",
    "BGM": "meter / sensor glucose, mg/dL (as analysed: whole mg/dL)",
    "REF": "reference glucose, mg/dL (as analysed)",
    "included": "in the analysis (false: REF or BGM above 600 mg/dL or below 0)",
    "seg_risk": "SEG risk 0–4 (empty without the SEG table)",
    "seg_risk_category": "SEG risk category: No risk, Slight, lower, …, Extreme (empty when "
    "left out or without the SEG table; never a text that CSV readers take for missing)",
    "seg_risk_category_id": "SEG risk category as a number: 0 no risk … 7 extreme",
    "dts_zone": "DTS Error Grid zone",
    "clarke_zone": "Clarke Error Grid zone",
    "parkes_zone": "Parkes Error Grid zone (the report's diabetes type)",
    "learned_risk": "risk on the learned grid (only with a learned grid)",
    "iso_within_15": "within ±15 mg/dL (REF < 100 mg/dL) or ±15 % (REF ≥ 100 mg/dL)",
    "error_direction": "BGM > REF, BGM < REF or BGM = REF",
    "hypoglycaemia_missed": f"true when {HYPO_MISSED_RULE}",
}


def _spread(values: NDArray, included: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Per-pair ``values`` of the included pairs placed among all pairs, NaN where excluded."""
    if values.size == included.size:
        return values
    out = np.full(included.size, np.nan)
    out[included] = values
    return out


def _labels(
    names: tuple[str, ...], index: NDArray[np.int8], included: NDArray[np.bool_]
) -> pd.Categorical:
    """Per pair, the name of its zone / grade / category (missing for excluded pairs), stored
    as codes so that 10^7 pairs do not make 10^7 strings."""
    if index.size == included.size:
        codes = index
    else:
        codes = np.full(included.shape, -1, dtype=np.int8)
        codes[included] = index
    # pandas takes any array-like of int codes; its stubs declare only Sequence[int]
    return pd.Categorical.from_codes(codes, categories=pd.Index(names))  # type: ignore[arg-type]


@dataclass(frozen=True)
class MeterReport:
    """Every table of the meter accuracy report as a DataFrame (percentages in %, 0–100).

    Attributes
    ----------
    pair_types : pair_type, count, percent (of all pairs read).
    accuracy : n, ref_zero_left_out, bias_percent, mard_percent, cv_percent,
        loa_lower_percent, loa_upper_percent (rel = (BGM − REF)/REF in %).
    risk_grades, risk_categories : SEG grades A–E and the 8 categories (None without a table).
    iso_ranges : id, range, count, percent.
    binomial : n, compliant, compliant_percent, lower_bound, lower_bound_percent, meets,
        ci_lower_percent, ci_upper_percent.
    acceptance : the criteria of the chosen acceptance standards, one row each: profile, id,
        criterion, count, n, percent, lower_bound_percent, required_percent, rule, passes,
        bound, the measuring range and the pairs outside it (and a group column first with
        ``--by``; :mod:`ranking_core.meter.standards.acceptance`).
    device : "bgm" or "cgm", the device the pairs were judged as.
    standards : the names of the standards judged.
    acceptance_notes : the bound's method and the criteria left out.
    provenance : what the report was made from, item → value (riskgrid version, input file and
        its sha256, unit, SEG table and learned grid checksums as text; pairs read / refused as
        int; a learned grid's λ as float): numbers stay numbers in :meth:`to_dict`.
    ranges : MARD (bootstrap interval), bias, ±15/15 and ±20/20 shares (Wilson intervals) by
        glucose range (:func:`~ranking_core.meter.statistics.range_statistics`).
    caveats : small-sample warnings (n < 100, a range with < 20 pairs), shown with the tables.
    Every count table (grades, categories, ISO ranges, zones) has ci_lower_percent and
    ci_upper_percent: the Wilson 95 % interval of its percentage.
    zones : {family: table of zone, meaning, count, percent} for each registered zone grid
        ("dts", "clarke", "parkes"; Parkes for ``parkes_type`` diabetes).
    zone_grids : {family: registered grid name} of those tables ("parkes" → "parkes-type1").
    learned_categories : the 8 categories on a learned grid (None without one).
    pairs : one row per pair read, with every derived column.
    messages : reading problems, exclusions, missing SEG table.
    """

    pair_types: pd.DataFrame
    accuracy: pd.DataFrame
    iso_ranges: pd.DataFrame
    binomial: pd.DataFrame
    zones: dict[str, pd.DataFrame]
    zone_grids: dict[str, str]
    acceptance: pd.DataFrame
    ranges: pd.DataFrame
    pairs: pd.DataFrame = field(repr=False)
    risk_grades: pd.DataFrame | None = None
    risk_categories: pd.DataFrame | None = None
    learned_categories: pd.DataFrame | None = None
    parkes_type: int = 1
    messages: tuple[str, ...] = ()
    caveats: tuple[str, ...] = ()
    source: str = ""
    glucose_unit: str = "mg/dL"
    acceptance_notes: tuple[str, ...] = ()
    provenance: dict[str, Any] = field(default_factory=dict)
    device: str = "bgm"
    standards: tuple[str, ...] = ()
    group_column: str = ""
    trend: TrendAgreement | None = None
    cg_diva: tuple[CgDivaRange, ...] | None = None
    settings: tuple[ReportSetting, ...] = ()
    results: dict[str, Any] = field(default_factory=dict, repr=False)

    def views(self) -> list[SectionView]:
        """The report's sections as every rendering draws them, in reading order
        (:func:`~ranking_core.meter.sections.section_views`)."""
        return section_views(self)

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables of results of the sections present, by name, in report order (a table
        split for readers, such as the acceptance criteria by standard and group, whole
        again; the settings and provenance, text for readers, are in :meth:`views`)."""
        parts: dict[str, list[pd.DataFrame]] = {}
        for view in self.views():
            for table in view.tables:
                if table.data:
                    parts.setdefault(table.name, []).append(table.frame)
        return {
            name: frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
            for name, frames in parts.items()
        }

    def judged_profiles(self) -> tuple[str, ...]:
        """Titles of the acceptance standards judged (those with a row in :attr:`acceptance`,
        else :attr:`standards`), in order, from the registry
        (:func:`~ranking_core.meter.standards.acceptance.get_profile`)."""
        names = dict.fromkeys(self.acceptance["profile"]) if "profile" in self.acceptance else {}
        return tuple(profile_title(name) for name in names or self.standards)

    def titles(self) -> dict[str, str]:
        """A human title for each table of :meth:`tables` (the first part's title)."""
        out: dict[str, str] = {}
        for view in self.views():
            for table in view.tables:
                out.setdefault(table.name, table.title)
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: what the report is of (source, units, device, standards), then each
        section's keys in report order (tables as lists of records, NaN → null, every number a
        JSON number)."""
        out: dict[str, Any] = {
            "source": self.source,
            "unit": "mg/dL",
            "input_unit": self.glucose_unit,
            "riskgrid_version": riskgrid_version(),
            "parkes_type": self.parkes_type,
            "seg_table_used": self.risk_grades is not None,
            "device": self.device,
            "group_column": self.group_column or None,
            "standards": [
                {
                    "name": name,
                    "title": get_profile(name).title,
                    "citation": get_profile(name).citation,
                }
                for name in self.standards
            ],
        }
        for view in self.views():
            out.update(view.json)
        return json_ready(out)


def _as_pairs(pairs: MeterPairs | pd.DataFrame) -> MeterPairs:
    if isinstance(pairs, MeterPairs):
        return pairs
    return pairs_from_frame(pairs.reset_index(drop=True), "pairs", first_row=0, unit="row")


def meter_report(
    pairs: MeterPairs | pd.DataFrame,
    seg_table: SEGTable | None,
    learned_risk: ArrayLike | None = None,
    *,
    parkes_type: int = 1,
    profiles: tuple[str, ...] | None = None,
    provenance: dict[str, Any] | None = None,
    judge: JudgeSettings | None = None,
    device: str | None = None,
    rate_gap: float = RATE_GAP_MINUTES,
    comparison: ComparisonSettings | None = None,
) -> MeterReport:
    """The meter accuracy report for (BGM, REF) pairs in mg/dL.

    Parameters
    ----------
    pairs : pairs from :func:`~ranking_core.meter.pairs.readings.read_pairs`, or a DataFrame with
        BGM and REF columns (any case; checked and rounded the same way).
    seg_table : the SEG risk table; ``None`` leaves out the SEG tables with a message saying how
        to provide one.
    learned_risk : optional (601, 601) learned risk surface indexed [REF, BGM] on the SEG's
        0..4 scale; its 8 risk categories are counted.
    parkes_type : diabetes type of the Parkes grid (1 or 2).
    profiles : acceptance standards to judge the pairs by (default: the one of the device,
        :func:`device_of`); pairs with ``subject``/``sensor`` columns get clustered bounds,
        pairs with ``reference_time``/``sensor_time`` the rate-of-change criteria.
    judge : the full judging settings (standards, measuring range, bound method); overrides
        ``profiles``.
    device : "bgm" or "cgm" (default :func:`device_of` the pairs): picks the default standard.
    rate_gap : minutes; consecutive pairs of a sensor further apart give no rate of change.
    comparison : the method comparison's Deming error ratio and decision levels (default λ = 1,
        70, 180, 250 mg/dL in the file's unit).
    provenance : items to state first in the report's provenance (the input file's name and
        sha256, the learned grid's name, λ and ratings checksum, from the caller); the version,
        pairs, unit and the SEG and learned grids' checksums are added here.

    Notes
    -----
    Pairs with REF > 600, else BGM > 600, else a value < 0 are excluded (each counted once, under
    the first rule it meets); every other table is over the included pairs. Bias, MARD and CV
    leave out REF = 0 (rel undefined). O(n) time: the statistics are computed over the distinct
    (REF, BGM) points weighted by their pairs (:func:`~ranking_core.meter.statistics.pair_points`),
    so the report does not depend on the order of the pairs.
    """
    pairs = _as_pairs(pairs)
    ref, bgm = pairs.ref, pairs.bgm
    included, types, messages = pair_types(pairs)

    # every statistic over the distinct (REF, BGM) points, weighted by their pairs (at most
    # 601 × 601 points whatever the number of pairs); per-pair columns are lookups of their point
    points = pair_points(*((ref, bgm) if included.all() else (ref[included], bgm[included])))
    r, b, count, inverse = points.ref, points.bgm, points.count, points.inverse
    rel, accuracy, note = accuracy_table(r, b, count)
    messages.extend(note)
    diff = iso_difference(r, b)
    iso_ranges, binomial = iso_tables(diff, count)

    # the per-pair columns, made into one frame at the end without copying (setting a column of
    # a frame copies it)
    per_pair: dict[str, NDArray[Any] | pd.Categorical] = {
        "row": pairs.rows,
        "BGM": bgm,
        "REF": ref,
        "included": included,
    }
    per_pair["rel"] = _spread(rel[inverse], included)
    per_pair["iso_diff"] = _spread(diff[inverse], included)
    grids = report_grids(parkes_type)
    zones = {}
    for family, grid in grids.items():
        index = grid.zone_index(r, b)
        zones[family] = zone_table(grid, index, count)
        per_pair[family] = _labels(grid.zones, index.astype(np.int8)[inverse], included)

    ranges = range_statistics(r, b, count)
    device = device or device_of(pairs)
    if judge is None:
        judge = JudgeSettings(profiles or default_standards(device))
    rates = pair_rates(pairs, included, rate_gap)  # J, K and the trend table share them
    acceptance, acceptance_notes = judge_pairs(
        pairs, included, r, b, count, parkes_type, judge, rate_gap, rates
    )

    risk_grades = risk_categories = learned_categories = None
    if seg_table is None:
        messages.append(MISSING_SEG_MESSAGE)
    else:
        risk_grades, risk_categories, columns = seg_tables(seg_table, r, b, count)
        per_pair.update({k: _per_pair(v, inverse, included) for k, v in columns.items()})
    if learned_risk is not None:
        learned = _learned_risk(learned_risk, r, b)
        learned_categories = category_table(learned, count)
        per_pair["learned_risk"] = _spread(learned[inverse], included)

    divas, diva_notes = cg_diva_of(pairs, included)
    messages.extend(diva_notes)
    base = MeterReport(
        pair_types=types,
        accuracy=accuracy,
        iso_ranges=iso_ranges,
        binomial=binomial,
        zones=zones,
        zone_grids={f: g.name for f, g in grids.items()},
        acceptance=acceptance,
        acceptance_notes=tuple(acceptance_notes),
        ranges=ranges,
        caveats=caveats(ranges),
        pairs=pd.DataFrame(per_pair, copy=False),
        risk_grades=risk_grades,
        risk_categories=risk_categories,
        learned_categories=learned_categories,
        parkes_type=parkes_type,
        messages=tuple(messages),
        source=pairs.source,
        glucose_unit=pairs.glucose_unit,
        provenance=_provenance(pairs, seg_table, learned_risk, provenance or {}),
        device=device,
        standards=tuple(judge.standards),
        group_column=pairs.group_column,
        trend=trend_of(rates, *(v[included] for v in pairs.measured)),
        cg_diva=None if divas is None else tuple(divas),
    )
    inputs = SectionInputs(
        report=base,
        pairs=pairs,
        included=included,
        judge=judge,
        rate_gap=rate_gap,
        rates=rates,
        seg_table=seg_table,
        learned_risk=None if learned_risk is None else np.asarray(learned_risk),
        comparison=comparison or ComparisonSettings(),
    )
    return _with_sections(base, inputs)


def _with_sections(base: MeterReport, inputs: SectionInputs) -> MeterReport:
    """The report with its settings (said in every output and recorded in its provenance) and
    the result of every section of :data:`~ranking_core.meter.sections.SECTIONS`."""
    settings = report_settings(base, inputs.judge, inputs.rate_gap, inputs.comparison)
    provenance = {**base.provenance, **{s.label: json_ready(s.value) for s in settings}}
    report = replace(base, settings=settings, provenance=provenance)
    return replace(report, results=compute_sections(replace(inputs, report=report)))


def _per_pair(
    column: tuple[NDArray, tuple[str, ...] | None],
    inverse: NDArray[np.intp],
    included: NDArray[np.bool_],
) -> NDArray[Any] | pd.Categorical:
    """A per-point column spread over every pair read: values, or names given as codes."""
    values, names = column
    if names is None:
        return _spread(values[inverse], included)
    return _labels(names, values.astype(np.int8)[inverse], included)


def _learned_risk(
    learned_risk: ArrayLike, r: NDArray[np.float64], b: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The points' risk on a learned (601, 601) surface indexed [REF, BGM], checked first."""
    surface = np.asarray(learned_risk, dtype=np.float64)
    size = GLUCOSE_MAX + 1
    if surface.shape != (size, size) or not np.isfinite(surface).all():
        raise ValueError(
            f"meter_report: learned_risk must be a finite ({size}, {size}) array "
            f"indexed [REF, BGM] in mg/dL; got shape {surface.shape}"
        )
    return np.asarray(get_grid("learned", RiskGrid).risk(surface, r, b), dtype=np.float64)


def values_sha256(values: ArrayLike) -> str:
    """sha256 of an array's float64 values (C order): a checksum of a risk table's content."""
    data = np.ascontiguousarray(np.asarray(values, dtype=np.float64))
    return hashlib.sha256(data.tobytes()).hexdigest()


def _provenance(
    pairs: MeterPairs,
    seg_table: SEGTable | None,
    learned_risk: ArrayLike | None,
    given: dict[str, Any],
) -> dict[str, Any]:
    read = pairs.table
    out: dict[str, Any] = {"riskgrid version": riskgrid_version(), **given}
    if read is not None:
        out["pairs read"] = int(read.n_read)
        out["pairs refused"] = int(read.n_refused)
    else:
        out["pairs read"] = len(pairs)
    out["glucose unit of the input"] = pairs.glucose_unit
    out["SEG table sha256 (risk values)"] = (
        "not used" if seg_table is None else values_sha256(seg_table.signed)
    )
    if learned_risk is not None:
        out["learned grid sha256 (risk values)"] = values_sha256(learned_risk)
    return out
