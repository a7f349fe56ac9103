"""Meter accuracy report: read BGM/REF pairs, compute the SEG tool's tables plus Clarke, Parkes
and learned grids."""

from ranking_core.meter.pairs import (
    PAIR_COLUMNS,
    MeterPairs,
    PairsFileError,
    pairs_from_frame,
    read_pairs,
)
from ranking_core.meter.report import (
    ISO_RANGES,
    RISK_CATEGORIES,
    RISK_GRADES,
    MeterReport,
    binomial_lower_bound,
    iso_difference,
    meter_report,
    risk_category,
    risk_grade,
)

__all__ = [
    "ISO_RANGES",
    "PAIR_COLUMNS",
    "RISK_CATEGORIES",
    "RISK_GRADES",
    "MeterPairs",
    "MeterReport",
    "PairsFileError",
    "binomial_lower_bound",
    "iso_difference",
    "meter_report",
    "pairs_from_frame",
    "read_pairs",
    "risk_category",
    "risk_grade",
]
