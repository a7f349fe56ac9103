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

# ruff: noqa: F401 (the imports for type checkers re-export the names of _HOMES)

from __future__ import annotations

from typing import TYPE_CHECKING

from ranking_core.lazy import checked_homes, lazy_exports

if TYPE_CHECKING:  # the same names, for type checkers (exported at run time by _HOMES)
    from ranking_core.inputs.decoding import open_binary, read_text
    from ranking_core.inputs.formats import (
        ACCEPTED_FORMATS,
        READERS,
        Reader,
        accepted_formats,
        format_names,
        reader_named,
        register_reader,
        unregister_reader,
        upload_types,
    )
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
    from ranking_core.inputs.table import read_table, reader_for
    from ranking_core.inputs.units import (
        MGDL_PER_MMOLL,
        PHYSICAL_MAX_MGDL,
        UNITS,
        UnitError,
        check_unit,
        from_mgdl,
        to_mgdl,
    )


# public name → the module that defines it (lightest first: the formats' names and the units
# load without pandas)
_HOMES = checked_homes(__name__)  # name → its module, from the TYPE_CHECKING imports
__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
