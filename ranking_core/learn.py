"""Learn a risk grid from a rating set: one call, one settings object, one result that carries them.

:func:`learn_grid` takes validated ratings (reference, estimate in mg/dL; risk 0..4) and a frozen
:class:`LearnSettings` (kernel, width γ, glucose coordinates, spectral filter, λ rule, robust
learning, …) and returns a :class:`LearnedGrid`: the 601 × 601 grid (rows = reference 0..600
mg/dL, columns = measured 0..600 mg/dL), the fitted ranker, the exact settings used, the λ
chosen, the points fitted and a checksum of the ratings. The named recipes (best, robust, the
paper's) are :data:`PRESETS` of the settings; without settings the ratings choose
(:func:`default_recipe`: the robust recipe for a rater panel, the best one otherwise). The CLI,
the dashboard, plan-panel, the reproductions and the benchmarks all call it, so a grid learned
in one reproduces in the others. How the rule is computed (every fold exactly, one fold, or the
glucose lattice) follows the number of ratings and a memory budget (:func:`fit_method`).

The ranker is the regularized ranking of Kriukova et al. 2014, eq. (4) (Lavrentiev) or another
spectral filter (eq. (13) for iterated Lavrentiev); λ is chosen by k-fold or hold-out validation
misranking (eq. (1)), the quasi-optimality criterion, the a-priori rule λ(m) = α·m^(−β/2)
(§4.4) or set by hand.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone

from ranking_core.filters import FILTERS, Filter, IteratedLavrentiev
from ranking_core.grids.coordinates import SCALES, GlucoseTransform, TransformedKernel
from ranking_core.grids.files import GRID_FILES, SIZE, grid_csv, grid_npy, grid_png
from ranking_core.grids.learned import learned_grid
from ranking_core.grids.monotone import MonotoneRisk
from ranking_core.grids.risk_scale import RISK_MAX
from ranking_core.grids.seg import GLUCOSE_MAX
from ranking_core.grids.signed import AbsoluteRisk, signed_ratings
from ranking_core.kernels import KERNELS as KERNEL_CLASSES
from ranking_core.kernels import Kernel, make_kernel
from ranking_core.learners.direct import (
    EXACT_UP_TO,
    ONE_FOLD_TRAIN,
    ONE_FOLD_UP_TO,
    DirectRanker,
    fast_kfold_lambda,
    lattice_kernel_parts,
)
from ranking_core.learners.robust import (
    LOSSES,
    MAD_TO_SD,
    OUTLIER_Z,
    RobustRanker,
    kfold_robust,
    rating_step,
)
from ranking_core.learners.spectral import SpectralRanker
from ranking_core.panels.uncertainty import BAND_STEP, RiskBand, band_files
from ranking_core.ratings import RatingSet
from ranking_core.selection import (
    CRITERIA,
    RULES,
    VALIDATED_RULES,
    AprioriRule,
    Choice,
    choose,
    fit_apriori_lambda,
    paper_lambda_grid,
)
from ranking_core.validation import check_training_data, one_of, positive_float
from ranking_core.version import riskgrid_version

__all__ = [
    "KERNELS",
    "METHODS",
    "METHOD_LABELS",
    "MIN_RATINGS",
    "PRESETS",
    "RULES",
    "SCALES",
    "VALIDATED_RULES",
    "LearnSettings",
    "LearnedGrid",
    "PanelFit",
    "check_rating_count",
    "default_recipe",
    "describe_settings",
    "fit_method",
    "glucose_ranker",
    "grid_metadata",
    "learn_grid",
    "learn_panel",
    "panel_traits",
    "preset_name",
    "rating_positions",
    "ratings_checksum",
    "robust_settings",
    "settings_advice",
    "with_diagonal_anchors",
    "write_grid_files",
]

Progress = Callable[[int, int], None]
# The kernels a glucose grid can be learned with: those of the kernel registry that name a
# default width for glucose pairs (ranking_core.kernels: label, unit of γ, default γ, suited γ).
# Suited widths measured on 300 SEG ratings (log coordinates, otherwise the best recipe),
# misranking against the SEG: Gaussian γ = 250 / 10³ / 4·10³ / 10⁴ / 4·10⁵ → 28.4 / 14.0 / 4.6 /
# 3.4 / 4.0 %; Laplacian γ = 30 / 100 / 10³ / 2·10⁴ / 10⁵ → 11.6 / 3.3 / 1.7 / 2.0 / 5.7 %.
KERNELS: dict[str, type[Kernel]] = {
    name: cls for name, cls in KERNEL_CLASSES.items() if cls.glucose_width is not None
}
# how the k-fold rule is computed (LearnSettings.method; ranking_core.learners.direct):
# "spectral"/"exact" every fold and the refit by eigendecomposition, "one-fold" the first fold's
# curve (fitted on at most ONE_FOLD_TRAIN points) and a direct refit, "lattice" a golden-section
# search on the glucose lattice (robust learning: the first fold's curve) and a lattice refit
METHODS = ("auto", "exact", "one-fold", "lattice")
_FIRST_FOLD = f"the first fold's validation curve (fitted on at most {ONE_FOLD_TRAIN:,} points)"
METHOD_LABELS = {
    "exact": "every fold and the refit exactly (eigendecompositions)",
    "one-fold": f"{_FIRST_FOLD}, a direct refit",
    "lattice": "a search of λ on the glucose lattice, a lattice refit",
}
ROBUST_LATTICE_LABEL = f"{_FIRST_FOLD}, a lattice refit"
MIN_RATINGS = 5  # fewer cannot fill five folds, let alone a grid: refused with a sentence
# Memory budget of one fit and the sizes it allows (float64): a dense eigendecomposition of n
# points holds about four n × n arrays (kernel, centred copy, eigenvectors, LAPACK's work), so
# n ≤ 7,000 within 2 GB; a direct Cholesky refit that keeps its factor three (kernel, system,
# factor): n ≤ 9,000. The glucose lattice needs about 0.6 GB whatever m is (docs/SCALE.md).
MEMORY_BUDGET = 2 * 1024**3
DENSE_UP_TO = 7000
CHOLESKY_UP_TO = 9000
ROBUST_LAM_STRIDE = 4  # robust learning chooses λ among every 4th candidate (the robust preset)
# zero-risk diagonal points (the best and robust presets): one every 6 mg/dL. The exact zeros pin
# the signed surface where the ratings are smallest relative to their noise; 41 → 101 anchors
# lowered the misranking by about 0.1–0.2 point on noisy panels and 0.1 on clean ratings, 201
# no further (docs/RESULTS.md, panels).
DIAGONAL_ANCHORS = 101
APRIORI_SIZES = (20, 30, 40, 50)  # subset sizes for λ₊ (Kriukova et al. 2014, §4.4)


def glucose_ranker(
    kernel: str,
    gamma: float | tuple[float, float],
    transform: GlucoseTransform | None,
    filter: str | Filter,
) -> SpectralRanker:
    """A ranker on (reference, estimate) in mg/dL: ``kernel`` ("gaussian" or "laplacian") of
    width γ, after the per-coordinate glucose ``transform`` when given, with ``filter``."""
    base: Kernel = make_kernel(kernel, gamma=gamma)
    return SpectralRanker(
        kernel=base if transform is None else TransformedKernel(base, transform), filter=filter
    )


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
        pairs (``glucose_width`` in :mod:`ranking_core.kernels`: 10³ and 10⁴).
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
    method : how ``"kfold"`` is computed (:data:`METHODS`): ``"auto"`` chooses by the number of
        ratings and the memory budget (:func:`fit_method`); ``"exact"`` every fold and the
        refit by eigendecomposition; ``"one-fold"`` the first fold's exact curve and a direct
        refit; ``"lattice"`` a golden-section search of λ on the glucose lattice (Laplacian).
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
            one_of(self.robust, "robust", LOSSES, owner)
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

    def transform(self) -> GlucoseTransform | None:
        """The glucose coordinates' warp (None for mg/dL as measured)."""
        return GlucoseTransform("log", self.log_offset) if self.scale == "log" else None

    def ranker(self) -> SpectralRanker | RobustRanker:
        """The unfitted ranker: kernel, width, coordinates and filter (inside a
        :class:`~ranking_core.panels.RobustRanker` with ``robust``)."""
        spectral_filter = (
            IteratedLavrentiev(k=int(self.order))
            if self.filter == "iterated-lavrentiev"
            else self.filter
        )
        ranker = glucose_ranker(self.kernel, float(self.gamma), self.transform(), spectral_filter)
        if self.robust is None:
            return ranker
        return RobustRanker(ranker, loss=self.robust, signed=self.signed)

    def lams(self) -> NDArray[np.float64]:
        """The candidate λ, decreasing (λ₀·q^j; every fourth of them with ``robust``)."""
        lams = paper_lambda_grid(self.lam0, self.q, int(self.n_lams))
        return lams if self.robust is None else lams[::ROBUST_LAM_STRIDE]

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


KERNEL_LABELS = {name: cls.label for name, cls in KERNELS.items()}
FILTER_LABELS = {name: filter_class.label for name, filter_class in FILTERS.items()}
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


def ratings_checksum(X: ArrayLike, y: ArrayLike) -> str:
    """``sha256:<hex>`` of the ratings as float64 (reference, estimate in mg/dL, rating), in
    order: equal for equal data, whatever file format or unit they came from."""
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(X, dtype=np.float64).tobytes())
    digest.update(np.ascontiguousarray(y, dtype=np.float64).tobytes())
    return "sha256:" + digest.hexdigest()


@dataclass(frozen=True)
class LearnedGrid:
    """A learned grid with everything needed to show, re-solve, store and export it.

    Attributes
    ----------
    settings : the exact :class:`LearnSettings` it was learned with.
    model : the fitted ranker at ``lam`` (on signed targets when ``settings.signed``): a
        :class:`~ranking_core.SpectralRanker` holding its spectral decomposition, a
        :class:`~ranking_core.learners.direct.DirectRanker` (large rating sets) or a
        :class:`~ranking_core.learners.robust.RobustRanker` around either.
    lam : λ of this grid; ``lam_chosen`` : λ the rule chose.
    lams : (L,) candidate λ; ``curve`` : (L,) the rule's criterion (None for the a-priori and
        manual rules).
    apriori : the fitted a-priori rule (``rule == "apriori"``), else None.
    X, y : the training set: ratings plus anchors (mg/dL; with ``settings.robust`` a third
        column holds rater codes, −1 for none), targets signed if asked.
    n_ratings : ratings in the rating set (without anchors).
    checksum : :func:`ratings_checksum` of the rating set.
    n_raters : raters the rating set names (0 without a rater column).
    answer_step : the step of the rating scale (:func:`~ranking_core.panels.rating_step`:
        1 or 0.5 for coarse answers, 0 for continuous ones).
    method : how the rule was computed (:func:`fit_method`).
    """

    settings: LearnSettings
    model: SpectralRanker | DirectRanker | RobustRanker
    lam: float
    lam_chosen: float
    lams: NDArray[np.float64]
    curve: NDArray[np.float64] | None
    apriori: AprioriRule | None
    X: NDArray[np.float64]
    y: NDArray[np.float64]
    n_ratings: int
    checksum: str
    n_raters: int = 0
    answer_step: float = 0.0
    method: str = "exact"

    @property
    def points_fitted(self) -> int:
        """Training points the model was fitted on (half of them for the paper's hold-out)."""
        return len(self.model.X_fit_)

    @property
    def computed_by(self) -> str:
        """How λ and the grid were computed, in words (:data:`METHOD_LABELS`)."""
        if self.method == "lattice" and self.settings.robust is not None:
            return ROBUST_LATTICE_LABEL
        return METHOD_LABELS[self.method]

    @property
    def from_a_panel(self) -> bool:
        """The ratings name their raters or come on a coarse scale: a real panel's, for which
        robust learning (:func:`robust_settings`) is made."""
        return self.n_raters > 1 or self.answer_step > 0

    @property
    def curve_in_words(self) -> tuple[str, NDArray[np.float64]] | None:
        """(axis label, values) of the rule's curve as shown: the validation misranking in %,
        the mean absolute validation error in risk units, or the quasi-optimality rule's change
        of the grid ‖f_λⱼ − f_λⱼ₊₁‖_H; None without a curve."""
        if self.curve is None:
            return None
        if self.settings.rule == "quasi-optimality":
            return "change of the grid, ‖Δf‖ in the kernel space", self.curve
        if self.settings.criterion == "misranking":
            return "misranking of left-out ratings (%)", 100 * self.curve
        return "mean absolute error (risk units)", self.curve

    @property
    def n_flagged(self) -> int | None:
        """Ratings flagged as outlying by robust learning (standardised residual above
        :data:`~ranking_core.learners.robust.OUTLIER_Z`) among those fitted (the first half for
        the paper's hold-out); None for a least-squares fit."""
        flagged = self.flagged_points
        return None if flagged is None else int(flagged.sum())

    @property
    def flagged_points(self) -> NDArray[np.bool_] | None:
        """For each training point (row of X): flagged as outlying by robust learning (never an
        anchor, nor a point the hold-out left unfitted); None for a least-squares fit."""
        if not isinstance(self.model, RobustRanker):
            return None
        flagged = np.zeros(len(self.X), dtype=bool)
        flagged[: self.model.outlier_.size] = self.model.outlier_
        return flagged

    @cached_property
    def risk_model(self) -> SpectralRanker | AbsoluteRisk | MonotoneRisk:
        """The model that predicts risk (|signed model| when ``settings.signed``; projected onto
        the grids rising away from the diagonal when ``settings.monotone``)."""
        model = AbsoluteRisk(self.model) if self.settings.signed else self.model
        return MonotoneRisk.fit(model) if self.settings.monotone else model

    @property
    def rating_points(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(reference, measured, risk) of the training points, risk on 0..4 (for drawing)."""
        return self.X[:, 0], self.X[:, 1], np.abs(self.y)

    @cached_property
    def grid(self) -> NDArray[np.float64]:
        """(601, 601) predicted risk indexed [reference, measured] in mg/dL, step 1 (not
        clipped: a learned surface may leave 0..4 slightly)."""
        return learned_grid(self.risk_model)

    def at(self, lam: float) -> LearnedGrid:
        """The same fit solved at another λ: from the cached decomposition, O(m·r), or, for a
        model solved at one λ (a direct solve, large rating sets), refitted at λ."""
        lam = positive_float(lam, "lam", "LearnedGrid.at")
        model = self.model
        direct = isinstance(model, DirectRanker) or isinstance(
            getattr(model, "plain_", None), DirectRanker
        )
        solved = (
            clone(model).set_params(lam=lam).fit(self.X, self.y) if direct else model.resolve(lam)
        )
        return dataclasses.replace(self, model=solved, lam=lam)


def _training_data(ratings: RatingSet | tuple[ArrayLike, ArrayLike]) -> tuple[NDArray, NDArray]:
    if isinstance(ratings, RatingSet):
        return ratings.X, ratings.y
    X, y = ratings
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 1 and np.isfinite(y).all():
        check_rating_count(y)
    return check_training_data(X, y, "learn_grid")


def _rater_codes(ratings: RatingSet | tuple[ArrayLike, ArrayLike], m: int) -> NDArray:
    """Rater codes 0, 1, … in order of appearance (−1 everywhere without a rater column)."""
    if isinstance(ratings, RatingSet) and "rater" in ratings.frame:
        return pd.factorize(ratings.frame["rater"].to_numpy(dtype=object))[0].astype(float)
    return np.full(m, -1.0)


def fit_method(settings: LearnSettings, n_ratings: int) -> str:
    """How :func:`learn_grid` computes ``settings``' rule on ``n_ratings`` ratings, within
    :data:`MEMORY_BUDGET`: ``"exact"`` (every fold and the refit by eigendecomposition, the rule
    as :func:`~ranking_core.selection.choose` states it; every rule but k-fold is computed so),
    ``"one-fold"`` or ``"lattice"`` (:func:`~ranking_core.learners.direct.fast_kfold_lambda`).
    ``settings.method == "auto"`` chooses exact up to
    :data:`~ranking_core.learners.direct.EXACT_UP_TO` ratings, one fold up to
    :data:`~ranking_core.learners.direct.ONE_FOLD_UP_TO`, the lattice beyond (the Laplacian
    kernel with the Lavrentiev filter), else one fold. Robust learning follows the same
    sizes (:func:`learn_grid`).

    Raises ``ValueError`` naming the limit when the ratings (with the diagonal points) exceed
    what that computation fits in the budget; nothing is computed then.
    """
    points = int(n_ratings) + int(settings.anchors)
    lattice = (
        settings.filter == "lavrentiev"
        and lattice_kernel_parts(make_kernel(settings.kernel, gamma=settings.gamma)) is not None
    )
    if settings.rule != "kfold" or settings.filter != "lavrentiev":
        method = "exact"
    elif settings.method != "auto":
        method = settings.method
    elif n_ratings <= EXACT_UP_TO:
        method = "exact"
    elif n_ratings <= ONE_FOLD_UP_TO or not lattice:
        method = "one-fold"
    else:
        method = "lattice"
    if method == "lattice" and not lattice:
        raise ValueError("the lattice method needs the Laplacian kernel and the Lavrentiev filter")
    limit = {"exact": DENSE_UP_TO, "one-fold": CHOLESKY_UP_TO, "lattice": None}[method]
    if limit is not None and points > limit:
        what = {"exact": "a dense eigendecomposition", "one-fold": "a dense Cholesky refit"}[method]
        hint = (
            " (the Laplacian kernel with the Lavrentiev filter and k-fold validation learns "
            "any number on the glucose lattice)"
            if not lattice or settings.rule != "kfold"
            else ""
        )
        raise ValueError(
            f"{n_ratings:,} ratings and {settings.anchors} diagonal points are more than "
            f"{what} fits in {MEMORY_BUDGET / 1024**3:g} GB: at most {limit:,} points with these "
            f"settings{hint}"
        )
    return method


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


def learn_grid(
    ratings: RatingSet | tuple[ArrayLike, ArrayLike],
    settings: LearnSettings | None = None,
    *,
    progress: Progress | None = None,
) -> LearnedGrid:
    """Learn a risk grid from ratings with ``settings`` (default: :func:`default_recipe`, the
    best recipe, or the robust one for ratings from a panel).

    Parameters
    ----------
    ratings : a validated :class:`~ranking_core.ratings.RatingSet`, or (X, y) with X the
        (m, 2) pairs (reference, estimate) in mg/dL and y the (m,) ratings on 0..4.
    settings : the choices; kept unchanged in the result.
    progress : ``progress(done, total)`` while fitting (folds, subsets of the a-priori rule).

    Returns
    -------
    :class:`LearnedGrid` at the λ the rule chose. The computation follows :func:`fit_method`:
    up to 2,000 ratings one eigendecomposition per fold and one for the refit (any other λ then
    costs O(m·r)); beyond, the first fold's curve or the lattice and a direct refit.
    Too few ratings, constant ratings and more ratings than the memory budget allows are
    refused at once (``ValueError`` with a sentence).
    """
    X_ratings, y_ratings = _training_data(ratings)
    check_rating_count(y_ratings)  # also for a RatingSet (valid rows, perhaps too few)
    settings = PRESETS[default_recipe(ratings)[0]] if settings is None else settings
    method = fit_method(settings, len(y_ratings))
    checksum = ratings_checksum(X_ratings, y_ratings)
    raters = _rater_codes(ratings, len(y_ratings))
    inputs = X_ratings
    if settings.robust is not None:  # the robust learner reads the rater from a third column
        inputs = np.column_stack([X_ratings, raters])
    X, y = with_diagonal_anchors(int(settings.anchors), inputs, y_ratings)
    if settings.signed:
        y = signed_ratings(X[:, :2], y)
    lams = settings.lams()
    apriori = None
    if settings.rule == "apriori":
        steps = len(APRIORI_SIZES) * int(settings.apriori_draws) + 1
        apriori = fit_apriori_lambda(
            settings.ranker(),
            X,
            y,
            sizes=APRIORI_SIZES,
            draws=int(settings.apriori_draws),
            lams=lams,
            progress=None if progress is None else lambda done, _total: progress(done, steps),
        )
        report = None if progress is None else (lambda _done, _total: progress(steps, steps))
    else:
        report = progress
    choice = _choose(settings, method, X, y, lams, apriori, report)
    lam = float(choice.value)
    return LearnedGrid(
        settings,
        choice.model,
        lam,
        lam,
        lams,
        choice.curve,
        apriori,
        X,
        y,
        len(y_ratings),
        checksum,
        n_raters=int(np.unique(raters[raters >= 0]).size),
        answer_step=rating_step(y_ratings),
        method=method,
    )


def _choose(
    settings: LearnSettings,
    method: str,
    X: NDArray,
    y: NDArray,
    lams: NDArray,
    apriori: AprioriRule | None,
    progress: Progress | None,
) -> Choice:
    """The one dispatch from the settings and :func:`fit_method` to the computation of λ and
    the model."""
    ranker = settings.ranker()
    common = {
        "n_splits": int(settings.n_splits),
        "random_state": 0,
        "progress": progress,
        "criterion": settings.criterion,
    }
    if settings.robust is not None and settings.rule == "kfold":
        # robust fits against least-squares fits on the same folds; the lower curve wins
        if method == "exact":
            return kfold_robust(ranker, X, y, lams, **common)
        # beyond: the first fold on at most ONE_FOLD_TRAIN points, the refit by one direct
        # factorisation (Cholesky, or the sparse lattice for the largest sets)
        direct = DirectRanker(
            make_kernel(ranker.ranker.kernel),
            solver="cholesky" if method == "one-fold" else "lattice",
        )
        return kfold_robust(
            ranker, X, y, lams, folds=1, max_train=ONE_FOLD_TRAIN, refit_with=direct, **common
        )
    if settings.rule == "kfold" and method != "exact":
        return fast_kfold_lambda(ranker, X, y, lams, method=method, **common)
    return choose(
        ranker,
        X,
        y,
        rule=settings.rule,
        grid=lams,
        refit=settings.refit_all or settings.rule != "holdout",
        apriori=apriori,
        value=settings.lam,
        **common,
    )


def robust_settings(settings: LearnSettings | None = None) -> LearnSettings:
    """``settings`` (default: the best recipe) learning as the ``"robust"`` preset does: Huber
    weights with a rater model and coarse answers as intervals, λ by the mean absolute
    validation error, a grid rising away from the diagonal and :data:`DIAGONAL_ANCHORS`
    diagonal points."""
    return dataclasses.replace(
        LearnSettings() if settings is None else settings,
        robust="huber",
        criterion="absolute-error",
        monotone=True,
        anchors=DIAGONAL_ANCHORS,
    )


# The named recipes: presets of the one settings type (riskgrid learn --recipe, reproduce
# seg-table3 --recipe, plan-panel, the Learn page, the benchmarks).
PRESETS: dict[str, LearnSettings] = {
    # the project's best on clean ratings (docs/RESULTS.md): log glucose (g₀ = 50 mg/dL), the
    # Laplacian kernel γ = 10³, signed ratings, 101 diagonal points, λ from 0.95^j (j < 400) by
    # the mean absolute error of 5-fold validation, refit on all ratings
    "best": LearnSettings(),
    # the best recipe learning robustly: Huber weights, a rater model, coarse answers as
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


def panel_traits(ratings: RatingSet | tuple[ArrayLike, ArrayLike]) -> list[str]:
    """What marks ratings as a rater panel's, in words: more than one rater named, answers on a
    coarse scale (steps of 1 or 0.5); empty for continuous ratings without raters."""
    _, y = _training_data(ratings)
    raters = _rater_codes(ratings, len(y))
    n_raters = int(np.unique(raters[raters >= 0]).size)
    step = rating_step(y)
    return ([f"{n_raters} raters"] if n_raters > 1 else []) + (
        [f"answers in steps of {step:g}"] if step else []
    )


def default_recipe(ratings: RatingSet | tuple[ArrayLike, ArrayLike]) -> tuple[str, str]:
    """(preset name, why) of the default for these ratings: ``"robust"`` for a rater panel
    (:func:`panel_traits`), ``"best"`` otherwise (measured: docs/RESULTS.md, panels)."""
    traits = panel_traits(ratings)
    if traits:
        return "robust", f"the ratings come from a panel ({' and '.join(traits)})"
    return "best", "continuous ratings without a rater column"


def settings_advice(result: LearnedGrid) -> list[str]:
    """Short warnings about choices that are likely to give a poor grid (plain sentences)."""
    settings, advice = result.settings, []
    low, high = KERNELS[settings.kernel].suited_widths
    if not low <= settings.gamma <= high:
        unit = KERNELS[settings.kernel].width_unit
        advice.append(
            f"The kernel width {settings.gamma:,.0f} {unit} is outside the range that suits the "
            f"{KERNEL_LABELS[settings.kernel].split(',')[0]} kernel ({low:,.0f}–{high:,.0f} "
            f"{unit}); the grid is likely too rough or too flat."
        )
    if result.apriori is not None:
        beta = result.apriori.beta
        if beta >= 1.0 - 1e-6 or beta <= 1e-6:
            advice.append(
                f"The a-priori rule's exponent β = {beta:.3g} sits at the bound of its range "
                "(0, 1]: the subsets did not determine it, so λ(m) is an extrapolation. Prefer "
                "k-fold validation."
            )
    if settings.rule == "holdout" and not settings.refit_all:
        advice.append(
            f"Hold-out fits the grid on half of the ratings ({result.points_fitted} of "
            f"{len(result.y)} points); refitting on all of them at the chosen λ uses the rest."
        )
    if settings.robust is None and result.from_a_panel:
        panel = " and ".join(
            ([f"{result.n_raters} raters"] if result.n_raters > 1 else [])
            + ([f"answers in steps of {result.answer_step:g}"] if result.answer_step else [])
        )
        advice.append(
            f"These ratings come from a panel ({panel}) and are fitted by plain least squares. "
            "Robust learning weighs outlying ratings down, models each rater's offset and scale "
            "and reads coarse answers as intervals: on simulated panels it misranks a fifth to a "
            "third fewer pairs."
        )
    return advice


def grid_metadata(result: LearnedGrid, source: str | None = None) -> dict:
    """``grid.json`` content: the file layout, the settings, λ, the data and riskgrid's version."""
    return {
        "format": {
            "shape": [SIZE, SIZE],
            "rows": "reference glucose 0..600 mg/dL, step 1",
            "columns": "measured glucose 0..600 mg/dL, step 1",
            "values": f"risk 0..{RISK_MAX:g} (SEG scale), clipped to it",
        },
        "settings": result.settings.to_dict(),
        "lambda": result.lam,
        "lambda_chosen_by_rule": result.lam_chosen,
        "ratings": result.n_ratings,
        "points_fitted": result.points_fitted,
        "ratings_checksum": result.checksum,
        "rating_set": source,
        "riskgrid_version": riskgrid_version(),
    }


def write_grid_files(
    result: LearnedGrid, out_dir: str | os.PathLike, source: str | None = None
) -> list[Path]:
    """Write ``grid.npy``, ``grid.csv``, ``grid.png`` and ``grid.json``
    (:mod:`ranking_core.grids.files`) into ``out_dir`` (created if needed); returns the paths in
    that order."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    contents = (
        grid_npy(result.grid),
        grid_csv(result.grid),
        grid_png(result.grid),
        json.dumps(grid_metadata(result, source), indent=2).encode(),
    )
    paths = [out / name for name in GRID_FILES]
    for path, content in zip(paths, contents, strict=True):
        path.write_bytes(content)
    return paths


def write_band_files(band: RiskBand, grid: ArrayLike, out_dir: str | os.PathLike) -> list[Path]:
    """Write the band's files (:func:`~ranking_core.panels.uncertainty.band_files`, ``grid`` the
    learned grid as written) and ``band.json`` (its level, the share of the grid whose risk
    category it leaves open, how it is computed) into ``out_dir``; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = band_files(band, grid)
    files["band.json"] = json.dumps(
        {
            "level": band.level,
            "uncertain_share": band.uncertain_share,
            "method": "posterior sd of the equivalent Gaussian process (weighted Lavrentiev "
            f"ranker), interpolated from a {BAND_STEP} mg/dL lattice",
            "layout": "as grid.npy / grid.csv: rows = reference, columns = measured, 0..600 mg/dL",
        },
        indent=2,
    ).encode()
    for name, content in files.items():
        (out / name).write_bytes(content)
    return [out / name for name in files]


NO_RATER = "(none)"


@dataclass(frozen=True)
class PanelFit:
    """A grid learned from a panel, with what the learner made of each rating.

    Attributes
    ----------
    learned : the :class:`~ranking_core.learn.LearnedGrid` (settings, λ, grid, model).
    ratings : one row per rating: reference, estimate (mg/dL), rating, rater, consensus (the
        learned risk there), residual (standardised, after the rater correction), weight (0..1)
        and flagged (|residual| > 3).
    """

    learned: LearnedGrid
    ratings: pd.DataFrame = field(repr=False)

    @property
    def model(self) -> object:
        """The fitted model predicting the absolute risk."""
        return self.learned.risk_model

    @property
    def robust(self) -> RobustRanker | None:
        """The :class:`~ranking_core.panels.RobustRanker` (None for plain least squares)."""
        return self.learned.model if isinstance(self.learned.model, RobustRanker) else None

    @property
    def step(self) -> float:
        """The answer scale's step (0 = continuous)."""
        return self.robust.step_ if self.robust is not None else rating_step(self.ratings["rating"])


def learn_panel(
    ratings: RatingSet | pd.DataFrame,
    settings: LearnSettings | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> PanelFit:
    """Learn a grid from a rating set (columns reference, estimate in mg/dL, rating 0..4,
    optional rater) with ``settings`` (default: the best recipe with Huber weights, λ by the
    mean absolute validation error and a monotone grid, as
    the ``"robust"`` preset) and attach
    to each rating its consensus risk, residual, weight and flag."""
    settings = PRESETS["robust"] if settings is None else settings
    data = ratings if isinstance(ratings, RatingSet) else RatingSet(ratings)
    learned = learn_grid(data, settings, progress=progress)
    frame = data.frame
    X, y = data.X, data.y
    out = pd.DataFrame(
        {
            "reference": X[:, 0],
            "estimate": X[:, 1],
            "rating": y,
            "rater": frame["rater"].astype(str).to_numpy() if "rater" in frame else NO_RATER,
        },
        index=frame.index,
    )
    out["consensus"] = learned.risk_model.predict(X)
    model = learned.model
    if isinstance(model, RobustRanker):
        rows = rating_positions(int(settings.anchors), len(y))
        # the paper's hold-out fits the first half only: the other points have no residual
        fitted = model.residuals_.size
        residual, weight = np.full(len(learned.y), np.nan), np.full(len(learned.y), np.nan)
        residual[:fitted], weight[:fitted] = model.residuals_, model.weights_
        out["residual"] = residual[rows]
        out["weight"] = weight[rows]
    else:
        residual = y - out["consensus"].to_numpy()
        scale = MAD_TO_SD * np.median(np.abs(residual - np.median(residual)))
        out["residual"] = residual / max(scale, 1e-12)
        out["weight"] = 1.0
    out["flagged"] = np.abs(out["residual"]) > OUTLIER_Z
    return PanelFit(learned, out)
