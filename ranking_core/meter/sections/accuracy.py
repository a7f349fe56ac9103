"""Point accuracy: the pairs read and left out, bias, MARD, CV and the 95 % limits of agreement
with the modified Bland–Altman plot (Bland & Altman, Lancet 1986;327:307–310; relative
differences, as the official SEG tool draws them), the statistics by glucose range and the ISO
15197 difference bands (the SEG tool's tables, Klonoff et al. 2014)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ranking_core.meter.sections.base import (
    CoreReport,
    ReportFigure,
    ReportTable,
    Section,
    SectionView,
    records,
)
from ranking_core.meter.standards.registry import profile_title
from ranking_core.meter.statistics import AgreementLimit

if TYPE_CHECKING:
    from matplotlib.figure import Figure


__all__ = [
    "ACCURACY",
    "AGREEMENT_LIMITS",
    "ISO_RANGES_SECTION",
    "PAIR_TYPES",
    "RANGES",
    "bland_altman_of",
]

# each standard's accuracy limits drawn on the Bland–Altman plot, from its criteria in
# ranking_core.meter.standards.registry (mg/dL below the cut, % from the cut on)
AGREEMENT_LIMITS = {
    "iso15197": (AgreementLimit(15, 15, 100),),
    "fda-otc": (AgreementLimit(0, 15, 0), AgreementLimit(0, 20, 0)),
    "fda-poc": (AgreementLimit(12, 12, 75), AgreementLimit(15, 15, 75)),
    "clsi-poct12": (AgreementLimit(12, 12.5, 100), AgreementLimit(15, 20, 75)),
    "icgm": (AgreementLimit(15, 15, 70), AgreementLimit(40, 40, 70)),
}


def _bland_altman_figure(report: CoreReport) -> ReportFigure:
    """The plot labelled by device (CGM − REF, BGM − REF), with the limits of the first
    standard judged that has them (none drawn when no such standard was judged)."""
    from ranking_core.meter.drawing.grid_plots import (
        bland_altman,
        bland_altman_caption,
        bland_altman_plot,
    )

    pairs = report.pairs[report.pairs["included"]]
    data = bland_altman(pairs["REF"].to_numpy(), pairs["BGM"].to_numpy())
    device = report.device.upper()
    judged = [n for n in report.standards if n in AGREEMENT_LIMITS]
    limits = AGREEMENT_LIMITS[judged[0]] if judged else ()
    standard = profile_title(judged[0]) if judged else ""
    return ReportFigure(
        "bland_altman",
        bland_altman_caption(data, device=device, limits=limits, standard=standard),
        lambda: bland_altman_plot(data, unit=report.glucose_unit, device=device, limits=limits),
        "Bland–Altman plot",
    )


def bland_altman_of(report: CoreReport) -> tuple[Figure, str]:
    """The report's modified Bland–Altman plot and its caption (the same in every rendering)."""
    figure = _bland_altman_figure(report)
    return figure.draw(), figure.caption


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
        title="Point accuracy and the modified Bland–Altman plot",
        summary=f"MARD {row['mard_percent']:.1f} %, bias {row['bias_percent']:+.1f} %, 95 % "
        f"limits of agreement {row['loa_lower_percent']:.1f} to {row['loa_upper_percent']:.1f} "
        f"% over {int(row['n']):,} pairs",
        json={"accuracy": records(table)},
        about=(
            f"Relative differences ({device} − REF)/REF in %; the limits of agreement are the "
            "bias ∓ 1.96 SD. The modified Bland–Altman plot draws each pair's difference in % "
            "of REF against REF with the limits of the standard judged.",
        ),
        tables=(ReportTable("accuracy", "Bias, MARD, CV and 95 % limits of agreement (%)", table),),
        figures=(_bland_altman_figure(report),),
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
