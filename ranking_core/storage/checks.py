"""What every record passes before it is stored, and the safe encodings of its arrays and frames.

Nothing stored is code or a server path: arrays are ``.npy`` bytes written and read with
``allow_pickle=False``, frames ``.npz`` archives of their columns, a learned grid the 601 × 601
grid that was shown with its ``grid.json`` metadata, a SEG table the bytes of the uploaded file
(checked by the SEG table reader within :data:`SEG_TABLE_MAX_BYTES`). Names are one line of
printable text, ratings and meter pairs pass the same row rules as an upload, a learned grid is
finite, on the risk scale and 601 × 601.
"""

from __future__ import annotations

import gzip
import io
import math
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ranking_core.record_kinds import KINDS, RECORD_KINDS

if TYPE_CHECKING:  # NumPy and pandas are imported by the checks that use them, when they run
    import pandas as pd
    from numpy.typing import ArrayLike, NDArray

    from ranking_core.grids.seg import SEGTable

# The checks below import the grid, rating and input modules when they run, not here: a command
# that only reads records (riskgrid records list, survey status) starts without them.

NAME_MAX = 200
SAVED_BY_MAX = 320  # an e-mail address at most
GRID_SIZE = 601  # the 0..600 mg/dL lattice, step 1 (grids.seg.GLUCOSE_MAX + 1; a test checks it)
# A fitted ranking function is put on the rating scale by its intercept (DESIGN §3); between and
# beyond the rated points a smooth fit may pass the ends of the scale a little. One category past
# either end is allowed; anything further is a failed fit (λ far too small), not a risk grid.
GRID_OVERSHOOT = 1.0
# what a learned grid's metadata (its grid.json) must give, and the JSON type of each
GRID_METADATA_KEYS: Mapping[str, type | tuple[type, ...]] = {
    "settings": dict,
    "lambda": (int, float),
    "ratings_checksum": str,
    "riskgrid_version": str,
}
# The official RiskPairData table is about 9 MB as CSV, 2 MB gzipped; an uploaded table, and what
# its gzip or XLSX archive declares it expands to, may be at most this large.
SEG_TABLE_MAX_BYTES = 64 * 2**20
# the largest array a record may declare (a 601 × 601 grid is 361,201 values; a rating set of the
# input layer's 2,000,000 rows is the largest frame column)
ARRAY_MAX_VALUES = 4_000_000
_BLOBS = {kind: spec.blobs for kind, spec in RECORD_KINDS.items()}  # stored parts of each kind


class StorageError(ValueError):
    """A save, load, rename or delete was refused or failed; the message says why."""


class RecordNotFound(StorageError, LookupError):
    """No record of that kind and name."""


# -- safe encodings -----------------------------------------------------------------------------
def array_to_bytes(values: ArrayLike) -> bytes:
    """``.npy`` bytes of a numeric or unicode array, written with ``allow_pickle=False``."""
    import numpy as np

    array = np.asarray(values)
    if array.dtype.kind not in "biufU":
        raise StorageError(f"cannot store an array of dtype {array.dtype} (numbers or text only)")
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def array_from_bytes(content: bytes) -> NDArray:
    """Inverse of :func:`array_to_bytes`. Refuses pickled content, other dtypes than numbers and
    text, and a header whose declared shape does not match the bytes that follow it (checked
    before anything is allocated, so a tampered shape cannot exhaust memory)."""
    import numpy as np

    stream = io.BytesIO(content)
    try:
        version = np.lib.format.read_magic(stream)
        read_header = {
            (1, 0): np.lib.format.read_array_header_1_0,
            (2, 0): np.lib.format.read_array_header_2_0,
        }.get(version)
        if read_header is None:
            raise ValueError(f".npy format version {version} is not one riskgrid writes")
        shape, fortran, dtype = read_header(stream)
    except (ValueError, OSError, EOFError, SyntaxError, TypeError) as exc:
        raise StorageError(f"stored array is not a plain numeric/text .npy ({exc})") from exc
    if dtype.kind not in "biufU" or dtype.hasobject:
        raise StorageError(f"stored array is not a plain numeric/text .npy (dtype {dtype})")
    count = math.prod(shape)
    if count > ARRAY_MAX_VALUES or count * dtype.itemsize != len(content) - stream.tell():
        raise StorageError(
            f"stored array declares shape {shape} of {dtype} "
            f"({count * dtype.itemsize:,} bytes) but holds "
            f"{len(content) - stream.tell():,} bytes; it is damaged"
        )
    array = np.frombuffer(content, dtype=dtype, count=count, offset=stream.tell())
    return array.reshape(shape, order="F" if fortran else "C").copy()


def _column_array(column: pd.Series) -> NDArray:
    import pandas as pd

    if pd.api.types.is_bool_dtype(column) or pd.api.types.is_numeric_dtype(column):
        return column.to_numpy()
    return column.astype("string").fillna("").to_numpy(dtype=str)


def frame_to_bytes(frame: pd.DataFrame) -> bytes:
    """``.npz`` bytes holding each column of ``frame`` (numbers kept, anything else as text)."""
    import numpy as np

    names = [str(c) for c in frame.columns]
    if len(set(names)) != len(names):
        raise StorageError(f"cannot store a frame with repeated column names: {names}")
    columns = {f"c{i}": _column_array(frame[c]) for i, c in enumerate(frame.columns)}
    for key, values in columns.items():
        if values.dtype.kind not in "biufU":
            raise StorageError(f"column {names[int(key[1:])]!r} has dtype {values.dtype}")
    buffer = io.BytesIO()
    # no member needs pickle (kinds checked above); naming allow_pickle also keeps the members
    # (keys c0, c1, …) apart from savez's own keyword
    np.savez(buffer, allow_pickle=False, __columns__=np.array(names, dtype=str), **columns)
    return buffer.getvalue()


def frame_from_bytes(content: bytes) -> pd.DataFrame:
    """Inverse of :func:`frame_to_bytes`; refuses pickled content, and members that declare more
    bytes than the archive could hold uncompressed (read through :func:`array_from_bytes`)."""
    import pandas as pd

    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            members = {}
            for info in archive.infolist():
                if info.file_size > len(content):  # .npz archives are written uncompressed
                    raise StorageError(
                        f"stored frame member {info.filename!r} declares "
                        f"{info.file_size:,} bytes in a {len(content):,}-byte "
                        "archive; it is damaged"
                    )
                members[info.filename.removesuffix(".npy")] = archive.read(info)
        names = [str(n) for n in array_from_bytes(members["__columns__"])]
        return pd.DataFrame({n: array_from_bytes(members[f"c{i}"]) for i, n in enumerate(names)})
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, EOFError) as exc:
        if isinstance(exc, StorageError):
            raise
        raise StorageError(f"stored frame is damaged or unsafe ({exc})") from exc


# -- checks before anything is stored -----------------------------------------------------------
def check_record_name(name: str, kind: str = "record") -> str:
    """The name without surrounding spaces; :class:`StorageError` unless it is one line of
    1..NAME_MAX printable characters (no control characters such as NUL, ESC or line breaks, no
    invisible formatting characters such as bidi overrides)."""
    label = kind.replace("_", " ")
    if not isinstance(name, str):
        raise StorageError(f"a {label} name must be text, not {type(name).__name__}")
    name = name.strip()
    if not name or len(name) > NAME_MAX:
        raise StorageError(f"a {label} needs a name of 1..{NAME_MAX} characters")
    bad = sorted({c for c in name if not c.isprintable()})
    if bad:
        shown = ", ".join(f"U+{ord(c):04X}" for c in bad)
        raise StorageError(
            f"a {label} name must be one line of printable text; this one contains {shown}"
        )
    return name


def display_name(name: str) -> str:
    """A stored name as one line of printable text: every character that is not printable (a
    name saved by an earlier version may hold a line break or a control character) written as
    its escape, e.g. ``\\n`` or ``\\x1b``."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


def _lookup_name(name: str, kind: str) -> str:
    """A name to look a stored record up by: any text of at most NAME_MAX characters, so that a
    record saved with a name today's rules refuse can still be found, renamed and deleted."""
    if not isinstance(name, str) or not name or len(name) > NAME_MAX:
        raise StorageError(f"a {kind.replace('_', ' ')} name is text of 1..{NAME_MAX} characters")
    if "\x00" in name:  # no database stores it in a name (PostgreSQL refuses it in text)
        raise _not_found(kind, name)
    return name


def check_grid(grid: ArrayLike, signed: bool = False, label: str = "learned grid") -> None:
    """Refuse a risk grid that is not (601, 601), has a non-finite value, or leaves the risk
    scale 0..4 by more than :data:`GRID_OVERSHOOT` (−4..4 for a signed grid)."""
    import numpy as np

    values = np.asarray(grid, dtype=np.float64)
    if values.shape != (GRID_SIZE, GRID_SIZE):
        raise StorageError(
            f"{label}: a grid must be {GRID_SIZE} × {GRID_SIZE} (0..{GRID_SIZE - 1} "
            f"mg/dL); got shape {values.shape}"
        )
    finite = np.isfinite(values)
    if not finite.all():
        raise StorageError(
            f"{label}: {int((~finite).sum()):,} grid values are not finite numbers; not stored"
        )
    from ranking_core.grids.risk_scale import RISK_MAX

    low = (-RISK_MAX if signed else 0.0) - GRID_OVERSHOOT
    high = RISK_MAX + GRID_OVERSHOOT
    if values.min() < low or values.max() > high:
        scale = f"{-RISK_MAX:g}..{RISK_MAX:g}" if signed else f"0..{RISK_MAX:g}"
        raise StorageError(
            f"{label}: grid values run from {values.min():.3g} to {values.max():.3g}, far off the "
            f"risk scale {scale} (more than {GRID_OVERSHOOT:g} beyond it); the fit failed "
            "(λ too small?) and was not stored"
        )


def check_grid_metadata(metadata: Any, label: str = "learned grid") -> dict[str, Any]:
    """The metadata of a learned grid (its ``grid.json``) as plain JSON, checked: it must give
    each of :data:`GRID_METADATA_KEYS` with its JSON type (true/false are not numbers, "false" is
    not a boolean), λ finite and > 0."""
    if not isinstance(metadata, Mapping):
        raise StorageError(f"{label}: the metadata must be a JSON object")
    metadata = _json_ready(metadata)
    for key, kind in GRID_METADATA_KEYS.items():
        value = metadata.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise StorageError(
                f"{label}: the metadata must give {key!r} as {_json_type(kind)}, not {value!r}"
            )
    if not (math.isfinite(metadata["lambda"]) and metadata["lambda"] > 0):
        raise StorageError(f"{label}: λ must be a finite number > 0, not {metadata['lambda']!r}")
    return metadata


def _json_type(kind: type | tuple[type, ...]) -> str:
    names = {
        dict: "an object",
        str: "text",
        bool: "true or false",
        int: "a number",
        float: "a number",
    }
    return names[kind[0] if isinstance(kind, tuple) else kind]


def json_bool(meta: Mapping[str, Any], key: str, default: bool, label: str) -> bool:
    """A stored true/false, strictly: a JSON boolean or absent (``default``); anything else (the
    text "false", 0, null) is a damaged record, never read as true."""
    value = meta.get(key, default)
    if not isinstance(value, bool):
        raise StorageError(f"{label} is damaged: {key!r} must be true or false, not {value!r}")
    return value


def seg_table_from_bytes(content: bytes, file_name: str) -> SEGTable:
    """The SEG table in an uploaded file's bytes (CSV, CSV.gz or XLSX), read by the SEG table
    reader within :data:`SEG_TABLE_MAX_BYTES`: the file, what a gzip file expands to and what an
    XLSX archive declares its parts expand to are checked before the table is parsed."""
    from ranking_core.grids.seg import WORKBOOK_SUFFIXES, SEGTableError, load_seg_table

    label = Path(str(file_name)).name or "uploaded SEG table"
    if not isinstance(content, bytes | bytearray) or len(content) > SEG_TABLE_MAX_BYTES:
        raise StorageError(
            f"{label}: a SEG table file may be at most {SEG_TABLE_MAX_BYTES:,} bytes"
        )
    suffix = Path(label).suffix.lower()
    try:
        if suffix == ".gz":
            with gzip.GzipFile(fileobj=io.BytesIO(content)) as unpacked:
                text_bytes = unpacked.read(SEG_TABLE_MAX_BYTES + 1)
            if len(text_bytes) > SEG_TABLE_MAX_BYTES:
                raise StorageError(
                    f"{label}: expands to more than {SEG_TABLE_MAX_BYTES:,} "
                    "bytes; a SEG table is about 9 MB"
                )
            return load_seg_table(
                io.BytesIO(text_bytes), name=label.removesuffix(".gz").removesuffix(".GZ")
            )
        if suffix in WORKBOOK_SUFFIXES:
            with zipfile.ZipFile(io.BytesIO(content)) as archive:
                declared = sum(info.file_size for info in archive.infolist())
            if declared > 4 * SEG_TABLE_MAX_BYTES:
                raise StorageError(
                    f"{label}: the workbook declares {declared:,} bytes "
                    "unpacked; a SEG table workbook is far smaller"
                )
        return load_seg_table(io.BytesIO(bytes(content)), name=label)
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise StorageError(f"{label}: cannot be unpacked ({exc})") from exc
    except SEGTableError as exc:  # SEGTableMissing included
        raise StorageError(str(exc)) from exc


def _check_rating_frame(frame: pd.DataFrame, name: str) -> None:
    from ranking_core.inputs import InputError
    from ranking_core.ratings import read_rating_set

    try:
        checked = read_rating_set(frame, unit="mg/dL", name=name)
    except InputError as exc:
        raise StorageError(f"rating set not stored: {exc}") from exc
    if checked.problems:
        rules = "; ".join(p.message for p in checked.problems)
        raise StorageError(
            f"rating set {name!r} not stored: {rules}. Store the checked rows "
            "(read_rating_set keeps only the valid ones)"
        )


def _check_meter_frame(frame: pd.DataFrame, name: str) -> None:
    import numpy as np
    import pandas as pd

    from ranking_core.validation import describe_rows

    by_lower = {str(c).strip().lower(): c for c in frame.columns}
    for column in ("bgm", "ref"):
        if column not in by_lower:
            raise StorageError(f"meter data {name!r} not stored: no {column.upper()} column")
        values = pd.to_numeric(frame[by_lower[column]], errors="coerce").to_numpy(np.float64)
        bad = ~np.isfinite(values) | (values < 0)
        if bad.any():
            raise StorageError(
                f"meter data {name!r} not stored: {column.upper()} is not a "
                f"number ≥ 0 mg/dL in {describe_rows(np.flatnonzero(bad))}"
            )


def _json_ready(value: Any) -> Any:
    """Plain JSON types (numbers, strings, lists, dicts); NumPy scalars and arrays converted."""
    import numpy as np

    if isinstance(value, Mapping):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [_json_ready(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise StorageError(f"cannot store {value!r} ({type(value).__name__}) as JSON")


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise StorageError(f"unknown record kind {kind!r}; one of {', '.join(KINDS)}")


def _not_found(kind: str, name: str) -> RecordNotFound:
    return RecordNotFound(f"no {kind.replace('_', ' ')} named {name!r} is stored")
