"""Where the SEG risk table comes from, and what is said when it is missing or not valid: the
environment variable :data:`SEG_TABLE_ENV`, the file suffixes read, the sentence of a missing
table and the two errors. Plain Python (the command line's help names the variable at once); the
table itself is :mod:`ranking_core.grids.seg`.
"""

from __future__ import annotations

from ranking_core.inputs.formats import reader_named

__all__ = [
    "MISSING_SEG_MESSAGE",
    "SEG_TABLE_ENV",
    "SEG_TABLE_SUFFIXES",
    "WORKBOOK_SUFFIXES",
    "SEGTableError",
    "SEGTableMissing",
]

SEG_TABLE_ENV = "SEG_TABLE"
# the SEG table's files: CSV, gzip-compressed CSV, and the input layer's workbooks (READERS)
WORKBOOK_SUFFIXES = reader_named("xlsx").suffixes
SEG_TABLE_SUFFIXES = (".csv", ".gz", *WORKBOOK_SUFFIXES)
MISSING_SEG_MESSAGE = (
    "No SEG risk table is configured. riskgrid does not ship the official Surveillance Error Grid "
    "table; obtain RiskPairData (the 2014 SEG risk table, distributed for example with the R "
    "package segtools as data/RiskPairData.rda, or from the Diabetes Technology Society) as CSV, "
    "CSV.gz or "
    "XLSX with columns RiskPairID, REF, BGM, RiskFactor, abs_risk, then either set the environment "
    f"variable {SEG_TABLE_ENV}=/path/to/RiskPairData.csv.gz, pass --seg-table PATH on the command "
    "line, or upload the file on the dashboard's settings panel."
)


class SEGTableError(ValueError):
    """The file is not a valid SEG risk table; the message names the rows and the rule."""


class SEGTableMissing(LookupError):
    """No SEG table was given; the message says how to provide one."""

    def __init__(self, message: str = MISSING_SEG_MESSAGE) -> None:
        super().__init__(message)
