"""Clinical error grids on the 0..600 mg/dL lattice: SEG, Clarke, Parkes and learned grids."""

from ranking_core.grids.clarke import CLARKE_ZONES, clarke_zone
from ranking_core.grids.compare import (
    RISK_CATEGORIES,
    GridComparison,
    compare_grids,
    difference_shares,
    risk_category,
)
from ranking_core.grids.coordinates import GlucoseTransform, TransformedKernel
from ranking_core.grids.learned import GLUCOSE_AXIS, lattice_points, learned_grid
from ranking_core.grids.parkes import PARKES_ZONES, parkes_zone
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
from ranking_core.grids.zone_lines import ZONE_GRID_KINDS, zone_polylines

__all__ = [
    "CLARKE_ZONES",
    "GLUCOSE_AXIS",
    "GLUCOSE_MAX",
    "MISSING_SEG_MESSAGE",
    "PARKES_ZONES",
    "RISK_CATEGORIES",
    "SEG_TABLE_ENV",
    "ZONE_GRID_KINDS",
    "AbsoluteRisk",
    "GlucoseTransform",
    "GridComparison",
    "SEGTable",
    "SEGTableError",
    "SEGTableMissing",
    "TransformedKernel",
    "clarke_zone",
    "compare_grids",
    "difference_shares",
    "find_seg_table",
    "lattice_points",
    "learned_grid",
    "load_seg_table",
    "parkes_zone",
    "risk_category",
    "side_of_diagonal",
    "signed_ratings",
    "zone_polylines",
]
