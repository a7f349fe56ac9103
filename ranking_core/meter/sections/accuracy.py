"""Point accuracy: the pairs read and left out, bias, MARD, CV and the 95 % limits of agreement of
the relative differences (Bland & Altman, Lancet 1986;327:307–310; relative, as the official
SEG tool computes them), the statistics by glucose range and the ISO 15197 difference bands (the
SEG tool's tables, Klonoff et al. 2014). The report's Bland–Altman plot, with the intervals of
its limits, is the method comparison's (:mod:`ranking_core.meter.sections.comparison`)."""

from __future__ import annotations

import pandas as pd

from ranking_core.meter.sections.base import (
    CoreReport,
    ReportTable,
    Section,
    SectionView,
    records,
)

__all__ = ["ACCURACY", "ISO_RANGES_SECTION", "PAIR_TYPES", "RANGES"]


def _pair_types_view(table: pd.DataFrame, report: CoreReport) -> SectionView:
    counts = table.set_index("pair_type")["count"]
    total, included = int(counts["Total"]), int(counts["Total included in SEG analysis"])
    return SectionView(
        key="pair_types",
        title="Pair types",
        summary=f"{included:,} of {total:,} pairs analysed ({total - included:,} above "
        "600 mg/dL or below 0 left out)",
        json={"pair_types": records(table)},
        tables=(ReportTable("pair_types", "Pair types", table),),
    )


def _accuracy_view(table: pd.DataFrame, report: CoreReport) -> SectionView:
    row = table.iloc[0]
    device = report.device.upper()
    return SectionView(
        key="accuracy",
        title="Point accuracy",
        summary=f"MARD {row['mard_percent']:.1f} %, bias {row['bias_percent']:+.1f} %, 95 % "
        f"limits of agreement {row['loa_lower_percent']:.1f} to {row['loa_upper_percent']:.1f} "
        f"% over {int(row['n']):,} pairs",
        json={"accuracy": records(table)},
        about=(
            f"Relative differences ({device} − REF)/REF in %, as the SEG tool computes them; "
            "the limits of agreement are the bias ∓ 1.96 SD. The Bland–Altman plot, with the "
            "95 % intervals of the bias and of each limit, is in the method comparison.",
        ),
        tables=(ReportTable("accuracy", "Bias, MARD, CV and 95 % limits of agreement (%)", table),),
    )


def _ranges_view(table: pd.DataFrame, report: CoreReport) -> SectionView:
    return SectionView(
        key="ranges",
        title="Statistics by glucose range",
        summary=f"{len(table)} ranges of the reference glucose",
        json={"ranges": records(table)},
        about=(
            "Ranges of the reference glucose. MARD with a bootstrap 95 % interval; ±15/15 and "
            "±20/20: within 15 (20) mg/dL below 100 mg/dL, within 15 (20) % from 100 mg/dL "
            "on, with Wilson 95 % intervals.",
        ),
        tables=(
            ReportTable(
                "ranges",
                "MARD, bias and shares within ±15/15 and ±20/20 by glucose range",
                table,
            ),
        ),
    )


def _iso_ranges_view(table: pd.DataFrame, report: CoreReport) -> SectionView:
    within = float(table["percent"].iloc[:3].sum())
    return SectionView(
        key="iso_ranges",
        title="ISO 15197 ranges",
        summary=f"{within:.1f} % of the pairs within ±15 mg/dL or ±15 %",
        json={"iso_ranges": records(table)},
        tables=(ReportTable("iso_ranges", "ISO 15197 ranges", table),),
    )


PAIR_TYPES = Section(
    "pair_types", "Pair types", lambda inputs: inputs.report.pair_types, _pair_types_view
)
ACCURACY = Section("accuracy", "Accuracy", lambda inputs: inputs.report.accuracy, _accuracy_view)
RANGES = Section(
    "ranges", "Statistics by glucose range", lambda inputs: inputs.report.ranges, _ranges_view
)
ISO_RANGES_SECTION = Section(
    "iso_ranges", "ISO 15197 ranges", lambda inputs: inputs.report.iso_ranges, _iso_ranges_view
)
