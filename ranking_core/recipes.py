"""How a learned SEG is built from m ratings: a :class:`SEGRecipe` names every choice
(kernel and width, glucose coordinates, filter, λ grid, how λ and γ are chosen, signed ratings,
diagonal anchors), and :func:`fit_recipe` learns a grid with it.

:data:`PAPER_RECIPE` is the protocol of Kriukova et al. 2014, §4.3 (Gaussian γ = 10⁴, Lavrentiev,
first m/2 fit, last m/2 choose λ from 0.95^j, j < 200); :data:`BEST_RECIPE` the project's best
(docs/RESULTS.md). The experiments (:mod:`ranking_core.experiments.seg`), the Learn page's
:func:`ranking_core.learn.learn_grid` and the CLI use these recipes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ranking_core.fast_selection import METHODS, choose_method, fast_kfold_lambda
from ranking_core.filters import Filter
from ranking_core.grids.coordinates import GlucoseTransform
from ranking_core.grids.monotone import MonotoneRisk
from ranking_core.grids.signed import AbsoluteRisk, signed_ratings
from ranking_core.learn import DIAGONAL_ANCHORS, glucose_ranker
from ranking_core.learn import rating_positions as anchored_positions
from ranking_core.learn import with_diagonal_anchors as diagonal_anchors
from ranking_core.learners.spectral import SpectralRanker
from ranking_core.panels.robust import RobustRanker, kfold_robust, robust_folds
from ranking_core.selection import CRITERIA, choose, near_minimum, paper_lambda_grid
from ranking_core.validation import one_of

__all__ = [
    "BEST_RECIPE",
    "PAPER_RECIPE",
    "RECIPES",
    "RECIPE_KERNELS",
    "ROBUST_RECIPE",
    "SELECTIONS",
    "SOLVERS",
    "SEGRecipe",
    "fit_recipe",
    "rating_positions",
    "with_diagonal_anchors",
]

SELECTIONS = ("holdout", "kfold")
SOLVERS = ("spectral", *METHODS)
RECIPE_KERNELS = ("gaussian", "laplacian")


@dataclass(frozen=True)
class SEGRecipe:
    """How a SEG reconstruction learns from m ratings.

    Parameters
    ----------
    name : label for tables and JSON.
    kernel : ``"gaussian"`` (exp(−‖x − x'‖²/γ), the paper) or ``"laplacian"``
        (exp(−‖x − x'‖₁/γ), a product of 1-D exponential kernels; a project extension).
    gammas : candidate widths γ: (mg/dL)² of the possibly warped scale for the Gaussian, where a
        tuple entry (γ_REF, γ_BGM) is anisotropic; mg/dL (of the warped scale) for the
        Laplacian. With several, γ is chosen together with λ by the same
        validation misranking.
    transform : per-coordinate glucose warp applied before the kernel (None = mg/dL as is).
    filter : spectral filter (``"lavrentiev"`` is eq. (4); ``IteratedLavrentiev(k)`` eq. (13)).
    lam0, q, n_lams : the λ grid λ_j = λ₀·q^j, j < n_lams.
    signed : learn sign(REF − estimate)·y and predict |f|
        (:mod:`ranking_core.grids.signed`; a project extension).
    diagonal_anchors : number of zero-risk points (g, g), g evenly spaced on 0..600 mg/dL, added
        to the training ratings (prior knowledge, not ratings: an exact reading carries no
        risk; a project extension). They are mixed in at fixed random positions so that a
        hold-out split sees them in both halves.
    selection : ``"holdout"`` (the paper: first m/2 fit, last m/2 choose; the model keeps the
        first half only) or ``"kfold"`` (k-fold validation misranking, then a refit on all m).
    n_splits : folds for ``"kfold"``.
    solver : how ``"kfold"`` is computed: ``"spectral"`` (every fold and the refit by
        :func:`~ranking_core.selection.choose`, any filter) or a method of
        :func:`~ranking_core.fast_selection.fast_kfold_lambda` (``"auto"``, ``"exact"``,
        ``"one-fold"``, ``"lattice"``; Lavrentiev filter; one direct refit). ``"auto"`` decides
        by the number of ratings m (:func:`~ranking_core.fast_selection.choose_method`), the
        diagonal anchors not counted: at m = 2,000 every fold is solved exactly.
    robust : None (the plain ranker) or the loss of a
        :class:`~ranking_core.panels.RobustRanker` (``"huber"``, ``"tukey"``, ``"squared"``):
        weights for outlying ratings, a rater model when rater codes are given, coarse answers
        as intervals; λ is chosen on the robust fits' path, against the least-squares fits on
        the same folds (:func:`~ranking_core.panels.robust.kfold_robust`).
    criterion : what the hold-out or k-fold choice minimises on the validation ratings:
        ``"misranking"`` (Kriukova et al. 2014 eq. (1), the paper) or ``"absolute-error"`` (mean
        |f − y|, :func:`~ranking_core.selection.validation_scores`; a project extension, steadier
        on noisy ratings, docs/RESULTS.md).
    monotone : project the learned grid onto the grids that are zero on the diagonal and rise
        away from it along every row and column (:class:`~ranking_core.grids.monotone.
        MonotoneRisk`; the SEG has this shape exactly; a project extension). Predictions are
        then read off the projected 601 × 601 lattice at the rounded point.
    """

    name: str
    kernel: str = "gaussian"
    gammas: tuple[float | tuple[float, float], ...] = (1e4,)
    transform: GlucoseTransform | None = None
    filter: str | Filter = "lavrentiev"
    lam0: float = 1.0
    q: float = 0.95
    n_lams: int = 200
    signed: bool = False
    diagonal_anchors: int = 0
    selection: str = "holdout"
    n_splits: int = 5
    solver: str = "spectral"
    robust: str | None = None
    criterion: str = "misranking"
    monotone: bool = False

    def __post_init__(self) -> None:
        one_of(self.selection, "selection", SELECTIONS, "SEGRecipe")
        one_of(self.criterion, "criterion", CRITERIA, "SEGRecipe")
        one_of(self.solver, "solver", SOLVERS, "SEGRecipe")
        if int(self.diagonal_anchors) != self.diagonal_anchors or self.diagonal_anchors < 0:
            raise ValueError(f"SEGRecipe: diagonal_anchors must be an integer ≥ 0; "
                             f"got {self.diagonal_anchors!r}")
        if not self.gammas:
            raise ValueError("SEGRecipe: gammas must list at least one width")
        one_of(self.kernel, "kernel", RECIPE_KERNELS, "SEGRecipe")

    def lams(self) -> NDArray[np.float64]:
        return paper_lambda_grid(self.lam0, self.q, self.n_lams)

    def ranker(self, gamma: float | tuple[float, float]) -> SpectralRanker | RobustRanker:
        ranker = glucose_ranker(self.kernel, gamma, self.transform, self.filter)
        if self.robust is None:
            return ranker
        return RobustRanker(ranker, loss=self.robust, signed=self.signed)

    def describe(self) -> dict:
        """JSON-ready description."""
        return {
            "name": self.name,
            "kernel": self.kernel,
            "gammas": [list(g) if isinstance(g, tuple) else g for g in self.gammas],
            "transform": None if self.transform is None else
            {"scale": self.transform.scale, "offset_mgdl": self.transform.offset},
            "filter": self.filter if isinstance(self.filter, str) else repr(self.filter),
            "lambda_grid": {"lam0": self.lam0, "q": self.q, "n": self.n_lams},
            "signed": self.signed,
            "diagonal_anchors": self.diagonal_anchors,
            "selection": self.selection,
            "n_splits": self.n_splits if self.selection == "kfold" else None,
            "solver": self.solver if self.selection == "kfold" else None,
            "robust": self.robust,
            "criterion": self.criterion,
            "monotone": self.monotone,
        }


PAPER_RECIPE = SEGRecipe("paper")
# The best recipe measured so far (docs/RESULTS.md): glucose on the log warp with
# g₀ = 50 mg/dL, the Laplacian (L1) kernel with γ = 10³ on that scale, signed ratings, 101
# zero-risk diagonal anchors (one every 6 mg/dL), λ from 0.95^j (j < 400) by the mean absolute
# error of 5-fold validation (steadier than the validation misranking, which jumps from one λ to
# the next) and a refit on all m ratings, computed by the fast k-fold path (exact up to 2,000
# ratings; docs/SCALE.md).
BEST_RECIPE = SEGRecipe(
    "best",
    kernel="laplacian",
    gammas=(1e3,),
    transform=GlucoseTransform("log", offset=50.0),
    n_lams=400,
    signed=True,
    diagonal_anchors=DIAGONAL_ANCHORS,
    selection="kfold",
    solver="auto",
    criterion="absolute-error",
)
# The best recipe learning robustly (panels with outliers, raters, coarse answers); λ on every
# fourth value of its grid (0.95⁴ʲ), since each λ of the path costs iterations
# (benchmarks/panels.py); folds by the spectral path (the robust fits need it); the grid
# projected onto the grids rising away from the diagonal (docs/RESULTS.md).
ROBUST_RECIPE = replace(BEST_RECIPE, name="robust", robust="huber", n_lams=100, q=0.95**4,
                        solver="spectral", monotone=True)
RECIPES = {"paper": PAPER_RECIPE, "best": BEST_RECIPE, "robust": ROBUST_RECIPE}


def with_diagonal_anchors(recipe: SEGRecipe, X: NDArray, y: NDArray) -> tuple[NDArray, NDArray]:
    """(X, y) plus the recipe's zero-risk diagonal points, rows in a fixed random order (a third
    column of X, the rater code, is −1 for them: no rater)."""
    return diagonal_anchors(recipe.diagonal_anchors, X, y)


def rating_positions(recipe: SEGRecipe, m: int) -> NDArray[np.intp]:
    """Where :func:`with_diagonal_anchors` puts the m ratings: row i of the ratings is row
    ``rating_positions(recipe, m)[i]`` of its output."""
    return anchored_positions(recipe.diagonal_anchors, m)


def fit_recipe(recipe: SEGRecipe, X: NDArray, y: NDArray, raters: ArrayLike | None = None
               ) -> tuple[object, float, object]:
    """Choose (γ, λ) by the recipe's validation misranking and return (model, λ, γ).

    One decomposition per γ (and per fold); every λ is solved from it. The model is a fitted
    :class:`~ranking_core.SpectralRanker` (or, with a fast ``recipe.solver``, a
    :class:`~ranking_core.direct.DirectRanker`), or an
    :class:`~ranking_core.grids.signed.AbsoluteRisk` around one when ``recipe.signed``
    (λ and γ are then chosen by the misranking of the signed ratings), inside a
    :class:`~ranking_core.grids.monotone.MonotoneRisk` when ``recipe.monotone``. With
    ``recipe.robust`` the
    model is a :class:`~ranking_core.panels.RobustRanker`, and ``raters`` (one label per rating)
    feeds its rater model.
    """
    lams = recipe.lams()
    n_ratings = len(y)  # "auto" counts the ratings, not the recipe's diagonal anchors
    if recipe.robust is not None:
        codes = (np.full(len(y), -1) if raters is None
                 else pd.factorize(np.asarray(raters, dtype=object))[0])
        X = np.column_stack([X, codes])
    X, y = with_diagonal_anchors(recipe, X, y)
    if recipe.signed:
        y = signed_ratings(X[:, :2], y)
    if recipe.selection == "kfold" and (recipe.robust is not None or recipe.solver != "spectral"):
        if recipe.robust is not None:
            choices = [kfold_robust(recipe.ranker(gamma), X, y, lams, n_splits=recipe.n_splits,
                                    random_state=0, criterion=recipe.criterion,
                                    folds=robust_folds(n_ratings))
                       for gamma in recipe.gammas]
        else:
            choices = [fast_kfold_lambda(
                recipe.ranker(gamma), X, y, lams, n_splits=recipe.n_splits, random_state=0,
                method=(recipe.solver if recipe.solver != "auto" else
                        choose_method(n_ratings, recipe.ranker(gamma), X.shape[1])),
                criterion=recipe.criterion)
                for gamma in recipe.gammas]
        scores = [float(np.nanmin(choice.curve)) for choice in choices]
        best = near_minimum(scores)  # the first γ among ties, as choose() picks it
        choice, gamma = choices[best], recipe.gammas[best]
    else:
        # hold-out (the paper) keeps the model of the first half (refit=False); k-fold refits
        choice = choose(recipe.ranker, X, y, rule=recipe.selection, grid=lams,
                        gammas=recipe.gammas, refit=recipe.selection == "kfold",
                        n_splits=recipe.n_splits, random_state=0, criterion=recipe.criterion)
        gamma = choice.gamma
    model = AbsoluteRisk(choice.model) if recipe.signed else choice.model
    if recipe.monotone:
        model = MonotoneRisk.fit(model)
    return model, choice.value, gamma
