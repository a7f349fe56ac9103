"""The CGM analyses beyond point accuracy, for pairs that carry what each needs: the trend
agreement table and the clinical trend concurrence (CTCA) and the CG-EGA for pairs with both
times (:mod:`ranking_core.meter.cgm.trend`, :mod:`ranking_core.meter.cgm.cg_ega`), CG-DIVA for
pairs with a sensor or subject column (:mod:`ranking_core.meter.cgm.cg_diva`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ranking_core.meter.cgm.cg_diva import (
    CG_DIVA_ABOUT,
    CG_DIVA_CAPTION,
    CgDivaRange,
    cg_diva_frame,
)
from ranking_core.meter.cgm.cg_ega import CG_EGA_ABOUT, CgEga
from ranking_core.meter.cgm.trend import ZONES, TrendAgreement, TrendConcurrence
from ranking_core.meter.sections.base import (
    CoreReport,
    ReportFigure,
    ReportTable,
    Section,
    SectionInputs,
    SectionView,
    json_ready,
    records,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["CG_DIVA", "CG_EGA", "TREND_AGREEMENT", "TREND_CONCURRENCE", "concurrence_frame"]


def _trend(inputs: SectionInputs) -> TrendAgreement | None:
    return inputs.report.trend


def _trend_view(trend: TrendAgreement, report: CoreReport) -> SectionView:
    n = int(trend.counts.sum())
    return SectionView(
        key="trend_agreement",
        title="Trend agreement",
        summary=f"{trend.concurrence_percent:.1f} % of {n:,} pairs with both rates in the same "
        f"rate category ({trend.without_rate:,} pairs without both rates)",
        json={"trend_agreement": json_ready(trend.to_dict())},
        about=(
            "The sensor's rate of change against the reference's (consecutive pairs of a "
            "sensor at most the rate gap apart), in the five categories of CGM labelling "
            "(mg/dL/min); each cell with its share of the sensor-rate row.",
        ),
        tables=(
            ReportTable(
                "trend_agreement",
                "Trend agreement: sensor rate × reference rate (mg/dL/min), pairs and row %",
                trend.frame(),
            ),
        ),
    )


def concurrence_frame(ctca: TrendConcurrence) -> pd.DataFrame:
    """CTCA as a table of numbers: zones A–D with their pairs and share (%), then MARoC (the
    comparator's mean absolute rate of change, mg/dL/min); ``unit`` names each value's."""
    percent = ctca.zone_percent
    return pd.DataFrame(
        {
            "measure": [*(f"zone {z}" for z in ZONES), "MARoC"],
            "pairs": pd.array([*ctca.zone_counts.values(), None], dtype="Int64"),
            "value": [*(percent[z] for z in ZONES), ctca.maroc],
            "unit": ["%"] * len(ZONES) + ["mg/dL/min"],
        }
    )


def _concurrence(inputs: SectionInputs) -> TrendConcurrence | None:
    trend = inputs.report.trend
    return None if trend is None else trend.concurrence


def _concurrence_view(ctca: TrendConcurrence, report: CoreReport) -> SectionView:
    frame = concurrence_frame(ctca)
    share = ctca.zone_percent["A"]
    maroc = f"{ctca.maroc:.2f}" if np.isfinite(ctca.maroc) else "—"
    text = pd.DataFrame(
        {
            "Measure": frame["measure"],
            "Pairs": [f"{c:,}" for c in ctca.zone_counts.values()] + [""],
            "Value": [
                *(f"{p:.1f} %" if np.isfinite(p) else "—" for p in ctca.zone_percent.values()),
                f"{maroc} mg/dL/min",
            ],
        }
    )
    return SectionView(
        key="trend_concurrence",
        title="Clinical trend concurrence (CTCA)",
        summary=f"zone A {share:.1f} % of {int(ctca.counts.sum()):,} pairs; MARoC {maroc} "
        "mg/dL/min",
        json={"trend_concurrence": records(frame)},
        about=(
            "Eichenlaub, Pleus, Freckmann: the sensor's and the comparator's rates in seven "
            "categories, each cell in a zone A–D of their concurrence matrix; MARoC, the "
            "comparator's mean absolute rate of change.",
        ),
        tables=(
            ReportTable(
                "trend_concurrence",
                "Clinical trend concurrence (CTCA): pairs and share in zones A–D, MARoC",
                frame,
                text=text,
            ),
        ),
    )


def _cg_ega(inputs: SectionInputs) -> CgEga | None:
    trend = inputs.report.trend
    return None if trend is None else trend.cg_ega


def _cg_ega_view(analysis: CgEga, report: CoreReport) -> SectionView:
    overall = analysis.states()[-1]
    accurate = overall["accurate_percent"]
    return SectionView(
        key="cg_ega",
        title="Continuous glucose-error grid analysis (CG-EGA)",
        summary=f"{'—' if accurate is None else f'{accurate:.1f}'} % of {analysis.n:,} pairs "
        "accurate readings",
        json={"cg_ega": json_ready(analysis.to_dict())},
        about=(CG_EGA_ABOUT,),
        tables=(
            ReportTable(
                "cg_ega",
                "CG-EGA: accurate readings, benign errors and erroneous readings by glycaemic "
                "state",
                analysis.frame(),
            ),
            ReportTable(
                "cg_ega_zones",
                "CG-EGA: pairs in each point (P-EGA) and rate (R-EGA) zone",
                analysis.zone_frame(),
            ),
        ),
    )


def _cg_diva_plot(rows: tuple[CgDivaRange, ...]) -> Figure:
    from ranking_core.meter.drawing.grid_plots import cg_diva_plot

    return cg_diva_plot(rows)


def _cg_diva(inputs: SectionInputs) -> tuple[CgDivaRange, ...] | None:
    return inputs.report.cg_diva


def _cg_diva_view(rows: tuple[CgDivaRange, ...], report: CoreReport) -> SectionView:
    total = rows[-1]
    return SectionView(
        key="cg_diva",
        title="CG-DIVA",
        summary=f"median deviation {total.median:.1f} {total.unit} over {total.pairs:,} pairs "
        f"of {total.sensors:,} sensors",
        json={"cg_diva": json_ready([row.to_dict() for row in rows])},
        about=(CG_DIVA_ABOUT,),
        tables=(
            ReportTable(
                "cg_diva",
                "CG-DIVA: median deviation, deviation intervals and sensor variability "
                "(mg/dL below comparator 70, % from 70)",
                cg_diva_frame(rows),
            ),
        ),
        figures=(ReportFigure("cg_diva", CG_DIVA_CAPTION, lambda: _cg_diva_plot(rows), "CG-DIVA"),),
    )


TREND_AGREEMENT = Section("trend_agreement", "Trend agreement", _trend, _trend_view)
TREND_CONCURRENCE = Section(
    "trend_concurrence", "Clinical trend concurrence", _concurrence, _concurrence_view
)
CG_EGA = Section("cg_ega", "CG-EGA", _cg_ega, _cg_ega_view)
CG_DIVA = Section("cg_diva", "CG-DIVA", _cg_diva, _cg_diva_view)
