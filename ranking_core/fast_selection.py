"""Fast k-fold choice of λ for the Lavrentiev ranker, followed by one direct refit.

The ``"kfold"`` rule of :func:`~ranking_core.selection.choose` decomposes every training fold and
then the whole set (k + 1 dense eigendecompositions, O(m³) each), although the refit needs only
one λ. Measured on the best SEG recipe (docs/SCALE.md), the eigendecompositions are 90 % of the
time. This module keeps what the choice needs and drops the rest, by training-set size m:

* ``"exact"`` (m ≤ ``EXACT_UP_TO``): the same folds, the same eigendecompositions and the same
  validation curve over every λ as ``choose(rule="kfold")``, hence the same λ; the refit at that
  λ is one Cholesky solve (:class:`~ranking_core.direct.DirectRanker`) instead of a further
  eigendecomposition. Predictions equal ``choose(rule="kfold")``'s to round-off.
* ``"one-fold"`` (m ≤ ``ONE_FOLD_UP_TO``): the validation curve of the first fold only (one
  eigendecomposition of 0.8m points, every λ), then the Cholesky refit: about 0.6 of one dense
  eigendecomposition of m points in all.
* ``"lattice"`` (larger m, L1 kernel on glucose pairs): the first fold's validation misranking at
  the λ of a golden-section search over the grid index (13 of 400 λ), each an exact
  sparse lattice solve (:class:`~ranking_core.direct.DirectRanker`, ``solver="lattice"``), then
  the refit on the lattice. No m × m matrix is formed.

The chosen λ is picked from the (mean) validation misranking (Kriukova et al. 2014, eq. (1)), or
the mean absolute validation error with ``criterion="absolute-error"``, by
:func:`~ranking_core.selection.near_minimum`, the rule of :func:`~ranking_core.selection.choose`:
the largest λ whose value ties with the smallest (within
:data:`~ranking_core.selection.TIE_TOLERANCE`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import KFold

from ranking_core.direct import DirectRanker, lattice_kernel_parts
from ranking_core.filters import Lavrentiev, make_filter
from ranking_core.kernels import make_kernel
from ranking_core.selection import (
    CRITERIA,
    Choice,
    near_minimum,
    paper_lambda_grid,
    validation_scores,
)
from ranking_core.validation import check_training_data, one_of

__all__ = ["EXACT_UP_TO", "METHODS", "ONE_FOLD_UP_TO", "choose_method", "fast_kfold_lambda"]

METHODS = ("auto", "exact", "one-fold", "lattice")
EXACT_UP_TO = 2000  # "auto": every fold (the exact k-fold curve) up to this many ratings
ONE_FOLD_UP_TO = 6000  # "auto": the first fold's exact curve up to here, the lattice beyond

Progress = Callable[[int, int], None]


def choose_method(m: int, ranker: BaseEstimator, n_features: int = 2) -> str:
    """The ``"auto"`` rule: exact up to ``EXACT_UP_TO`` ratings, one fold up to
    ``ONE_FOLD_UP_TO``, the lattice beyond when the kernel allows it (else one fold)."""
    if m <= EXACT_UP_TO:
        return "exact"
    kernel = make_kernel(ranker.get_params()["kernel"], gamma=ranker.get_params()["gamma"])
    if m > ONE_FOLD_UP_TO and n_features == 2 and lattice_kernel_parts(kernel) is not None:
        return "lattice"
    return "one-fold"


def _path_curve(ranker: BaseEstimator, lams: NDArray, X: NDArray, y: NDArray,
                train: NDArray, test: NDArray, criterion: str) -> NDArray:
    model = clone(ranker).fit(X[train], y[train])
    return validation_scores(y[test], model.path(lams).predict(X[test]), criterion)


def _golden_index(score: Callable[[int], float], size: int) -> None:
    """Fibonacci (integer golden-section) search for a minimum of ``score`` over 0..size−1.

    The open bracket (low, low + F_k) shrinks to (low, low + F_{k−1}) at one new call per step
    (one inner point is always reused), about log_φ(size) calls in all; indices past the end
    count as +∞ and ties keep the smaller index (the larger λ on a decreasing grid).
    """
    fib = [1, 1]
    while fib[-1] < size + 1:
        fib.append(fib[-1] + fib[-2])
    k, low = len(fib) - 1, -1

    def value(index: int) -> float:
        return score(index) if index < size else np.inf

    while k > 2:
        if value(low + fib[k - 2]) > value(low + fib[k - 1]):
            low += fib[k - 2]
        k -= 1
    for index in range(low + 1, min(low + fib[k], size)):
        score(index)


def fast_kfold_lambda(
    ranker: BaseEstimator,
    X: ArrayLike,
    y: ArrayLike,
    lams: ArrayLike | None = None,
    *,
    n_splits: int = 5,
    random_state: int | None = 0,
    method: str = "auto",
    lattice_step: float = 1.0,
    progress: Progress | None = None,
    criterion: str = "misranking",
) -> Choice:
    """k-fold choice of λ for a Lavrentiev ``SpectralRanker`` and one direct refit (module doc).

    Parameters
    ----------
    ranker : a :class:`~ranking_core.SpectralRanker` with the Lavrentiev filter (eq. (4)).
    X : (m, d) inputs (glucose pairs in mg/dL); y : (m,) ratings.
    lams : the λ grid (default the paper's 0.95^j, j < 200).
    n_splits, random_state : the folds, as in the ``"kfold"`` rule of
        :func:`~ranking_core.selection.choose`.
    method : ``"auto"`` (:func:`choose_method`), ``"exact"``, ``"one-fold"`` or ``"lattice"``.
    lattice_step : lattice spacing in mg/dL for ``"lattice"`` (1 = integer mg/dL).
    progress : called with (done, total) after each fold or lattice solve.
    criterion : ``"misranking"`` or ``"absolute-error"``
        (:func:`~ranking_core.selection.validation_scores`).

    Returns
    -------
    :class:`~ranking_core.selection.Choice` with ``rule = "kfold-<method>"``; ``curve`` is
    NaN at the λ the method did not score; ``model`` is a fitted
    :class:`~ranking_core.direct.DirectRanker` (its ``solver_`` and ``relative_residual_`` say how
    it was solved).
    """
    owner = "fast_kfold_lambda"
    X, y = check_training_data(X, y, owner)
    one_of(method, "method", METHODS, owner)
    one_of(criterion, "criterion", CRITERIA, owner)
    params = ranker.get_params()
    if not isinstance(make_filter(params.get("filter", "lavrentiev")), Lavrentiev):
        raise ValueError(f"{owner}: the direct refit solves the Lavrentiev ranker only; got "
                         f"filter={params.get('filter')!r}")
    lams = paper_lambda_grid() if lams is None else np.asarray(lams, dtype=np.float64)
    if method == "auto":
        method = choose_method(len(y), ranker, X.shape[1])
    folds = [(train, test) for train, test in
             KFold(n_splits=n_splits, shuffle=True, random_state=random_state).split(X)
             if np.ptp(y[train]) > 0]
    if not folds:
        raise ValueError(f"{owner}: every training fold has constant ratings")
    kernel = make_kernel(params["kernel"], gamma=params["gamma"])
    solver = "cholesky"
    if method == "lattice":
        curve = _lattice_curve(DirectRanker(kernel, solver="lattice", lattice_step=lattice_step),
                               lams, X, y, *folds[0], progress, criterion)
        solver = "lattice"
    else:
        used = folds if method == "exact" else folds[:1]
        curves = []
        for done, (train, test) in enumerate(used, start=1):
            curves.append(_path_curve(ranker, lams, X, y, train, test, criterion))
            if progress is not None:
                progress(done, len(used))
        stacked = np.vstack(curves)
        curve = np.full(len(lams), np.nan)
        valid = ~np.all(np.isnan(stacked), axis=0)
        curve[valid] = np.nanmean(stacked[:, valid], axis=0)
    best = near_minimum(curve, owner=owner)
    model = DirectRanker(kernel, lam=float(lams[best]), solver=solver,
                         lattice_step=lattice_step).fit(X, y)
    return Choice(float(lams[best]), "lam", None, lams, None, curve, model, f"kfold-{method}",
                  refit=True)


def _lattice_curve(lattice: DirectRanker, lams: NDArray, X: NDArray, y: NDArray,
                   train: NDArray, test: NDArray, progress: Progress | None,
                   criterion: str) -> NDArray:
    """The validation criterion of one fold at the λ a golden-section search visits (NaN elsewhere);
    validation inputs are read off the fitted lattice surface."""
    curve = np.full(len(lams), np.nan)
    expected = int(np.ceil(np.log(len(lams)) / np.log(1.618034))) + 1

    def score(index: int) -> float:
        if np.isnan(curve[index]):
            model = clone(lattice).set_params(lam=float(lams[index])).fit(X[train], y[train])
            curve[index] = validation_scores(y[test], model.lattice_values(X[test]),
                                             criterion)[0]
            if progress is not None:
                done = int(np.sum(~np.isnan(curve)))
                progress(done, max(expected, done))
        return float(curve[index])

    _golden_index(score, len(lams))
    return curve
