"""Kriukova et al. 2014, §4.3–4.4: reconstructing the Surveillance Error Grid from a few hundred
ratings.

Protocol of §4.3 (Table 3): m inputs x_i = (REF, BGM) uniform on [0, 600]² mg/dL, y_i = SEG
abs_risk at the rounded point; Gaussian kernel γ = 10⁴; Lavrentiev ranking (eq. (4)); the first
m/2 points fit, the last m/2 choose λ from λ_j = 0.95^j (j < 200) by pairwise misranking
(eq. (1)); the chosen function is compared with the SEG on 1,000 new uniform points (misranking
and the distribution of |Δy| in bins of 0.5). §4.4: λ₊ found the same way on m = 20, 30, 40, 50
gives the a-priori rule λ̃(m) = α·m^(−β/2), applied at m = 400.

A :class:`SEGRecipe` names every choice that the paper fixes (kernel width, glucose coordinates,
filter, λ grid, how λ is chosen), so that the improvements measured in
``docs/RESULTS.md`` are runs of the same protocol with another recipe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone

from ranking_core.fast_selection import METHODS, fast_kfold_lambda
from ranking_core.filters import Filter
from ranking_core.grids.compare import DIFFERENCE_BINS, difference_shares
from ranking_core.grids.coordinates import GlucoseTransform
from ranking_core.grids.seg import GLUCOSE_MAX, SEGTable
from ranking_core.grids.signed import AbsoluteRisk, signed_ratings
from ranking_core.learn import glucose_ranker
from ranking_core.learn import rating_positions as anchored_positions
from ranking_core.learn import with_diagonal_anchors as diagonal_anchors
from ranking_core.metrics import pairwise_misranking
from ranking_core.panels.robust import RobustRanker, kfold_robust
from ranking_core.ranker import SpectralRanker
from ranking_core.selection import (
    fit_apriori_lambda,
    holdout_lambda,
    kfold_lambda,
    paper_lambda_grid,
)
from ranking_core.validation import one_of

__all__ = [
    "BEST_RECIPE",
    "PAPER_APRIORI",
    "PAPER_RECIPE",
    "PAPER_TABLE3",
    "RECIPES",
    "ROBUST_RECIPE",
    "SEGRecipe",
    "draw_seg_ratings",
    "fit_recipe",
    "rating_positions",
    "run_apriori",
    "run_seg_table3",
    "with_diagonal_anchors",
]

Progress = Callable[[int, int], None]
SELECTIONS = ("holdout", "kfold")
SOLVERS = ("spectral", *METHODS)
RECIPE_KERNELS = ("gaussian", "laplacian")

# Kriukova et al. 2014, Table 3: % of test points per |Δy| bin (None = "-") and pairwise misranking,
# in %
PAPER_TABLE3 = {
    100: {"bins": (76.6, 15.6, 2.8, 1.8, 1.6, 0.7, 0.8, 0.1), "misranking": 6.74},
    200: {"bins": (88.7, 9.2, 0.9, 0.7, 0.3, 0.2, None, None), "misranking": 4.0},
    300: {"bins": (95.2, 4.0, 0.5, 0.3, None, None, None, None), "misranking": 3.0},
    400: {"bins": (96.1, 3.0, 0.6, 0.3, None, None, None, None), "misranking": 2.9},
}
# Kriukova et al. 2014, §4.4, misranking in %
PAPER_APRIORI = {"m": 400, "misranking": 4.27, "sizes": (20, 30, 40, 50)}


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
        :func:`~ranking_core.selection.kfold_lambda`, any filter) or a method of
        :func:`~ranking_core.fast_selection.fast_kfold_lambda` (``"auto"``, ``"exact"``,
        ``"one-fold"``, ``"lattice"``; Lavrentiev filter; one direct refit).
    robust : None (the plain ranker) or the loss of a
        :class:`~ranking_core.panels.RobustRanker` (``"huber"``, ``"tukey"``, ``"squared"``):
        weights for outlying ratings, a rater model when rater codes are given, coarse answers
        as intervals; λ is chosen on the robust fits' path, against the least-squares fits on
        the same folds (:func:`~ranking_core.panels.robust.kfold_robust`).
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

    def __post_init__(self) -> None:
        one_of(self.selection, "selection", SELECTIONS, "SEGRecipe")
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
        }


PAPER_RECIPE = SEGRecipe("paper")
# The best recipe measured so far (docs/RESULTS.md): glucose on the log warp with
# g₀ = 50 mg/dL, the Laplacian (L1) kernel with γ = 10³ on that scale, signed ratings, 41
# zero-risk diagonal anchors, λ from 0.95^j (j < 400) by 5-fold validation misranking and a refit
# on all m ratings, computed by the fast k-fold path (exact up to 2,000 ratings; docs/SCALE.md).
BEST_RECIPE = SEGRecipe(
    "best",
    kernel="laplacian",
    gammas=(1e3,),
    transform=GlucoseTransform("log", offset=50.0),
    n_lams=400,
    signed=True,
    diagonal_anchors=41,
    selection="kfold",
    solver="auto",
)
# The best recipe learning robustly (panels with outliers, raters, coarse answers); λ on every
# fourth value of its grid (0.95⁴ʲ), since each λ of the path costs iterations
# (benchmarks/panels.py); folds by the spectral path (the robust fits need it).
ROBUST_RECIPE = replace(BEST_RECIPE, name="robust", robust="huber", n_lams=100, q=0.95**4,
                        solver="spectral")
RECIPES = {"paper": PAPER_RECIPE, "best": BEST_RECIPE, "robust": ROBUST_RECIPE}


def draw_seg_ratings(
    table: SEGTable, m: int, rng: np.random.Generator
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """m inputs uniform on [0, 600]² mg/dL and their SEG abs_risk at the rounded point."""
    X = rng.uniform(0.0, GLUCOSE_MAX, size=(int(m), 2))
    return X, table.risk(X[:, 0], X[:, 1])


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
    (λ and γ are then chosen by the misranking of the signed ratings). With ``recipe.robust`` the
    model is a :class:`~ranking_core.panels.RobustRanker`, and ``raters`` (one label per rating)
    feeds its rater model.
    """
    lams = recipe.lams()
    if recipe.robust is not None:
        codes = (np.full(len(y), -1) if raters is None
                 else pd.factorize(np.asarray(raters, dtype=object))[0])
        X = np.column_stack([X, codes])
    X, y = with_diagonal_anchors(recipe, X, y)
    if recipe.signed:
        y = signed_ratings(X[:, :2], y)
    best: tuple = ()
    for gamma in recipe.gammas:
        ranker = recipe.ranker(gamma)
        if recipe.selection == "holdout":
            choice = holdout_lambda(ranker, X, y, lams)
        elif recipe.robust is not None:
            choice = kfold_robust(ranker, X, y, lams, n_splits=recipe.n_splits, random_state=0)
        elif recipe.solver != "spectral":
            choice = fast_kfold_lambda(ranker, X, y, lams, n_splits=recipe.n_splits,
                                       random_state=0, method=recipe.solver)
        else:
            choice = kfold_lambda(ranker, X, y, lams, n_splits=recipe.n_splits, random_state=0)
        score = float(np.nanmin(choice.curve))
        if not best or score < best[0]:
            best = (score, choice, gamma)
    model = AbsoluteRisk(best[1].model) if recipe.signed else best[1].model
    return model, best[1].lam, best[2]


def _evaluate(model: SpectralRanker | AbsoluteRisk, table: SEGTable, rng: np.random.Generator,
              n_test: int) -> tuple[float, NDArray]:
    X_test, y_test = draw_seg_ratings(table, n_test, rng)
    predicted = model.predict(X_test)
    return pairwise_misranking(y_test, predicted), difference_shares(y_test, predicted)


def _summary(misranking: list[float], shares: list[NDArray], extra: dict) -> dict:
    shares_arr = np.asarray(shares)
    return {
        "misranking_mean": float(np.mean(misranking)),
        "misranking_sd": float(np.std(misranking, ddof=1)) if len(misranking) > 1 else 0.0,
        "delta_bins": dict(zip(DIFFERENCE_BINS, shares_arr.mean(axis=0).tolist(), strict=True)),
        "misranking": [float(v) for v in misranking],
        **extra,
    }


def run_seg_table3(
    table: SEGTable,
    sizes: Sequence[int] = (100, 200, 300, 400),
    repeats: int = 20,
    recipe: SEGRecipe = PAPER_RECIPE,
    n_test: int = 1000,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict:
    """Kriukova et al. 2014, §4.3, Table 3. Misranking and |Δy| bin shares are fractions (0.029 =
    2.9 %), mean over repetitions (sd with ddof = 1); every repetition draws fresh training and test
    sets.
    """
    rng = np.random.default_rng(seed)
    result: dict = {"protocol": "Kriukova et al. 2014, §4.3 (Table 3)", "recipe": recipe.describe(),
                    "repeats": repeats, "n_test": n_test, "seed": seed, "sizes": {}}
    done, total = 0, len(sizes) * repeats
    for m in sizes:
        misranking, shares, lams, gammas = [], [], [], []
        for _ in range(repeats):
            X, y = draw_seg_ratings(table, int(m), rng)
            model, lam, gamma = fit_recipe(recipe, X, y)
            score, share = _evaluate(model, table, rng, n_test)
            misranking.append(score)
            shares.append(share)
            lams.append(lam)
            gammas.append(gamma)
            done += 1
            if progress is not None:
                progress(done, total)
        result["sizes"][str(m)] = _summary(
            misranking, shares, {"lambda": lams, "gamma": [
                list(g) if isinstance(g, tuple) else g for g in gammas]})
    return result


def run_apriori(
    table: SEGTable,
    sizes: Sequence[int] = (400,),
    repeats: int = 20,
    recipe: SEGRecipe = PAPER_RECIPE,
    small_sizes: Sequence[int] = (20, 30, 40, 50),
    draws: int = 1,
    beta_max: float = 1.0,
    n_test: int = 1000,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict:
    """Kriukova et al. 2014, §4.4: per repetition, draw m ratings; fit λ̃(m) = α·m^(−β/2) to λ₊
    found by the hold-out protocol on ``draws`` random subsets of each small size
    (:func:`~ranking_core.selection.fit_apriori_lambda`, 0 < β ≤ ``beta_max``; the theory's
    β = 1/(r + 1) ≤ 1); fit all m ratings at λ̃(m)
    with the recipe's first γ; measure on ``n_test`` new points. Fractions, as in
    :func:`run_seg_table3`.
    """
    rng = np.random.default_rng(seed)
    gamma = recipe.gammas[0]
    ranker = recipe.ranker(gamma)
    result: dict = {"protocol": "Kriukova et al. 2014, §4.4 (a-priori λ)",
                    "recipe": recipe.describe(),
                    "gamma": list(gamma) if isinstance(gamma, tuple) else gamma,
                    "small_sizes": list(small_sizes), "draws": draws, "beta_max": beta_max,
                    "repeats": repeats,
                    "n_test": n_test, "seed": seed, "sizes": {}}
    done, total = 0, len(sizes) * repeats
    for m in sizes:
        misranking, shares, rules = [], [], []
        for _ in range(repeats):
            X, y = with_diagonal_anchors(recipe, *draw_seg_ratings(table, int(m), rng))
            targets = signed_ratings(X, y) if recipe.signed else y
            rule = fit_apriori_lambda(ranker, X, targets, sizes=small_sizes, draws=draws,
                                      lams=recipe.lams(), beta_max=beta_max, n_bootstrap=0,
                                      random_state=int(rng.integers(2**31)))
            lam = float(rule(int(m)))
            model = clone(ranker).set_params(lam=lam).fit(X, targets)
            if recipe.signed:
                model = AbsoluteRisk(model)
            score, share = _evaluate(model, table, rng, n_test)
            misranking.append(score)
            shares.append(share)
            rules.append({"alpha": rule.alpha, "beta": rule.beta, "lambda": lam})
            done += 1
            if progress is not None:
                progress(done, total)
        result["sizes"][str(m)] = _summary(misranking, shares, {"rules": rules})
    return result
