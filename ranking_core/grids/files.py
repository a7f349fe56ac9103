"""Learned grids as files other tools read: ``grid.npy``, ``grid.csv``, ``grid.png``, ``grid.json``.

=============  =====================================================================================
``grid.npy``   (601, 601) float64, rows = reference 0..600 mg/dL, columns = measured 0..600 mg/dL
               (step 1), risk on the SEG scale 0..4; a plain NumPy array (no pickle)
``grid.csv``   the same values in long form with the SEG risk table's columns ``REF, BGM, risk``
               (361,201 rows, REF varying slowest)
``grid.png``   a heat map in the SEG colours, reference on x, measured on y
``grid.json``  the settings, λ (chosen and shown), the rating set's checksum, riskgrid's version
=============  =====================================================================================

:func:`write_grid_files` writes the four files of a learned grid
(:class:`ranking_core.learn.LearnedGrid`), :func:`grid_metadata` is its ``grid.json``.
The values are the learned surface clipped to the risk scale 0..4 (a learned surface may leave it
slightly). :func:`read_grid_file` reads ``.npy`` and ``.csv`` grid files back with the rules of
every input file: shape 601 × 601, finite, within the risk scale, never unpickled; anything else
is refused with one line saying which rule failed.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import IO, Protocol

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids.risk_scale import RISK_MAX
from ranking_core.grids.seg import GLUCOSE_MAX
from ranking_core.version import riskgrid_version

__all__ = [
    "GRID_FILES",
    "GRID_FILE_SUFFIXES",
    "SIZE",
    "GridFileError",
    "LearnedGridLike",
    "grid_csv",
    "grid_file_contents",
    "grid_metadata",
    "grid_npy",
    "grid_png",
    "read_grid_file",
    "write_grid_files",
]

SIZE = GLUCOSE_MAX + 1
GRID_FILES = ("grid.npy", "grid.csv", "grid.png", "grid.json")
MAX_CSV_BYTES = 64 * 2**20  # a grid CSV is about 5 MB; beyond this it is not a grid file
CSV_COLUMNS = ("REF", "BGM", "risk")


class GridFileError(ValueError):
    """A grid file cannot be used; the message is one line naming the file and the rule."""


def _on_scale(grid: ArrayLike) -> NDArray[np.float64]:
    values = np.asarray(grid, dtype=np.float64)
    if values.shape != (SIZE, SIZE):
        raise ValueError(f"a risk grid has shape ({SIZE}, {SIZE}); got {values.shape}")
    return np.clip(values, 0.0, RISK_MAX)


def grid_npy(grid: ArrayLike) -> bytes:
    """``grid.npy`` bytes: the (601, 601) grid clipped to 0..4, float64, no pickle."""
    buffer = io.BytesIO()
    np.save(buffer, _on_scale(grid), allow_pickle=False)
    return buffer.getvalue()


def grid_csv(grid: ArrayLike) -> bytes:
    """``grid.csv`` bytes: columns REF, BGM (mg/dL) and risk (4 decimals), REF varying slowest."""
    values = _on_scale(grid)
    tails = [f",{bgm}," for bgm in range(SIZE)]
    rows = ["REF,BGM,risk\n"]
    for ref in range(SIZE):  # row by row: no table of 361,201 strings at once
        risks = values[ref].tolist()
        rows.append(
            "".join([f"{ref}{tail}{r:.4f}\n" for tail, r in zip(tails, risks, strict=True)])
        )
    return "".join(rows).encode()


def grid_png(grid: ArrayLike, title: str = "Learned risk grid") -> bytes:
    """``grid.png`` bytes: the grid clipped to 0..4 in the SEG colours (1 pixel per mg/dL),
    reference on the x axis, measured on the y axis, ticks every 100 mg/dL and a colour bar for
    risk 0..4 (:func:`~ranking_core.grids.raster.grid_image`; Pillow and contourpy are loaded
    here, not when a grid file is read)."""
    from ranking_core.grids.raster import grid_image, png_bytes

    return png_bytes(grid_image(_on_scale(grid), title))


def grid_file_contents(grid: ArrayLike, metadata: dict) -> dict[str, bytes]:
    """The files of a learned grid by name, in :data:`GRID_FILES` order: ``grid.npy``,
    ``grid.csv``, ``grid.png`` and ``grid.json`` (``metadata`` as indented JSON)."""
    contents = (
        grid_npy(grid),
        grid_csv(grid),
        grid_png(grid),
        json.dumps(metadata, indent=2).encode(),
    )
    return dict(zip(GRID_FILES, contents, strict=True))


class _Settings(Protocol):
    def to_dict(self) -> dict: ...


class LearnedGridLike(Protocol):
    """What the files of a learned grid read of it (:class:`ranking_core.learn.LearnedGrid`)."""

    @property
    def settings(self) -> _Settings: ...

    @property
    def lam(self) -> float: ...

    @property
    def lam_chosen(self) -> float: ...

    @property
    def n_ratings(self) -> int: ...

    @property
    def checksum(self) -> str: ...

    @property
    def grid(self) -> NDArray[np.float64]: ...

    @property
    def points_fitted(self) -> int: ...

    @property
    def method(self) -> str: ...

    @property
    def low_rank(self) -> dict | None: ...


def grid_metadata(result: LearnedGridLike, source: str | None = None) -> dict:
    """``grid.json`` content: the file layout, the settings, λ, the data and riskgrid's version."""
    return {
        "format": {
            "shape": [SIZE, SIZE],
            "rows": "reference glucose 0..600 mg/dL, step 1",
            "columns": "measured glucose 0..600 mg/dL, step 1",
            "values": f"risk 0..{RISK_MAX:g} (SEG scale), clipped to it",
        },
        "settings": result.settings.to_dict(),
        "lambda": result.lam,
        "lambda_chosen_by_rule": result.lam_chosen,
        "ratings": result.n_ratings,
        "points_fitted": result.points_fitted,
        # how λ and the grid were computed; a low-rank fit adds its factor's rank, the
        # tolerance on the discarded kernel mass and the mass discarded
        "method": result.method,
        "low_rank": result.low_rank,
        "ratings_checksum": result.checksum,
        "rating_set": source,
        "riskgrid_version": riskgrid_version(),
    }


def write_grid_files(
    result: LearnedGridLike, out_dir: str | os.PathLike, source: str | None = None
) -> list[Path]:
    """Write ``grid.npy``, ``grid.csv``, ``grid.png`` and ``grid.json`` of a learned grid
    (:func:`grid_file_contents`; ``source`` names the rating set in ``grid.json``) into
    ``out_dir`` (created if needed); returns the paths in that order."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, content in grid_file_contents(result.grid, grid_metadata(result, source)).items():
        (out / name).write_bytes(content)
        paths.append(out / name)
    return paths


def _read_npy(stream: IO[bytes], name: str) -> NDArray:
    try:
        major, _ = np.lib.format.read_magic(stream)
        header = (
            np.lib.format.read_array_header_1_0
            if major == 1
            else np.lib.format.read_array_header_2_0
        )(stream)
    except ValueError as exc:
        raise GridFileError(f"{name}: not a NumPy .npy file ({exc})") from None
    shape, _, dtype = header
    if dtype.hasobject or dtype.kind not in "fiu":
        raise GridFileError(f"{name}: holds {dtype} values; a grid holds numbers (float)")
    if tuple(shape) != (SIZE, SIZE):
        raise GridFileError(
            f"{name}: shape {tuple(shape)}; a grid has shape ({SIZE}, {SIZE}) "
            "(rows = reference, columns = measured, 0..600 mg/dL)"
        )
    stream.seek(0)
    try:
        return np.load(stream, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise GridFileError(f"{name}: the .npy data is incomplete or damaged ({exc})") from None


def _read_csv(stream: IO[bytes], name: str) -> NDArray:
    head = stream.read(MAX_CSV_BYTES + 1)
    if len(head) > MAX_CSV_BYTES:
        raise GridFileError(
            f"{name}: larger than {MAX_CSV_BYTES // 2**20} MB; a grid CSV has "
            f"{SIZE * SIZE:,} rows of REF, BGM, risk (about 5 MB)"
        )
    try:
        frame = pd.read_csv(io.BytesIO(head), dtype=str, nrows=SIZE * SIZE + 1)
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        reason = str(exc).splitlines()[0][:80] if str(exc) else type(exc).__name__
        raise GridFileError(f"{name}: not a readable CSV table ({reason})") from None
    columns = {str(c).strip().lower(): c for c in frame.columns}
    missing = [c for c in CSV_COLUMNS if c.lower() not in columns]
    if missing:
        raise GridFileError(
            f"{name}: missing column(s) {', '.join(missing)}; a grid CSV has the "
            f"columns {', '.join(CSV_COLUMNS)}"
        )
    values = frame[[columns[c.lower()] for c in CSV_COLUMNS]].apply(pd.to_numeric, errors="coerce")
    bad = np.flatnonzero(~np.isfinite(values.to_numpy(dtype=np.float64)).all(axis=1))
    if bad.size:
        raise GridFileError(
            f"{name}: line {bad[0] + 2} is not three finite numbers ({bad.size} such line(s))"
        )
    ref, bgm, risk = (values[columns[c.lower()]].to_numpy(dtype=np.float64) for c in CSV_COLUMNS)
    on_lattice = (
        (ref == np.rint(ref))
        & (bgm == np.rint(bgm))
        & (ref >= 0)
        & (bgm >= 0)
        & (ref <= GLUCOSE_MAX)
        & (bgm <= GLUCOSE_MAX)
    )
    if not on_lattice.all():
        line = int(np.flatnonzero(~on_lattice)[0]) + 2
        raise GridFileError(
            f"{name}: line {line} has REF or BGM off the lattice (whole mg/dL in 0..{GLUCOSE_MAX})"
        )
    cells = ref.astype(np.intp) * SIZE + bgm.astype(np.intp)
    if len(cells) != SIZE * SIZE or np.unique(cells).size != SIZE * SIZE:
        raise GridFileError(
            f"{name}: {len(cells):,} rows, {np.unique(cells).size:,} distinct "
            f"(REF, BGM) pairs; a grid has each of the {SIZE * SIZE:,} once"
        )
    grid = np.empty(SIZE * SIZE)
    grid[cells] = risk
    return grid.reshape(SIZE, SIZE)


_GRID_READERS = {".npy": _read_npy, ".csv": _read_csv}
GRID_FILE_SUFFIXES = tuple(_GRID_READERS)  # the grid files read back (read_grid_file)


def read_grid_file(
    source: str | os.PathLike | bytes,
    name: str | None = None,
) -> NDArray[np.float64]:
    """A (601, 601) risk grid [reference, measured] from a ``.npy`` or ``.csv`` grid file.

    ``source`` is a path, or the file's bytes with ``name`` (its file name, which gives the
    format). Raises :class:`GridFileError` (one line) unless the file is a 601 × 601 grid of
    finite values within the risk scale 0..4; a ``.npy`` file is never unpickled and its
    header is checked before any data is read.
    """
    if isinstance(source, bytes):
        label = name or "grid file"
        opened: IO[bytes] = io.BytesIO(source)
    else:
        label = name or Path(source).name
        try:
            opened = open(source, "rb")
        except OSError as exc:
            raise GridFileError(
                f"cannot open the grid file {label}: {exc.strerror or exc}"
            ) from None
    suffix = Path(label).suffix.lower()
    with opened as stream:
        if suffix not in _GRID_READERS:
            raise GridFileError(
                f"{label}: a grid file is {' or '.join(GRID_FILE_SUFFIXES)} (as written by "
                "riskgrid learn)"
            )
        grid = _GRID_READERS[suffix](stream, label)
    grid = np.asarray(grid, dtype=np.float64)
    if not np.isfinite(grid).all():
        raise GridFileError(
            f"{label}: {int((~np.isfinite(grid)).sum())} value(s) are NaN or "
            "infinite; a grid holds finite risks"
        )
    outside = (grid < 0) | (grid > RISK_MAX)
    if outside.any():
        ref, bgm = np.argwhere(outside)[0]
        raise GridFileError(
            f"{label}: {int(outside.sum())} value(s) outside the risk scale "
            f"0..{RISK_MAX:g}, first at REF {ref}, BGM {bgm} mg/dL "
            f"({grid[ref, bgm]:.4g})"
        )
    return grid
