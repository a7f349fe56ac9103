"""One input layer for every table the library reads: meter pairs, rating sets, sensor and
reference glucose series, collaborative-filtering uploads.

:func:`read_table` reads text (CSV / TSV / TXT) and XLSX files, uploads and DataFrames for a
:class:`Schema` of roles and returns a :class:`TableRead`: the typed columns of the valid rows, the
refused rows grouped by rule with their line numbers, notes, and a summary ("n rows read, k
refused"). Glucose is converted to mg/dL (:mod:`ranking_core.inputs.units`). The rules and limits
are listed in docs/INPUTS.md. The formats accepted are the entries of
:data:`READERS` (upload widgets, help texts and messages read it: :func:`upload_types`,
:func:`format_names`, :func:`accepted_formats`).

The names are imported on first use (PEP 562): importing one light module of the layer, such as
:mod:`ranking_core.inputs.text`, loads neither pandas nor the XLSX reader (the command line's
help starts at once).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# the modules that define the public names, lightest first (read by __getattr__ below)
_HOMES = (
    "ranking_core.inputs.units",
    "ranking_core.inputs.schema",
    "ranking_core.inputs.rows",
    "ranking_core.inputs.decoding",
    "ranking_core.inputs.table",
)

if TYPE_CHECKING:  # the same names, for type checkers
    from ranking_core.inputs.decoding import open_binary, read_text
    from ranking_core.inputs.rows import Reader
    from ranking_core.inputs.schema import (
        Field,
        HeaderNotFound,
        InputError,
        Limits,
        RefusedRows,
        Role,
        Schema,
        TableRead,
        name_lines,
        quote,
        with_limits,
    )
    from ranking_core.inputs.table import (
        ACCEPTED_FORMATS,
        READERS,
        accepted_formats,
        format_names,
        read_table,
        reader_for,
        reader_named,
        register_reader,
        unregister_reader,
        upload_types,
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
    "READERS",
    "UNITS",
    "Field",
    "HeaderNotFound",
    "InputError",
    "Limits",
    "Reader",
    "RefusedRows",
    "Role",
    "Schema",
    "TableRead",
    "UnitError",
    "accepted_formats",
    "check_unit",
    "format_names",
    "from_mgdl",
    "name_lines",
    "open_binary",
    "quote",
    "read_table",
    "read_text",
    "reader_for",
    "reader_named",
    "register_reader",
    "to_mgdl",
    "unregister_reader",
    "upload_types",
    "with_limits",
]


def __getattr__(name: str) -> object:
    if name in __all__:
        for home in _HOMES:
            module = importlib.import_module(home)
            if name in vars(module):
                value = vars(module)[name]
                globals()[name] = value
                return value
    raise AttributeError(f"module 'ranking_core.inputs' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
