"""The report's headline: the verdicts of the standards chosen (pooled over every pair first, then
each group of ``--by``), and ISO 15197's binomial accuracy test, shown only when ISO 15197 is
judged (the SEG tool's surveillance test: 95 % of the pairs within ±15 mg/dL below 100 mg/dL or
±15 % from 100 mg/dL on, the 5th percentile of Binomial(n, 0.95) the fewest allowed)."""

from __future__ import annotations

import pandas as pd

from ranking_core.meter.sections.base import (
    CoreReport,
    ReportTable,
    Section,
    SectionInputs,
    SectionView,
    records,
)
from ranking_core.meter.standards.registry import profile_title

__all__ = ["ACCEPTANCE", "BINOMIAL", "ISO_STANDARD", "POOLED", "standard_verdicts"]

ISO_STANDARD = "iso15197"  # the binomial test is ISO 15197's (and the SEG tool's)
POOLED = "all pairs"  # the pooled verdict's name in readers' tables (null in the JSON)
_READER_DROPS = ("Group", "Profile", "Rule")


def _groups(table: pd.DataFrame) -> list[tuple[object, pd.DataFrame]]:
    """(group, rows) in order: the pooled rows (group null) first, then each group."""
    if "group" not in table:
        return [(None, table)]
    pooled = table["group"].isna()
    out: list[tuple[object, pd.DataFrame]] = [(None, table[pooled])]
    rest = table[~pooled]
    out += [(g, rows) for g, rows in rest.groupby("group", sort=False)]
    return out


def standard_verdicts(table: pd.DataFrame) -> list[tuple[str, str]]:
    """(standard title, verdict in words) of each standard over every pair (the pooled rows):
    "passes" when every judged criterion passes, "fails (criteria 1, 2)" otherwise, "no pairs
    in range" when none was judged."""
    out = []
    rows = _groups(table)[0][1]
    for name, part in rows.groupby("profile", sort=False):
        judged = part[part["passes"].notna()]
        failed = [str(i) for i, p in zip(judged["id"], judged["passes"], strict=True) if not p]
        if judged.empty:
            verdict = "no pairs in range"
        elif failed:
            verdict = f"fails (criteria {', '.join(failed)} of {len(part)})"
        else:
            verdict = f"passes ({len(judged)} of {len(part)} criteria met)"
        out.append((profile_title(name), verdict))
    return out


def _acceptance_tables(report: CoreReport) -> tuple[ReportTable, ...]:
    from ranking_core.meter.drawing.display import display_frame

    tables = []
    for group, rows in _groups(report.acceptance):
        where = POOLED if group is None else f"{report.group_column} {group}"
        for name, part in rows.groupby("profile", sort=False):
            text = display_frame(part, "acceptance", report.glucose_unit)
            text = text.drop(columns=[c for c in _READER_DROPS if c in text])
            rules = "; ".join(
                f"{', '.join(map(str, same['id']))}: {rule}"
                for rule, same in part.groupby("rule", sort=False)
            )
            title = f"{profile_title(name)} acceptance criteria"
            if "group" in report.acceptance:
                title += f" — {where}"
            tables.append(
                ReportTable("acceptance", title, part, caption=f"Verdict: {rules}", text=text)
            )
    return tuple(tables)


def _acceptance_view(table: pd.DataFrame, report: CoreReport) -> SectionView:
    from ranking_core.meter.drawing.display import acceptance_summary

    judged = ", ".join(report.judged_profiles())
    verdicts = standard_verdicts(table)
    summary = "; ".join(f"{t}: {v}" for t, v in verdicts) or "no standard chosen"
    if report.group_column:
        summary += f" (over all pairs; then by {report.group_column})"
    return SectionView(
        key="acceptance",
        title=f"Acceptance criteria ({judged})" if judged else "Acceptance criteria",
        summary=summary,
        json={"acceptance": records(table), "acceptance_notes": list(report.acceptance_notes)},
        about=(*acceptance_summary(table), *report.acceptance_notes),
        tables=_acceptance_tables(report),
    )


def _binomial(inputs: SectionInputs) -> pd.DataFrame | None:
    return inputs.report.binomial if ISO_STANDARD in inputs.judge.standards else None


def _binomial_view(table: pd.DataFrame, report: CoreReport) -> SectionView:
    row = table.iloc[0]
    verdict = "meets" if row["meets"] else "fails"
    return SectionView(
        key="binomial",
        title="Binomial accuracy test (ISO 15197: 95 % within 15)",
        summary=f"{int(row['compliant']):,} of {int(row['n']):,} pairs within ±15 mg/dL or "
        f"±15 %; at least {int(row['lower_bound']):,} needed: {verdict}",
        json={"binomial": records(table)},
        about=(
            "The SEG tool's surveillance accuracy test: the pairs within ±15 mg/dL (REF < 100 "
            "mg/dL) or ±15 % (REF ≥ 100 mg/dL) against the 5th percentile of Binomial(n, 0.95).",
        ),
        tables=(ReportTable("binomial", "Binomial accuracy test (95 % within 15)", table),),
    )


ACCEPTANCE = Section(
    "acceptance", "Acceptance criteria", lambda inputs: inputs.report.acceptance, _acceptance_view
)
BINOMIAL = Section("binomial", "Binomial accuracy test", _binomial, _binomial_view)
