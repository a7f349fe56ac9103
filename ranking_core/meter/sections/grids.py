"""The error grids: the Surveillance Error Grid's risk grades and categories (with the operator's
SEG table), the zone grids of the registry (DTS, Clarke, Parkes of the report's diabetes type)
and a learned grid's categories, each with its plot (:mod:`ranking_core.grids.registry` names
each grid's paper)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ranking_core.grids.registry import RiskGrid, get_grid
from ranking_core.meter.sections.base import (
    CoreReport,
    ReportFigure,
    ReportTable,
    Section,
    SectionInputs,
    SectionView,
    records,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ranking_core.grids.seg import SEGTable

__all__ = ["LEARNED", "SEG", "ZONE_GRIDS", "figure_caption", "grid_figure"]


def figure_caption(name: str, n: int, unit: str = "mg/dL") -> str:
    """What a report's grid plot shows, every drawn line named (one caption per figure)."""
    grid = get_grid(name)
    lines = (
        "black lines: the borders between the risk grades A–E (risk 0.5, 1.5, 2.5, 3.5)"
        if isinstance(grid, RiskGrid)
        else "black lines: the zone borders, zones lettered"
    )
    axes = "; mmol/L on the top and right axes" if unit == "mmol/L" else ""
    return (
        f"{grid.title}: the {n:,} analysed pairs (dots, or pairs per cell where there are "
        f"many) over the grid's colours; {lines}; dotted line: measured = reference"
        f"{axes}."
    )


def grid_figure(report: CoreReport, name: str, surface: Any = None) -> ReportFigure:
    """The plot of grid ``name`` with the report's included pairs (``surface``: the SEG table
    or a learned surface; None for a zone grid)."""
    pairs = report.pairs[report.pairs["included"]]
    ref, bgm = pairs["REF"].to_numpy(), pairs["BGM"].to_numpy()

    def draw() -> Figure:  # matplotlib is loaded when the figure is drawn
        from ranking_core.meter.drawing.grid_plots import grid_plot

        return grid_plot(name, ref, bgm, surface=surface, unit=report.glucose_unit)

    return ReportFigure(
        name, figure_caption(name, ref.size, report.glucose_unit), draw, get_grid(name).title
    )


def _about(name: str) -> tuple[str, ...]:
    grid = get_grid(name)
    return (grid.purpose, f"Source: {grid.citation}")


@dataclass(frozen=True)
class SegResult:
    """The SEG's tables and the table they were read from (for its plot)."""

    grades: pd.DataFrame
    categories: pd.DataFrame
    table: SEGTable


def _seg(inputs: SectionInputs) -> SegResult | None:
    report = inputs.report
    if inputs.seg_table is None or report.risk_grades is None or report.risk_categories is None:
        return None
    return SegResult(report.risk_grades, report.risk_categories, inputs.seg_table)


def _seg_view(result: SegResult, report: CoreReport) -> SectionView:
    grades = result.grades
    no_risk = float(grades["percent"].iloc[0])
    return SectionView(
        key="seg",
        title=get_grid("seg").title,
        summary=f"{no_risk:.1f} % of the pairs in risk grade A (no risk)",
        json={
            "risk_grades": records(result.grades),
            "risk_categories": records(result.categories),
        },
        about=_about("seg"),
        tables=(
            ReportTable("risk_grades", "SEG risk grades", result.grades),
            ReportTable("risk_categories", "SEG risk categories", result.categories),
        ),
        figures=(grid_figure(report, "seg", result.table),),
    )


def _zone_view(zones: dict[str, pd.DataFrame], report: CoreReport) -> SectionView:
    grids = {family: get_grid(report.zone_grids[family]) for family in zones}
    tables, figures, about, summary = [], [], [], []
    for family, table in zones.items():
        grid = grids[family]
        tables.append(ReportTable(family, f"{grid.title}: zones", table, caption=grid.purpose))
        figures.append(grid_figure(report, grid.name))
        about.append(f"{grid.title}: {grid.purpose} Source: {grid.citation}")
        first = table.set_index("zone")["percent"]
        summary.append(f"{grid.title.split(' ')[0]} A {first.iloc[0]:.1f} %")
    meta = {
        family: {
            "name": grid.name,
            "title": grid.title,
            "citation": grid.citation,
            "purpose": grid.purpose,
        }
        for family, grid in grids.items()
    }
    return SectionView(
        key="zone_grids",
        title="Error grids: " + ", ".join(g.title for g in grids.values()),
        summary="; ".join(summary),
        json={**{family: records(t) for family, t in zones.items()}, "grids": meta},
        about=tuple(about),
        tables=tuple(tables),
        figures=tuple(figures),
    )


@dataclass(frozen=True)
class LearnedResult:
    categories: pd.DataFrame
    surface: np.ndarray


def _learned(inputs: SectionInputs) -> LearnedResult | None:
    table = inputs.report.learned_categories
    if table is None or inputs.learned_risk is None:
        return None
    return LearnedResult(table, np.asarray(inputs.learned_risk))


def _learned_view(result: LearnedResult, report: CoreReport) -> SectionView:
    title = get_grid("learned").title
    return SectionView(
        key="learned",
        title=title,
        summary=f"{float(result.categories['percent'].iloc[0]):.1f} % of the pairs at no risk",
        json={"learned_categories": records(result.categories)},
        about=_about("learned"),
        tables=(
            ReportTable(
                "learned_categories", "Risk categories on the learned grid", result.categories
            ),
        ),
        figures=(grid_figure(report, "learned", result.surface),),
    )


SEG = Section("seg", "Surveillance Error Grid", _seg, _seg_view)
ZONE_GRIDS = Section(
    "zone_grids", "Error grids", lambda inputs: dict(inputs.report.zones), _zone_view
)
LEARNED = Section("learned", "Learned grid", _learned, _learned_view)
