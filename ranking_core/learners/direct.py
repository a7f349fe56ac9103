"""Lavrentiev ranking at one λ solved directly: a dense Cholesky solve, or the glucose lattice.

The Lavrentiev ranker (Kriukova et al. 2014, eq. (4)) has kernel coefficients

    (K̃ + λI) c = Cy/m,   K̃ = CKC/m,   C = I − 11ᵀ/m,

and f(x) = Σ c_i K(x, x_i) + b with b putting the mean training prediction on the mean rating. When
λ is already known (after a model choice), no eigendecomposition is needed:

* ``cholesky`` — one Cholesky factorisation of K̃ + λI, O(m³/3) flops (about a tenth of the time
  of the dense eigendecomposition that :class:`~ranking_core.SpectralRanker` caches for a whole
  λ path) and 8m² bytes. Same solution as the eigendecomposition up to round-off.
* ``lattice`` — for the L1 (Laplacian) kernel exp(−‖t(x) − t(x')‖₁/γ), optionally on warped
  glucose t (:class:`~ranking_core.grids.coordinates.GlucoseTransform`), with the inputs rounded to
  the integer mg/dL lattice 0..600 (step ``lattice_step``). On a sorted 1-D point set the
  exponential (Ornstein–Uhlenbeck) kernel has a tridiagonal inverse T, so the Gram matrix of the
  601 × 601 lattice is K₁ ⊗ K₁ with the sparse inverse Q = T ⊗ T (nine entries a row). With S the
  m × N selection of the training points on the lattice, the ranker's values F on the whole
  lattice minimise (1/m)(y − SF)ᵀC(y − SF) + λFᵀQF, i.e.

      (diag(s)/m − uuᵀ + λQ) F = Sᵀ(y − ȳ)/m,   s = Sᵀ1 (points per node), u = s/m,

  a sparse system of N = 361,201 unknowns whatever m is, solved by one sparse Cholesky
  factorisation of diag(s)/m + λQ by nested dissection of the lattice
  (:mod:`~ranking_core.learners.lattice_cholesky`) and the Sherman–Morrison formula for uuᵀ.
  Then c = C(y − SF)/(mλ) (from λc = C(y − Kc)/m) and b = ȳ − mean(SF). Memory is that of the
  factor (about 150 MB), never an m × m matrix.

Its cross-validation lives beside it (as scikit-learn keeps ``RidgeCV`` beside ``Ridge``):
:func:`fast_kfold_lambda` chooses λ by k-fold validation and refits with a
:class:`DirectRanker`. The ``"kfold"`` rule of :func:`~ranking_core.selection.choose`
decomposes every training fold and then the whole set (k + 1 dense eigendecompositions, O(m³)
each), although the refit needs only one λ. Measured on the best SEG recipe (docs/SCALE.md),
the eigendecompositions are 90 % of the time. :func:`fast_kfold_lambda` keeps what the choice
needs and drops the rest, by size m (:func:`choose_method`, the one size rule, which
:func:`ranking_core.learn.plan_fit` applies for :func:`~ranking_core.learn.learn_grid`; up to
``EXACT_UP_TO`` ratings it keeps the exact rule of :func:`~ranking_core.selection.choose`,
refit included, so that the grid can be re-solved at any λ):

* ``"exact"`` (m ≤ ``EXACT_UP_TO``): the same folds, the same eigendecompositions and the same
  validation curve over every λ as ``choose(rule="kfold")``, hence the same λ; the refit at that
  λ is one Cholesky solve (:class:`DirectRanker`) instead of a further
  eigendecomposition. Predictions equal ``choose(rule="kfold")``'s to round-off.
* ``"one-fold"`` (m ≤ ``ONE_FOLD_UP_TO``): the validation curve of the first fold only, fitted
  on at most ``ONE_FOLD_TRAIN`` of its training points (one eigendecomposition, every λ), then
  the Cholesky refit on all m: at m = 4,000 about a third of one dense eigendecomposition of m
  points in all.
* ``"lattice"`` (larger m, L1 kernel on glucose pairs): the first fold's validation misranking at
  the λ of a golden-section search over the grid index (13 of 400 λ), each an exact
  sparse lattice solve (:class:`DirectRanker`, ``solver="lattice"``), then
  the refit on the lattice. No m × m matrix is formed.

The chosen λ is picked from the (mean) validation misranking (Kriukova et al. 2014, eq. (1)), or
the mean absolute validation error with ``criterion="absolute-error"``, by
:func:`~ranking_core.selection.near_minimum`, the rule of :func:`~ranking_core.selection.choose`:
the largest λ whose value ties with the smallest (within
:data:`~ranking_core.selection.TIE_TOLERANCE`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
import scipy.linalg
import scipy.sparse
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.utils.validation import check_is_fitted

from ranking_core.filters import Lavrentiev, make_filter
from ranking_core.grids.coordinates import GlucoseTransform, TransformedKernel
from ranking_core.grids.seg import GLUCOSE_MAX
from ranking_core.kernels import Kernel, LaplacianKernel, make_kernel
from ranking_core.learners.base import (
    CheckedInputsMixin,
    KernelMixin,
    RankingScoreMixin,
    store_params,
)
from ranking_core.learners.choices import DIRECT_METHODS
from ranking_core.learners.lattice_cholesky import LatticeCholesky, lattice_cholesky, ou_precision
from ranking_core.learners.lattice_shifted import shifted_solutions
from ranking_core.selection import (
    CRITERIA,
    Choice,
    kfold_curves,
    kfold_splits,
    near_minimum,
    paper_lambda_grid,
    validation_scores,
)
from ranking_core.validation import (
    check_inputs,
    check_training_data,
    describe_rows,
    one_of,
    positive_float,
)

__all__ = [
    "EXACT_UP_TO",
    "METHODS",
    "ONE_FOLD_TRAIN",
    "ONE_FOLD_UP_TO",
    "DirectRanker",
    "choose_method",
    "fast_kfold_lambda",
    "lattice_kernel_parts",
]

SOLVERS = ("auto", "cholesky", "lattice")
METHODS = DIRECT_METHODS
EXACT_UP_TO = 2000  # "auto": every fold (the exact k-fold curve) up to this many ratings
# "auto": the first fold's exact curve up to here, the lattice beyond (DirectRanker's "auto"
# solver too: below, the dense Cholesky solve is faster, 8m² bytes: 288 MB at m = 6,000)
ONE_FOLD_UP_TO = 6000
# "one-fold" fits the first fold on at most this many of its training points: one
# eigendecomposition of 2,000 points (about 1/8 of eigh(4000)) instead of 0.8·m. On 4,000 clean
# SEG ratings it chose λ 9.1e-8 instead of 9.6e-9, misranking 0.49 % instead of 0.47 % against
# the SEG, in 2.5 s instead of 5.3 s for the fit (docs/RESULTS.md, Scale).
ONE_FOLD_TRAIN = 2000
# the lattice search scores every λ of its bracket at once (shifted solves from one factor)
# when they lie within this factor of each other: about 20 Lanczos steps, the cost of about
# two factorisations, where the search would spend four or five
BRACKET_RATIO = 16.0


def lattice_kernel_parts(kernel: Kernel) -> tuple[float, GlucoseTransform | None] | None:
    """(γ, transform) when ``kernel`` is the L1 kernel, possibly on warped glucose; else None."""
    transform = None
    if isinstance(kernel, TransformedKernel):
        transform, kernel = kernel.transform, kernel.base
    if type(kernel) is not LaplacianKernel:
        return None
    return float(kernel.gamma), transform


def _centered_gram(K: NDArray[np.float64]) -> NDArray[np.float64]:
    """CKC in place (K symmetric)."""
    K -= K.mean(axis=0)
    K -= K.mean(axis=1)[:, None]
    return K


class DirectRanker(
    KernelMixin, RankingScoreMixin, CheckedInputsMixin, RegressorMixin, BaseEstimator
):
    """The Lavrentiev ranker (Kriukova et al. 2014, eq. (4)) at one λ, without a spectrum.

    Same model as ``SpectralRanker(filter="lavrentiev", lam=lam)``; use it once λ is chosen
    (:func:`ranking_core.learners.direct.fast_kfold_lambda` refits with it).

    Parameters
    ----------
    kernel : a kernel name or :class:`~ranking_core.kernels.Kernel` (for the lattice: the
        Laplacian kernel, possibly inside a glucose ``TransformedKernel``).
    gamma : kernel width when ``kernel`` is a name.
    lam : λ > 0.
    solver : ``"cholesky"`` (dense, exact), ``"lattice"`` (L1 kernel on (REF, estimate) in
        0..600 mg/dL; inputs rounded to the lattice) or ``"auto"`` (lattice beyond
        ``ONE_FOLD_UP_TO`` training points when the kernel allows it, Cholesky up to there:
        :func:`choose_method`).
    lattice_step : lattice spacing in mg/dL (1 = the integer lattice; 600 must be a multiple).
    keep_factor : keep the factorisation, so that :meth:`solve_targets` solves for other
        ratings at the same λ in O(m²) (Cholesky) or one sparse solve (lattice), as the
        iterations of :class:`~ranking_core.learners.robust.RobustRanker` do.

    Attributes
    ----------
    solver_ : the solver used.
    lattice_step_ : mg/dL to which the training inputs were rounded (0.0 for Cholesky).
    relative_residual_ : ‖Ax − b‖/‖b‖ of the solved linear system (the tolerance reached).
    X_fit_ : (m, 2) training inputs (rounded to the lattice for ``"lattice"``).
    coef_ : (m,) kernel coefficients c; intercept_ : b; kernel_ : the resolved kernel;
    filter_ : the Lavrentiev filter (the spectral form of this solve).
    surface_ : (n, n) f on the lattice axis × axis (``"lattice"`` only), indexed [REF, estimate].
    lattice_axis_ : (n,) the lattice axis in mg/dL (``"lattice"`` only).
    """

    # the kept factorisation: (Cholesky factor, lower) or the lattice's sparse Cholesky; None when
    # not kept (set by the fit, not a parameter)
    _factor: tuple[NDArray[np.float64], bool] | LatticeCholesky | None

    def __init__(
        self,
        kernel: str | Kernel = "laplacian",
        gamma: float = 1e3,
        lam: float = 1e-3,
        *,
        solver: str = "auto",
        lattice_step: float = 1.0,
        keep_factor: bool = False,
    ) -> None:
        store_params(self, locals())

    def fit(self, X: ArrayLike, y: ArrayLike) -> DirectRanker:
        """Solve (K̃ + λI)c = Cy/m once.

        Parameters
        ----------
        X : (m, d) inputs (glucose pairs: REF, estimate in mg/dL); y : (m,) ratings.
        """
        owner = type(self).__name__
        lam = positive_float(self.lam, "lam", owner)
        one_of(self.solver, "solver", SOLVERS, owner)
        X, y = check_training_data(X, y, owner)
        self.kernel_ = make_kernel(self.kernel, gamma=self.gamma)
        self.filter_ = Lavrentiev()  # the filter this solve equals (eq. (4))
        self.n_features_in_ = X.shape[1]
        parts = lattice_kernel_parts(self.kernel_) if X.shape[1] == 2 else None
        solver = self.solver
        if solver == "auto":  # the one size rule: the lattice where it would choose the lattice
            lattice = choose_method(len(y), self.kernel_, X.shape[1]) == "lattice"
            solver = "lattice" if lattice else "cholesky"
        if solver == "lattice":
            if parts is None:
                raise ValueError(
                    f"{owner}: solver='lattice' needs the Laplacian (L1) kernel on "
                    f"2 inputs (REF, estimate); got {self.kernel_!r} on "
                    f"{X.shape[1]} inputs"
                )
            self._fit_lattice(X, y, lam, *parts)
        else:
            self._fit_cholesky(X, y, lam)
        self.solver_ = solver
        return self

    def _fit_cholesky(self, X: NDArray, y: NDArray, lam: float) -> None:
        m = len(y)
        K = self.kernel_(X, X)
        feature_mean = K.mean(axis=0)
        b = (y - y.mean()) / m
        A = _centered_gram(K.copy()) / m
        A[np.diag_indices(m)] += lam
        factor = scipy.linalg.cho_factor(A, overwrite_a=False)
        coef = scipy.linalg.cho_solve(factor, b)
        residual = A @ coef - b
        self.relative_residual_ = float(np.linalg.norm(residual) / np.linalg.norm(b))
        del A, K
        self._factor = factor if self.keep_factor else None
        self._feature_mean = feature_mean
        self._set_coef(coef, y)
        self.X_fit_ = X
        self.lattice_step_ = 0.0

    def release_factor(self) -> None:
        """Drop the kept factorisation (its memory); :meth:`solve_targets` then refuses."""
        self._factor = None

    def _set_coef(self, coef: NDArray[np.float64], y: NDArray[np.float64]) -> None:
        coef = coef - coef.mean()  # round-off drift out of range(C)
        self.coef_ = coef
        self.intercept_ = float(y.mean() - coef @ self._feature_mean)

    def solve_targets(self, y: ArrayLike) -> DirectRanker:
        """A copy solved for other ratings ``y`` (m,) at the same inputs and λ, reusing the
        factorisation (``keep_factor=True``). Its training predictions are y − mλc (from
        λc = C(y − Kc)/m, eq. (4)), :meth:`training_predictions`."""
        check_is_fitted(self, "coef_")
        if getattr(self, "_factor", None) is None:
            raise ValueError(f"{type(self).__name__}: solve_targets needs keep_factor=True")
        y = np.asarray(y, dtype=np.float64)
        other = copy.copy(self)
        other._solve_for(y)
        return other

    def training_predictions(self, y: ArrayLike) -> NDArray[np.float64]:
        """f(x_i) at the training inputs of the fit to ``y`` (the ratings it was solved for):
        y − mλc, O(m)."""
        y = np.asarray(y, dtype=np.float64)
        return y - len(y) * float(self.lam) * self.coef_

    def _solve_for(self, y: NDArray[np.float64]) -> None:
        m = len(y)
        factor = self._factor
        if self.solver_ == "cholesky":
            assert isinstance(factor, tuple), "solve_targets checks that the factor is kept"
            self._set_coef(scipy.linalg.cho_solve(factor, (y - y.mean()) / m), y)
            return
        assert isinstance(factor, LatticeCholesky), "the lattice keeps its Cholesky factor"
        flat, u, w, _ = self._lattice_parts
        z = factor.solve(np.bincount(flat, weights=y - y.mean(), minlength=u.size) / m)
        F = _without_uu(z, u, w)
        self._set_lattice(F, flat, y, float(self.lam))

    def _fit_lattice(
        self, X: NDArray, y: NDArray, lam: float, gamma: float, transform: GlucoseTransform | None
    ) -> None:
        owner = type(self).__name__
        step = positive_float(self.lattice_step, "lattice_step", owner)
        n = round(GLUCOSE_MAX / step) + 1
        if abs((n - 1) * step - GLUCOSE_MAX) > 1e-9:
            raise ValueError(f"{owner}: lattice_step must divide {GLUCOSE_MAX} mg/dL; got {step!r}")
        outside = np.flatnonzero(np.any((X < -step / 2) | (X > GLUCOSE_MAX + step / 2), axis=1))
        if outside.size:
            raise ValueError(
                f"{owner}: solver='lattice' needs glucose values in 0..{GLUCOSE_MAX} "
                f"mg/dL; {describe_rows(outside)} lie outside"
            )
        index = np.clip(np.rint(X / step).astype(np.intp), 0, n - 1)
        axis = np.arange(n) * step
        coords = axis if transform is None else transform(axis)
        T = ou_precision(coords, gamma)
        m, N = len(y), n * n
        flat = index[:, 0] * n + index[:, 1]
        u = np.bincount(flat, minlength=N) / m
        rhs = np.bincount(flat, weights=y - y.mean(), minlength=N) / m
        factor = lattice_cholesky(T, T, lam, u)
        z, w = factor.solve(np.column_stack([rhs, u])).T
        F = _without_uu(z, u, w)
        residual = u * F + lam * _kron_mul(T, F) - u * (u @ F) - rhs
        self.relative_residual_ = float(np.linalg.norm(residual) / np.linalg.norm(rhs))
        self._factor = factor if self.keep_factor else None
        self._lattice_parts = (flat, u, w, T)
        self.X_fit_ = index.astype(np.float64) * step
        self.lattice_step_ = step
        self.lattice_axis_ = axis
        self._set_lattice(F, flat, y, lam)

    def _set_lattice(self, F: NDArray, flat: NDArray, y: NDArray, lam: float) -> None:
        """coef_, intercept_ and surface_ from the lattice values F (before the intercept)."""
        fitted = F[flat]
        coef = ((y - y.mean()) - (fitted - fitted.mean())) / (len(y) * lam)
        self.coef_ = coef - coef.mean()
        self.intercept_ = float(y.mean() - fitted.mean())
        n = len(self.lattice_axis_)
        self.surface_ = F.reshape(n, n) + self.intercept_

    def lattice_values(self, X: ArrayLike) -> NDArray[np.float64]:
        """f at the lattice nodes nearest to X (``"lattice"`` only): a lookup, O(n)."""
        check_is_fitted(self, "surface_")
        X = check_inputs(X, type(self).__name__, 2)
        n = len(self.lattice_axis_)
        index = np.clip(np.rint(X / self.lattice_step_).astype(np.intp), 0, n - 1)
        return self.surface_[index[:, 0], index[:, 1]]

    def lattice_path_values(
        self, lams: ArrayLike, y: ArrayLike, X: ArrayLike
    ) -> NDArray[np.float64]:
        """(len(lams), len(X)) f at the lattice nodes nearest to X of the fits at each λ in
        ``lams`` to the same training inputs and ratings ``y`` (those of this fit), from this
        fit's kept factor (``solver="lattice"``, ``keep_factor=True``): Lanczos for shifted
        systems, every λ at once (:mod:`~ranking_core.learners.lattice_shifted`; residual
        below ``SHIFT_TOLERANCE`` relative). Cheapest for λ within a factor of about 20 of
        this fit's; each Lanczos step costs one solve with the factor."""
        check_is_fitted(self, "surface_")
        factor = getattr(self, "_factor", None)
        if not isinstance(factor, LatticeCholesky):
            raise ValueError(
                f"{type(self).__name__}: lattice_path_values needs solver='lattice' and "
                "keep_factor=True"
            )
        flat, u, w, T = self._lattice_parts
        y = np.asarray(y, dtype=np.float64)
        n = len(self.lattice_axis_)
        index = np.clip(
            np.rint(check_inputs(X, "lattice_path_values", 2) / self.lattice_step_), 0, n - 1
        )
        nodes = index[:, 0].astype(np.intp) * n + index[:, 1].astype(np.intp)
        rhs = np.bincount(flat, weights=y - y.mean(), minlength=u.size) / len(y)
        values, _ = shifted_solutions(
            lambda v: _without_uu(factor.solve(v), u, w),
            lambda v: _kron_mul(T, v),
            rhs,
            np.asarray(lams, dtype=np.float64) - float(self.lam),
            lambda v: np.append(v[nodes], u @ v),
        )
        # f = F + b with b = ȳ − mean(F at the training nodes) = ȳ − u·F (as _set_lattice)
        return values[:, :-1] + (y.mean() - values[:, -1])[:, None]


def _without_uu(
    z: NDArray[np.float64], u: NDArray[np.float64], w: NDArray[np.float64]
) -> NDArray[np.float64]:
    """(A − uuᵀ)⁻¹b from z = A⁻¹b and w = A⁻¹u (Sherman–Morrison): z + w·(uᵀz)/(1 − uᵀw)."""
    return z + w * (u @ z) / (1.0 - u @ w)


def _kron_mul(T: scipy.sparse.csc_matrix, F: NDArray[np.float64]) -> NDArray[np.float64]:
    """(T ⊗ T)F for F on the n × n lattice (flattened), without forming T ⊗ T."""
    n = T.shape[0]
    return (T @ (T @ F.reshape(n, n)).T).T.ravel()


Progress = Callable[[int, int], None]


def choose_method(m: int, kernel: Kernel | BaseEstimator, n_features: int = 2) -> str:
    """The one size rule (``"auto"`` of :func:`fast_kfold_lambda`, of
    :class:`DirectRanker`'s solver and of :func:`ranking_core.learn.plan_fit`): exact up to
    ``EXACT_UP_TO`` ratings, one fold up to ``ONE_FOLD_UP_TO``, the lattice beyond when the
    kernel allows it (the L1 kernel on 2 inputs), else one fold. ``kernel``: a kernel, or a
    ranker whose ``kernel`` and ``gamma`` parameters name one."""
    if m <= EXACT_UP_TO:
        return "exact"
    if not isinstance(kernel, Kernel):
        params = kernel.get_params()
        kernel = make_kernel(params["kernel"], gamma=params["gamma"])
    if m > ONE_FOLD_UP_TO and n_features == 2 and lattice_kernel_parts(kernel) is not None:
        return "lattice"
    return "one-fold"


def _golden_index(
    score: Callable[[int], float],
    size: int,
    narrow: Callable[[range], bool] | None = None,
    finish: Callable[[range], None] | None = None,
) -> None:
    """Fibonacci (integer golden-section) search for a minimum of ``score`` over 0..size−1.

    The open bracket (low, low + F_k) shrinks to (low, low + F_{k−1}) at one new call per step
    (one inner point is always reused), about log_φ(size) calls in all; indices past the end
    count as +∞ and ties keep the smaller index (the larger λ on a decreasing grid). Every index
    of the last bracket is scored: one by one, or all at once by ``finish`` when the bracket's
    indices are ``narrow`` enough (then the search stops there).
    """
    fib = [1, 1]
    while fib[-1] < size + 1:
        fib.append(fib[-1] + fib[-2])
    k, low = len(fib) - 1, -1

    def value(index: int) -> float:
        return score(index) if index < size else np.inf

    def bracket() -> range:
        return range(low + 1, min(low + fib[k], size))

    while k > 2 and not (narrow is not None and narrow(bracket())):
        if value(low + fib[k - 2]) > value(low + fib[k - 1]):
            low += fib[k - 2]
        k -= 1
    if finish is not None:
        finish(bracket())
        return
    for index in bracket():
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
    progress : called with (done, total) after each fold, or after each lattice solve and the
        refit.
    criterion : ``"misranking"`` or ``"absolute-error"``
        (:func:`~ranking_core.selection.validation_scores`).

    Returns
    -------
    :class:`~ranking_core.selection.Choice` with ``rule = "kfold-<method>"``; ``curve`` is
    NaN at the λ the method did not score; ``model`` is a fitted
    :class:`DirectRanker` (its ``solver_`` and ``relative_residual_`` say how it was solved).
    """
    owner = "fast_kfold_lambda"
    X, y = check_training_data(X, y, owner)
    one_of(method, "method", METHODS, owner)
    one_of(criterion, "criterion", CRITERIA, owner)
    params = ranker.get_params()
    if not isinstance(make_filter(params.get("filter", "lavrentiev")), Lavrentiev):
        raise ValueError(
            f"{owner}: the direct refit solves the Lavrentiev ranker only; got "
            f"filter={params.get('filter')!r}"
        )
    lams = paper_lambda_grid() if lams is None else np.asarray(lams, dtype=np.float64)
    if method == "auto":
        method = choose_method(len(y), ranker, X.shape[1])
    kernel = make_kernel(params["kernel"], gamma=params["gamma"])
    solver = "cholesky"
    if method == "lattice":
        train, test = kfold_splits(X, n_splits, random_state)[0]
        if np.ptp(y[train]) == 0:
            raise ValueError(f"{owner}: the training fold has constant ratings")
        curve = _lattice_curve(
            DirectRanker(kernel, solver="lattice", lattice_step=lattice_step),
            lams,
            X,
            y,
            train,
            test,
            progress,
            criterion,
        )
        solver = "lattice"
    else:
        n_folds = n_splits if method == "exact" else 1
        steps = iter(range(1, n_folds + 1))
        curve = kfold_curves(
            ranker,
            X,
            y,
            lams,
            n_splits=n_splits,
            random_state=random_state,
            n_folds=n_folds,
            criterion=criterion,
            max_train=None if method == "exact" else ONE_FOLD_TRAIN,
            step=None if progress is None else (lambda: progress(next(steps), n_folds)),
        )[0]
    best = near_minimum(curve, owner=owner)
    scored = int(np.sum(~np.isnan(curve)))
    if method == "lattice" and progress is not None:  # the search is over: the refit is left
        progress(scored, scored + 1)
    model = DirectRanker(
        kernel, lam=float(lams[best]), solver=solver, lattice_step=lattice_step
    ).fit(X, y)
    if method == "lattice" and progress is not None:
        progress(scored + 1, scored + 1)
    return Choice(
        float(lams[best]), "lam", None, lams, None, curve, model, f"kfold-{method}", refit=True
    )


def _lattice_curve(
    lattice: DirectRanker,
    lams: NDArray,
    X: NDArray,
    y: NDArray,
    train: NDArray,
    test: NDArray,
    progress: Progress | None,
    criterion: str,
) -> NDArray:
    """The validation criterion of one fold at the λ a golden-section search visits (NaN
    elsewhere); validation inputs are read off the fitted lattice surface.

    The search compares λ a factor of 17 or more apart, one factorisation each, until its
    bracket spans λ within ``BRACKET_RATIO``; every λ of that bracket is then scored from one
    factorisation at its geometric middle (:meth:`DirectRanker.lattice_path_values`), so the
    choice rests on the whole curve there, for the cost of about two factorisations where the
    search would have spent four or five. ``progress(done, total)`` after each
    factorisation, ``total`` counting the refit that follows the search."""
    curve = np.full(len(lams), np.nan)
    expected = int(np.ceil(np.log(max(len(lams), 55) / 55) / np.log(1.618034))) + 3
    X_train, y_train, X_test, y_test = X[train], y[train], X[test], y[test]

    def report() -> None:
        if progress is not None:
            done = int(np.sum(~np.isnan(curve)))
            progress(done, max(expected, done) + 1)

    def score(index: int) -> float:
        if np.isnan(curve[index]):
            model = clone(lattice).set_params(lam=float(lams[index])).fit(X_train, y_train)
            curve[index] = validation_scores(y_test, model.lattice_values(X_test), criterion)[0]
            report()
        return float(curve[index])

    def narrow(indices: range) -> bool:
        chosen = lams[indices.start : indices.stop]
        return len(chosen) == 0 or float(chosen.max() / chosen.min()) <= BRACKET_RATIO

    def finish(indices: range) -> None:
        todo = np.array([i for i in indices if np.isnan(curve[i])], dtype=np.intp)
        if len(todo) <= 1:
            for index in todo:
                score(int(index))
            return
        middle = float(np.sqrt(lams[todo].max() * lams[todo].min()))
        model = clone(lattice).set_params(lam=middle, keep_factor=True).fit(X_train, y_train)
        values = model.lattice_path_values(lams[todo], y_train, X_test)
        curve[todo] = validation_scores(y_test, values, criterion)
        report()

    _golden_index(score, len(lams), narrow, finish)
    return curve
