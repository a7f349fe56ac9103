"""DORM (Le & Smola 2007) against RankSVM-style pairwise hinge training on MovieLens 100K (prints
JSON).

Users are queries, their rated films the documents, ratings 1–5 the grades. Each user's ratings
are split at random into halves: the first half trains, NDCG@10 (Le & Smola 2007, eq. (14), gains
2^r − 1) on the second half is averaged over users. Features of a (user, film) pair use the
training half only: the film's mean rating (shrunk to the global mean with 5 pseudo-ratings),
log(1 + its number of ratings), the user's mean deviation on the film's genres (shrunk the same
way) and the 19 genre indicators; standardised on the training rows. Both learners are linear
in these features and are shown for every C of a small grid (no selection on the test half).
The pairwise baseline is a hinge loss on within-user pair differences (``LinearSVC``), with up to
``--pairs`` sampled pairs of different ratings per user.

Run from the repository root:
``MOVIELENS_100K=/path/to/ml-100k PYTHONPATH=. python benchmarks/dorm_movielens.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.svm import LinearSVC

from ranking_core import DORM
from ranking_core.metrics import ndcg

SHRINK = 5.0


def load(folder: Path) -> tuple[pd.DataFrame, np.ndarray]:
    ratings = pd.read_csv(folder / "u.data", sep="\t", names=["user", "item", "rating", "time"])
    items = pd.read_csv(folder / "u.item", sep="|", header=None, encoding="latin-1")
    genres = np.zeros((items[0].max() + 1, 19))
    genres[items[0].to_numpy()] = items.iloc[:, 5:24].to_numpy(dtype=float)
    return ratings, genres


def features(frame: pd.DataFrame, train: pd.DataFrame, genres: np.ndarray) -> np.ndarray:
    """Per (user, film) row: film mean, log count, user-genre affinity, genre indicators."""
    mean = train.rating.mean()
    items = train.groupby("item").rating.agg(["sum", "count"])
    item_sum = np.zeros(len(genres))
    item_count = np.zeros(len(genres))
    item_sum[items.index] = items["sum"]
    item_count[items.index] = items["count"]
    item_mean = (item_sum + SHRINK * mean) / (item_count + SHRINK)
    users = frame.user.max() + 1
    deviation = train.rating - train.groupby("user").rating.transform("mean")
    on_genre = genres[train.item.to_numpy()]
    affinity_sum = np.zeros((users, 19))
    affinity_count = np.zeros((users, 19))
    np.add.at(affinity_sum, train.user.to_numpy(), on_genre * deviation.to_numpy()[:, None])
    np.add.at(affinity_count, train.user.to_numpy(), on_genre)
    affinity = affinity_sum / (affinity_count + SHRINK)
    item, user = frame.item.to_numpy(), frame.user.to_numpy()
    film_genres = genres[item]
    user_affinity = (affinity[user] * film_genres).sum(1) / np.maximum(film_genres.sum(1), 1)
    return np.column_stack(
        [item_mean[item], np.log1p(item_count[item]), user_affinity, film_genres]
    )


def mean_ndcg(frame: pd.DataFrame, scores: np.ndarray, k: int = 10) -> float:
    values = [
        ndcg(part.rating.to_numpy(), scores[part.index.to_numpy()], k=k)
        for _, part in frame.groupby("user")
    ]
    return float(np.mean(values))


def pair_differences(
    X: np.ndarray, frame: pd.DataFrame, per_user: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Up to ``per_user`` within-user pairs of different ratings, as x_i − x_j with sign ±1."""
    rows, signs = [], []
    for _, part in frame.groupby("user"):
        index, r = part.index.to_numpy(), part.rating.to_numpy()
        i, j = np.triu_indices(len(index), 1)
        keep = np.flatnonzero(r[i] != r[j])
        keep = rng.choice(keep, min(per_user, keep.size), replace=False)
        first, second = index[i[keep]], index[j[keep]]
        flip = rng.random(keep.size) < 0.5  # balanced classes
        first, second = np.where(flip, second, first), np.where(flip, first, second)
        rows.append(X[first] - X[second])
        signs.append(np.sign(frame.rating.to_numpy()[first] - frame.rating.to_numpy()[second]))
    return np.concatenate(rows), np.concatenate(signs)


def emit(row: dict) -> None:
    print(json.dumps(row), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--C", type=float, nargs="+", default=[0.001, 0.01, 0.1, 1.0])
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--decay", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    folder = os.environ.get("MOVIELENS_100K")
    if not folder:
        sys.exit("MOVIELENS_100K is unset: point it at the ml-100k folder (u.data, u.item)")
    ratings, genres = load(Path(folder))
    rng = np.random.default_rng(args.seed)
    half = ratings.groupby("user").rating.transform(lambda r: rng.permutation(len(r)) < len(r) // 2)
    train = ratings[half.to_numpy()].reset_index(drop=True)
    test = ratings[~half.to_numpy()].reset_index(drop=True)
    X_train, X_test = features(train, train, genres), features(test, train, genres)
    centre, scale = X_train.mean(0), X_train.std(0) + 1e-12
    X_train, X_test = (X_train - centre) / scale, (X_test - centre) / scale
    emit(
        {
            "users": int(ratings.user.nunique()),
            "train_ratings": len(train),
            "test_ratings": len(test),
            "features": X_train.shape[1],
            "metric": "mean NDCG@10",
        }
    )
    emit(
        {
            "method": "film mean rating (feature 0)",
            "ndcg@10": round(mean_ndcg(test, X_test[:, 0]), 4),
        }
    )
    pairs, signs = pair_differences(X_train, train, args.pairs, rng)
    for C in args.C:
        start = time.perf_counter()
        svm = LinearSVC(loss="hinge", fit_intercept=False, C=C, max_iter=20_000).fit(pairs, signs)
        emit(
            {
                "method": "pairwise hinge (RankSVM)",
                "C": C,
                "pairs": len(pairs),
                "ndcg@10": round(mean_ndcg(test, X_test @ svm.coef_.ravel()), 4),
                "seconds": round(time.perf_counter() - start, 1),
            }
        )
        start = time.perf_counter()
        dorm = DORM(measure="ndcg", n=10, C=C, decay=args.decay, tol=1e-3).fit(
            X_train, train.rating.to_numpy(dtype=float), train.user.to_numpy()
        )
        emit(
            {
                "method": "DORM NDCG@10",
                "C": C,
                "decay": args.decay,
                "ndcg@10": round(mean_ndcg(test, dorm.predict(X_test)), 4),
                "rounds": dorm.n_iter_,
                "converged": dorm.converged_,
                "seconds": round(time.perf_counter() - start, 1),
            }
        )


if __name__ == "__main__":
    main()
