"""Ranking on a low-rank kernel factor: the whole λ path in O(m·r²), factored once for k-fold.

A greedy pivoted Cholesky factor K ≈ LLᵀ (Harbrecht, Peters & Schneider 2012) with pivots P and
the r × r lower-triangular block L_P = L[P] gives the feature map

    Φ(x) = K(x, X_P)·T,   T = L_P^{−T},   Φ(X) = L,   Φ(X)Φ(X)ᵀ = K_XP K_PP⁻¹ K_PX,

so the ranker of Kriukova et al. 2014, eq. (4) (and every spectral filter, eq. (13)) on the
approximated kernel is the primal ranker on r features (Pahikkala et al. 2009, §3.1, §3.5):
w(λ) = g_λ(Φ_cᵀΦ_c/m)·Φ_cᵀy/m, f(x) = K(x, X_P)·(T w) + b. The rank r is set by a tolerance on
the discarded kernel mass, the relative residual trace

    ε = trace(K − LLᵀ) / trace(K) ≤ ``rank_tol``,

measured on every training point and kept in the result (:attr:`LowRankRanker.factor_`). For the
Gaussian kernel on glucose pairs r levels off near 450 at ε = 10⁻¹⁰ whatever m is
(docs/SCALE.md); the Laplacian kernel is far from low rank (r > 3,000 at ε = 10⁻³).

Cost: pivots are chosen on a random sample of at most :data:`PIVOT_SAMPLE` points, the features
of all m points are one kernel block K(X, X_P) and one product with T (O(m·r²), BLAS 3), and the
greedy search goes on over all m points only when the residual trace of the whole set is still
above the tolerance (so the stated ε always holds on every point). Then one r × r
eigendecomposition per training set. k-fold validation factors once on all m inputs (the pivots
see no rating) and forms each training fold's r × r covariance from the whole set's moments less
the validation fold's: 2·m·r² flops for all folds together instead of k refactorisations
(:func:`lowrank_kfold`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.linalg.blas
from numpy.typing import ArrayLike, NDArray

from ranking_core.filters import Filter, make_filter
from ranking_core.grids.coordinates import TransformedKernel
from ranking_core.kernels import Kernel
from ranking_core.learners.base import BLOCK_ENTRIES, KernelPathEstimator, store_params
from ranking_core.selection import (
    Choice,
    kfold_splits,
    mean_over_folds,
    near_minimum,
    validation_scores,
)
from ranking_core.spectral import Spectrum
from ranking_core.validation import check_training_data, positive_float

__all__ = [
    "LOW_RANK_TOL",
    "MAX_RANK",
    "PIVOT_SAMPLE",
    "FeatureMoments",
    "KernelFactor",
    "LowRankRanker",
    "kernel_factor",
    "lowrank_kfold",
    "lowrank_split",
]

# Relative residual trace of the default factor: predictions within about 10⁻⁶ relative of the
# dense eigendecomposition's over the whole λ path at m = 3,000 (docs/SCALE.md).
LOW_RANK_TOL = 1e-10
MAX_RANK = 3000  # a factor needing more columns is not low rank: refused (8·m·r bytes)
PIVOT_SAMPLE = 8000  # pivots are searched first among this many points drawn at random


def _base_inputs(kernel: Kernel, X: NDArray[np.float64]) -> tuple[Kernel, NDArray[np.float64]]:
    """(kernel, X) with a glucose transform applied once to the inputs instead of per column."""
    if isinstance(kernel, TransformedKernel):
        return kernel.base, kernel.transform(X)
    return kernel, X


def _greedy(
    kernel: Kernel,
    Z: NDArray[np.float64],
    factor: NDArray[np.float64],
    diag: NDArray[np.float64],
    target: float,
    max_rank: int,
) -> tuple[NDArray[np.float64], list[int]]:
    """Continue a pivoted Cholesky factor ``factor`` (m, k) of K(Z, Z) whose residual diagonal is
    ``diag`` until Σ diag ≤ ``target``; returns the factor and the new pivots. Raises
    ``ValueError`` past ``max_rank`` columns. O(m·r) per column."""
    m, k = factor.shape
    columns = np.empty((0, m))  # row j holds new column j of the factor; grown in chunks
    pivots: list[int] = []
    while diag.sum() > target:
        j = len(pivots)
        if k + j >= max_rank:
            raise ValueError(
                f"the kernel is not low rank on these points: more than {max_rank:,} columns "
                f"leave a residual trace above {target / diag.size:.1e} per point"
            )
        if j == len(columns):
            columns = np.vstack([columns, np.empty((min(256, max_rank - k - j), m))])
        p = int(np.argmax(diag))
        column = kernel(Z, Z[p : p + 1])[:, 0] - factor @ factor[p] - columns[:j].T @ columns[:j, p]
        columns[j] = column / np.sqrt(diag[p])
        diag -= columns[j] ** 2
        diag[p] = 0.0
        pivots.append(p)
    return np.hstack([factor, columns[: len(pivots)].T]), pivots


@dataclass(frozen=True)
class KernelFactor:
    """A low-rank factor K ≈ ΦΦᵀ of the Gram matrix of m training points.

    Attributes
    ----------
    pivots : (r,) indices of the pivot points in the training set.
    transform : (r, r) T, with Φ(x) = K(x, X[pivots])·T.
    features : (m, r) Φ(X).
    tolerance : the relative residual trace asked for.
    residual : the relative residual trace reached, trace(K − ΦΦᵀ)/trace(K) ≤ tolerance.
    """

    pivots: NDArray[np.intp]
    transform: NDArray[np.float64]
    features: NDArray[np.float64]
    tolerance: float
    residual: float

    @property
    def rank(self) -> int:
        return int(self.pivots.size)


def _features(kernel: Kernel, Z: NDArray, centers: NDArray, transform: NDArray) -> NDArray:
    """K(Z, centers)·T in row blocks of at most BLOCK_ENTRIES kernel entries."""
    out = np.empty((len(Z), transform.shape[1]))
    step = max(1, BLOCK_ENTRIES // max(len(centers), 1))
    for start in range(0, len(Z), step):
        rows = slice(start, min(start + step, len(Z)))
        out[rows] = kernel(Z[rows], centers) @ transform
    return out


def _transform(lower: NDArray[np.float64]) -> NDArray[np.float64]:
    """T = L_P^{−T} for the pivot rows L_P of a pivoted Cholesky factor (lower triangular)."""
    eye = np.eye(len(lower))
    return scipy.linalg.solve_triangular(np.tril(lower), eye, lower=True).T


def kernel_factor(
    kernel: Kernel,
    X: ArrayLike,
    tol: float = LOW_RANK_TOL,
    max_rank: int = MAX_RANK,
    random_state: int | None = 0,
) -> KernelFactor:
    """The pivoted Cholesky factor of K(X, X) to relative residual trace ``tol`` (module doc).

    Pivots are searched among at most :data:`PIVOT_SAMPLE` points drawn with ``random_state``;
    the factor of all points is then K(X, X_P)·T and the search goes on over all points while
    their residual trace exceeds ``tol``·trace(K). Raises ``ValueError`` when more than
    ``max_rank`` columns are needed (the kernel is not low rank on X). O(m·r²) flops.
    """
    base, Z = _base_inputs(kernel, np.asarray(X, dtype=np.float64))
    m = len(Z)
    diag_all = base.diagonal(Z).astype(np.float64, copy=True)
    target = tol * diag_all.sum()
    sample = np.arange(m)
    if m > PIVOT_SAMPLE:
        sample = np.sort(np.random.default_rng(random_state).choice(m, PIVOT_SAMPLE, replace=False))
    sample_diag = diag_all[sample].copy()
    first, found = _greedy(
        base, Z[sample], np.zeros((sample.size, 0)), sample_diag, tol * sample_diag.sum(), max_rank
    )
    pivots = sample[np.asarray(found, dtype=np.intp)]
    transform = _transform(first[found])
    features = first if sample.size == m else _features(base, Z, Z[pivots], transform)
    residual_diag = np.maximum(diag_all - np.einsum("ij,ij->i", features, features), 0.0)
    residual_diag[pivots] = 0.0
    if residual_diag.sum() > target:
        features, more = _greedy(base, Z, features, residual_diag, target, max_rank)
        pivots = np.concatenate([pivots, np.asarray(more, dtype=np.intp)])
        transform = _transform(features[pivots])
        residual_diag = np.maximum(diag_all - np.einsum("ij,ij->i", features, features), 0.0)
    return KernelFactor(
        pivots,
        transform,
        features,
        float(tol),
        float(residual_diag.sum() / diag_all.sum()),
    )


@dataclass(frozen=True)
class FeatureMoments:
    """Sums over a set of rows of the features Φ and targets y: ΦᵀΦ (r, r), Φᵀ1 (r,), Φᵀy (r,),
    Σy, Σy² and the count; a training fold's moments are the whole set's less its validation
    fold's (O(n_val·r²) instead of O(n_train·r²))."""

    gram: NDArray[np.float64]
    total: NDArray[np.float64]
    cross: NDArray[np.float64]
    y_sum: float
    count: int

    @classmethod
    def of(cls, features: NDArray[np.float64], y: NDArray[np.float64]) -> FeatureMoments:
        upper = scipy.linalg.blas.dsyrk(1.0, features, trans=1)  # ΦᵀΦ, upper triangle
        gram = np.triu(upper) + np.triu(upper, 1).T
        return cls(gram, features.sum(axis=0), features.T @ y, float(y.sum()), len(y))

    def __sub__(self, other: FeatureMoments) -> FeatureMoments:
        return FeatureMoments(
            self.gram - other.gram,
            self.total - other.total,
            self.cross - other.cross,
            self.y_sum - other.y_sum,
            self.count - other.count,
        )

    def spectrum(self, centered: bool = True) -> Spectrum:
        """The primal spectrum (:func:`ranking_core.spectral.primal_spectrum`) of these rows:
        eigh of Φ_cᵀΦ_c/n and right-hand side Φ_cᵀy/n; O(r³)."""
        n = self.count
        mean = self.total / n
        if centered:
            covariance = (self.gram - np.outer(self.total, mean)) / n
            rhs = (self.cross - self.total * (self.y_sum / n)) / n
        else:
            covariance, rhs = self.gram / n, self.cross / n
        values, vectors = scipy.linalg.eigh((covariance + covariance.T) / 2, driver="evd")
        projection = vectors.T @ rhs
        return Spectrum(
            vectors=vectors,
            values=np.maximum(values, 0.0),
            rhs=rhs,
            projection=projection,
            residual=np.zeros_like(rhs),
            feature_mean=mean,
            norm_weights=projection**2,
            method="primal",
        )


class LowRankRanker(KernelPathEstimator):
    """Regularized ranking on a pivoted Cholesky factor of the kernel (module doc).

    .. math:: f(x) = K(x, X_P)\\,T\\,w(\\lambda) + b, \\qquad
              w(\\lambda) = g_\\lambda(\\Phi_c^T\\Phi_c/m)\\,\\Phi_c^T y/m

    Kriukova et al. 2014, eq. (4) (or eq. (13) and the other filters) with K replaced by its
    factor; equal to :class:`~ranking_core.SpectralRanker` when the factor is exact. Cost
    O(m·r²) to fit, O(r²) per further λ, r kernel evaluations per prediction.

    Parameters
    ----------
    kernel, gamma, filter, lam, degree, coef0 : as for :class:`~ranking_core.SpectralRanker`.
    rank_tol : the relative residual trace ε of the factor (discarded kernel mass).
    max_rank : the largest rank accepted (a ``ValueError`` beyond).
    random_state : seed of the sample the pivots are searched in first.

    Attributes
    ----------
    factor_ : the :class:`KernelFactor` of the training inputs (rank, ε reached; its features
        are dropped after ``fit`` unless kept by :func:`lowrank_kfold`).
    X_fit_ : (r, d) the pivot points; ``coef_`` (r,) their kernel coefficients T·w.
    intercept_ : b (mean training prediction = mean rating).
    n_fit_ : the training points fitted.
    spectrum_ : the r × r feature covariance's decomposition.
    """

    _centered = True

    def __init__(
        self,
        kernel: str | Kernel = "gaussian",
        gamma: float | ArrayLike | None = None,
        filter: str | Filter = "lavrentiev",
        lam: float = 1e-3,
        *,
        degree: int | None = None,
        coef0: float | None = None,
        rank_tol: float = LOW_RANK_TOL,
        max_rank: int = MAX_RANK,
        random_state: int | None = 0,
    ) -> None:
        store_params(self, locals())

    def _check_params(self) -> None:
        self._check_positive_params("lam", "rank_tol")
        self._resolve_kernel()
        self.filter_ = make_filter(self.filter)

    def fit(self, X: ArrayLike, y: ArrayLike) -> LowRankRanker:
        """Factor the kernel on X and decompose the feature covariance once.

        X : (m, d) inputs (glucose pairs: REF, estimate in mg/dL); y : (m,) ratings.
        """
        self._check_params()
        X, y = self._check_training_data(X, y)
        factor = kernel_factor(
            self.kernel_, X, float(self.rank_tol), int(self.max_rank), self.random_state
        )
        return self.fit_moments(X, factor, FeatureMoments.of(factor.features, y))

    def fit_moments(
        self, X: NDArray[np.float64], factor: KernelFactor, moments: FeatureMoments
    ) -> LowRankRanker:
        """Fit on the rows whose ``moments`` are given, with a ``factor`` of inputs ``X`` already
        computed (a fold of :func:`lowrank_kfold`): one r × r eigendecomposition."""
        self._check_params()
        self.n_features_in_ = X.shape[1]
        self.factor_ = KernelFactor(
            factor.pivots, factor.transform, factor.features[:0], factor.tolerance, factor.residual
        )
        self.X_fit_ = X[factor.pivots]
        self.n_fit_ = moments.count
        self.y_mean_ = moments.y_sum / moments.count
        self.spectrum_ = moments.spectrum(self._centered)
        self._set_solution(positive_float(self.lam, "lam", type(self).__name__))
        return self

    def _solution(self, lams: NDArray[np.float64]) -> tuple[NDArray, NDArray, NDArray]:
        weights = self.spectrum_.coefficients(self.filter_, lams)  # w(λ), (L, r)
        intercept = self.y_mean_ - weights @ self.spectrum_.feature_mean
        return (
            weights @ self.factor_.transform.T,
            intercept,
            self.spectrum_.factors(self.filter_, lams),
        )


def _fold_curves(
    ranker: LowRankRanker,
    features: NDArray,
    y: NDArray,
    folds: list[tuple[NDArray, NDArray]],
    lams: NDArray,
    criterion: str,
    step: Callable[[], None],
) -> NDArray:
    """Each fold's validation curve from the whole set's moments less the fold's."""
    whole = FeatureMoments.of(features, y)
    curves = []
    for train, test in folds:
        if np.ptp(y[train]) > 0:
            moments = whole - FeatureMoments.of(features[test], y[test])
            spectrum = moments.spectrum(True)
            weights = spectrum.coefficients(ranker.filter_, lams)  # (L, r)
            intercept = moments.y_sum / moments.count - weights @ spectrum.feature_mean
            predictions = weights @ features[test].T + intercept[:, None]
            curves.append(validation_scores(y[test], predictions, criterion))
        step()
    return mean_over_folds(curves, len(lams))


def lowrank_split(
    ranker: LowRankRanker,
    X: ArrayLike,
    y: ArrayLike,
    lams: ArrayLike,
    folds: list[tuple[NDArray, NDArray]],
    *,
    rule: str,
    criterion: str = "misranking",
    refit: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> Choice:
    """λ chosen on ``folds`` (train, validation index pairs) from one factor of all inputs:
    the mean validation criterion per λ (:func:`~ranking_core.selection.validation_scores`),
    the first near-minimum (:func:`~ranking_core.selection.near_minimum`, the rule of
    :func:`~ranking_core.selection.choose`), then the model on all points (``refit``) or on the
    first fold's training part. The pivots are chosen from the inputs only, never the ratings.
    """
    X, y = check_training_data(X, y, "lowrank_split")
    lams = np.asarray(lams, dtype=np.float64)
    ranker._check_params()
    factor = kernel_factor(
        ranker.kernel_, X, float(ranker.rank_tol), int(ranker.max_rank), ranker.random_state
    )
    total = len(folds) + 1
    done = iter(range(1, total + 1))

    def step() -> None:
        if progress is not None:
            progress(next(done), total)

    curve = _fold_curves(ranker, factor.features, y, folds, lams, criterion, step)
    best = near_minimum(curve, owner="lowrank_split")
    model = LowRankRanker(**{**ranker.get_params(), "lam": float(lams[best])})
    if refit:  # the whole set's features as they are (a copy would double the peak memory)
        moments = FeatureMoments.of(factor.features, y)
    else:
        moments = FeatureMoments.of(factor.features[folds[0][0]], y[folds[0][0]])
    model.fit_moments(X, factor, moments)
    step()
    return Choice(float(lams[best]), "lam", None, lams, None, curve, model, rule, refit)


def lowrank_kfold(
    ranker: LowRankRanker,
    X: ArrayLike,
    y: ArrayLike,
    lams: ArrayLike,
    *,
    n_splits: int = 5,
    random_state: int | None = 0,
    criterion: str = "misranking",
    progress: Callable[[int, int], None] | None = None,
) -> Choice:
    """k-fold choice of λ on one factor (the folds of ``choose(rule="kfold")``), refit on all."""
    X = np.asarray(X, dtype=np.float64)
    folds = kfold_splits(X, n_splits, random_state)
    return lowrank_split(
        ranker, X, y, lams, folds, rule="kfold", criterion=criterion, progress=progress
    )
