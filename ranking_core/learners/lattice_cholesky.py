"""Sparse Cholesky of the glucose-lattice system by nested dissection of the lattice itself.

The lattice solve of :class:`~ranking_core.learners.direct.DirectRanker` factors

    A = diag(d) + λ·T₀ ⊗ T₁

on the n₀ × n₁ lattice (T₀, T₁ tridiagonal, :func:`ou_precision`;
node (i, j) has index i·n₁ + j). A couples each node with its eight neighbours only, so the
lattice's own geometry orders the elimination (George 1973, nested dissection): a rectangle of
the lattice is split by one row or column of nodes (its separator) into two halves that share no
entry of A; each half is split again, down to rectangles of at most ``LEAF`` × ``LEAF`` nodes.
The factorisation is multifrontal (Duff & Reid 1983): every rectangle's front is a dense matrix
over its separator S (or, for a leaf, all its nodes) and the ring B of nodes around it, which
holds the entries of A in the columns of S and the Schur complements (update matrices) its two
halves passed up. Eliminating S there,

    L_SS = chol(F_SS),   X = L_SS⁻¹ F_SB,   U = F_BB − XᵀX  (passed to the parent),

keeps L_SS⁻¹ and X: LLᵀ = A with L's column block of S equal to [L_SS; Xᵀ]. Rectangles of one
depth have at most four shapes (sides differ by at most one) and a few positions against the
lattice's edges (a side on the edge has no ring beyond it), so each depth is a few batched
dense operations over fronts of one layout (NumPy's stacked Cholesky, inverse and matmul;
LAPACK one front at a time for the separators of more than ``BATCH_SEPARATOR`` nodes near the
top), and the Python overhead does not grow with n. A solve then multiplies by the stored
inverses, one product per group, where forward substitution took a NumPy call per row of the
separator: 0.044 against 0.066 s a solve on 601 × 601, with the same residual (the system's own
conditioning sets it: 5·10⁻¹³ at λ = 1.3·10⁻⁹, 2·10⁻⁸ at λ = 10⁻³) and solutions equal to
10⁻¹⁴ relative, on 16,000 and 80,000 random nodes at λ from 1.3·10⁻⁹ to 1.

Cost on the 601 × 601 mg/dL lattice (361,201 unknowns), whatever m is: about 4·10⁹
multiply-adds for the factorisation and 2.0·10⁷ stored numbers (151 MB) for L; a solve reads
them twice. SuperLU's LU of the same matrix (minimum-degree ordering on AᵀA + A, what the
lattice used before) stores 3.7·10⁷ numbers and an index per number of U, about 365 MB, and took
about 1.5 times as long (docs/SCALE.md). A is symmetric positive definite (d ≥ 0, λ > 0), so
no pivoting is needed; the result equals a dense Cholesky solve to round-off
(``tests/test_lattice_cholesky.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import scipy.linalg
import scipy.sparse
from numpy.typing import ArrayLike, NDArray

from ranking_core.blas_threads import blas_on_one_thread

__all__ = ["LEAF", "LatticeCholesky", "lattice_cholesky", "ou_precision"]

LEAF = 2  # rectangles of at most LEAF × LEAF nodes are eliminated whole
BATCH_SEPARATOR = 48  # separators up to this size are factored in stacks (NumPy), larger ones
# one front at a time with LAPACK
CHUNK = 1 << 21  # numbers of the fronts assembled at once (16 MB)
PARTS = 4  # a group's fronts are eliminated in at least this many parts (for the workers); a
# constant, not the number of workers, so that the factor is the same whatever the machine


Key = tuple[int, int, int, int, int, int]  # height, width, and which sides lie on the edge
Children = tuple[tuple[int, NDArray[np.intp], NDArray[np.intp]], ...]


@dataclass(frozen=True)
class _Group:
    """Rectangles of one depth, one shape and one position against the lattice's edges: their
    fronts have one layout.

    ``ids`` (g, f): lattice index of each front's nodes, S first then the ring B; ``s``: |S|;
    ``rows``, ``cols`` (p,): the front positions that hold an entry of A (both triangles of
    S × S, B × S and S × B) and ``stencil`` (p,) which of the nine neighbour offsets of the
    column's node each is (:func:`_stencil`); ``children``: for each half, (its group one depth
    below, its positions in that group (g,), where its ring lies in this front as runs of
    consecutive positions (:func:`_runs`)); empty for a leaf.
    """

    ids: NDArray[np.int32]
    s: int
    rows: NDArray[np.intp]
    cols: NDArray[np.intp]
    stencil: NDArray[np.intp]
    children: Children


def _ring(h: int, w: int, edges: tuple[int, ...]) -> NDArray[np.intp]:
    """(b, 2) offsets (row, column) from its corner of the lattice nodes around an h × w
    rectangle; ``edges``: whether its top, bottom, left and right sides lie on the lattice's
    edge (no nodes beyond)."""
    top, bottom, left, right = edges
    ring = [(r, c) for r in (-1, h) for c in range(-1, w + 1)] + [
        (r, c) for c in (-1, w) for r in range(h)
    ]
    kept = [
        (r, c)
        for r, c in ring
        if not ((r < 0 and top) or (r >= h and bottom) or (c < 0 and left) or (c >= w and right))
    ]
    return np.array(kept, dtype=np.intp).reshape(-1, 2)


def _layout(h: int, w: int, axis: int | None, edges: tuple[int, ...]) -> NDArray[np.intp]:
    """(f, 2) offsets of the front's nodes, S then B, of an h × w rectangle split across
    ``axis`` (0: a row separates, 1: a column; None: a leaf, S all its nodes)."""
    if axis is None:
        rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
        sep = np.column_stack([rows.ravel(), cols.ravel()])
    elif axis == 1:
        sep = np.column_stack([np.arange(h), np.full(h, w // 2)])
    else:
        sep = np.column_stack([np.full(w, h // 2), np.arange(w)])
    return np.vstack([sep, _ring(h, w, edges)])


def _halves(h: int, w: int, axis: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The two halves of an h × w rectangle split across ``axis``: ((row, column) offset,
    (height, width)) each."""
    if axis == 1:
        return [((0, 0), (h, w // 2)), ((0, w // 2 + 1), (h, w - w // 2 - 1))]
    return [((0, 0), (h // 2, w)), ((h // 2 + 1, 0), (h - h // 2 - 1, w))]


def _runs(local: NDArray[np.intp]) -> NDArray[np.intp]:
    """(k, 3) runs (start in the child's ring, start in the front, length) of consecutive
    positions of a child's ring in its parent's front (a few per side of the ring)."""
    breaks = np.flatnonzero(np.diff(local) != 1) + 1
    starts = np.concatenate([[0], breaks])
    lengths = np.diff(np.concatenate([starts, [len(local)]]))
    return np.column_stack([starts, local[starts], lengths])


def _dissect(n0: int, n1: int) -> tuple[list[NDArray[np.intp]], list[int | None]]:
    """Rectangles (row, column, height, width) per depth, root first, the halves of rectangle
    k at 2k and 2k + 1 one depth below, and the axis each depth is split across (the longer
    side; None at the leaves)."""
    levels = [np.array([[0, 0, n0, n1]], dtype=np.intp)]
    axes: list[int | None] = []
    while max(levels[-1][:, 2].max(), levels[-1][:, 3].max()) > LEAF:
        rect = levels[-1]
        axis = 1 if rect[:, 3].max() >= rect[:, 2].max() else 0
        size = rect[:, 2 + axis]
        first, second = rect.copy(), rect.copy()
        first[:, 2 + axis] = size // 2
        second[:, axis] += size // 2 + 1
        second[:, 2 + axis] = size - size // 2 - 1
        levels.append(np.stack([first, second], axis=1).reshape(-1, 4))
        axes.append(axis)
    return levels, [*axes, None]


def _keys(rect: NDArray[np.intp], n0: int, n1: int) -> NDArray[np.intp]:
    """(k, 6) the layout key of each rectangle: height, width and whether its top, bottom,
    left and right sides lie on the lattice's edge. A side lies on the edge or on a separator,
    so its ring nodes there are all outside the lattice or all inside: the key fixes the
    front's layout."""
    edges = np.column_stack(
        [
            rect[:, 0] == 0,
            rect[:, 0] + rect[:, 2] == n0,
            rect[:, 1] == 0,
            rect[:, 1] + rect[:, 3] == n1,
        ]
    )
    return np.column_stack([rect[:, 2:], edges]).astype(np.intp)


class _Positions:
    """The front position of each node of a front by its offset (row, column) from the
    rectangle's corner: a small array over the offsets' bounding box with a margin of one, −1
    where the front has no node."""

    def __init__(self, offsets: NDArray[np.intp]) -> None:
        self.low = offsets.min(axis=0) - 1
        self.table = np.full(offsets.max(axis=0) - self.low + 2, -1, dtype=np.intp)
        self.table[tuple((offsets - self.low).T)] = np.arange(len(offsets))

    def __call__(self, offsets: NDArray[np.intp]) -> NDArray[np.intp]:
        """Positions of nodes at ``offsets`` (..., 2), each within one of the front's nodes."""
        shifted = offsets - self.low
        return self.table[shifted[..., 0], shifted[..., 1]]


_STENCIL = np.array([(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)])  # offset 3(a + 1) + (b + 1)


def _pattern(offsets: NDArray[np.intp], s: int) -> tuple[NDArray, NDArray, NDArray]:
    """Front positions (rows, cols) that hold an entry of A — the eight-neighbour pairs of
    S × S, B × S and S × B — and the neighbour offset of each, 3(a + 1) + (b + 1) for the row
    node at (a, b) from the column node."""
    front_row = _Positions(offsets)(offsets[:s, None, :] + _STENCIL)  # (s, 9), −1: no node
    s_col, stencil = np.nonzero(front_row >= 0)
    front_row = front_row[s_col, stencil]
    outer = front_row >= s  # B × S, mirrored to S × B
    rows = np.concatenate([front_row, s_col[outer]])
    cols = np.concatenate([s_col, front_row[outer]])
    return rows, cols, np.concatenate([stencil, 8 - stencil[outer]])


@lru_cache(maxsize=4)
def _tree(n0: int, n1: int) -> tuple[list[list[_Group]], int]:
    """The dissection of the n₀ × n₁ lattice: per depth (deepest first) its groups, and the
    number of stored numbers of L. Depends on the lattice size only (cached)."""
    levels, axes = _dissect(n0, n1)
    tree: list[list[_Group]] = []
    below: dict[Key, tuple[int, NDArray[np.intp]]] = {}  # group and positions, one depth below
    keys_below = np.zeros((0, 6), dtype=np.intp)
    stored = 0
    for rect, axis in zip(reversed(levels), reversed(axes), strict=True):
        keys = _keys(rect, n0, n1)
        groups: list[_Group] = []
        position = np.zeros(len(rect), dtype=np.intp)
        index_of: dict[Key, int] = {}
        # one integer per key, ordered as the key tuples: (h, w) then the four edge flags
        code = (keys[:, 0] * (n1 + 2) + keys[:, 1]) * 16 + keys[:, 2:] @ np.array([8, 4, 2, 1])
        _, first, kind = np.unique(code, return_index=True, return_inverse=True)
        members = np.split(np.argsort(kind, kind="stable"), np.cumsum(np.bincount(kind))[:-1])
        for row, which in zip(keys[first], members, strict=True):
            key = tuple(int(v) for v in row)
            h, w = key[0], key[1]
            if h <= 0 or w <= 0:
                continue
            offsets = _layout(h, w, axis, key[2:])
            s = h * w if axis is None else (h if axis == 1 else w)
            corner = rect[which, :2]
            ids = (corner[:, 0, None] + offsets[:, 0]) * n1 + corner[:, 1, None] + offsets[:, 1]
            children: list[tuple[int, NDArray[np.intp], NDArray[np.intp]]] = []
            where = _Positions(offsets)
            for side, (start, (hc, wc)) in enumerate([] if axis is None else _halves(h, w, axis)):
                if hc <= 0 or wc <= 0:
                    continue
                child = 2 * which + side
                child_key = tuple(int(v) for v in keys_below[child[0]])
                group, positions = below[child_key]  # type: ignore[index]
                ring = _ring(hc, wc, child_key[2:]) + np.array(start)
                local = where(ring)
                children.append((group, positions[child], _runs(local)))
            groups.append(_Group(ids.astype(np.int32), s, *_pattern(offsets, s), tuple(children)))
            position[which] = np.arange(len(which))
            index_of[key] = len(groups) - 1  # type: ignore[index]
            stored += len(which) * s * len(offsets)
        below = {key: (index, position) for key, index in index_of.items()}
        keys_below = keys
        tree.append(groups)
    return tree, stored


class LatticeCholesky:
    """The Cholesky factor L (LLᵀ = A) of ``diag(d) + λ·T₀ ⊗ T₁`` on the n₀ × n₁ lattice
    (module doc), kept front by front as (L_SS⁻¹, X); :meth:`solve` applies A⁻¹. Built by
    :func:`lattice_cholesky`."""

    def __init__(
        self, shape: tuple[int, int], factors: list[list[tuple[NDArray, NDArray]]]
    ) -> None:
        self.shape = shape
        self._factors = factors

    @property
    def nbytes(self) -> int:
        """Bytes held by the factor."""
        return sum(inverse.nbytes + X.nbytes for level in self._factors for inverse, X in level)

    def solve(self, b: NDArray[np.float64]) -> NDArray[np.float64]:
        """A⁻¹b for b of shape (N,) or (N, k), N = n₀n₁: one forward and one backward sweep
        over the fronts, O(stored numbers) per right-hand side. The columns of b are solved one
        at a time: the gathers and scatters of one column are NumPy's fast path, and two
        columns at once took 2.5 times one column (0.16 against 0.064 s on the 601 × 601
        lattice, before the stored inverses)."""
        with blas_on_one_thread():
            if b.ndim == 1:
                return self._solve(b)[:, 0]
            return np.column_stack([self._solve(column)[:, 0] for column in b.T])

    def _solve(self, b: NDArray[np.float64]) -> NDArray[np.float64]:
        """(N, 1) A⁻¹b for one right-hand side b (N,)."""
        n0, n1 = self.shape
        tree, _ = _tree(n0, n1)
        x = np.array(b[:, None], dtype=np.float64)
        for groups, factors in zip(tree, self._factors, strict=True):
            for group, (inverse, X) in zip(groups, factors, strict=True):
                s = group.s
                y = np.matmul(inverse, x[group.ids[:, :s]])
                x[group.ids[:, :s]] = y
                if X.shape[2]:  # into the ring; rings overlap, so added node by node
                    change = np.matmul(X.transpose(0, 2, 1), y)
                    np.subtract.at(x[:, 0], group.ids[:, s:].ravel(), change.ravel())
        for groups, factors in zip(reversed(tree), reversed(self._factors), strict=True):
            for group, (inverse, X) in zip(groups, factors, strict=True):
                s = group.s
                y = x[group.ids[:, :s]]
                if X.shape[2]:
                    y -= np.matmul(X, x[group.ids[:, s:]])
                x[group.ids[:, :s]] = np.matmul(inverse.transpose(0, 2, 1), y)
        return x


def _eliminate(F: NDArray, s: int, inverse: NDArray, X: NDArray, U: NDArray) -> None:
    """Eliminate the first s rows and columns of stacked symmetric fronts F (g, f, f) into
    ``inverse`` = L⁻¹ for L = chol(F_SS), X = L⁻¹F_SB and the update U = F_BB − XᵀX."""
    if len(F) > 1 and s <= BATCH_SEPARATOR:
        inverse[:] = np.linalg.inv(np.linalg.cholesky(F[:, :s, :s]))
        np.matmul(inverse, F[:, :s, s:], out=X)
        np.matmul(X.transpose(0, 2, 1), X, out=U)
        np.subtract(F[:, s:, s:], U, out=U)
        return
    for k in range(len(F)):
        L = np.linalg.cholesky(F[k, :s, :s])
        X[k] = scipy.linalg.solve_triangular(L, F[k, :s, s:], lower=True, check_finite=False)
        inverse[k] = scipy.linalg.lapack.dtrtri(L, lower=1)[0]
        U[k] = F[k, s:, s:] - X[k].T @ X[k]


def _bands(T) -> NDArray[np.float64]:
    """(n, 3): T[i, i − 1], T[i, i], T[i, i + 1] of a tridiagonal T (dense or sparse; 0 beyond
    the ends)."""
    out = np.zeros((T.shape[0], 3))
    out[1:, 0] = T.diagonal(-1)
    out[:, 1] = T.diagonal(0)
    out[:-1, 2] = T.diagonal(1)
    return out


def _assemble(
    group: _Group, part: slice, below: list, problem: tuple[NDArray, NDArray, float, NDArray]
) -> NDArray[np.float64]:
    """The fronts ``part`` of ``group`` (c, f, f): A's entries in the columns of S (the node
    (i, j) and its neighbour (i + a, j + b) couple by λ·T₀[i, i + a]·T₁[j, j + b], plus d at
    the node itself) and the update matrices of their halves, added run by run."""
    bands0, bands1, lam, diag = problem
    ids = group.ids[part]
    g, f = ids.shape
    F = np.zeros((g, f, f))
    node = ids[:, group.cols]
    n1 = len(bands1)
    a, b = np.divmod(group.stencil, 3)
    values = lam * bands0[node // n1, a] * bands1[node % n1, b]
    values += np.where(group.stencil == 4, diag[node], 0.0)
    F[:, group.rows, group.cols] = values
    for index, positions, runs in group.children:
        update = below[index][positions[part]]
        for c0, p0, k0 in runs:
            for c1, p1, k1 in runs:
                F[:, p0 : p0 + k0, p1 : p1 + k1] += update[:, c0 : c0 + k0, c1 : c1 + k1]
    return F


def lattice_cholesky(
    T0, T1, lam: float, diag: NDArray[np.float64], *, workers: int | None = None
) -> LatticeCholesky:
    """Factor A = diag(d) + λ·T₀ ⊗ T₁ (module doc).

    Parameters
    ----------
    T0, T1 : (n₀, n₀), (n₁, n₁) tridiagonal symmetric positive definite matrices (dense or
        SciPy sparse).
    lam : λ > 0.
    diag : (n₀n₁,) d ≥ 0, node (i, j) at i·n₁ + j.
    workers : threads sharing the fronts of each depth (default: as many as the BLAS threads
        in effect, so that :func:`~ranking_core.blas_threads.fit_threads` decides).

    The fronts are small (a few hundred rows at most), where a BLAS spreading every call over
    its threads spends more time waking them than computing: the whole factorisation runs with
    BLAS on one thread (:func:`blas_on_one_thread`) and its own ``workers`` threads eliminate
    the fronts of one depth side by side (NumPy and LAPACK release the GIL). On the 601 × 601
    lattice: 2.0 s with two BLAS threads, 0.73 s with one, 0.45 s with two workers
    (docs/SCALE.md). The factor is the same number for number whatever ``workers`` is: each
    front is computed by the same operations.

    Memory: the factor (:attr:`LatticeCholesky.nbytes`), the update matrices of at most two
    depths and ``CHUNK`` numbers of fronts being assembled per worker.
    """
    tree, _ = _tree(T0.shape[0], T1.shape[0])
    problem = (_bands(T0), _bands(T1), float(lam), np.asarray(diag, dtype=np.float64))
    with blas_on_one_thread() as blas_threads:
        count = max(1, blas_threads if workers is None else workers)
        with ThreadPoolExecutor(count) if count > 1 else nullcontext() as pool:
            run = pool.map if pool is not None else map
            factors: list[list[tuple[NDArray, NDArray]]] = []
            below: list = []
            for groups in tree:
                level, updates = _depth(groups, below, problem, run)
                factors.append(level)
                below = updates
    return LatticeCholesky((T0.shape[0], T1.shape[0]), factors)


def _depth(groups: list[_Group], below: list, problem: tuple, run: Callable):
    """Eliminate every front of one depth: (L⁻¹, X) and the update matrix U of each group, the
    fronts in parts of at most ``CHUNK`` numbers, at least ``PARTS`` parts per group. An update
    matrix of the depth below is freed once every group that reads it is done."""
    level, updates, parts = [], [], []
    for index, group in enumerate(groups):
        g, f = group.ids.shape
        s = group.s
        inverse = np.empty((g, s, s))
        X, U = np.empty((g, s, f - s)), np.empty((g, f - s, f - s))
        step = max(1, min(CHUNK // (f * f), -(-g // PARTS)))
        parts += [(index, slice(k, min(k + step, g)), inverse, X, U) for k in range(0, g, step)]
        level.append((inverse, X))
        updates.append(U)
    left = Counter(index for index, *_ in parts)  # parts of each group not yet done
    readers = Counter(child for group in groups for child, _, _ in group.children)

    def eliminate(part: tuple) -> int:
        index, rows, inverse, X, U = part
        group = groups[index]
        _eliminate(_assemble(group, rows, below, problem), group.s, inverse[rows], X[rows], U[rows])
        return index

    for index in run(eliminate, parts):  # in the order of the parts
        left[index] -= 1
        if left[index] == 0:
            for child, _, _ in groups[index].children:
                readers[child] -= 1
                if readers[child] == 0:
                    below[child] = None
    return level, updates


def ou_precision(coords: ArrayLike, gamma: float) -> scipy.sparse.csc_matrix:
    """Inverse of the Gram matrix exp(−|u_i − u_j|/γ) on strictly increasing points u (tridiagonal).

    With ρ_i = exp(−(u_{i+1} − u_i)/γ) (the AR(1) form of the Ornstein–Uhlenbeck process):
    T_{i,i+1} = −ρ_i/(1 − ρ_i²) = −1/(2 sinh(Δ_i/γ)) and
    T_ii = 1 + Σ_{neighbour gaps} ρ²/(1 − ρ²), with ρ²/(1 − ρ²) = 1/expm1(2Δ/γ).
    """
    u = np.asarray(coords, dtype=np.float64)
    gaps = np.diff(u)
    if np.any(gaps <= 0):
        raise ValueError("ou_precision: the coordinates must be strictly increasing")
    scaled = gaps / float(gamma)
    ratio = 1.0 / np.expm1(2.0 * scaled)
    main = np.ones(u.size)
    main[:-1] += ratio
    main[1:] += ratio
    off = -0.5 / np.sinh(scaled)
    return scipy.sparse.diags([off, main, off], [-1, 0, 1], format="csc")
