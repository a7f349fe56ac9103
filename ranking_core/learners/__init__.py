"""The ranking learners: one module per family, a small shared base, and the registry.

Families: :mod:`~ranking_core.learners.spectral` (spectral regularization, Kriukova et al. 2014),
:mod:`~ranking_core.learners.preference` (RankRLS on preference graphs, Pahikkala et al. 2009),
:mod:`~ranking_core.learners.nystrom` and :mod:`~ranking_core.learners.conjugate_gradient`
(large m), :mod:`~ranking_core.learners.online` (on-line MPRank) and
:mod:`~ranking_core.learners.svrank` (Cortes et al. 2007), :mod:`~ranking_core.learners.rankboost`
(Freund et al. 2003), :mod:`~ranking_core.learners.dorm` (Le & Smola 2007),
:mod:`~ranking_core.learners.pairwise_linear` (Duchi et al. 2010),
:mod:`~ranking_core.learners.robust` (robust ranking of rater panels, with its k-fold choice
``kfold_robust``) and :mod:`~ranking_core.learners.direct` (Lavrentiev at one λ by a Cholesky or
glucose-lattice solve, with its fast k-fold choice ``fast_kfold_lambda``); shared pieces in
:mod:`~ranking_core.learners.base`.

``LEARNERS`` maps a short name to a :class:`LearnerSpec`: how to build the estimator for a
Gaussian kernel width γ (mg/dL²), what it is, whether it has a λ path (``path``/``resolve``, so
λ is chosen on one decomposition by :func:`ranking_core.selection.choose`), and otherwise
which parameter a small grid searches. The CLI, the dashboard and the experiments read it.
The registry loads without NumPy or scikit-learn (the command line's help lists it at once): a
learner's module is imported when the learner is first built, and the classes exported here
(``DirectRanker``, ``RobustRanker``) when first asked for (PEP 562). The names some learners'
parameters take are :mod:`~ranking_core.learners.choices`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ranking_core.filters import FILTERS
from ranking_core.lazy import checked_homes, imported, lazy_exports

if TYPE_CHECKING:  # the same names, for type checkers
    import numpy as np
    from numpy.typing import NDArray
    from sklearn.base import BaseEstimator

    from ranking_core.learners.direct import DirectRanker
    from ranking_core.learners.robust import RobustRanker

_HOMES = checked_homes(__name__)  # name → its module, from the TYPE_CHECKING imports
__all__ = ["LEARNERS", "DirectRanker", "LearnerSpec", "RobustRanker"]
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)


@dataclass(frozen=True)
class LearnerSpec:
    """A learner: ``make(gamma)`` builds it; ``grid(m)`` gives the values of ``param`` to try
    when it is fitted on m points (λ in the learner's own scaling for path learners);
    ``lam_scale(m)`` is that scaling: the learner's λ for the λ of Kriukova et al. 2014 on m
    points. ``glucose_pairs`` marks a learner that reads its inputs as (reference, estimate[,
    rater]) glucose pairs only (not features of another task, such as collaborative
    filtering's)."""

    make: Callable[[float], BaseEstimator]
    description: str
    has_path: bool
    param: str
    grid: Callable[[int], NDArray[np.float64]]
    max_m: int | None = None
    lam_scale: Callable[[int], float] = lambda m: 1.0
    glucose_pairs: bool = False


def _built(path: str, **params: Any) -> Callable[[float], BaseEstimator]:
    """``make(gamma)`` of the estimator class at ``path`` (``"package.module:Class"``, imported
    at the first build) with ``gamma`` and ``params``."""

    def make(gamma: float) -> BaseEstimator:
        estimator: BaseEstimator = imported(path)(gamma=gamma, **params)
        return estimator

    return make


def _robust(gamma: float) -> BaseEstimator:
    from ranking_core.learners.robust import RobustRanker
    from ranking_core.learners.spectral import SpectralRanker

    return RobustRanker(SpectralRanker(gamma=gamma))


def _dorm(gamma: float) -> BaseEstimator:
    from sklearn.kernel_approximation import Nystroem
    from sklearn.pipeline import make_pipeline

    from ranking_core.learners.dorm import DORM

    return make_pipeline(
        Nystroem(gamma=1.0 / gamma, n_components=40, random_state=0),
        DORM(measure="ndcg", n=None, tol=1e-3, max_iter=100),
    )


def _rankboost(gamma: float) -> BaseEstimator:
    from ranking_core.learners.rankboost import RankBoost

    return RankBoost()


def _paper_grid(m: int) -> NDArray[np.float64]:
    from ranking_core.selection import paper_lambda_grid

    return paper_lambda_grid()


def _m_squared(m: int) -> float:
    return float(m * m)


def _preference_grid(m: int) -> NDArray[np.float64]:
    return _m_squared(m) * _paper_grid(m)


def _fixed(*values: float) -> Callable[[int], NDArray[np.float64]]:
    """The grid of these values whatever m is (float64 for floats, integers for integers)."""

    def grid(m: int) -> NDArray[np.float64]:
        import numpy as np

        return np.array(values)

    return grid


def _spectral(name: str) -> LearnerSpec:
    return LearnerSpec(
        _built("ranking_core.learners.spectral:SpectralRanker", filter=name),
        f"SpectralRanker, {name} filter (Kriukova et al. 2014, eqs. (3)–(4)); exact O(m³) "
        "decomposition",
        True,
        "lam",
        _paper_grid,
    )


LEARNERS: dict[str, LearnerSpec] = {
    **{f"spectral-{name}": _spectral(name) for name in FILTERS},
    "regressor": LearnerSpec(
        _built("ranking_core.learners.spectral:SpectralRegressor"),
        "SpectralRegressor: kernel ridge regression, the supervised baseline of Kriukova et al. "
        "2014",
        True,
        "lam",
        _paper_grid,
    ),
    "nystrom": LearnerSpec(
        _built("ranking_core.learners.nystrom:NystromRanker", n_centers=200),
        "NystromRanker: Lavrentiev on 200 greedy pivoted-Cholesky centres (Pahikkala et al. "
        "2009, §3.5)",
        True,
        "lam",
        _paper_grid,
    ),
    "preference": LearnerSpec(
        _built("ranking_core.learners.preference:PreferenceRanker"),
        "PreferenceRanker: RankRLS on the full preference graph, magnitude cost (Pahikkala et "
        "al. 2009, eq. (21)); λ = m²·λ of Kriukova et al. 2014",
        True,
        "lam",
        _preference_grid,
        lam_scale=_m_squared,
    ),
    "online-mprank": LearnerSpec(
        _built("ranking_core.learners.online:OnlineMPRank", max_passes=300, tol=1e-6),
        "OnlineMPRank: MPRank by coordinate sweeps (Cortes et al. 2007, §2.5), ≤ 300 passes",
        False,
        "lam",
        _fixed(1e-2, 1e-3, 1e-4),
    ),
    "svrank": LearnerSpec(
        _built("ranking_core.learners.svrank:SVRank", epsilon=0.05, tol=1e-6),
        "SVRank: ε-insensitive pairwise loss via the pair kernel (Cortes et al. 2007, §2.4), "
        "ε = 0.05; O(m⁴) memory, so m ≤ 80",
        False,
        "lam",
        _fixed(1e-2, 1e-3, 1e-4),
        max_m=80,
    ),
    "dorm": LearnerSpec(
        _dorm,
        "DORM (Le & Smola 2007): max-margin full-list NDCG, linear on 40 Nyström Gaussian "
        "features; all points form one query",
        False,
        "dorm__C",
        _fixed(0.1, 1.0, 10.0),
        max_m=1000,
    ),
    "robust": LearnerSpec(
        _robust,
        "RobustRanker: Lavrentiev with Huber weights, a rater model and coarse answers as "
        "intervals (the robust recipe's learner)",
        True,
        "lam",
        _paper_grid,
        glucose_pairs=True,
    ),
    "direct": LearnerSpec(
        _built("ranking_core.learners.direct:DirectRanker", kernel="gaussian"),
        "DirectRanker: Lavrentiev at one λ by one Cholesky solve (the fast path's refit)",
        False,
        "lam",
        _fixed(1e-2, 1e-3, 1e-4),
    ),
    "rankboost": LearnerSpec(
        _rankboost,
        "RankBoost with threshold weak rankers (Freund et al. 2003), a baseline",
        False,
        "n_rounds",
        _fixed(50, 100),
        max_m=400,
    ),
}
