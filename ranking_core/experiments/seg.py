"""Kriukova et al. 2014, §4.3–4.4: reconstructing the Surveillance Error Grid from a few hundred
ratings.

Protocol of §4.3 (Table 3): m inputs x_i = (REF, BGM) uniform on [0, 600]² mg/dL, y_i = SEG
abs_risk at the rounded point; Gaussian kernel γ = 10⁴; Lavrentiev ranking (eq. (4)); the first
m/2 points fit, the last m/2 choose λ from λ_j = 0.95^j (j < 200) by pairwise misranking
(eq. (1)); the chosen function is compared with the SEG on 1,000 new uniform points (misranking
and the distribution of |Δy| in bins of 0.5). §4.4: λ₊ found the same way on m = 20, 30, 40, 50
gives the a-priori rule λ̃(m) = α·m^(−β/2), applied at m = 400.

A :class:`~ranking_core.learn.LearnSettings` names every choice that the paper fixes (kernel
width, glucose coordinates, filter, λ grid, how λ is chosen; the paper's own is
``PRESETS["paper"]``), and every fit goes through :func:`~ranking_core.learn.learn_grid`, so the
improvements measured in ``docs/RESULTS.md`` are runs of the same protocol with other
settings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray
from sklearn.base import clone

from ranking_core.grids.compare import DIFFERENCE_BINS, difference_shares
from ranking_core.grids.seg import GLUCOSE_MAX, SEGTable
from ranking_core.grids.signed import AbsoluteRisk, signed_ratings
from ranking_core.learn import (
    PRESETS,
    LearnSettings,
    learn_grid,
    preset_name,
    with_diagonal_anchors,
)
from ranking_core.metrics import Predictor, pairwise_misranking
from ranking_core.selection import fit_apriori_lambda

__all__ = [
    "PAPER_APRIORI",
    "PAPER_TABLE3",
    "draw_seg_ratings",
    "learning_curves",
    "run_apriori",
    "run_seg_table3",
]

Progress = Callable[[int, int], None]

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


def draw_seg_ratings(
    table: SEGTable, m: int, rng: np.random.Generator
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """m inputs uniform on [0, 600]² mg/dL and their SEG abs_risk at the rounded point."""
    X = rng.uniform(0.0, GLUCOSE_MAX, size=(int(m), 2))
    return X, table.risk(X[:, 0], X[:, 1])


def _evaluate(
    model: Predictor, table: SEGTable, rng: np.random.Generator, n_test: int
) -> tuple[float, NDArray]:
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
    recipe: LearnSettings = PRESETS["paper"],
    n_test: int = 1000,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict:
    """Kriukova et al. 2014, §4.3, Table 3, with ``recipe`` (default the paper's settings).
    Misranking and |Δy| bin shares are fractions (0.029 = 2.9 %), mean over repetitions (sd
    with ddof = 1); every repetition draws fresh training and test sets.
    """
    rng = np.random.default_rng(seed)
    result = _result_head("Kriukova et al. 2014, §4.3 (Table 3)", recipe, repeats, n_test, seed)

    def one(m: int) -> tuple[float, NDArray, object]:
        learned = learn_grid(draw_seg_ratings(table, m, rng), recipe)
        return (*_evaluate(learned.risk_model, table, rng, n_test), learned.lam)

    result["sizes"] = _per_size(sizes, repeats, one, "lambda", progress)
    return result


def _per_size(
    sizes: Sequence[int],
    repeats: int,
    one: Callable[[int], tuple[float, NDArray, object]],
    kept: str,
    progress: Progress | None,
) -> dict:
    """``repeats`` repetitions of ``one(m)`` (misranking, |Δy| bin shares, a value kept under
    ``kept``) for each size m, in order, summarised per size (:func:`_summary`);
    ``progress(done, total)`` after each repetition."""
    done, total, summaries = 0, len(sizes) * repeats, {}
    for m in sizes:
        misranking, shares, values = [], [], []
        for _ in range(repeats):
            score, share, value = one(int(m))
            misranking.append(score)
            shares.append(share)
            values.append(value)
            done += 1
            if progress is not None:
                progress(done, total)
        summaries[str(m)] = _summary(misranking, shares, {kept: values})
    return summaries


def _result_head(
    protocol: str, recipe: LearnSettings, repeats: int, n_test: int, seed: int, **more: object
) -> dict:
    """The JSON-able head of a reproduction's result: the protocol, the recipe (its preset name
    and settings), ``more``, the repetitions, test points and seed; ``sizes`` left to fill."""
    recipe_fields = {"name": preset_name(recipe), **recipe.to_dict()}
    head = {"protocol": protocol, "recipe": recipe_fields, **more}
    return {**head, "repeats": repeats, "n_test": n_test, "seed": seed, "sizes": {}}


def run_apriori(
    table: SEGTable,
    sizes: Sequence[int] = (400,),
    repeats: int = 20,
    recipe: LearnSettings = PRESETS["paper"],
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
    with the recipe's γ; measure on ``n_test`` new points. Fractions, as in
    :func:`run_seg_table3`.
    """
    rng = np.random.default_rng(seed)
    ranker = recipe.least_squares().ranker()
    result = _result_head(
        "Kriukova et al. 2014, §4.4 (a-priori λ)",
        recipe,
        repeats,
        n_test,
        seed,
        gamma=recipe.gamma,
        small_sizes=list(small_sizes),
        draws=draws,
        beta_max=beta_max,
    )

    def one(m: int) -> tuple[float, NDArray, object]:
        X, y = with_diagonal_anchors(recipe.anchors, *draw_seg_ratings(table, m, rng))
        targets = signed_ratings(X, y) if recipe.signed else y
        rule = fit_apriori_lambda(
            ranker,
            X,
            targets,
            sizes=small_sizes,
            draws=draws,
            lams=recipe.lams(),
            beta_max=beta_max,
            n_bootstrap=0,
            random_state=int(rng.integers(2**31)),
        )
        lam = float(rule(m))
        model = clone(ranker).set_params(lam=lam).fit(X, targets)
        if recipe.signed:
            model = AbsoluteRisk(model)
        score, share = _evaluate(model, table, rng, n_test)
        return score, share, {"alpha": rule.alpha, "beta": rule.beta, "lambda": lam}

    result["sizes"] = _per_size(sizes, repeats, one, "rules", progress)
    return result


def learning_curves(
    table: SEGTable,
    filters: Sequence[str],
    sizes: Sequence[int],
    repeats: int,
    n_test: int = 1000,
    progress: Progress | None = None,
) -> dict:
    """Misranking against m for each spectral filter, and the a-priori rule beside them.

    Each filter runs the paper's recipe with that filter (:func:`run_seg_table3`: half of the m
    ratings fit, half choose λ; Kriukova et al. 2014, §4.3). The a-priori rule
    λ(m) = α·m^(−β/2) is fitted once on subsets of one draw of the largest m and then applied
    to fresh draws of that m (:func:`run_apriori`; Kriukova et al. 2014, §4.4).

    Returns
    -------
    ``{"curves": {filter: run_seg_table3 summary}, "apriori": the fitted AprioriRule,
    "apriori_applied": run_apriori summary at the largest m}``; ``progress(done, total)`` counts
    fits.
    """
    total = len(filters) * len(sizes) * repeats + repeats

    def from_(offset: int) -> Progress | None:
        return None if progress is None else (lambda done, _total: progress(offset + done, total))

    curves, done = {}, 0
    for name in filters:
        settings = dataclasses.replace(PRESETS["paper"], filter=name)
        curves[name] = run_seg_table3(
            table, sizes, repeats, settings, n_test=n_test, progress=from_(done)
        )
        done += len(sizes) * repeats
    X, y = draw_seg_ratings(table, max(sizes), np.random.default_rng(0))
    paper = PRESETS["paper"]
    rule = fit_apriori_lambda(paper.ranker(), X, y, draws=5, lams=paper.lams())
    applied = run_apriori(
        table, (max(sizes),), repeats, paper, draws=3, n_test=n_test, progress=from_(done)
    )
    return {"curves": curves, "apriori": rule, "apriori_applied": applied}
