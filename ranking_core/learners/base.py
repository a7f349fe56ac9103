"""The pieces every learner shares, as mixins (scikit-learn's convention: mixins before
``BaseEstimator``).

* :class:`CheckedInputsMixin` — training and prediction inputs checked with one message per rule
  (:mod:`ranking_core.validation`), ``n_features_in_`` set once;
* :class:`RankingScoreMixin` — ``score`` = 1 − pairwise misranking (Kriukova et al. 2014,
  eq. (1)), higher is better;
* :class:`KernelMixin` — ``kernel``, ``gamma``, ``degree``, ``coef0`` resolved to a
  :class:`~ranking_core.kernels.Kernel` (defaults from the kernel class) and predictions
  f(x) = Σ c_i K(x, x_i) + b formed in row blocks of bounded memory;
* :class:`LambdaPathMixin` — ``path(lams)`` and ``resolve(lam)`` from one cached decomposition,
  for learners that define ``_solution(lams)``; :class:`RegularizationPath` holds a whole λ grid.

A learner is a class that combines what it needs, e.g.
``class SVRank(KernelMixin, RankingScoreMixin, CheckedInputsMixin, RegressorMixin,
BaseEstimator)``, and defines ``__init__`` (its parameters, stored by :func:`store_params`) and
``fit``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ranking_core.kernels import Kernel, make_kernel
from ranking_core.metrics import pairwise_misranking
from ranking_core.validation import check_inputs, check_training_data, positive_float

if TYPE_CHECKING:
    from ranking_core.spectral import Spectrum

__all__ = [
    "BLOCK_ENTRIES",
    "CheckedInputsMixin",
    "KernelMixin",
    "KernelPathEstimator",
    "LambdaPathMixin",
    "RankingScoreMixin",
    "RegularizationPath",
    "store_params",
]

# Predictions are formed in row blocks of at most this many kernel entries (8 bytes each).
BLOCK_ENTRIES = 1 << 22


def store_params(estimator: BaseEstimator, params: dict[str, Any]) -> None:
    """scikit-learn's ``__init__`` convention in one place: every argument is stored unchanged
    under its own name and nothing else is done. Call as ``store_params(self, locals())``."""
    for name, value in params.items():
        if name != "self":
            setattr(estimator, name, value)


class CheckedInputsMixin:
    """Inputs checked the same way by every learner; names the bad rows and the rule."""

    def _check_training_data(
        self, X: ArrayLike, y: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(X, y) as finite float arrays, at least two points, y not constant; sets
        ``n_features_in_``."""
        X, y = check_training_data(X, y, type(self).__name__)
        self.n_features_in_ = X.shape[1]
        return X, y

    def _check_prediction_inputs(self, X: ArrayLike) -> NDArray[np.float64]:
        """X as a finite float array with the training inputs' number of columns (after ``fit``)."""
        check_is_fitted(self, "n_features_in_")
        return check_inputs(X, type(self).__name__, self.n_features_in_)


class RankingScoreMixin:
    """``score`` = 1 − pairwise misranking (Kriukova et al. 2014, eq. (1)): higher is better."""

    # defined by the learner (annotation only: nothing is set on the class)
    predict: Callable[[ArrayLike], NDArray[np.float64]]

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: Any = None) -> float:
        """1 − the share of pairs with y_i > y_j that the predictions rank f_i ≤ f_j."""
        if sample_weight is not None:
            raise ValueError(f"{type(self).__name__}.score does not support sample_weight")
        return 1.0 - pairwise_misranking(y, self.predict(X))


class KernelMixin:
    """A learner whose function is a kernel expansion f(x) = Σ_i c_i K(x, x_i) + b.

    Expects the parameters ``kernel``, ``gamma``, ``degree``, ``coef0`` and, after ``fit``,
    ``kernel_``, ``X_fit_`` (``None`` for explicit features: then f(x) = xᵀc + b), ``coef_``
    ((p,) or (p, v)) and ``intercept_``.
    """

    # the learner's parameters and fitted attributes, and CheckedInputsMixin's check
    # (annotations only: nothing is set on the class)
    kernel: str | Kernel
    gamma: float | ArrayLike | None
    degree: int | None
    coef0: float | None
    kernel_: Kernel
    X_fit_: NDArray[np.float64] | None
    coef_: NDArray[np.float64]
    intercept_: float | NDArray[np.float64]
    _check_prediction_inputs: Callable[[ArrayLike], NDArray[np.float64]]

    def _resolve_kernel(self) -> Kernel:
        """The kernel object; parameters left at ``None`` take the kernel class's defaults."""
        self.kernel_ = make_kernel(
            self.kernel, gamma=self.gamma, degree=self.degree, coef0=self.coef0
        )
        return self.kernel_

    def _check_positive_params(self, *names: str) -> list[float]:
        """Each named parameter checked in turn to be a positive number (the error names the
        class); their values as floats."""
        owner = type(self).__name__
        return [positive_float(getattr(self, name), name, owner) for name in names]

    def _feature_blocks(self, X: NDArray[np.float64]) -> Iterator[tuple[slice, NDArray]]:
        """(rows, Φ(X[rows])) with Φ the kernel row K(x, X_fit) or, for explicit features, x."""
        if self.X_fit_ is None:
            yield slice(0, len(X)), X
            return
        step = max(1, BLOCK_ENTRIES // max(len(self.X_fit_), 1))
        for start in range(0, len(X), step):
            rows = slice(start, min(start + step, len(X)))
            yield rows, self.kernel_(X[rows], self.X_fit_)

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """f(x) = Σ c_i K(x, x_i) + b on the rating scale, shape (n,) (or (n, v) for v outputs)."""
        check_is_fitted(self, "coef_")
        values = self._check_prediction_inputs(X)
        out = np.empty((len(values), *np.shape(self.coef_)[1:]))
        for rows, features in self._feature_blocks(values):
            out[rows] = features @ self.coef_
        return out + self.intercept_


@dataclass(frozen=True)
class RegularizationPath:
    """Solutions for a whole λ grid from one decomposition.

    Attributes
    ----------
    lams : (L,) regularization parameters.
    coef : (L, p) coefficients (kernel coefficients, or feature weights for the primal form).
    intercept : (L,) constants b(λ).
    factors : (L, r) filter factors g_λ(σ).
    estimator : the fitted learner the path belongs to.
    """

    lams: NDArray[np.float64]
    coef: NDArray[np.float64]
    intercept: NDArray[np.float64]
    factors: NDArray[np.float64]
    estimator: LambdaPathMixin

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """Predictions for every λ, shape (L, n); O(n·m·L) after one kernel block per row chunk."""
        values = self.estimator._check_prediction_inputs(X)
        out = np.empty((len(self.lams), len(values)))
        for rows, features in self.estimator._feature_blocks(values):
            out[:, rows] = self.coef @ features.T
        return out + self.intercept[:, None]

    def rkhs_norm_differences(self) -> NDArray[np.float64]:
        """‖f_{λ_j} − f_{λ_{j+1}}‖_H for consecutive λ, shape (L − 1,) (quasi-optimality)."""
        weights = self.estimator.spectrum_.norm_weights
        return np.sqrt(np.maximum(np.diff(self.factors, axis=0) ** 2 @ weights, 0.0))


class LambdaPathMixin:
    """``path`` and ``resolve`` for a learner that decomposes once in ``fit`` (``spectrum_``) and
    defines ``_solution(lams) -> (coef (L, p[, v]), intercept (L[, v]), factors (L, r))``."""

    # the learner's parameter, fitted attributes and methods, KernelMixin's and
    # CheckedInputsMixin's (annotations only: nothing is set on the class)
    lam: float
    spectrum_: Spectrum
    coef_: NDArray[np.float64]
    intercept_: float | NDArray[np.float64]
    _solution: Callable[[NDArray[np.float64]], tuple[NDArray, NDArray, NDArray]]
    _check_prediction_inputs: Callable[[ArrayLike], NDArray[np.float64]]
    _feature_blocks: Callable[[NDArray[np.float64]], Iterator[tuple[slice, NDArray]]]

    def _set_solution(self, lam: float) -> None:
        coef, intercept, _ = self._solution(np.array([lam]))
        self.coef_ = coef[0]
        self.intercept_ = intercept[0] if np.ndim(intercept[0]) else float(intercept[0])

    def path(self, lams: ArrayLike) -> RegularizationPath:
        """The solutions for every λ in ``lams`` from the cached decomposition (no refactorising);
        O(m·r) per λ. One output only."""
        check_is_fitted(self, "spectrum_")
        owner = type(self).__name__
        if np.ndim(self.coef_) != 1:
            raise ValueError(
                f"{owner}.path supports one output; this model has {np.shape(self.coef_)[1]}"
            )
        lams = np.atleast_1d(np.asarray(lams, dtype=np.float64))
        for lam in lams:
            positive_float(lam, "lams", owner)
        coef, intercept, factors = self._solution(lams)
        return RegularizationPath(lams, coef, intercept, factors, self)

    def resolve(self, lam: float) -> BaseEstimator:
        """A copy solved at another λ from the same decomposition, O(m·r) (for sliders, λ rules);
        learners that refine their solution add that cost (:mod:`ranking_core.learners.spectral`:
        a few products with the kernel matrix)."""
        check_is_fitted(self, "spectrum_")
        lam = positive_float(lam, "lam", type(self).__name__)
        other = copy.copy(self)
        other.lam = lam
        other._set_solution(lam)
        return other


class KernelPathEstimator(
    KernelMixin,
    LambdaPathMixin,
    RankingScoreMixin,
    CheckedInputsMixin,
    RegressorMixin,
    BaseEstimator,
):
    """The bases of a kernel learner that decomposes once and solves every λ from it (spectral,
    Nyström, preference graph): kernel expansion, λ path, ranking score, input checks, and a
    scikit-learn regressor."""
