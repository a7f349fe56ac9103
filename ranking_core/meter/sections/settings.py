"""The report's settings block (every choice the report was made with, said in every output and
recorded in the provenance), its notes on the data, and its provenance: the first and last
sections of the report."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from ranking_core.grids.seg import MISSING_SEG_MESSAGE
from ranking_core.inputs import MGDL_PER_MMOLL
from ranking_core.meter.sections.base import (
    CoreReport,
    ReportSetting,
    ReportTable,
    Section,
    SectionView,
)
from ranking_core.meter.standards.bounds import BOUNDS
from ranking_core.meter.standards.registry import DEVICES, profile_title

if TYPE_CHECKING:
    from ranking_core.meter.comparison.summary import ComparisonSettings
    from ranking_core.meter.standards.acceptance import JudgeSettings

__all__ = [
    "NOTES",
    "PROVENANCE",
    "SETTINGS",
    "ReportSetting",
    "measuring_range_text",
    "report_settings",
]

EVERY_PAIR = "none: every pair judged"


def measuring_range_text(judge: JudgeSettings) -> str:
    """The measuring range chosen, in words: "none: every pair judged", "40–400 mg/dL for every
    standard …" or each standard's own."""
    from ranking_core.meter.standards.acceptance import get_profile

    span = judge.measuring_range
    if span is None:
        return EVERY_PAIR
    if not isinstance(span, str):
        return (
            f"{span[0]:g}–{span[1]:g} mg/dL for every standard (by the device's reading, "
            "boundaries included)"
        )
    own = []
    for name in judge.standards:
        standard = get_profile(name)
        limits = standard.measuring_range
        own.append(
            f"{standard.title} {limits[0]:g}–{limits[1]:g} mg/dL (by the device's reading)"
            if limits is not None
            else f"{standard.title} none (every pair judged)"
        )
    return "each standard's own: " + ("; ".join(own) or "no standard chosen")


def _bound(report: CoreReport, judge: JudgeSettings) -> tuple[Any, str]:
    methods = [m for m in dict.fromkeys(report.acceptance.get("bound", [])) if isinstance(m, str)]
    labels = ", ".join(BOUNDS[m].label for m in methods if m in BOUNDS) or "none judged"
    if judge.bound is None:
        return methods, f"automatic: {labels}"
    return methods, labels


def _outside(report: CoreReport) -> tuple[dict[str, int], str]:
    """Pairs outside each standard's measuring range (pooled rows of the acceptance table)."""
    table = report.acceptance
    if table.empty or "pairs_outside_range" not in table:
        return {}, "none"
    pooled = table[table["group"].isna()] if "group" in table else table
    first = pooled.drop_duplicates("profile")
    pairs = zip(first["profile"], first["pairs_outside_range"], strict=True)
    counts = {str(p): int(n) for p, n in pairs}
    n = int(report.pair_types.set_index("pair_type")["count"]["Total included in SEG analysis"])
    text = "; ".join(f"{profile_title(p)}: {c:,} of {n:,}" for p, c in counts.items())
    return counts, text if counts else "none"


def _comparison_settings(
    comparison: ComparisonSettings | None, unit: str
) -> tuple[ReportSetting, ...]:
    """The method comparison's choices: the Deming error ratio and the decision levels (in the
    file's unit)."""
    from ranking_core.meter.comparison.summary import ComparisonSettings

    chosen = comparison or ComparisonSettings()
    levels = chosen.levels_in(unit)
    given = "" if chosen.levels is not None else " (the default)"
    return (
        ReportSetting(
            "deming_error_ratio",
            "Deming error ratio λ = σ²(reference) / σ²(device)",
            chosen.error_ratio,
            f"{chosen.error_ratio:g}",
        ),
        ReportSetting(
            "decision_levels",
            "decision levels of the bias",
            list(levels),
            ", ".join(f"{v:g}" for v in levels) + f" {unit}{given}",
        ),
    )


def report_settings(
    report: CoreReport,
    judge: JudgeSettings,
    rate_gap: float,
    comparison: ComparisonSettings | None = None,
) -> tuple:
    """Every choice the report was made with, in order (:class:`ReportSetting`)."""
    types = report.pair_types.set_index("pair_type")["count"]
    total, included = int(types["Total"]), int(types["Total included in SEG analysis"])
    unit = report.glucose_unit
    bound, bound_text = _bound(report, judge)
    outside, outside_text = _outside(report)
    groups: list = (
        list(report.acceptance["group"].dropna().unique()) if "group" in report.acceptance else []
    )
    by = report.group_column or None
    by_text = (
        f"{by}: the pooled verdict over all pairs first, then {len(groups)} group(s): "
        + ", ".join(map(str, groups))
        if by
        else "none (every pair judged together)"
    )
    return (
        ReportSetting("device", "device", report.device, DEVICES.get(report.device, "")),
        ReportSetting(
            "standards",
            "standards judged",
            list(judge.standards),
            ", ".join(profile_title(n) for n in judge.standards) or "none chosen",
        ),
        ReportSetting(
            "measuring_range",
            "measuring range",
            measuring_range_text(judge),
            measuring_range_text(judge),
        ),
        ReportSetting("bound", "lower bound of the criteria", bound, bound_text),
        ReportSetting(
            "rate_gap_minutes",
            "rate gap (pairs further apart give no rate of change)",
            float(rate_gap),
            f"{rate_gap:g} minutes",
        ),
        ReportSetting(
            "glucose_unit",
            "glucose unit",
            unit,
            unit
            if unit == "mg/dL"
            else f"{unit} (× {MGDL_PER_MMOLL} to mg/dL for the analysis; shown in mmol/L "
            "with mg/dL beside)",
        ),
        ReportSetting("by", "judged by group (--by)", by, by_text),
        ReportSetting("pairs_analysed", "pairs analysed", included, f"{included:,} of {total:,}"),
        ReportSetting(
            "pairs_excluded",
            "pairs excluded (above 600 mg/dL or below 0)",
            total - included,
            f"{total - included:,}",
        ),
        ReportSetting(
            "pairs_outside_measuring_range",
            "pairs outside the measuring range (left out of the verdicts)",
            outside,
            outside_text,
        ),
        ReportSetting(
            "parkes_type",
            "Parkes grid",
            report.parkes_type,
            f"type {report.parkes_type} diabetes",
        ),
        *_comparison_settings(comparison, unit),
    )


def _settings_view(result: tuple[ReportSetting, ...], report: CoreReport) -> SectionView:
    frame = pd.DataFrame({"Setting": [s.label for s in result], "Value": [s.text for s in result]})
    return SectionView(
        key="settings",
        title="Settings",
        summary="Every choice this report was made with (also recorded in its provenance).",
        json={"settings": {s.key: s.value for s in result}},
        tables=(ReportTable("settings", "Settings", frame, text=frame, data=False),),
    )


def _notes_view(result: tuple[tuple[str, ...], tuple[str, ...]], report: CoreReport) -> SectionView:
    caveats, messages = result
    notes = tuple(m for m in messages if m != MISSING_SEG_MESSAGE)
    return SectionView(
        key="notes",
        title="Notes on the data",
        summary=f"{len(caveats)} caution(s), {len(notes)} note(s)",
        json={"caveats": list(caveats), "messages": list(messages)},
        about=notes,
        cautions=caveats,
    )


def _provenance_view(result: dict[str, Any], report: CoreReport) -> SectionView:
    from ranking_core.meter.drawing.display import value_text

    said = {s.label for s in report.settings}
    items = {k: value_text(v) for k, v in result.items() if k not in said}
    frame = pd.DataFrame({"Item": list(items), "Value": list(items.values())})
    return SectionView(
        key="provenance",
        title="Provenance",
        summary=f"riskgrid {items.get('riskgrid version', '')}; "
        + ", ".join(f"{k} {v}" for k, v in items.items() if k.startswith("input file")),
        json={"provenance": dict(result)},
        about=("What the report was made from (the settings above are recorded here too).",),
        tables=(ReportTable("provenance", "Provenance", frame, text=frame, data=False),),
    )


SETTINGS = Section("settings", "Settings", lambda inputs: inputs.report.settings, _settings_view)
NOTES = Section(
    "notes",
    "Notes on the data",
    lambda inputs: (inputs.report.caveats, inputs.report.messages),
    _notes_view,
)
PROVENANCE = Section(
    "provenance", "Provenance", lambda inputs: dict(inputs.report.provenance), _provenance_view
)
