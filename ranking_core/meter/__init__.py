"""Meter accuracy report: read BGM/REF pairs, compute the SEG tool's tables plus the DTS, Clarke,
Parkes and learned grids."""

from ranking_core.meter.pairs.readings import (
    PAIR_COLUMNS,
    MeterPairs,
    PairsFileError,
    pairs_from_frame,
    read_pairs,
)
from ranking_core.meter.report import MeterReport, iso_difference, meter_report
from ranking_core.meter.seg_tool import ISO_RANGES, binomial_lower_bound

__all__ = [
    "ISO_RANGES",
    "PAIR_COLUMNS",
    "MeterPairs",
    "MeterReport",
    "PairsFileError",
    "binomial_lower_bound",
    "iso_difference",
    "meter_report",
    "pairs_from_frame",
    "read_pairs",
]
