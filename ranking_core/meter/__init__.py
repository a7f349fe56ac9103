"""Meter accuracy report: read BGM/REF pairs, compute the SEG tool's tables plus the DTS, Clarke,
Parkes and learned grids.

The names are imported on first use (PEP 562): the light parts (the standards' and bounds'
names, for the command line's help) load without NumPy.
"""

# ruff: noqa: F401 (the imports for type checkers re-export the names of _HOMES)

from __future__ import annotations

from typing import TYPE_CHECKING

from ranking_core.lazy import checked_homes, lazy_exports

if TYPE_CHECKING:  # the same names, for type checkers (exported at run time by _HOMES)
    from ranking_core.meter.pairs.readings import (
        PAIR_COLUMNS,
        MeterPairs,
        PairsFileError,
        pairs_from_frame,
        read_pairs,
    )
    from ranking_core.meter.report import MeterReport, iso_difference, meter_report
    from ranking_core.meter.seg_tool import ISO_RANGES, binomial_lower_bound

# public name → the module that defines it
_HOMES = checked_homes(__name__)  # name → its module, from the TYPE_CHECKING imports
__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
