"""From ratings to the training set of a fit: the count check, the rater codes, the diagonal
points, the checksum, and whether the ratings come from a rater panel (which chooses the default
recipe).

Ratings are (reference, estimate) in mg/dL with a risk on 0..4 (the SEG scale); a
:class:`~ranking_core.ratings.RatingSet` may add a rater column. Pure functions: nothing here
reads a file or fits a model.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids.seg import GLUCOSE_MAX
from ranking_core.grids.signed import signed_ratings
from ranking_core.learners.robust import rating_step
from ranking_core.ratings import RatingSet
from ranking_core.validation import check_training_data

__all__ = [
    "MIN_RATINGS",
    "TrainingSet",
    "check_rating_count",
    "default_recipe",
    "panel_traits",
    "rater_codes",
    "rating_positions",
    "ratings_checksum",
    "training_data",
    "training_set",
    "with_diagonal_anchors",
]

MIN_RATINGS = 5  # fewer cannot fill five folds, let alone a grid: refused with a sentence
Ratings = RatingSet | tuple[ArrayLike, ArrayLike]


def with_diagonal_anchors(anchors: int, X: NDArray, y: NDArray) -> tuple[NDArray, NDArray]:
    """(X, y) plus ``anchors`` zero-risk points (g, g), g evenly spaced on 0..600 mg/dL, all rows
    in a fixed random order (so that a hold-out split sees anchors in both halves). Further
    columns of X (a rater code) are −1 for the anchors (no rater)."""
    if not anchors:
        return X, y
    g = np.linspace(0.0, GLUCOSE_MAX, int(anchors))
    extra = np.full((g.size, X.shape[1] - 2), -1.0)
    X = np.vstack([X, np.column_stack([g, g, extra])])
    y = np.r_[y, np.zeros(g.size)]
    order = _anchor_order(len(y))
    return X[order], y[order]


def _anchor_order(n_rows: int) -> NDArray[np.intp]:
    return np.random.default_rng(0).permutation(n_rows)


def rating_positions(anchors: int, m: int) -> NDArray[np.intp]:
    """Where :func:`with_diagonal_anchors` puts m ratings: row i of the ratings is row
    ``rating_positions(anchors, m)[i]`` of its output."""
    if not anchors:
        return np.arange(m)
    return np.argsort(_anchor_order(m + int(anchors)))[:m]


def ratings_checksum(X: ArrayLike, y: ArrayLike) -> str:
    """``sha256:<hex>`` of the ratings as float64 (reference, estimate in mg/dL, rating), in
    order: equal for equal data, whatever file format or unit they came from."""
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(X, dtype=np.float64).tobytes())
    digest.update(np.ascontiguousarray(y, dtype=np.float64).tobytes())
    return "sha256:" + digest.hexdigest()


def training_data(ratings: Ratings) -> tuple[NDArray, NDArray]:
    """(X, y) of ``ratings``: the (m, 2) pairs in mg/dL and the (m,) ratings, checked (count,
    finite values, shapes) with a sentence for what is wrong."""
    if isinstance(ratings, RatingSet):
        return ratings.X, ratings.y
    X, y = ratings
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 1 and np.isfinite(y).all():
        check_rating_count(y)
    return check_training_data(X, y, "learn_grid")


def rater_codes(ratings: Ratings, m: int) -> NDArray:
    """Rater codes 0, 1, … in order of appearance (−1 everywhere without a rater column)."""
    if isinstance(ratings, RatingSet) and "rater" in ratings.frame:
        return pd.factorize(ratings.frame["rater"].to_numpy(dtype=object))[0].astype(float)
    return np.full(m, -1.0)


def check_rating_count(y: ArrayLike) -> None:
    """Refuse, with a sentence, a rating set no grid can be learned from: fewer than
    :data:`MIN_RATINGS` ratings, or no two different ratings."""
    y = np.asarray(y, dtype=np.float64)
    if len(y) < MIN_RATINGS:
        raise ValueError(
            f"{len(y)} rating{'s' if len(y) != 1 else ''} cannot make a grid: at "
            f"least {MIN_RATINGS} are needed"
        )
    if np.ptp(y) == 0:
        raise ValueError(
            f"every rating is {y[0]:g}: a grid needs at least two different "
            "ratings to tell more risky pairs from less risky ones"
        )


def panel_traits(ratings: Ratings) -> list[str]:
    """What marks ratings as a rater panel's, in words: more than one rater named, answers on a
    coarse scale (steps of 1 or 0.5); empty for continuous ratings without raters."""
    _, y = training_data(ratings)
    raters = rater_codes(ratings, len(y))
    n_raters = int(np.unique(raters[raters >= 0]).size)
    step = rating_step(y)
    return ([f"{n_raters} raters"] if n_raters > 1 else []) + (
        [f"answers in steps of {step:g}"] if step else []
    )


def default_recipe(ratings: Ratings) -> tuple[str, str]:
    """(preset name, why) of the default for these ratings: ``"robust"`` for a rater panel
    (:func:`panel_traits`), ``"best"`` otherwise (measured: docs/RESULTS.md, panels)."""
    traits = panel_traits(ratings)
    if traits:
        return "robust", f"the ratings come from a panel ({' and '.join(traits)})"
    return "best", "continuous ratings without a rater column"


@dataclass(frozen=True)
class TrainingSet:
    """What a fit learns from.

    Attributes
    ----------
    X, y : the training points: the ratings (with their rater codes as a third column for
        robust learning, −1 for none) and the diagonal points, in the order of
        :func:`with_diagonal_anchors`; y signed (:func:`~ranking_core.grids.signed.
        signed_ratings`) when the settings say so.
    y_ratings : the (m,) ratings as given, 0..4.
    raters : (m,) rater codes (:func:`rater_codes`).
    checksum : :func:`ratings_checksum` of the ratings.
    """

    X: NDArray[np.float64] = field(repr=False)
    y: NDArray[np.float64] = field(repr=False)
    y_ratings: NDArray[np.float64] = field(repr=False)
    raters: NDArray[np.float64] = field(repr=False)
    checksum: str

    @property
    def n_ratings(self) -> int:
        """m, the ratings without the diagonal points."""
        return len(self.y_ratings)

    @property
    def n_raters(self) -> int:
        """Raters the ratings name (0 without a rater column)."""
        return int(np.unique(self.raters[self.raters >= 0]).size)


def training_set(ratings: Ratings, *, anchors: int, signed: bool, with_raters: bool) -> TrainingSet:
    """The training set of ``ratings``, refused with a sentence when no grid can be learned
    from them (:func:`check_rating_count`): ``anchors`` diagonal points, signed targets when
    ``signed``, the rater codes as a third input column when ``with_raters`` (robust
    learning reads the rater from it)."""
    X_ratings, y_ratings = training_data(ratings)
    check_rating_count(y_ratings)  # also for a RatingSet (valid rows, perhaps too few)
    raters = rater_codes(ratings, len(y_ratings))
    inputs = np.column_stack([X_ratings, raters]) if with_raters else X_ratings
    X, y = with_diagonal_anchors(int(anchors), inputs, y_ratings)
    if signed:
        y = signed_ratings(X[:, :2], y)
    return TrainingSet(X, y, y_ratings, raters, ratings_checksum(X_ratings, y_ratings))
