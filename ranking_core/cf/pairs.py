"""The pair-sampling experiment of Duchi et al. 2010, §4 (Table 1) on MovieLens 100K.

Features d(x_i, u) of a (movie, user) pair, computed from the training ratings only: the movie's
age (1998 − release year), its 19 genre flags, the user's mean rating of training movies in the
movie's genres, the movie's mean training rating, and the movie's mean rating by users similar to
u and by users dissimilar to u (similarity-weighted means, with the cosine similarity of the users'
mean-centred training ratings, positive part for similar, negative part for dissimilar). Features
are standardised with the training rows' mean and standard deviation.

Protocol: the ratings are split at random into five parts; each of ``experiments`` runs uses one
part to validate α, one to test and three to train (the runs take distinct (validation, test)
assignments). Pairs are sampled uniformly among pairs of movies rated differently by the same user
within one part, weighted by the rating difference a_ij = r_i − r_j > 0 (Duchi et al. 2010: this
makes the problem low-noise). Each loss is trained on the first n of the sampled training pairs for
every n in ``train_pairs``, α chosen on the validation pairs, and scored on ``test_pairs`` test
pairs by the weighted disagreement (Duchi et al. 2010, eq. (7)).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from itertools import permutations
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray

from ranking_core.cf.data import RatingMatrix
from ranking_core.learners.pairwise_linear import (
    LOSSES,
    PairwiseLinearRanker,
    weighted_disagreement,
)

__all__ = [
    "DUCHI_2010_TABLE1",
    "MovieInfo",
    "PairsConfig",
    "movie_features",
    "read_movie_info",
    "run_pairs",
    "sample_pairs",
    "synthetic_movie_info",
]

GENRES = 19
DATA_YEAR = 1998  # MovieLens 100K was collected September 1997 – April 1998

# Duchi et al. 2010, Table 1: test loss, mean (standard error) over 15 runs, by number of training
# pairs
DUCHI_2010_TABLE1 = {
    "hinge": {
        20000: (0.478, 0.008),
        40000: (0.477, 0.008),
        80000: (0.480, 0.007),
        120000: (0.477, 0.008),
        160000: (0.474, 0.007),
    },
    "logistic": {
        20000: (0.479, 0.010),
        40000: (0.478, 0.010),
        80000: (0.478, 0.009),
        120000: (0.477, 0.009),
        160000: (0.474, 0.007),
    },
    "value-linear": {
        20000: (0.465, 0.006),
        40000: (0.464, 0.006),
        80000: (0.462, 0.005),
        120000: (0.463, 0.006),
        160000: (0.461, 0.004),
    },
}


@dataclass(frozen=True)
class MovieInfo:
    """Per-movie metadata aligned with a RatingMatrix's items: release year (NaN when unknown)
    and genre flags (n_items, 19)."""

    year: NDArray[np.float64]
    genres: NDArray[np.float64]


def read_movie_info(path: str | Path, item_ids: NDArray[np.int64]) -> MovieInfo:
    """MovieLens 100K ``u.item`` (or its folder): ``id|title|release date|video date|url|19
    genre flags``, Latin-1, aligned to ``item_ids``."""
    path = Path(path)
    if path.is_dir():
        path = path / "u.item"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file (the pairs experiment needs u.item)")
    frame = pd.read_csv(
        path, sep="|", header=None, encoding="latin-1", dtype=str, keep_default_na=False
    )
    if frame.shape[1] != 5 + GENRES:
        raise ValueError(
            f"{path}: expected {5 + GENRES} '|'-separated fields per line; found {frame.shape[1]}"
        )
    ids = pd.to_numeric(frame[0], errors="coerce").to_numpy()
    bad = np.flatnonzero(~np.isfinite(ids))
    if bad.size:
        raise ValueError(f"{path}: line {bad[0] + 1} breaks the rule: the movie id is a number")
    year = pd.to_datetime(frame[2], format="%d-%b-%Y", errors="coerce").dt.year.to_numpy(float)
    genres = frame.iloc[:, 5:].apply(pd.to_numeric, errors="coerce").to_numpy(np.float64)
    position = pd.Series(np.arange(len(ids)), index=ids.astype(np.int64))
    missing = np.setdiff1d(item_ids, position.index.to_numpy())
    if missing.size:
        raise ValueError(f"{path}: no metadata for movie id(s) {missing[:10].tolist()}")
    rows = position.loc[pd.Index(item_ids)].to_numpy()
    return MovieInfo(year[rows], np.nan_to_num(genres[rows]))


def synthetic_movie_info(n_items: int, seed: int = 0) -> MovieInfo:
    """Release years 1930–1997 and independent genre flags (15 % each) for synthetic data."""
    rng = np.random.default_rng(seed)
    return MovieInfo(
        rng.integers(1930, DATA_YEAR, size=n_items).astype(np.float64),
        (rng.random((n_items, GENRES)) < 0.15).astype(np.float64),
    )


def movie_features(
    users: NDArray, items: NDArray, train: RatingMatrix, info: MovieInfo
) -> NDArray[np.float64]:
    """Raw features (len(users), 24) of (user, item) row pairs from the training ratings
    ``train`` (same shape and ids as the full data, only training entries stored)."""
    R = train.ratings.toarray()
    rated = np.zeros(R.shape, dtype=bool)
    coo = train.ratings.tocoo()
    rated[coo.row, coo.col] = True
    n_rated = rated.sum(axis=1)
    global_mean = float(train.ratings.data.mean())
    user_mean = np.where(n_rated > 0, R.sum(axis=1) / np.maximum(n_rated, 1), global_mean)
    item_count = rated.sum(axis=0)
    item_mean = np.where(item_count > 0, R.sum(axis=0) / np.maximum(item_count, 1), global_mean)
    # user × genre mean ratings, falling back to the user's mean
    genre_sum, genre_count = R @ info.genres, rated.astype(float) @ info.genres
    user_genre = np.where(
        genre_count > 0, genre_sum / np.maximum(genre_count, 1), user_mean[:, None]
    )
    g = info.genres[items]
    n_genres = g.sum(axis=1)
    in_genres = np.where(
        n_genres > 0,
        (user_genre[users] * g).sum(axis=1) / np.maximum(n_genres, 1),
        user_mean[users],
    )
    # similar / dissimilar users: cosine of mean-centred training ratings
    centred = np.where(rated, R - user_mean[:, None], 0.0)
    norms = np.linalg.norm(centred, axis=1)
    sim = centred @ centred.T / np.maximum(np.outer(norms, norms), 1e-12)
    np.fill_diagonal(sim, 0.0)
    columns = []
    for weights in (np.maximum(sim, 0.0), np.maximum(-sim, 0.0)):
        num = (weights @ R)[users, items]
        den = (weights @ rated.astype(np.float64))[users, items]
        columns.append(np.where(den > 0, num / np.maximum(den, 1e-12), item_mean[items]))
    year = np.where(np.isfinite(info.year), info.year, np.nanmedian(info.year))
    return np.column_stack([DATA_YEAR - year[items], g, in_genres, item_mean[items], *columns])


def sample_pairs(
    users: NDArray, ratings: NDArray, n: int, rng: np.random.Generator
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """``n`` pairs of rows (preferred, other) rated by the same user with different ratings,
    drawn uniformly (first row uniform, second uniform among the user's other rows), and their
    weights r_preferred − r_other."""
    order = np.argsort(users, kind="stable")
    sorted_users = users[order]
    starts = np.searchsorted(sorted_users, sorted_users, side="left")
    counts = np.searchsorted(sorted_users, sorted_users, side="right") - starts
    chunks, total = [], 0
    while total < n:
        k = rng.integers(0, len(order), size=2 * (n - total) + 100)
        other = starts[k] + rng.integers(0, counts[k])
        first, second = order[k], order[other]
        keep = ratings[first] != ratings[second]
        chosen = np.column_stack([first[keep], second[keep]])
        chunks.append(chosen)
        total += len(chosen)
    pairs = np.vstack(chunks)[:n]
    swap = ratings[pairs[:, 0]] < ratings[pairs[:, 1]]
    pairs[swap] = pairs[swap][:, ::-1]
    return pairs, ratings[pairs[:, 0]] - ratings[pairs[:, 1]]


@dataclass(frozen=True)
class PairsConfig:
    """Settings of the Duchi et al. 2010, §4 experiment (defaults: the paper's sizes and runs).

    The paper does not give its α grid. Below α = 10⁻² liblinear's hinge solver converges
    slowly (C = 1/(2α) near a hard margin), and on MovieLens 100K α = 1 was chosen at the top of
    a 10⁻⁴..1 grid in a first trial, hence the default 10⁻²..10².
    """

    train_pairs: tuple[int, ...] = (20000, 40000, 80000, 120000, 160000)
    test_pairs: int = 40000
    validation_pairs: int = 20000
    experiments: int = 15
    alphas: tuple[float, ...] = (1e-2, 1e-1, 1.0, 10.0, 100.0)
    losses: tuple[str, ...] = LOSSES
    epsilon: float = 1e-4
    seed: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.experiments <= 20:
            raise ValueError(
                f"PairsConfig: experiments must be 1..20 (five parts give 20 "
                f"(validation, test) assignments); got {self.experiments!r}"
            )
        if not self.alphas:
            raise ValueError("PairsConfig: alphas must list at least one α; got none")
        unknown = [loss for loss in self.losses if loss not in LOSSES]
        if unknown or not self.losses:
            raise ValueError(f"PairsConfig: losses must be among {LOSSES}; got {self.losses!r}")


def _compact(pairs: NDArray[np.intp]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """(rows used, pairs re-indexed into those rows)."""
    rows, inverse = np.unique(pairs, return_inverse=True)
    return rows, inverse.reshape(pairs.shape)


def _subset(data: RatingMatrix, keep: NDArray[np.bool_]) -> RatingMatrix:
    """The same users and items with only the stored entries where ``keep`` (CSR order)."""
    coo = data.ratings.tocoo()
    matrix = sp.csr_matrix(
        (coo.data[keep], (coo.row[keep], coo.col[keep])), shape=data.ratings.shape
    )
    return RatingMatrix(matrix, data.user_ids, data.item_ids, data.scale, data.source)


def run_pairs(
    data: RatingMatrix,
    info: MovieInfo,
    config: PairsConfig,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Run the experiment; returns test losses per loss and training size (mean, sd, standard
    error over the runs, and every run's value) and the α chosen in each run."""
    rng = np.random.default_rng(config.seed)
    coo = data.ratings.tocoo()
    users, items, ratings = coo.row, coo.col, coo.data  # CSR order
    part = rng.permutation(len(ratings)) % 5
    assignments = list(permutations(range(5), 2))
    chosen = [assignments[i] for i in rng.permutation(len(assignments))[: config.experiments]]
    largest = max(config.train_pairs)
    losses: dict[str, dict[int, list[float]]] = {
        loss: {n: [] for n in config.train_pairs} for loss in config.losses
    }
    alphas: dict[str, dict[int, list[float]]] = {
        loss: {n: [] for n in config.train_pairs} for loss in config.losses
    }
    for run, (val_part, test_part) in enumerate(chosen):
        run_rng = np.random.default_rng(np.random.SeedSequence((config.seed, run)))
        train_mask = (part != val_part) & (part != test_part)
        features = movie_features(users, items, _subset(data, train_mask), info)
        mean, sd = features[train_mask].mean(axis=0), features[train_mask].std(axis=0)
        features = (features - mean) / np.where(sd > 0, sd, 1.0)
        split = {}
        for name, mask, n in (
            ("train", train_mask, largest),
            ("validation", part == val_part, config.validation_pairs),
            ("test", part == test_part, config.test_pairs),
        ):
            rows = np.flatnonzero(mask)
            pairs, weights = sample_pairs(users[rows], ratings[rows], n, run_rng)
            split[name] = (features[rows], pairs, weights)
        for loss in config.losses:
            for n in config.train_pairs:
                X_train, pairs, weights = split["train"]
                used, local = _compact(pairs[:n])
                best: tuple[float, PairwiseLinearRanker, float] | None = None
                for alpha in config.alphas:
                    model = PairwiseLinearRanker(loss, alpha, epsilon=config.epsilon).fit(
                        X_train[used], local, weights[:n]
                    )
                    X_val, val_pairs, val_weights = split["validation"]
                    value = weighted_disagreement(model.predict(X_val), val_pairs, val_weights)
                    if best is None or value < best[0]:
                        best = (value, model, alpha)
                assert best is not None, "PairsConfig checks that alphas is not empty"
                X_test, test_pairs, test_weights = split["test"]
                losses[loss][n].append(
                    weighted_disagreement(best[1].predict(X_test), test_pairs, test_weights)
                )
                alphas[loss][n].append(best[2])
        if progress is not None:
            progress(run + 1, len(chosen))
    return {
        "protocol": "pair sampling, Duchi et al. 2010, §4 (Table 1)",
        "config": asdict(config),
        "runs": [list(pair) for pair in chosen],
        "test_loss": {
            loss: {str(n): _stats(values) for n, values in by_size.items()}
            for loss, by_size in losses.items()
        },
        "alpha": {
            loss: {str(n): v for n, v in by_size.items()} for loss, by_size in alphas.items()
        },
    }


def _stats(values: Sequence[float]) -> dict:
    v = np.asarray(values)
    sd = float(np.std(v, ddof=1)) if len(v) > 1 else 0.0
    return {
        "mean": float(v.mean()),
        "sd": sd,
        "se": sd / np.sqrt(len(v)),
        "per_run": [float(x) for x in v],
    }
