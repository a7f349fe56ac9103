"""Clinical error grids on the 0..600 mg/dL lattice: SEG, Clarke, Parkes and learned grids."""

from ranking_core.grids.clarke import CLARKE_ZONES, clarke_zone
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

__all__ = [
    "CLARKE_ZONES",
    "GLUCOSE_MAX",
    "MISSING_SEG_MESSAGE",
    "SEG_TABLE_ENV",
    "SEGTable",
    "SEGTableError",
    "SEGTableMissing",
    "clarke_zone",
    "find_seg_table",
    "load_seg_table",
]
