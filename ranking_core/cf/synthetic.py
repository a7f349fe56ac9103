"""A synthetic MovieLens-like rating set: low-rank taste, popular items, ordinal stars.

For tests and for a fresh machine without MovieLens or Jester. Ratings come from a latent score
s_ui = ⟨p_u, q_i⟩ + a_u + b_i + ε (rank-``rank`` factors, user and item biases, Gaussian noise),
cut into 1..5 stars at the quantiles of MovieLens 100K's rating distribution
(6 %, 11 %, 27 %, 34 %, 22 %). Each user rates at least ``min_ratings`` items, the number above it
log-normal with median ``median_ratings − min_ratings`` (MovieLens 100K: min 20, median 65);
items are picked with Zipf-like popularity that grows with the item's bias (well-liked items are
rated by many users), so which reference users rated an item already says something about it.
"""

from __future__ import annotations

import numpy as np

from ranking_core.cf.data import MOVIELENS_SCALE, RatingMatrix

__all__ = ["synthetic_ratings"]

# cumulative share of 1, 2, 3, 4 stars in MovieLens 100K (the rest are 5 stars)
STAR_QUANTILES = np.array([0.061, 0.175, 0.447, 0.788])


def synthetic_ratings(
    n_users: int = 400,
    n_items: int = 600,
    rank: int = 4,
    min_ratings: int = 20,
    median_ratings: int = 65,
    noise: float = 0.5,
    seed: int = 0,
) -> RatingMatrix:
    """A :class:`RatingMatrix` of ``n_users`` × ``n_items`` whole-star ratings (1..5)."""
    if not (0 < min_ratings < median_ratings <= n_items):
        raise ValueError(
            "synthetic_ratings: need 0 < min_ratings < median_ratings <= n_items; got "
            f"{min_ratings}, {median_ratings}, {n_items}"
        )
    rng = np.random.default_rng(seed)
    users = rng.normal(size=(n_users, rank)) / np.sqrt(rank)
    items = rng.normal(size=(n_items, rank))
    user_bias = 0.3 * rng.normal(size=n_users)
    item_bias = 0.5 * rng.normal(size=n_items)
    extra = rng.lognormal(np.log(median_ratings - min_ratings), 1.0, size=n_users)
    counts = np.minimum(min_ratings + extra.astype(np.int64), n_items // 2)
    zipf = 1.0 / np.arange(1, n_items + 1) ** 0.8
    # better items are more popular (as in MovieLens): Zipf weights by rank of a noisy item bias
    popularity = np.empty(n_items)
    popularity[np.argsort(-(item_bias + 0.5 * rng.normal(size=n_items)))] = zipf / zipf.sum()
    rows = np.repeat(np.arange(n_users), counts)
    cols = np.concatenate(
        [rng.choice(n_items, size=c, replace=False, p=popularity) for c in counts]
    )
    latent = (
        np.einsum("ij,ij->i", users[rows], items[cols])
        + user_bias[rows]
        + item_bias[cols]
        + noise * rng.normal(size=rows.size)
    )
    cuts = np.quantile(latent, STAR_QUANTILES)
    stars = 1.0 + np.searchsorted(cuts, latent)
    return RatingMatrix.from_triples(rows + 1, cols + 1, stars, MOVIELENS_SCALE, "synthetic")
