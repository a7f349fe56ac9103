"""Clinical error grids on the 0..600 mg/dL lattice: SEG, Clarke, Parkes and learned grids."""

from ranking_core.grids.clarke import CLARKE_ZONES, clarke_zone
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
from ranking_core.grids.zone_lines import ZONE_GRID_KINDS, zone_polylines

__all__ = [
    "CLARKE_ZONES",
    "GLUCOSE_MAX",
    "MISSING_SEG_MESSAGE",
    "PARKES_ZONES",
    "SEG_TABLE_ENV",
    "ZONE_GRID_KINDS",
    "SEGTable",
    "SEGTableError",
    "SEGTableMissing",
    "clarke_zone",
    "find_seg_table",
    "load_seg_table",
    "parkes_zone",
    "zone_polylines",
]
