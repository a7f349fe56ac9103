"""The meter / CGM report as an ordered registry of sections (:data:`SECTIONS`).

Every rendering (the terminal of ``riskgrid meter-report``, its ``--json``, the PDF and HTML
documents, ``--out-dir`` and the Meter page) iterates :func:`section_views` and draws each
view the same way: none names a section. To add an analysis, write its module with a
:class:`~ranking_core.meter.sections.base.Section` and add one entry to :data:`SECTIONS`
(docs/ARCHITECTURE.md, "How to add a report section").

The order is the reading order: the settings, the headline (the verdicts of the standards
chosen, ISO 15197's binomial test only when ISO 15197 is judged), point accuracy, the method
comparison (regressions, bias at decision levels, the Bland–Altman plot), the error grids, the
CGM analyses (trends, CG-EGA, CG-DIVA, comparator coverage, sensor precision), the notes and the
provenance.
"""

from __future__ import annotations

from typing import Any

from ranking_core.meter.sections.accuracy import (
    ACCURACY,
    ISO_RANGES_SECTION,
    PAIR_TYPES,
    RANGES,
)
from ranking_core.meter.sections.base import (
    CoreReport,
    ReportFigure,
    ReportTable,
    Section,
    SectionInputs,
    SectionView,
)
from ranking_core.meter.sections.cgm import CG_DIVA, CG_EGA, TREND_AGREEMENT, TREND_CONCURRENCE
from ranking_core.meter.sections.comparison import METHOD_COMPARISON
from ranking_core.meter.sections.coverage import DGR, PRECISION
from ranking_core.meter.sections.grids import LEARNED, SEG, ZONE_GRIDS
from ranking_core.meter.sections.settings import NOTES, PROVENANCE, SETTINGS
from ranking_core.meter.sections.verdicts import ACCEPTANCE, BINOMIAL

__all__ = [
    "SECTIONS",
    "ReportFigure",
    "ReportTable",
    "Section",
    "SectionInputs",
    "SectionView",
    "compute_sections",
    "section_views",
]

# the report's sections in reading order; every rendering iterates this list
SECTIONS: list[Section] = [
    SETTINGS,
    ACCEPTANCE,
    BINOMIAL,
    ACCURACY,
    RANGES,
    PAIR_TYPES,
    ISO_RANGES_SECTION,
    METHOD_COMPARISON,
    SEG,
    ZONE_GRIDS,
    LEARNED,
    TREND_AGREEMENT,
    TREND_CONCURRENCE,
    CG_EGA,
    CG_DIVA,
    DGR,
    PRECISION,
    NOTES,
    PROVENANCE,
]


def compute_sections(inputs: SectionInputs) -> dict[str, Any]:
    """Each section's result by key, in registry order; sections that do not apply to these
    pairs (their ``compute`` returns None) are left out."""
    results = {}
    for section in SECTIONS:
        result = section.compute(inputs)
        if result is not None:
            results[section.key] = result
    return results


def section_views(report: CoreReport) -> list[SectionView]:
    """The views of the report's sections, in registry order (those the report computed)."""
    return [
        section.view(report.results[section.key], report)
        for section in SECTIONS
        if section.key in report.results
    ]
