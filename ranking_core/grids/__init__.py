"""Clinical error grids on the 0..600 mg/dL lattice: one risk scale and a registry of grids (SEG,
DTS, Clarke, Parkes type 1 and 2, learned).

The names below are imported on first use (PEP 562): the light modules of the package (the
lattice, where the SEG table comes from) load without NumPy, for the command line's help."""

# ruff: noqa: F401 (the imports for type checkers re-export the names of _HOMES)

from __future__ import annotations

from typing import TYPE_CHECKING

from ranking_core.lazy import checked_homes, lazy_exports

if TYPE_CHECKING:  # the same names, for type checkers (exported at run time by _HOMES)
    from ranking_core.grids.clarke import CLARKE_ZONES, clarke_zone
    from ranking_core.grids.compare import GridComparison, compare_grids, difference_shares
    from ranking_core.grids.coordinates import GlucoseTransform, TransformedKernel
    from ranking_core.grids.dts import DTS_ZONES, dts_zone
    from ranking_core.grids.lattice import GLUCOSE_MAX
    from ranking_core.grids.learned import GLUCOSE_AXIS, lattice_points, learned_grid
    from ranking_core.grids.parkes import PARKES_ZONES, parkes_zone
    from ranking_core.grids.registry import (
        ErrorGrid,
        RiskGrid,
        UnknownGridError,
        ZoneGrid,
        get_grid,
        grid_names,
        grids,
    )
    from ranking_core.grids.risk_scale import (
        RISK_CATEGORIES,
        RISK_GRADES,
        risk_category,
        risk_grade,
    )
    from ranking_core.grids.seg import SEGTable, find_seg_table, load_seg_table
    from ranking_core.grids.seg_source import (
        MISSING_SEG_MESSAGE,
        SEG_TABLE_ENV,
        SEGTableError,
        SEGTableMissing,
    )
    from ranking_core.grids.signed import AbsoluteRisk, side_of_diagonal, signed_ratings
    from ranking_core.grids.zone_codes import zone_grid, zone_grid_names
    from ranking_core.grids.zone_lines import zone_polylines

# public name → the module that defines it
_HOMES = checked_homes(__name__)  # name → its module, from the TYPE_CHECKING imports
__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
