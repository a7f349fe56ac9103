"""The Surveillance Error Grid (SEG, Klonoff et al. 2014) risk table: loading, checking, lookup.

The project ships no copy of the table. Users point at their own ``RiskPairData`` file
(CSV, CSV.gz or XLSX with columns RiskPairID, REF, BGM, RiskFactor, abs_risk; 601 × 601 integer
pairs in 0..600 mg/dL) through the ``SEG_TABLE`` environment variable, a ``--seg-table`` option or a
dashboard upload. Sign convention of RiskFactor: negative where the meter reads too high,
positive where it reads too low; abs_risk = |RiskFactor| on the 0 (none) … 4 (extreme) scale.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import IO, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids.lattice import GLUCOSE_MAX
from ranking_core.grids.registry import risk_grid
from ranking_core.grids.seg_source import (
    MISSING_SEG_MESSAGE,
    SEG_TABLE_ENV,
    SEG_TABLE_SUFFIXES,
    WORKBOOK_SUFFIXES,
    SEGTableError,
    SEGTableMissing,
)
from ranking_core.validation import describe_rows

__all__ = [
    "GLUCOSE_MAX",
    "GRIDS",
    "MISSING_SEG_MESSAGE",
    "SEG_COLUMNS",
    "SEG_TABLE_ENV",
    "SEG_TABLE_SUFFIXES",
    "SEGTable",
    "SEGTableError",
    "SEGTableMissing",
    "find_seg_table",
    "load_seg_table",
    "seg_table_from_frame",
]

SEG_COLUMNS = ("RiskPairID", "REF", "BGM", "RiskFactor", "abs_risk")
GRIDS = (
    risk_grid(
        "seg",
        "Surveillance Error Grid",
        "Klonoff DC et al. The Surveillance Error Grid. J Diabetes Sci Technol 2014;8(4):658-672.",
        "A continuous risk (0 none to 4 extreme) for every (reference, meter) pair, rated by 234 "
        "clinicians; used for post-market surveillance of blood glucose monitors.",
        order=0,
        needs="the SEG risk table (RiskPairData)",
    ),
)
# abs_risk and RiskFactor are each rounded to 5 significant digits in the distributed file
_ABS_TOLERANCE = 1e-4


@dataclass(frozen=True)
class SEGTable:
    """The SEG risk surface on the integer lattice 0..600 × 0..600 mg/dL.

    Attributes
    ----------
    signed : (601, 601) RiskFactor indexed ``[REF, BGM]`` in mg/dL.
    source : where it was read from (for messages and storage).
    """

    signed: NDArray[np.float64] = field(repr=False)
    source: str = ""

    @cached_property
    def fingerprint(self) -> str:
        """A short hash of the risk values: two tables with the same values share it (a cache
        key that tells apart tables of different content under the same name)."""
        return hashlib.blake2b(
            np.ascontiguousarray(self.signed).tobytes(), digest_size=8
        ).hexdigest()

    @property
    def absolute(self) -> NDArray[np.float64]:
        """(601, 601) abs_risk indexed ``[REF, BGM]``."""
        return np.abs(self.signed)

    def risk(self, ref: ArrayLike, bgm: ArrayLike, signed: bool = False) -> NDArray[np.float64]:
        """Vectorised lookup of the risk of (REF, BGM) pairs in mg/dL.

        Values are rounded to the nearest integer mg/dL (as the official SEG tool does). Pairs
        outside 0..600 raise ``ValueError`` naming their positions.
        """
        ref_i = np.rint(np.asarray(ref, dtype=np.float64))
        bgm_i = np.rint(np.asarray(bgm, dtype=np.float64))
        ref_i, bgm_i = np.broadcast_arrays(ref_i, bgm_i)
        outside = ~((ref_i >= 0) & (ref_i <= GLUCOSE_MAX) & (bgm_i >= 0) & (bgm_i <= GLUCOSE_MAX))
        if np.any(outside):
            raise ValueError(
                f"SEG lookup: {describe_rows(np.flatnonzero(outside.ravel()))} lie outside the "
                f"grid (rule: REF and BGM must be finite values in 0..{GLUCOSE_MAX} mg/dL)"
            )
        values = self.signed[ref_i.astype(np.intp), bgm_i.astype(np.intp)]
        return values if signed else np.abs(values)


def _problem(rule: str, rows: NDArray[np.intp]) -> str:
    """Name data rows by their line in a file with one header line."""
    return f"{rule} in {describe_rows(rows + 2).replace('row', 'line')}"


def seg_table_from_frame(frame: pd.DataFrame, source: str = "") -> SEGTable:
    """Check a frame with the RiskPairData columns and build the lattice.

    Rules: the five columns exist (names matched case-insensitively); REF, BGM, RiskFactor, abs_risk
    are finite numbers; REF and BGM are integers in 0..600; every one of the 361,201 pairs appears
    exactly once; abs_risk = |RiskFactor| (to the file's 5-digit rounding). Every broken rule is
    reported with the lines that break it.
    """
    by_lower = {str(c).strip().lower(): c for c in frame.columns}
    missing = [c for c in SEG_COLUMNS if c.lower() not in by_lower]
    if missing:
        raise SEGTableError(
            f"{source or 'SEG table'}: missing column(s) {', '.join(missing)}; found "
            f"{', '.join(map(str, frame.columns))} (rule: columns {', '.join(SEG_COLUMNS)})"
        )
    cols = {c: pd.to_numeric(frame[by_lower[c.lower()]], errors="coerce") for c in SEG_COLUMNS[1:]}
    problems = []
    for name, column in cols.items():
        bad = np.flatnonzero(~np.isfinite(column.to_numpy(dtype=np.float64)))
        if bad.size:
            problems.append(_problem(f"{name} is not a finite number", bad))
    ref = cols["REF"].to_numpy(dtype=np.float64)
    bgm = cols["BGM"].to_numpy(dtype=np.float64)
    for name, values in (("REF", ref), ("BGM", bgm)):
        off = np.flatnonzero(
            np.isfinite(values)
            & ((values != np.rint(values)) | (values < 0) | (values > GLUCOSE_MAX))
        )
        if off.size:
            problems.append(_problem(f"{name} is not an integer in 0..{GLUCOSE_MAX} mg/dL", off))
    factor = cols["RiskFactor"].to_numpy(dtype=np.float64)
    absolute = cols["abs_risk"].to_numpy(dtype=np.float64)
    mismatch = np.flatnonzero(np.abs(np.abs(factor) - absolute) > _ABS_TOLERANCE)
    if mismatch.size:
        problems.append(_problem("abs_risk differs from |RiskFactor|", mismatch))
    if problems:
        raise SEGTableError(f"{source or 'SEG table'}: " + "; ".join(problems))
    key = ref.astype(np.int64) * (GLUCOSE_MAX + 1) + bgm.astype(np.int64)
    order = np.argsort(key, kind="stable")
    duplicated = order[1:][np.diff(key[order]) == 0]
    if duplicated.size:
        raise SEGTableError(
            f"{source or 'SEG table'}: "
            + _problem("the (REF, BGM) pair repeats an earlier line", np.sort(duplicated))
        )
    size = (GLUCOSE_MAX + 1) ** 2
    if key.size != size:
        have = np.zeros(size, dtype=bool)
        have[key] = True
        absent = np.flatnonzero(~have)
        example = ", ".join(
            f"({k // (GLUCOSE_MAX + 1)}, {k % (GLUCOSE_MAX + 1)})" for k in absent[:5]
        )
        raise SEGTableError(
            f"{source or 'SEG table'}: {absent.size} of the {size} (REF, BGM) pairs are missing, "
            f"for example {example} (rule: every integer pair in 0..{GLUCOSE_MAX} mg/dL once)"
        )
    signed = np.empty(size)
    signed[key] = factor
    return SEGTable(signed.reshape(GLUCOSE_MAX + 1, GLUCOSE_MAX + 1), source)


def load_seg_table(path: str | os.PathLike[str] | IO[bytes], name: str | None = None) -> SEGTable:
    """Read and check a RiskPairData table from CSV, CSV.gz (compression inferred) or XLSX.

    ``path`` may be a file-like object (an upload); ``name`` then gives its file name for the
    format and for messages.
    """
    label = name or (str(path) if isinstance(path, str | os.PathLike) else "uploaded SEG table")
    suffixes = Path(label).suffixes
    if suffixes and suffixes[-1].lower() == ".xls":
        raise SEGTableError(
            f"{label}: the legacy Excel .xls format is not accepted; accepted: CSV, CSV.gz or XLSX"
        )
    try:
        if suffixes and suffixes[-1].lower() in WORKBOOK_SUFFIXES:
            frame = pd.read_excel(path, engine="openpyxl")
        else:
            gzip = bool(suffixes) and suffixes[-1].lower() == ".gz"
            compression: Literal["gzip", "infer"] = "gzip" if gzip else "infer"
            frame = pd.read_csv(path, compression=compression, encoding_errors="strict")
    except FileNotFoundError as exc:
        raise SEGTableMissing(f"SEG table file not found: {label}. {MISSING_SEG_MESSAGE}") from exc
    except (
        UnicodeDecodeError,
        pd.errors.ParserError,
        pd.errors.EmptyDataError,
        OSError,
        ValueError,
    ) as exc:
        raise SEGTableError(f"{label}: cannot be read as a CSV/CSV.gz/XLSX table ({exc})") from exc
    return seg_table_from_frame(frame, label)


def find_seg_table(
    path: str | os.PathLike | None = None, environ: Mapping[str, str] | None = None
) -> SEGTable:
    """The SEG table from ``path`` if given, else from ``$SEG_TABLE``; raises
    :class:`SEGTableMissing` (whose message says how to provide one) when neither is set."""
    environ = os.environ if environ is None else environ
    chosen = path or environ.get(SEG_TABLE_ENV)
    if not chosen:
        raise SEGTableMissing()
    return load_seg_table(chosen)
