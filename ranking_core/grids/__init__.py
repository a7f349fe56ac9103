"""Clinical error grids on the 0..600 mg/dL lattice: one risk scale and a registry of grids (SEG,
DTS, Clarke, Parkes type 1 and 2, learned)."""

from ranking_core.grids.clarke import CLARKE_ZONES, clarke_zone
from ranking_core.grids.compare import GridComparison, compare_grids, difference_shares
from ranking_core.grids.coordinates import GlucoseTransform, TransformedKernel
from ranking_core.grids.dts import DTS_ZONES, dts_zone
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
from ranking_core.grids.seg import (
    GLUCOSE_MAX,
    MISSING_SEG_MESSAGE,
    SEG_TABLE_ENV,
    SEGTable,
    SEGTableError,
    SEGTableMissing,
    find_seg_table,
    load_seg_table,
)
from ranking_core.grids.signed import AbsoluteRisk, side_of_diagonal, signed_ratings
from ranking_core.grids.zone_grid import zone_grid, zone_grid_names
from ranking_core.grids.zone_lines import zone_polylines

__all__ = [
    "CLARKE_ZONES",
    "DTS_ZONES",
    "GLUCOSE_AXIS",
    "GLUCOSE_MAX",
    "MISSING_SEG_MESSAGE",
    "PARKES_ZONES",
    "RISK_CATEGORIES",
    "RISK_GRADES",
    "SEG_TABLE_ENV",
    "AbsoluteRisk",
    "ErrorGrid",
    "GlucoseTransform",
    "GridComparison",
    "RiskGrid",
    "SEGTable",
    "SEGTableError",
    "SEGTableMissing",
    "TransformedKernel",
    "UnknownGridError",
    "ZoneGrid",
    "clarke_zone",
    "compare_grids",
    "difference_shares",
    "dts_zone",
    "find_seg_table",
    "get_grid",
    "grid_names",
    "grids",
    "lattice_points",
    "learned_grid",
    "load_seg_table",
    "parkes_zone",
    "risk_category",
    "risk_grade",
    "side_of_diagonal",
    "signed_ratings",
    "zone_grid",
    "zone_grid_names",
    "zone_polylines",
]
