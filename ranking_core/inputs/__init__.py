"""One input layer for every table the library reads: meter pairs, rating sets, sensor and
reference glucose series, collaborative-filtering uploads.

:func:`read_table` reads text (CSV / TSV / TXT) and XLSX files, uploads and DataFrames for a
:class:`Schema` of roles and returns a :class:`TableRead`: the typed columns of the valid rows, the
refused rows grouped by rule with their line numbers, notes, and a summary ("n rows read, k
refused"). Glucose is converted to mg/dL (:mod:`ranking_core.inputs.units`). The rules and limits
are listed in the README section "Input files".
"""

from ranking_core.inputs.table import (
    ACCEPTED_FORMATS,
    Field,
    HeaderNotFound,
    InputError,
    Limits,
    RefusedRows,
    Role,
    Schema,
    TableRead,
    name_lines,
    open_binary,
    quote,
    read_table,
    read_text,
    with_limits,
)
from ranking_core.inputs.units import (
    MGDL_PER_MMOLL,
    PHYSICAL_MAX_MGDL,
    UNITS,
    UnitError,
    check_unit,
    from_mgdl,
    to_mgdl,
)

__all__ = [
    "ACCEPTED_FORMATS",
    "MGDL_PER_MMOLL",
    "PHYSICAL_MAX_MGDL",
    "UNITS",
    "Field",
    "HeaderNotFound",
    "InputError",
    "Limits",
    "RefusedRows",
    "Role",
    "Schema",
    "TableRead",
    "UnitError",
    "check_unit",
    "from_mgdl",
    "name_lines",
    "open_binary",
    "quote",
    "read_table",
    "read_text",
    "to_mgdl",
    "with_limits",
]
