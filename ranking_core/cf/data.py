"""Collaborative-filtering rating data: one sparse user × item representation and its readers.

Formats (``/work/shared/data/cf/README.md``; Cortes et al. 2007, §4.1–4.2, Kriukova et al. 2014,
§4.2):

* ``ml-100k``     MovieLens 100K ``u.data``: ``user item rating timestamp``, tab separated;
* ``ml-1m``       MovieLens 1M ``ratings.dat``: ``UserID::MovieID::Rating[::Timestamp]``;
* ``jester``      Jester dataset 1 (``jester-data-1/2/3``, CSV or .xlsx; the published .xls must be
  saved as .xlsx or CSV): one row per user, no header, column 1 = number of jokes rated, columns
  2..101 = ratings in −10..+10, 99 = not rated;
* ``jester-long`` Jester's later ``user_id,joke_id,rating`` CSV (an optional header line).

Files and uploads (paths, bytes or binary file objects) are opened through the input layer
(:mod:`ranking_core.inputs`: encodings UTF-8 ± BOM or UTF-16 with BOM, size limit; XLSX size checks
and streaming). Every reader checks each line against the format's rules and names the offending
line numbers (1-based, as an editor shows them). ``errors="raise"`` (default) stops on the first
broken rule; ``errors="skip"`` keeps the valid lines and reports the dropped ones in a warning.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ranking_core.inputs import Limits, open_binary, read_text, reader_named

Source = str | os.PathLike | IO[bytes] | bytes

__all__ = [
    "FORMATS",
    "RatingMatrix",
    "read_jester",
    "read_jester_long",
    "read_movielens_1m",
    "read_movielens_100k",
    "read_ratings",
]

FORMATS = ("ml-100k", "ml-1m", "jester", "jester-long")
MOVIELENS_SCALE = (1.0, 5.0)
JESTER_SCALE = (-10.0, 10.0)
JESTER_NOT_RATED = 99.0


@dataclass(frozen=True)
class RatingMatrix:
    """Ratings of items by users, sparse.

    Attributes
    ----------
    ratings : (n_users, n_items) CSR matrix; every stored entry is a rating (explicit zeros are
        ratings too, e.g. a Jester 0.00), unstored entries are "not rated". Column indices are
        sorted within each row.
    user_ids : (n_users,) the users' ids in the file.
    item_ids : (n_items,) the items' ids in the file.
    scale : (low, high) of the rating scale.
    source : where the data came from (a path or ``"synthetic"``).
    """

    ratings: sp.csr_matrix
    user_ids: NDArray[np.int64]
    item_ids: NDArray[np.int64]
    scale: tuple[float, float]
    source: str

    @property
    def n_users(self) -> int:
        return int(self.ratings.shape[0])

    @property
    def n_items(self) -> int:
        return int(self.ratings.shape[1])

    @property
    def n_ratings(self) -> int:
        return int(self.ratings.nnz)

    def counts(self) -> NDArray[np.int64]:
        """(n_users,) number of items each user rated."""
        return np.diff(self.ratings.indptr).astype(np.int64)

    def user_ratings(self, user: int) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
        """(items, ratings) of one user (row index, not id), items sorted."""
        lo, hi = self.ratings.indptr[user], self.ratings.indptr[user + 1]
        return self.ratings.indices[lo:hi].astype(np.intp), self.ratings.data[lo:hi]

    def users_in(self, low: int, high: int) -> NDArray[np.intp]:
        """Row indices of the users who rated between ``low`` and ``high`` items (inclusive)."""
        counts = self.counts()
        return np.flatnonzero((counts >= low) & (counts <= high))

    @classmethod
    def from_triples(
        cls,
        users: ArrayLike,
        items: ArrayLike,
        ratings: ArrayLike,
        scale: tuple[float, float],
        source: str,
        lines: ArrayLike | None = None,
    ) -> RatingMatrix:
        """Build from (user id, item id, rating) triples; a repeated (user, item) is an error that
        names its ``lines`` (1-based; positions in the triples when not given)."""
        users = np.asarray(users, dtype=np.int64)
        items = np.asarray(items, dtype=np.int64)
        values = np.asarray(ratings, dtype=np.float64)
        lines = np.arange(1, len(users) + 1) if lines is None else np.asarray(lines)
        user_ids, rows = np.unique(users, return_inverse=True)
        item_ids, cols = np.unique(items, return_inverse=True)
        order = np.lexsort((cols, rows))
        rows, cols, values, lines = rows[order], cols[order], values[order], lines[order]
        repeated = np.flatnonzero((np.diff(rows) == 0) & (np.diff(cols) == 0))
        if repeated.size:
            pairs = ", ".join(f"lines {lines[i]} and {lines[i + 1]}" for i in repeated[:5])
            raise ValueError(
                f"{source}: {repeated.size} repeated (user, item) rating(s): {pairs} "
                "(rule: each user rates each item at most once)"
            )
        indptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=len(user_ids)))]
        matrix = sp.csr_matrix(
            (values, cols.astype(np.int32), indptr), shape=(len(user_ids), len(item_ids))
        )
        return cls(matrix, user_ids, item_ids, scale, source)


# -- reading -------------------------------------------------------------------------------


def _open(source: Source, default_file: str, name: str | None) -> tuple[Source, str]:
    """A path (a folder → its ``default_file``) or an upload, and its name for messages."""
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if path.is_dir():
            path = path / default_file
            name = name and f"{name}/{default_file}"
        label = name or str(path)
        if not path.exists():
            raise FileNotFoundError(f"{label}: no such file")
        return path, label
    return source, name or str(getattr(source, "name", "") or "upload")


def _lines_with_numbers(source: Source, label: str) -> tuple[list[str], NDArray[np.int64]]:
    """Non-blank lines of a text file and their 1-based line numbers."""
    raw = read_text(source, label).splitlines()
    keep = [i for i, line in enumerate(raw) if line.strip()]
    if not keep:
        raise ValueError(f"{label}: the file is empty")
    return [raw[i] for i in keep], np.asarray(keep, dtype=np.int64) + 1


def _describe_lines(numbers: NDArray, limit: int = 10) -> str:
    shown = ", ".join(str(int(n)) for n in numbers[:limit])
    more = f" and {len(numbers) - limit} more" if len(numbers) > limit else ""
    return f"line{'s' if len(numbers) > 1 else ''} {shown}{more}"


class _Checker:
    """Collects broken rules per line; raises or warns and returns the mask of lines to keep."""

    def __init__(self, source: str, n: int, errors: str) -> None:
        if errors not in ("raise", "skip"):
            raise ValueError(f"errors must be 'raise' or 'skip'; got {errors!r}")
        self.source, self.errors = source, errors
        self.keep = np.ones(n, dtype=bool)
        self.problems: list[str] = []

    def rule(self, bad: NDArray[np.bool_], numbers: NDArray, rule: str) -> None:
        bad = bad & self.keep
        if bad.any():
            message = f"{_describe_lines(numbers[bad])} break the rule: {rule}"
            if self.errors == "raise":
                raise ValueError(f"{self.source}: {message}")
            self.problems.append(message)
            self.keep &= ~bad

    def finish(self) -> NDArray[np.bool_]:
        if self.problems:
            warnings.warn(
                f"{self.source}: skipped {int((~self.keep).sum())} line(s): "
                + "; ".join(self.problems),
                stacklevel=3,
            )
        if not self.keep.any():
            raise ValueError(f"{self.source}: no valid rating left")
        return self.keep


def _numeric(column: Sequence[str]) -> NDArray[np.float64]:
    return pd.to_numeric(pd.Series(column, dtype=object).str.strip(), errors="coerce").to_numpy(
        dtype=np.float64
    )


def _read_triples(
    path: Source,
    source: str,
    split: str | None,
    n_fields: tuple[int, ...],
    scale: tuple[float, float],
    errors: str,
    integer_ratings: bool,
    header: bool = False,
) -> RatingMatrix:
    """Shared reader for ``user item rating [timestamp]`` lines."""
    lines, numbers = _lines_with_numbers(path, source)
    if header:
        lines, numbers = lines[1:], numbers[1:]
        if not lines:
            raise ValueError(f"{source}: the file holds a header line and no rating")
    fields = [line.split(split) for line in lines]
    width = np.fromiter(map(len, fields), dtype=np.int64, count=len(fields))
    check = _Checker(source, len(lines), errors)
    expected = " or ".join(str(n) for n in n_fields)
    sep = "a tab or spaces" if split is None else repr(split)
    check.rule(~np.isin(width, n_fields), numbers, f"{expected} fields separated by {sep}")
    padded = [f[:3] if len(f) >= 3 else ["", "", ""] for f in fields]
    user, item, rating = (_numeric([f[k] for f in padded]) for k in range(3))
    check.rule(
        ~np.isfinite(user) | ~np.isfinite(item) | ~np.isfinite(rating),
        numbers,
        "user id, item id and rating are numbers",
    )
    with np.errstate(invalid="ignore"):
        check.rule(
            (user != np.round(user)) | (item != np.round(item)) | (user < 0) | (item < 0),
            numbers,
            "user and item ids are non-negative integers",
        )
        low, high = scale
        out_of_scale = (rating < low) | (rating > high)
        if integer_ratings:
            out_of_scale |= rating != np.round(rating)
        kind = "an integer" if integer_ratings else "a number"
        check.rule(out_of_scale, numbers, f"the rating is {kind} in {low:g}..{high:g}")
    keep = check.finish()
    return RatingMatrix.from_triples(
        user[keep], item[keep], rating[keep], scale, source, numbers[keep]
    )


def read_movielens_100k(
    path: Source, errors: str = "raise", name: str | None = None
) -> RatingMatrix:
    """MovieLens 100K ``u.data`` (or a directory holding it): ``user item rating timestamp``.
    ``path`` may be an upload (bytes or a binary file object) named by ``name``."""
    source, label = _open(path, "u.data", name)
    return _read_triples(source, label, None, (3, 4), MOVIELENS_SCALE, errors, integer_ratings=True)


def read_movielens_1m(path: Source, errors: str = "raise", name: str | None = None) -> RatingMatrix:
    """MovieLens 1M ``ratings.dat`` (or a directory holding it):
    ``UserID::MovieID::Rating::Timestamp``, the timestamp field optional."""
    source, label = _open(path, "ratings.dat", name)
    return _read_triples(source, label, "::", (3, 4), MOVIELENS_SCALE, errors, integer_ratings=True)


def read_jester_long(path: Source, errors: str = "raise", name: str | None = None) -> RatingMatrix:
    """Jester ``user_id,joke_id,rating`` CSV; a first line that is not numeric is a header."""
    source, label = _open(path, "", name)
    if not isinstance(source, Path):  # an upload is read once, then handed on as bytes
        source = open_binary(source, label).read()
    lines, _ = _lines_with_numbers(source, label)
    first = lines[0].split(",")[0].strip()
    header = not np.isfinite(_numeric([first])[0])
    return _read_triples(
        source, label, ",", (3,), JESTER_SCALE, errors, integer_ratings=False, header=header
    )


def _jester_table(source: Source, label: str) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """The wide Jester table as numbers (NaN where a cell is not a number or missing) and its
    1-based line or spreadsheet row numbers."""
    suffix = Path(label).suffix.lower()
    if suffix == ".xls":
        raise ValueError(
            f"{label}: the legacy Excel .xls format is not accepted; save the sheet as .xlsx or CSV"
        )
    if suffix in reader_named("xlsx").suffixes:
        from ranking_core.inputs.xlsx import xlsx_rows

        with open_binary(source, label) as binary, xlsx_rows(binary, label, Limits()) as (rows, _):
            cells = [(n, c) for n, c in rows if any(v.strip() for v in c)]
        numbers = np.asarray([n for n, _ in cells], dtype=np.int64)
        width = max((len(c) for _, c in cells), default=0)
        table = np.full((len(cells), width), np.nan)
        for k in range(width):
            table[:, k] = _numeric([c[k] if k < len(c) else "" for _, c in cells])
        return table, numbers
    lines, numbers = _lines_with_numbers(source, label)
    fields = [line.split(",") for line in lines]
    width = max(map(len, fields))
    table = np.full((len(fields), width), np.nan)
    for k in range(width):
        table[:, k] = _numeric([f[k] if k < len(f) else "" for f in fields])
    return table, numbers


def read_jester(path: Source, errors: str = "raise", name: str | None = None) -> RatingMatrix:
    """Jester dataset 1 (``jester-data-1/2/3``, .csv or .xlsx): no header, one row per user,
    column 1 = number of jokes rated, then one column per joke (−10..+10, 99 = not rated).
    User ids are the row numbers, joke ids the column numbers 1..n_jokes."""
    data, source = _open(path, "", name)
    table, numbers = _jester_table(data, source)
    if table.shape[0] == 0:
        raise ValueError(f"{source}: the file is empty")
    if table.shape[1] < 2:
        raise ValueError(
            f"{source}: need a count column and at least one joke column; "
            f"found {table.shape[1]} column(s)"
        )
    check = _Checker(source, len(table), errors)
    finite_rows = cast(NDArray[np.bool_], np.isfinite(table).all(axis=1))  # one per row (2-D)
    check.rule(
        ~finite_rows,
        numbers,
        f"{table.shape[1]} numeric cells (count, then {table.shape[1] - 1} jokes)",
    )
    jokes = table[:, 1:]
    rated = jokes != JESTER_NOT_RATED
    low, high = JESTER_SCALE
    with np.errstate(invalid="ignore"):
        check.rule(
            (rated & ((jokes < low) | (jokes > high))).any(axis=1),
            numbers,
            f"each rating is in {low:g}..{high:g} or {JESTER_NOT_RATED:g} (not rated)",
        )
    check.rule(
        table[:, 0] != rated.sum(axis=1),
        numbers,
        "column 1 equals the number of rated jokes in the row",
    )
    keep = check.finish()
    rows, cols = np.nonzero(rated & keep[:, None])
    return RatingMatrix.from_triples(
        numbers[rows], cols + 1, jokes[rows, cols], JESTER_SCALE, source, numbers[rows]
    )


READERS = {
    "ml-100k": read_movielens_100k,
    "ml-1m": read_movielens_1m,
    "jester": read_jester,
    "jester-long": read_jester_long,
}


def read_ratings(
    path: Source, format: str, errors: str = "raise", name: str | None = None
) -> RatingMatrix:
    """Read ``path`` (a file, a folder, or an upload as bytes / a binary file object named by
    ``name``) in one of :data:`FORMATS`."""
    if format not in READERS:
        raise ValueError(f"format must be one of {FORMATS}; got {format!r}")
    return READERS[format](path, errors=errors, name=name)
