"""Passing–Bablok's slopes of whole-number pairs, as a weighted multiset: exact, without reading
the n(n − 1)/2 pairs one by one.

When every reference x and device y is a whole number (glucose in whole mg/dL, as meters and
laboratories report it), the slope of two pairs i < j, S_ij = (y_i − y_j)/(x_i − x_j), depends
only on the integer differences (Δx, Δy) = (x_j − x_i, y_j − y_i): both differences are exact
in floating point, and (−Δy)/(−Δx) is the same IEEE quotient as Δy/Δx, so every pair with the
same (Δx, Δy) gives the same slope, bit for bit. The slopes are therefore the multiset
{Δy/Δx with multiplicity W(Δx, Δy)}, where W is the autocorrelation of the pairs' count
lattice M (M[x, y] = the pairs at (x, y), over the box the pairs span):

.. math::

    W(\\Delta x, \\Delta y) = \\sum_{x, y} M[x, y] \\, M[x + \\Delta x, y + \\Delta y],
    \\qquad \\Delta x \\ge 1 \\text{ (each unordered pair with } x_i \\ne x_j \\text{ once)}.

W is computed by FFT, O(A log A) for a box of A = X·Y cells (X, Y the spans of x and y), and
rounded to integers. The rounding is exact: every W is an integer at most Σ M² ≤ n², and the
FFT's absolute error is of order ε·log₂(A)·Σ M² (ε = 2⁻⁵²), about 10⁻⁵ at most for the 50,000
pairs a report allows (5·10⁻⁷ with all of them on two points, the worst case:
tests/test_passing_bablok_lattice.py); the counts are checked besides (each rounded away by
less than 0.25, the total equal to the pairs of different x counted directly), and a failed
check leaves the slopes to the pair-by-pair reading.

The vertical pairs (Δx = 0, Δy ≠ 0) are the only ones whose slope depends on the order the pairs
were read: the paper's S_ij is −∞ when y_i < y_j and +∞ when y_i > y_j (i < j). Their number is
Σ over references of the pairs with different y; the −∞ among them are the pairs i < j of one
reference with y_i < y_j, counted in O(n log² n) by a bottom-up merge (:func:`ascending_pairs`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["LATTICE_MAX_CELLS", "LatticeSlopes", "ascending_pairs", "lattice_slopes"]

LATTICE_MAX_CELLS = 1_500_000  # the box's cells: 601 × 601 mg/dL fits, FFT of 4 × this
_WHOLE_LIMIT = 2.0**31  # whole numbers up to this: exact differences, int64 keys without overflow
_ROUNDING_SLACK = 0.25  # an FFT count further than this from an integer: the check fails


@dataclass(frozen=True)
class LatticeSlopes:
    """The kept slopes as a multiset: the finite ones sorted (``values``) with their running
    count (``cumulative``: slopes ≤ each value), ``minus_infinity`` vertical pairs at −∞ and
    ``plus_infinity`` at +∞. Slopes of exactly −1 and pairs of one point (0/0) are left out."""

    values: NDArray[np.float64]
    cumulative: NDArray[np.int64]
    minus_infinity: int
    plus_infinity: int

    @property
    def total(self) -> int:
        """N: the slopes kept."""
        finite = int(self.cumulative[-1]) if self.cumulative.size else 0
        return self.minus_infinity + finite + self.plus_infinity

    @property
    def below_minus_one(self) -> int:
        """K: the slopes below −1 (−∞ among them)."""
        finite = np.searchsorted(self.values, -1.0, side="left")
        return self.minus_infinity + (int(self.cumulative[finite - 1]) if finite else 0)

    def at_rank(self, rank: int) -> float:
        """The slope at 1-based ``rank`` of the sorted multiset (NaN outside 1 … N)."""
        if not 1 <= rank <= self.total:
            return float("nan")
        if rank <= self.minus_infinity:
            return -np.inf
        finite = rank - self.minus_infinity
        if self.cumulative.size and finite <= self.cumulative[-1]:
            return float(self.values[np.searchsorted(self.cumulative, finite, side="left")])
        return np.inf


def ascending_pairs(keys: NDArray[np.int64]) -> int:
    """The pairs p < q of the sequence ``keys`` (integers ≥ 0) with keys[p] < keys[q], by a
    bottom-up merge sort: at each level, every element of a right half counts the elements of
    its left half below it (one ``searchsorted`` over all halves at once, each half's keys
    offset by its block). Time O(n log² n), memory O(n)."""
    seq = np.asarray(keys, dtype=np.int64).copy()
    n = seq.size
    if n < 2:
        return 0
    span = int(seq.max()) + 1  # block offsets keep the halves apart: block · span + key
    position = np.arange(n, dtype=np.int64)
    total, width = 0, 1
    while width < n:
        block = position // (2 * width)
        right = (position // width) % 2 == 1
        key = block * span + seq
        left_keys = key[~right]  # every left half sorted, the halves in block order: sorted
        below = np.searchsorted(left_keys, key[right], side="left")
        earlier = np.searchsorted(left_keys, block[right] * span, side="left")
        total += int((below - earlier).sum())
        seq = np.sort(key) - block * span  # the blocks stay in place: each one merged
        width *= 2
    return total


def _whole(values: NDArray[np.float64]) -> bool:
    return bool(np.all(np.abs(values) < _WHOLE_LIMIT) and np.array_equal(values, np.rint(values)))


def _fast_length(minimum: int) -> int:
    """The smallest 2·3·5-smooth length ≥ ``minimum`` (the FFT's fast sizes)."""
    length = minimum
    while True:
        rest = length
        for factor in (2, 3, 5):
            while rest % factor == 0:
                rest //= factor
        if rest == 1:
            return length
        length += 1


def _autocorrelation(lattice: NDArray[np.float64]) -> NDArray[np.float64]:
    """W[Δx, Δy mod P] = Σ M[x, y]·M[x + Δx, y + Δy] for Δx in 0 … X − 1, by FFT zero-padded to
    fast lengths of at least (2X − 1, 2Y − 1) so that nothing wraps (P: the second length)."""
    rows, cols = lattice.shape
    shape = (_fast_length(2 * rows - 1), _fast_length(2 * cols - 1))
    spectrum = np.fft.rfft2(lattice, s=shape)
    return np.fft.irfft2(spectrum.real**2 + spectrum.imag**2, s=shape)[:rows]


def _vertical(
    column: NDArray[np.int64], key: NDArray[np.int64], per_column: NDArray[np.int64], across: int
) -> tuple[int, int]:
    """The vertical pairs (one reference, different y): those at −∞ (i < j, y_i < y_j in read
    order) and those at +∞. ``key`` orders the points by reference, then y; ``per_column``
    counts the pairs at each reference, ``across`` the pairs of different references."""
    order = np.argsort(column, kind="stable")  # by reference, read order within one
    minus = ascending_pairs(key[order]) - across  # pairs across references ascend by key
    per_point = np.unique(key, return_counts=True)[1].astype(np.int64)
    same_column = int((per_column * (per_column - 1) // 2).sum())
    vertical = same_column - int((per_point * (per_point - 1) // 2).sum())
    return minus, vertical - minus


def _pair_counts(
    found: NDArray[np.float64], y_span: int, across: int, vertical: int
) -> NDArray[np.float64] | None:
    """W for Δx ≥ 1 as integers, the columns Δy = −(Y − 1) … Y − 1 (P − (Y − 1) … P − 1 of the
    FFT's output, then 0 … Y − 1); None when a value lies more than 0.25 from an integer or
    the totals differ from the pairs ``across`` references and the ``vertical`` pairs counted
    directly."""
    wrap = found.shape[1] - (y_span - 1)
    block = np.concatenate([found[1:, wrap:], found[1:, :y_span]], axis=1)
    counts = np.rint(block)
    same_reference = found[0, 1:]
    slack = max(
        np.abs(block - counts).max(initial=0.0),
        np.abs(same_reference - np.rint(same_reference)).max(initial=0.0),
    )
    if (
        slack > _ROUNDING_SLACK
        or int(counts.sum()) != across
        or int(np.rint(same_reference[: y_span - 1]).sum()) != vertical
    ):
        return None
    return counts


def lattice_slopes(
    x: NDArray[np.float64], y: NDArray[np.float64], max_cells: int = LATTICE_MAX_CELLS
) -> LatticeSlopes | None:
    """Every kept slope of the pairs (x, y) as a weighted multiset (module docstring), or None
    when a value is not a whole number, the box spans more than ``max_cells`` cells, or the
    counts' check fails (the caller reads the pairs one by one). Time O(A log A + n log² n)
    for a box of A cells, memory O(A)."""
    if x.size < 2 or not (_whole(x) and _whole(y)):
        return None
    col, row = (x - x.min()).astype(np.int64), (y - y.min()).astype(np.int64)
    x_span, y_span = int(col.max()) + 1, int(row.max()) + 1
    if x_span * y_span > max_cells:
        return None
    key = col * y_span + row
    lattice = np.bincount(key, minlength=x_span * y_span).reshape(x_span, y_span)
    per_column = lattice.sum(axis=1)
    across = (x.size**2 - int((per_column**2).sum())) // 2  # pairs of different references
    minus, plus = _vertical(col, key, per_column, across)
    counts = _pair_counts(
        _autocorrelation(lattice.astype(np.float64)), y_span, across, minus + plus
    )
    if counts is None:
        return None
    dx, dy = np.nonzero(counts)
    weight = counts[dx, dy].astype(np.int64)
    dx, dy = dx + 1, dy - (y_span - 1)
    keep = dy != -dx  # slopes of exactly −1 are left out
    slopes = dy[keep].astype(np.float64) / dx[keep].astype(np.float64)
    order = np.argsort(slopes, kind="stable")
    return LatticeSlopes(slopes[order], np.cumsum(weight[keep][order]), minus, plus)
