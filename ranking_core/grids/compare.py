"""Comparing two risk grids on the same lattice (learned vs SEG, one learner vs another, m vs m).

Measures (DESIGN §5; Kriukova et al. 2014, §4.3, Table 3):

* pairwise misranking (Kriukova et al. 2014, eq. (1)) of ``other`` against ``reference`` on random
  lattice points;
* the distribution of |other − reference| in Table 3's bins of width 0.5 (0–0.5, …, 3.5–4);
* agreement of the 8 SEG risk categories of the one risk scale
  (:mod:`ranking_core.grids.risk_scale`): an 8 × 8 confusion matrix;
* maximum and mean absolute difference.

Bins and categories share one convention: a value v falls in the first interval whose upper bound
is ≥ v, so 0.5 is "None" and Δ = 0.5 is in the 0–0.5 bin; values above 3.5 fall in the last one
and negative values (a learned grid may dip below 0) in the first.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids.risk_scale import RISK_CATEGORIES, risk_category
from ranking_core.metrics import pairwise_misranking

__all__ = [
    "DIFFERENCE_BINS",
    "RISK_CATEGORIES",
    "GridComparison",
    "compare_grids",
    "difference_shares",
    "risk_category",
]

DIFFERENCE_BINS = tuple(f"{0.5 * k:g}–{0.5 * (k + 1):g}" for k in range(8))  # Table 3 rows


def difference_shares(reference: ArrayLike, other: ArrayLike) -> NDArray[np.float64]:
    """Fractions of |other − reference| in the 8 bins of Kriukova et al. 2014, Table 3, shape (8,),
    sum 1."""
    delta = np.abs(np.asarray(other, dtype=np.float64) - np.asarray(reference, dtype=np.float64))
    counts = np.bincount(risk_category(delta).ravel(), minlength=8)
    return counts / max(delta.size, 1)


@dataclass(frozen=True)
class GridComparison:
    """How far ``other`` is from ``reference``.

    Attributes
    ----------
    misranking : pairwise misranking (fraction) of other vs reference on ``n_points`` random
        lattice points (Kriukova et al. 2014, eq. (1)).
    n_points : number of random points used for ``misranking``.
    difference_shares : (8,) fractions of lattice points with |Δ| in the bins ``DIFFERENCE_BINS``.
    category_confusion : (8, 8) counts of lattice points, rows = reference category, columns =
        other's category (``RISK_CATEGORIES``).
    category_agreement : fraction of lattice points in the same category in both grids.
    max_abs_difference, mean_abs_difference : over the whole lattice (risk units).
    """

    misranking: float
    n_points: int
    difference_shares: NDArray[np.float64] = field(repr=False)
    category_confusion: NDArray[np.int64] = field(repr=False)
    category_agreement: float
    max_abs_difference: float
    mean_abs_difference: float

    def to_dict(self) -> dict:
        """JSON-ready: arrays as lists, bins and categories named."""
        out = asdict(self)
        out["difference_shares"] = dict(
            zip(DIFFERENCE_BINS, self.difference_shares.tolist(), strict=True)
        )
        out["category_confusion"] = self.category_confusion.tolist()
        out["categories"] = list(RISK_CATEGORIES)
        return out


def _as_grid(grid: ArrayLike, name: str) -> NDArray[np.float64]:
    values = np.asarray(getattr(grid, "absolute", grid), dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"compare_grids: {name} must be a 2-D grid, got shape {values.shape}")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"compare_grids: {name} has NaN or infinite values")
    return values


def compare_grids(
    reference: ArrayLike,
    other: ArrayLike,
    n_points: int = 10_000,
    random_state: int | np.random.Generator | None = 0,
) -> GridComparison:
    """Compare two risk grids of the same shape (e.g. (601, 601) indexed [REF, estimate]).

    Parameters
    ----------
    reference, other : 2-D risk grids, or objects with an ``absolute`` grid (a
        :class:`~ranking_core.grids.seg.SEGTable`).
    n_points : lattice points drawn uniformly (with replacement) for the misranking; O(n log n).
    random_state : seed or generator for those points.
    """
    ref = _as_grid(reference, "reference")
    oth = _as_grid(other, "other")
    if ref.shape != oth.shape:
        raise ValueError(f"compare_grids: grids differ in shape, {ref.shape} vs {oth.shape}")
    if int(n_points) < 2:
        raise ValueError(f"compare_grids: n_points must be at least 2; got {n_points!r}")
    rng = np.random.default_rng(random_state)
    picks = rng.integers(0, ref.size, size=int(n_points))
    misranking = pairwise_misranking(ref.ravel()[picks], oth.ravel()[picks])
    confusion = np.bincount(
        risk_category(ref).ravel() * 8 + risk_category(oth).ravel(), minlength=64
    ).reshape(8, 8)
    delta = np.abs(oth - ref)
    return GridComparison(
        misranking=float(misranking),
        n_points=int(n_points),
        difference_shares=difference_shares(ref, oth),
        category_confusion=confusion,
        category_agreement=float(np.trace(confusion) / ref.size),
        max_abs_difference=float(delta.max()),
        mean_abs_difference=float(delta.mean()),
    )
