"""How a fit is computed, decided once before it starts: the :class:`FitPlan`.

:func:`plan_fit` reads the settings and the number of ratings and fixes, before any work: the
kernel (built once from its name, width and glucose coordinates; every later step reuses this
object), the unfitted ranker on it, how the λ rule is computed (the settings' ``method``: every
fold exactly, the first fold only, the glucose lattice, or every rule on one low-rank factor of a
smooth kernel), the engine that computes it (a name of
:data:`ranking_core.learn.fit.ENGINES`) and whether the points fit in the memory budget. The
size rule is the one of :func:`ranking_core.learners.direct.choose_method` (exact up to
:data:`~ranking_core.learners.direct.EXACT_UP_TO` ratings, one fold up to
:data:`~ranking_core.learners.direct.ONE_FOLD_UP_TO`, the lattice beyond); this module adds the
memory limits of each method. docs/SCALE.md measures them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from ranking_core.filters import Filter, IteratedLavrentiev
from ranking_core.grids.coordinates import GlucoseTransform, TransformedKernel
from ranking_core.kernels import Kernel, make_kernel
from ranking_core.learners.direct import (
    ONE_FOLD_TRAIN,
    choose_method,
    lattice_kernel_parts,
)
from ranking_core.learners.lowrank import LOW_RANK_TOL, MAX_RANK, LowRankRanker
from ranking_core.learners.robust import RobustRanker
from ranking_core.learners.spectral import SpectralRanker
from ranking_core.selection import paper_lambda_grid


class LearnSettings(Protocol):
    """The fields of :class:`ranking_core.learn.settings.LearnSettings` a plan reads or carries
    to its engine (the settings build through this module, so it names them by their shape, not
    by import)."""

    @property
    def kernel(self) -> str: ...

    @property
    def gamma(self) -> float | None: ...

    @property
    def scale(self) -> str: ...

    @property
    def log_offset(self) -> float: ...

    @property
    def filter(self) -> str: ...

    @property
    def order(self) -> int: ...

    @property
    def signed(self) -> bool: ...

    @property
    def anchors(self) -> int: ...

    @property
    def rule(self) -> str: ...

    @property
    def lam(self) -> float | None: ...

    @property
    def lam0(self) -> float: ...

    @property
    def q(self) -> float: ...

    @property
    def n_lams(self) -> int: ...

    @property
    def robust(self) -> str | None: ...

    @property
    def method(self) -> str: ...

    # carried by the plan to the engine that computes λ (ranking_core.learn.fit)
    @property
    def refit_all(self) -> bool: ...

    @property
    def n_splits(self) -> int: ...

    @property
    def criterion(self) -> str: ...


__all__ = [
    "CHOLESKY_UP_TO",
    "DENSE_UP_TO",
    "LOW_RANK_FROM",
    "LOW_RANK_UP_TO",
    "MEMORY_BUDGET",
    "METHOD_LABELS",
    "ROBUST_LAM_STRIDE",
    "FitPlan",
    "candidate_lams",
    "fit_method",
    "glucose_kernel",
    "glucose_ranker",
    "glucose_transform",
    "plan_fit",
    "settings_kernel",
    "settings_ranker",
]

_FIRST_FOLD = f"the first fold's validation curve (fitted on at most {ONE_FOLD_TRAIN:,} points)"
# how the k-fold rule is computed (LearnSettings.method; ranking_core.learners.direct):
# "exact" every fold and the refit by eigendecomposition, "one-fold" the first fold's curve
# (fitted on at most ONE_FOLD_TRAIN points) and a direct refit, "lattice" a golden-section
# search on the glucose lattice (robust learning: the first fold's curve) and a lattice refit
METHOD_LABELS = {
    "exact": "every fold and the refit exactly (eigendecompositions)",
    "one-fold": f"{_FIRST_FOLD}, a direct refit",
    "lattice": "a search of λ on the glucose lattice, a lattice refit",
    "low-rank": "every λ from one low-rank factor of the kernel (pivoted Cholesky)",
}
# "auto" factors a smooth kernel (the Gaussian) from this many training points on: below, the
# dense eigendecomposition is as fast and exact. The factor's memory, 8·m·r bytes with its rank
# r ≤ the budget's share, bounds the points at LOW_RANK_UP_TO.
LOW_RANK_FROM = 2000
LOW_RANK_UP_TO = 1_000_000
ROBUST_LATTICE_LABEL = f"{_FIRST_FOLD}, a lattice refit"
# Memory budget of one fit and the sizes it allows (float64): a dense eigendecomposition of n
# points holds about four n × n arrays (kernel, centred copy, eigenvectors, LAPACK's work), so
# n ≤ 7,000 within 2 GB; a direct Cholesky refit that keeps its factor three (kernel, system,
# factor): n ≤ 9,000. The glucose lattice needs about 0.6 GB whatever m is (docs/SCALE.md).
MEMORY_BUDGET = 2 * 1024**3
DENSE_UP_TO = 7000
CHOLESKY_UP_TO = 9000
ROBUST_LAM_STRIDE = 4  # robust learning chooses λ among every 4th candidate (the robust preset)
_LIMITS = {
    "exact": DENSE_UP_TO,
    "one-fold": CHOLESKY_UP_TO,
    "lattice": None,
    "low-rank": LOW_RANK_UP_TO,
}
_LIMITED_BY = {
    "exact": "a dense eigendecomposition",
    "one-fold": "a dense Cholesky refit",
    "low-rank": "a low-rank factor",
}


def glucose_transform(settings: LearnSettings) -> GlucoseTransform | None:
    """The glucose coordinates' warp of ``settings`` (None for mg/dL as measured)."""
    return GlucoseTransform("log", settings.log_offset) if settings.scale == "log" else None


def glucose_kernel(
    kernel: str, gamma: float | tuple[float, float] | None, transform: GlucoseTransform | None
) -> Kernel:
    """The kernel on (reference, estimate) in mg/dL: ``kernel`` (a name of
    :data:`~ranking_core.learn.settings.KERNELS`) of width γ (None: the kernel class's default,
    :func:`~ranking_core.kernels.make_kernel`), after the per-coordinate glucose ``transform``
    when given."""
    base: Kernel = make_kernel(kernel, gamma=gamma)
    return base if transform is None else TransformedKernel(base, transform)


def glucose_ranker(
    kernel: str | Kernel,
    gamma: float | tuple[float, float] | None,
    transform: GlucoseTransform | None,
    filter: str | Filter,
) -> SpectralRanker:
    """A ranker on (reference, estimate) in mg/dL with ``filter``: ``kernel`` ("gaussian" or
    "laplacian") of width γ after the glucose ``transform`` when given, or a kernel already
    built (:func:`glucose_kernel`; ``gamma`` and ``transform`` then unused)."""
    if not isinstance(kernel, Kernel):
        kernel = glucose_kernel(kernel, gamma, transform)
    return SpectralRanker(kernel=kernel, filter=filter)


def settings_kernel(settings: LearnSettings) -> Kernel:
    """The kernel of ``settings``: its name, width γ and glucose coordinates. Raises
    ``ValueError`` for settings without a width (:class:`~ranking_core.learn.settings.
    LearnSettings` sets the kernel's own width when none is given)."""
    if settings.gamma is None:
        raise ValueError(f"the {settings.kernel} kernel of these settings has no width γ")
    transform = glucose_transform(settings)
    return glucose_kernel(settings.kernel, float(settings.gamma), transform)


def settings_ranker(settings: LearnSettings, kernel: Kernel) -> SpectralRanker | RobustRanker:
    """The unfitted ranker of ``settings`` on ``kernel`` (built from them): the spectral filter
    (iterated Lavrentiev of ``order``), inside a RobustRanker with ``robust``."""
    spectral_filter = (
        IteratedLavrentiev(k=int(settings.order))
        if settings.filter == "iterated-lavrentiev"
        else settings.filter
    )
    ranker = SpectralRanker(kernel=kernel, filter=spectral_filter)
    if settings.robust is None:
        return ranker
    return RobustRanker(ranker, loss=settings.robust, signed=settings.signed)


def candidate_lams(settings: LearnSettings) -> NDArray[np.float64]:
    """The candidate λ of ``settings``, decreasing: λ₀·q^j, j < n_lams (Kriukova et al. 2014,
    §4.1), every :data:`ROBUST_LAM_STRIDE`-th of them with robust learning."""
    lams = paper_lambda_grid(settings.lam0, settings.q, int(settings.n_lams))
    return lams if settings.robust is None else lams[::ROBUST_LAM_STRIDE]


@dataclass(frozen=True)
class FitPlan:
    """How one fit of ``settings`` on ``n_ratings`` ratings is computed (:func:`plan_fit`).

    Attributes
    ----------
    settings : the settings planned for.
    n_ratings : ratings (without the diagonal points).
    method : how the rule is computed, a name of :data:`METHOD_LABELS`.
    engine : who computes it, a name of :data:`ranking_core.learn.fit.ENGINES`: ``"spectral"``
        (:func:`~ranking_core.selection.choose` on the spectral decomposition, every rule),
        ``"direct"`` (:func:`~ranking_core.learners.direct.fast_kfold_lambda`: one fold or the
        lattice, a direct refit) or ``"robust"`` (:func:`~ranking_core.learners.robust.
        kfold_robust`: robust against least-squares fits on the same folds).
    kernel : the kernel, built once (the ranker, the direct refit and the lattice share it).
    ranker : the unfitted ranker on ``kernel`` (a RobustRanker around it with robust learning).
    lams : the candidate λ (:func:`candidate_lams`).
    rank_tol : with the ``"low-rank"`` method, the relative residual trace ε of the kernel's
        factor (the discarded kernel mass, :data:`~ranking_core.learners.lowrank.LOW_RANK_TOL`;
        the rank it needs is known after the fit, :attr:`LearnedGrid.low_rank`); else None.
    """

    settings: LearnSettings
    n_ratings: int
    method: str
    engine: str
    kernel: Kernel
    ranker: SpectralRanker | RobustRanker | LowRankRanker
    lams: NDArray[np.float64] = field(repr=False)
    rank_tol: float | None = None

    @property
    def points(self) -> int:
        """Training points: the ratings and the diagonal points."""
        return self.n_ratings + int(self.settings.anchors)

    @property
    def computed_by(self) -> str:
        """How λ and the grid are computed, in words (:data:`METHOD_LABELS`)."""
        if self.method == "lattice" and self.settings.robust is not None:
            return ROBUST_LATTICE_LABEL
        return METHOD_LABELS[self.method]


def plan_fit(settings: LearnSettings, n_ratings: int) -> FitPlan:
    """The plan of a fit of ``settings`` on ``n_ratings`` ratings within :data:`MEMORY_BUDGET`.

    The method: ``"low-rank"`` when asked, or with ``"auto"`` for a smooth kernel (the
    Gaussian) from :data:`LOW_RANK_FROM` training points on without robust learning: every rule
    and filter on one pivoted Cholesky factor (engine ``"low-rank"``, O(m·r²) instead of the
    O(m³) of a dense eigendecomposition; :mod:`ranking_core.learners.lowrank`). Otherwise
    ``"exact"`` for every rule but k-fold and every filter but Lavrentiev (the rule
    as :func:`~ranking_core.selection.choose` states it); for k-fold with the Lavrentiev filter
    ``settings.method``, or with ``"auto"`` the size rule of
    :func:`~ranking_core.learners.direct.choose_method` (``"lattice"`` needs the Laplacian
    kernel). The engine: ``"robust"`` for robust k-fold, ``"direct"`` for plain k-fold by one
    fold or the lattice, ``"spectral"`` otherwise.

    Raises ``ValueError`` naming the limit when the ratings (with the diagonal points) exceed
    what that method fits in the budget, or when the lattice is asked for a kernel it cannot
    solve; nothing is computed then (the kernel is only built, not evaluated).
    """
    lams = candidate_lams(settings)
    kernel = settings_kernel(settings)
    points = int(n_ratings) + int(settings.anchors)
    if _low_rank(settings, kernel, points):
        return _low_rank_plan(settings, int(n_ratings), kernel, lams)
    lavrentiev_kfold = settings.rule == "kfold" and settings.filter == "lavrentiev"
    lattice = settings.filter == "lavrentiev" and lattice_kernel_parts(kernel) is not None
    if not lavrentiev_kfold:
        method = "exact"
    elif settings.method != "auto":
        method = settings.method
    else:
        method = choose_method(int(n_ratings), kernel)
    if method == "lattice" and not lattice:
        raise ValueError("the lattice method needs the Laplacian kernel and the Lavrentiev filter")
    plan_engine = "spectral"
    if settings.robust is not None and settings.rule == "kfold":
        plan_engine = "robust"
    elif settings.rule == "kfold" and method != "exact":
        plan_engine = "direct"
    plan = FitPlan(
        settings,
        int(n_ratings),
        method,
        plan_engine,
        kernel,
        settings_ranker(settings, kernel),
        lams,
    )
    limit = _LIMITS[method]
    if limit is not None and plan.points > limit:
        hint = (
            " (the Laplacian kernel with the Lavrentiev filter and k-fold validation learns "
            "any number on the glucose lattice)"
            if not lattice or settings.rule != "kfold"
            else ""
        )
        raise ValueError(
            f"{n_ratings:,} ratings and {settings.anchors} diagonal points are more than "
            f"{_LIMITED_BY[method]} fits in {MEMORY_BUDGET / 1024**3:g} GB: at most {limit:,} "
            f"points with these settings{hint}"
        )
    return plan


def _low_rank(settings: LearnSettings, kernel: Kernel, points: int) -> bool:
    """Whether the fit runs on a low-rank factor: asked for, or with ``"auto"`` a smooth kernel
    (numerically low rank on glucose pairs) from :data:`LOW_RANK_FROM` points on, without
    robust learning (whose rater model needs every training point's eigenvector rows)."""
    if settings.method == "low-rank":
        if settings.robust is not None:
            raise ValueError(
                "the low-rank method fits least squares only; robust learning runs on the "
                "eigendecomposition or the glucose lattice (method auto)"
            )
        return True
    return (
        settings.method == "auto"
        and settings.robust is None
        and kernel.smooth
        and points >= LOW_RANK_FROM
    )


def _low_rank_plan(
    settings: LearnSettings, n_ratings: int, kernel: Kernel, lams: NDArray[np.float64]
) -> FitPlan:
    """The ``"low-rank"`` plan: the ranker on a factor of relative residual trace
    :data:`LOW_RANK_TOL`, its rank bounded by the memory budget (8·m·r bytes for the features,
    twice over while they are formed)."""
    points = n_ratings + int(settings.anchors)
    if points > LOW_RANK_UP_TO:
        raise ValueError(
            f"{n_ratings:,} ratings and {settings.anchors} diagonal points are more than "
            f"{_LIMITED_BY['low-rank']} fits in {MEMORY_BUDGET / 1024**3:g} GB: at most "
            f"{LOW_RANK_UP_TO:,} points with these settings"
        )
    spectral_filter = settings_ranker(settings, kernel).get_params()["filter"]
    ranker = LowRankRanker(
        kernel=kernel,
        filter=spectral_filter,
        rank_tol=LOW_RANK_TOL,
        max_rank=max(1, min(MAX_RANK, MEMORY_BUDGET // (16 * points))),
    )
    return FitPlan(settings, n_ratings, "low-rank", "low-rank", kernel, ranker, lams, LOW_RANK_TOL)


def fit_method(settings: LearnSettings, n_ratings: int) -> str:
    """The method of :func:`plan_fit` (``"exact"``, ``"one-fold"`` or ``"lattice"``); raises
    its ``ValueError`` for more ratings than the budget allows."""
    return plan_fit(settings, n_ratings).method
