"""The one settings type of a learned grid, its one robust-learning policy and the named recipes.

:class:`LearnSettings` holds every choice that shapes a learned grid (kernel, width γ, glucose
coordinates, spectral filter, λ rule, robust learning, …); the named recipes (best, robust, the
paper's) are :data:`PRESETS` of it. :func:`with_robust` is the one policy for a robust-learning
choice made in a front end (``riskgrid learn --robust``, the Learn page's "Robust learning", the
benchmarks): robust learning makes the grid monotone, least squares leaves it as learned, unless
the monotone choice is given as well. :func:`describe_settings` says the settings in plain
words. How the settings are computed is :mod:`ranking_core.learn.plan`; the fit itself
:mod:`ranking_core.learn.fit`.

The ranker is the regularized ranking of Kriukova et al. 2014, eq. (4) (Lavrentiev) or another
spectral filter (eq. (13) for iterated Lavrentiev); λ is chosen by k-fold or hold-out validation
misranking (eq. (1)), the quasi-optimality criterion, the a-priori rule λ(m) = α·m^(−β/2)
(§4.4) or set by hand.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ranking_core.filters import FILTERS
from ranking_core.grids.lattice import SCALES
from ranking_core.kernels import KERNELS as KERNEL_ENTRIES
from ranking_core.kernels import KernelEntry
from ranking_core.lambda_rules import CRITERIA, RULES, VALIDATED_RULES
from ranking_core.learners.choices import DIRECT_METHODS, ROBUST_LOSSES
from ranking_core.validation import one_of, positive_float

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from ranking_core.grids.coordinates import GlucoseTransform
    from ranking_core.kernels import Kernel
    from ranking_core.learners.robust import RobustRanker
    from ranking_core.learners.spectral import SpectralRanker

__all__ = [
    "CRITERION_LABELS",
    "DIAGONAL_ANCHORS",
    "FILTER_LABELS",
    "KERNELS",
    "KERNEL_LABELS",
    "METHODS",
    "PRESETS",
    "PRESET_LABELS",
    "ROBUST_LABELS",
    "RULE_LABELS",
    "LearnSettings",
    "describe_settings",
    "preset_name",
    "robust_settings",
    "with_robust",
]

# The kernels a glucose grid can be learned with: those of the kernel registry that name a
# default width for glucose pairs (ranking_core.kernels: label, unit of γ, default γ, suited γ).
# Suited widths measured on 300 SEG ratings (log coordinates, otherwise the best recipe),
# misranking against the SEG: Gaussian γ = 250 / 10³ / 4·10³ / 10⁴ / 4·10⁵ → 28.4 / 14.0 / 4.6 /
# 3.4 / 4.0 %; Laplacian γ = 30 / 100 / 10³ / 2·10⁴ / 10⁵ → 11.6 / 3.3 / 1.7 / 2.0 / 5.7 %.
KERNELS: dict[str, KernelEntry] = {
    name: entry for name, entry in KERNEL_ENTRIES.items() if entry.glucose_width is not None
}
# how λ is computed (LearnSettings.method; ranking_core.learn.plan): "auto", the methods of the
# direct ranker's fast k-fold choice and "low-rank" (a smooth kernel factored once to a tolerance
# on the discarded kernel mass, every rule and filter on it, ranking_core.learners.lowrank)
METHODS = (*DIRECT_METHODS, "low-rank")
# zero-risk diagonal points (the best and robust presets): one every 6 mg/dL. The exact zeros pin
# the signed surface where the ratings are smallest relative to their noise; 41 → 101 anchors
# lowered the misranking by about 0.1–0.2 point on noisy panels and 0.1 on clean ratings, 201
# no further (docs/RESULTS.md, panels).
DIAGONAL_ANCHORS = 101


@dataclass(frozen=True)
class LearnSettings:
    """Every choice that shapes a learned grid. The defaults are the best SEG recipe.

    The defaults are the best SEG recipe measured (docs/RESULTS.md), ``PRESETS["best"]``.

    Parameters
    ----------
    kernel : a name of :data:`KERNELS`: ``"laplacian"`` (exp(−‖Δ‖₁/γ)) or ``"gaussian"``
        (exp(−‖Δ‖²/γ), the paper's).
    gamma : kernel width γ > 0: mg/dL of the glucose coordinates for the Laplacian, (mg/dL)²
        for the Gaussian; None (the default) takes the kernel's own default width for glucose
        pairs (``glucose_width`` of :data:`ranking_core.kernels.KERNELS`: 10³ and 10⁴).
    scale : glucose coordinates, ``"log"`` (t(g) = 600·log(1 + g/g₀)/log(1 + 600/g₀)) or
        ``"linear"`` (mg/dL as is).
    log_offset : g₀ of the log coordinates in mg/dL.
    filter : spectral filter name (:data:`ranking_core.filters.FILTERS`).
    order : k of the iterated Lavrentiev filter (ignored by the other filters).
    signed : learn sign(REF − estimate)·rating and take |f| (a surface without a kink along
        the diagonal).
    anchors : zero-risk points (g, g) on the diagonal, g evenly spaced on 0..600 mg/dL, added
        to the ratings.
    rule : how λ is chosen: ``"kfold"`` (k-fold validation, refit on all),
        ``"holdout"`` (the paper: first half fits, second half chooses), ``"quasi-optimality"``,
        ``"apriori"`` (λ(m) = α·m^(−β/2) fitted on subsets) or ``"manual"`` (``lam``).
    lam : λ of the ``"manual"`` rule (required by it; None and dropped for the other rules,
        whose λ is chosen and reported as :attr:`LearnedGrid.lam`).
    method : how λ is computed (:data:`METHODS`):
        ``"auto"`` chooses by the number of ratings and the memory budget
        (:func:`~ranking_core.learn.plan.plan_fit`); ``"exact"`` every fold and the refit by
        eigendecomposition; ``"one-fold"`` the first fold's exact curve and a direct
        refit; ``"lattice"`` a golden-section search of λ on the glucose lattice (Laplacian);
        ``"low-rank"`` every rule on one pivoted Cholesky factor of the kernel (least squares;
        ``"auto"`` takes it for the Gaussian kernel from 2,000 points on).
    refit_all : with ``"holdout"``, refit on all ratings at the chosen λ (one more
        decomposition); otherwise the grid is the half fit, as in the paper.
    n_splits : folds of ``"kfold"``.
    apriori_draws : random subsets per size for the ``"apriori"`` rule.
    lam0, q, n_lams : the candidate grid λ_j = λ₀·q^j, j < n_lams.
    robust : None (plain least squares) or the loss of a
        :class:`~ranking_core.panels.RobustRanker` (``"huber"``, ``"tukey"``, ``"squared"``):
        weights for outlying ratings, a rater model when the ratings name their rater, coarse
        answers as intervals. λ is then chosen among every fourth candidate (each candidate
        costs a few re-solves), against the least-squares fits on the same folds.
    criterion : what ``"kfold"`` and ``"holdout"`` minimise on the validation ratings:
        ``"misranking"`` (Kriukova et al. 2014 eq. (1)) or ``"absolute-error"`` (mean |f − y|,
        steadier on noisy panels; :func:`~ranking_core.selection.validation_scores`).
    monotone : make the grid rise away from the diagonal: its L2 projection onto the grids that
        are 0 on the diagonal and non-decreasing away from it along every row and column (the
        SEG's shape; :mod:`ranking_core.grids.monotone`).
    """

    kernel: str = "laplacian"
    gamma: float | None = None
    scale: str = "log"
    log_offset: float = 50.0
    filter: str = "lavrentiev"
    order: int = 2
    signed: bool = True
    anchors: int = DIAGONAL_ANCHORS
    rule: str = "kfold"
    lam: float | None = None
    refit_all: bool = False
    n_splits: int = 5
    apriori_draws: int = 5
    lam0: float = 1.0
    q: float = 0.95
    n_lams: int = 400
    robust: str | None = None
    criterion: str = "absolute-error"
    monotone: bool = False
    method: str = "auto"

    def __post_init__(self) -> None:
        owner = "LearnSettings"
        one_of(self.criterion, "criterion", CRITERIA, owner)
        if self.robust is not None:
            one_of(self.robust, "robust", ROBUST_LOSSES, owner)
        one_of(self.kernel, "kernel", tuple(KERNELS), owner)
        one_of(self.scale, "scale", SCALES, owner)
        one_of(self.filter, "filter", tuple(sorted(FILTERS)), owner)
        one_of(self.rule, "rule", tuple(RULES), owner)
        one_of(self.method, "method", METHODS, owner)
        if self.gamma is None:  # the kernel's own width (frozen: set once, here)
            object.__setattr__(self, "gamma", KERNELS[self.kernel].glucose_width)
        if self.rule != "manual":  # a λ by hand belongs to the manual rule only
            object.__setattr__(self, "lam", None)
        elif self.lam is None:
            raise ValueError(
                f"{owner}: the manual rule needs λ (lam; --lambda on the command line)"
            )
        for name in ("gamma", "log_offset", "lam0", "q") + (("lam",) if self.lam else ()):
            positive_float(getattr(self, name), name, owner)
        if not self.q < 1:
            raise ValueError(f"{owner}: q must be below 1 (a decreasing λ grid); got {self.q!r}")
        for name, low in (
            ("order", 1),
            ("anchors", 0),
            ("n_splits", 2),
            ("apriori_draws", 1),
            ("n_lams", 2),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or int(value) != value or value < low:
                raise ValueError(f"{owner}: {name} must be an integer ≥ {low}; got {value!r}")

    # the numerical parts are computed by the plan, imported on use (the settings and the presets
    # load without NumPy: the command line's help lists them at once)
    def transform(self) -> GlucoseTransform | None:
        """The glucose coordinates' warp (None for mg/dL as measured;
        :func:`~ranking_core.learn.plan.glucose_transform`)."""
        from ranking_core.learn.plan import glucose_transform

        return glucose_transform(self)

    def glucose_kernel(self) -> Kernel:
        """The kernel built from its name, width and coordinates
        (:func:`~ranking_core.learn.plan.settings_kernel`)."""
        from ranking_core.learn.plan import settings_kernel

        return settings_kernel(self)

    def ranker(self, kernel: Kernel | None = None) -> SpectralRanker | RobustRanker:
        """The unfitted ranker: kernel, width, coordinates and filter (inside a
        :class:`~ranking_core.panels.RobustRanker` with ``robust``;
        :func:`~ranking_core.learn.plan.settings_ranker`). ``kernel``: the kernel already built
        from these settings (built here when None)."""
        from ranking_core.learn.plan import settings_ranker

        return settings_ranker(self, self.glucose_kernel() if kernel is None else kernel)

    def lams(self) -> NDArray[np.float64]:
        """The candidate λ, decreasing (λ₀·q^j; every fourth of them with ``robust``;
        :func:`~ranking_core.learn.plan.candidate_lams`)."""
        from ranking_core.learn.plan import candidate_lams

        return candidate_lams(self)

    @property
    def has_band(self) -> bool:
        """Whether the fit has an uncertainty band (:func:`~ranking_core.panels.risk_band`): it
        needs robust learning, which measures the ratings' noise, and the Lavrentiev filter,
        whose fit is the mean of the Gaussian process the band comes from."""
        return self.robust is not None and self.filter == "lavrentiev"

    def to_dict(self) -> dict:
        """JSON-ready; ``LearnSettings(**settings.to_dict())`` gives the settings back. ``lam``
        appears only for the manual rule (elsewhere λ is chosen, not set)."""
        settings = dataclasses.asdict(self)
        if self.lam is None:
            del settings["lam"]
        return settings

    def least_squares(self) -> LearnSettings:
        """The same settings without robust learning."""
        return dataclasses.replace(self, robust=None)


KERNEL_LABELS = {name: entry.label for name, entry in KERNELS.items()}
FILTER_LABELS = {name: entry.label for name, entry in FILTERS.items()}
ROBUST_LABELS = {
    None: "no (least squares)",
    "huber": "Huber weights, rater model, coarse answers as intervals",
    "tukey": "Tukey weights, rater model, coarse answers as intervals",
    "squared": "rater model and coarse answers as intervals, no weights",
}
RULE_LABELS = RULES


CRITERION_LABELS = {
    "misranking": "validation misranking",
    "absolute-error": "mean absolute validation error",
}


def describe_settings(settings: LearnSettings) -> dict[str, str]:
    """The settings in plain words, label → value (for reports and the dashboard)."""
    from ranking_core.learn.plan import ROBUST_LAM_STRIDE

    width_unit = KERNELS[settings.kernel].width_unit
    rule = RULE_LABELS[settings.rule]
    if settings.rule == "kfold":
        rule = f"{settings.n_splits}-fold {rule}"
    if settings.rule in VALIDATED_RULES:
        rule += f", by {CRITERION_LABELS[settings.criterion]}"
    if settings.rule == "holdout":
        rule += ", then refitted on all ratings" if settings.refit_all else ""
    elif settings.rule == "apriori":
        rule += f", {settings.apriori_draws} subsets per size"
    elif settings.rule == "manual":
        rule += f", λ = {settings.lam:.4g}"
    filter_label = FILTER_LABELS[settings.filter]
    if settings.filter == "iterated-lavrentiev":
        filter_label += f", order {settings.order}"
    words = {
        "Kernel": KERNEL_LABELS[settings.kernel],
        "Kernel width γ": f"{settings.gamma:,.6g} {width_unit}",
        "Glucose coordinates": (
            f"log scale (g₀ = {settings.log_offset:g} mg/dL)"
            if settings.scale == "log"
            else "mg/dL as measured"
        ),
        "Spectral filter": filter_label,
        "What is learned": (
            "signed risk, shown as its size" if settings.signed else "risk ratings as given"
        ),
        "Zero-risk diagonal points": f"{settings.anchors}",
        "How λ is chosen": rule,
        "λ candidates": f"{settings.lam0:g} × {settings.q:g}^j, j < {settings.n_lams}"
        + (f", every {ROBUST_LAM_STRIDE}th" if settings.robust else ""),
        "Robust learning": ROBUST_LABELS[settings.robust],
    }
    if settings.monotone:
        words["Shape"] = "made to rise away from the diagonal (nearest such grid)"
    return words


def with_robust(
    settings: LearnSettings, robust: str | None, monotone: bool | None = None
) -> LearnSettings:
    """``settings`` learning with the robust loss ``robust`` (None: plain least squares): the
    one policy of every front end (``riskgrid learn --robust``, the Learn page's "Robust
    learning", the benchmarks). Robust learning makes the grid monotone (the robust preset's
    shape, which the panels in docs/RESULTS.md were measured with) and least squares leaves it
    as learned, unless ``monotone`` gives that choice as well (``--monotone/--as-learned``)."""
    return dataclasses.replace(
        settings, robust=robust, monotone=robust is not None if monotone is None else monotone
    )


def robust_settings(settings: LearnSettings | None = None) -> LearnSettings:
    """``settings`` (default: the best recipe) learning as the ``"robust"`` preset does: Tukey
    weights (Huber's for the first iterations; an answer far from the fit, such as a reversed
    one, gets weight 0 instead of pulling the fit by 1.345 noise sd) with a rater model and
    coarse answers as intervals, λ by the mean absolute validation error, a grid rising away
    from the diagonal and :data:`DIAGONAL_ANCHORS` diagonal points (docs/RESULTS.md, panels)."""
    robust = with_robust(LearnSettings() if settings is None else settings, "tukey")
    return dataclasses.replace(robust, criterion="absolute-error", anchors=DIAGONAL_ANCHORS)


# The named recipes: presets of the one settings type (riskgrid learn --recipe, reproduce
# seg-table3 --recipe, plan-panel, the Learn page, the benchmarks).
PRESETS: dict[str, LearnSettings] = {
    # the project's best on clean ratings (docs/RESULTS.md): log glucose (g₀ = 50 mg/dL), the
    # Laplacian kernel γ = 10³, signed ratings, 101 diagonal points, λ from 0.95^j (j < 400) by
    # the mean absolute error of 5-fold validation, refit on all ratings
    "best": LearnSettings(),
    # the best recipe learning robustly: Tukey weights, a rater model, coarse answers as
    # intervals, λ among every fourth candidate, the grid made to rise away from the diagonal
    "robust": robust_settings(),
    # Kriukova et al. 2014, §4.3: Gaussian γ = 10⁴ on mg/dL, Lavrentiev, the first m/2 ratings
    # fit and the last m/2 choose λ from 0.95^j (j < 200) by misranking, no refit
    "paper": LearnSettings(
        kernel="gaussian",
        gamma=1e4,
        scale="linear",
        signed=False,
        anchors=0,
        rule="holdout",
        n_lams=200,
        criterion="misranking",
    ),
}
PRESET_LABELS = {
    "best": "the best recipe for clean ratings",
    "robust": "the robust recipe for rater panels",
    "paper": "the paper's recipe (Kriukova et al. 2014, §4.3)",
}


def preset_name(settings: LearnSettings) -> str | None:
    """The name of the preset equal to ``settings`` (None for settings of one's own)."""
    return next((name for name, preset in PRESETS.items() if preset == settings), None)
