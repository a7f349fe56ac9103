"""From the raters' mapped answers to a learned grid, and to the pairs a survey should ask next.

* :func:`mapped_ratings`: ``per_map`` points (REF, BGM) drawn uniformly on the whole-mg/dL
  lattice of ``[low, high]²`` (default 20..580 mg/dL, the SEG's range of ratings) for each
  rater map, with seed ``seed``; the rating is that rater's mapped risk
  (:func:`~ranking_core.elicit.mapping.rater_map` evaluated at the point, no grid built), the
  ``rater`` column the rater's name. A rating set for :func:`ranking_core.learn.learn_grid`.
* :func:`propose_pairs`: ``n`` pairs where the raters' maps disagree most. Candidates are the
  lattice points of ``[low, high]²`` every ``step`` mg/dL; each pick is the candidate of largest
  spread (the standard deviation of the maps, :mod:`~ranking_core.elicit.mapping`) times
  ``1 − exp(−d² / (2 r²))``, d the distance to the nearest pair already picked in log-glucose
  coordinates and r = ``separation`` (default 0.15, about 15 % of a glucose value): the
  disagreement is sought out while the pairs spread over the plane. Candidates without spread
  are never proposed, so fewer than ``n`` pairs may come back.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.elicit.mapping import RaterMap, action_index, score_to_risk

__all__ = ["PAIR_COLUMNS", "RATING_RANGE", "mapped_ratings", "propose_pairs"]

RATING_RANGE = (20, 580)  # mg/dL, the SEG's range of rated pairs
PAIR_COLUMNS = ("reference", "estimate")


def mapped_ratings(
    maps: Sequence[RaterMap],
    per_map: int,
    seed: int,
    glucose_range: tuple[int, int] = RATING_RANGE,
) -> pd.DataFrame:
    """A rating set (reference, estimate in mg/dL, rating 0..4, rater) of ``per_map`` points per
    rater map (module notes); rows grouped by map in the order of ``maps``."""
    low, high = glucose_range
    rng = np.random.default_rng(seed)
    points = rng.integers(low, high + 1, size=(len(maps), per_map, 2))
    ratings = np.empty((len(maps), per_map))
    for k, item in enumerate(maps):
        ref = action_index(item.maxima, points[k, :, 0])
        bgm = action_index(item.maxima, points[k, :, 1])
        ratings[k] = score_to_risk(item.scores)[bgm, ref]
    return pd.DataFrame(
        {
            "reference": points[:, :, 0].ravel().astype(np.float64),
            "estimate": points[:, :, 1].ravel().astype(np.float64),
            "rating": ratings.ravel(),
            "rater": np.repeat(np.array([m.rater for m in maps], dtype=object), per_map),
        }
    )


def propose_pairs(
    spread: NDArray[np.float64],
    n: int,
    glucose_range: tuple[int, int] = RATING_RANGE,
    step: int = 5,
    separation: float = 0.15,
) -> pd.DataFrame:
    """Up to ``n`` pairs (reference, estimate in whole mg/dL) of largest spread, spread over the
    plane (module notes), in the order picked. ``spread`` is (601, 601) ``[REF, BGM]``."""
    low, high = glucose_range
    axis = np.arange(low, high + 1, step)
    ref, bgm = (g.ravel() for g in np.meshgrid(axis, axis, indexing="ij"))
    value = np.asarray(spread, dtype=np.float64)[ref, bgm]
    coords = np.log(np.column_stack([ref, bgm]).astype(np.float64))
    nearest = np.full(len(ref), np.inf)
    picked: list[int] = []
    for _ in range(int(n)):
        score = value * -np.expm1(-(nearest**2) / (2 * separation**2))
        best = int(np.argmax(score))
        if not score[best] > 0:
            break
        picked.append(best)
        nearest = np.minimum(nearest, np.linalg.norm(coords - coords[best], axis=1))
    chosen = np.asarray(picked, dtype=np.intp)
    return pd.DataFrame({"reference": ref[chosen], "estimate": bgm[chosen]})
