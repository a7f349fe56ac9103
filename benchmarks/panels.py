"""Learning from simulated clinician panels against the SEG. Prints JSON, one line per result.

Sections (``--sections``, comma-separated):

* ``noisy``: the plain best recipe vs the robust one (``ROBUST_RECIPE``: Tukey weights, rater
  model, coarse answers as intervals, λ by the mean absolute validation error, the grid made to
  rise away from the diagonal, 101 diagonal anchors) on panels of ``PANEL_MODELS`` (clean,
  noise 0.25, noise 0.25 + 6.6 % outliers, the hard panel; ``CHECK_PANELS`` adds a panel the
  choices were checked on, not tuned on, except the anchor count: docs/RESULTS.md) at each
  m; all learners see the same ratings and are tested on the same 1,000 uniform points against
  the SEG abs_risk (misranking, Kriukova et al. 2014 eq. (1)). ``--oracle`` adds the plain
  learner on the ratings without the simulated outliers, ``--variants`` further learners
  (``VARIANTS``: one choice of a recipe changed).
* ``defaults``: what ``riskgrid learn FILE`` does by default: the recipe ``default_recipe`` picks
  per draw fitted by ``learn_grid`` (the function the command calls on the ratings it reads), its
  misranking on the test points, mean and sd over the draws; for ``RATER_EFFECT_PANELS``
  (``--panels rater-effects,rater-effects-noise-only``) beside ``PANEL_MODELS``.
* ``design``: random vs planned designs on clean ratings (start with ``--start`` random pairs,
  then batches of ``--batch`` proposed by each planning method).
* ``band``: coverage of the SEG surface by the robust fit's 95 % band (share of the 601 × 601
  lattice inside it), the share of the grid whose risk category the band leaves open, and the
  band's mean width.
* ``shape``: how far the plain and robust fits (as learned) are from rising away from the
  diagonal (``monotone_violations``: share of falling lattice steps, largest fall, largest
  |value| on the diagonal), the time of ``MonotoneRisk.fit`` (the projection), and the misranking
  before and after it, per draw.
* ``headroom``: what the robust recipe's λ choice costs: per draw, its misranking against the
  same fit at the λ best in hindsight (an oracle that sees the test points), over the whole λ path
  as learned and, projected, among the chosen λ and its neighbours on the grid.
* ``flags``: how well the robust fit's outlier flags (``learn_panel``, as ``riskgrid learn
  --panel-report`` and the dashboard compute them) find the ratings the simulator made unrelated
  to their scenario: precision and recall over all draws, and the noise sd the learner estimated.
* ``errors``: where the robust fit's misranked test pairs lie: their share by how far apart the
  SEG puts the pair (|Δ SEG risk| in bins), and the fit's RMSE against the SEG at the test points.
* ``folds``: robust learning of large panels validated on every fold against the first fold
  only (the rule beyond 2,000 ratings): time, λ and misranking per draw.
* ``solver``: the robust fit at one λ (its pseudo-rating iterations on one eigendecomposition,
  including that decomposition) against as many direct weighted solves as it took iterations
  (time ratio measured in one process, largest difference of the fitted values).

    SEG_TABLE=... python benchmarks/panels.py --sections noisy --m 400 --reps 4 --seed 0

The machine may be shared; times are ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import numpy as np
import pandas as pd

from ranking_core import SpectralRanker
from ranking_core.experiments.seg import draw_seg_ratings
from ranking_core.grids.compare import compare_grids
from ranking_core.grids.learned import learned_grid
from ranking_core.grids.monotone import MonotoneRisk, monotone_violations
from ranking_core.grids.seg import find_seg_table
from ranking_core.grids.signed import AbsoluteRisk
from ranking_core.learn import (
    PRESETS,
    LearnSettings,
    default_recipe,
    learn_grid,
    learn_panel,
    robust_settings,
)
from ranking_core.metrics import pairwise_misranking, pairwise_misranking_rows
from ranking_core.panels import (
    PANEL_MODELS,
    PLAN_METHODS,
    RATER_EFFECT_PANELS,
    RobustRanker,
    plan_pairs,
    risk_band,
    simulate_panel,
    simulate_rater_effects_panel,
)
from ranking_core.ratings import read_rating_set

N_TEST = 1000
BEST_RECIPE, ROBUST_RECIPE = PRESETS["best"], PRESETS["robust"]


def learned_model(settings: LearnSettings, X, y, raters=None) -> tuple[object, float]:
    """``learn_grid`` on the ratings (with their raters): (the model predicting risk, λ)."""
    frame = pd.DataFrame({"reference": X[:, 0], "estimate": X[:, 1], "rating": y})
    if raters is not None:
        frame["rater"] = np.asarray(raters).astype(str)
    learned = learn_grid(read_rating_set(frame, name="panel"), settings)
    return learned.risk_model, learned.lam


# the best recipe before λ by the absolute validation error and 101 diagonal anchors: the
# ``plain`` learner of the first three rounds in docs/RESULTS.md
EARLIER_ANCHORS = 41
BEST_BEFORE = replace(BEST_RECIPE, criterion="misranking", anchors=EARLIER_ANCHORS)
# further learners for ``--variants``: choices of the plain or robust recipe changed
VARIANTS = {
    "plain-before": BEST_BEFORE,
    "plain-absolute-error": replace(BEST_BEFORE, criterion="absolute-error"),
    "plain-monotone": replace(BEST_RECIPE, monotone=True),
    "plain-absolute-error-monotone": replace(
        BEST_BEFORE, criterion="absolute-error", monotone=True
    ),
    "robust-misranking": replace(ROBUST_RECIPE, criterion="misranking"),
    "robust-as-learned": replace(ROBUST_RECIPE, monotone=False),
    # the robust recipe before the absolute-error criterion and the monotone projection
    "robust-before": replace(
        ROBUST_RECIPE, criterion="misranking", monotone=False, anchors=EARLIER_ANCHORS
    ),
    # the robust recipe with the earlier 41 diagonal anchors (before 101), and with 201
    "robust-41-anchors": replace(ROBUST_RECIPE, anchors=EARLIER_ANCHORS),
    "robust-201-anchors": replace(ROBUST_RECIPE, anchors=201),
    # the robust recipe with Huber's weights throughout (its loss before Tukey's)
    "robust-huber": replace(ROBUST_RECIPE, robust="huber"),
    # candidates measured against the robust recipe and not taken (docs/RESULTS.md)
    "robust-iterated-lavrentiev": replace(ROBUST_RECIPE, filter="iterated-lavrentiev"),
    "robust-gaussian": replace(ROBUST_RECIPE, kernel="gaussian", gamma=1e4),
}
# panels to check the learners on that they were not tuned on (beside ``PANEL_MODELS``): six
# raters answering in whole steps, wider scale and bias differences, more noise and outliers
CHECK_PANELS: dict[str, dict] = {
    "whole-steps": {
        "n_raters": 6,
        "noise": 0.35,
        "outlier_fraction": 0.10,
        "rater_scale": (0.7, 1.3),
        "rater_bias_sd": 0.3,
        "step": 1.0,
    },
}
PANELS = {**PANEL_MODELS, **CHECK_PANELS, **RATER_EFFECT_PANELS}

# ``headroom``: grid steps (×0.95⁴ each, + = smaller λ) from the chosen λ at which the projected
# grid is evaluated
HEADROOM_STEPS = (-4, -2, -1, 0, 1, 2, 4, 6)


def panel_draws(table, model: str, m: int, reps: int, seed: int):
    """The draws of every section, one per repetition: (rep, the simulated panel of m ratings,
    ``N_TEST`` held-out uniform pairs and their SEG risk), from a generator seeded by
    (seed, m, rep), so that the sections see the same panels."""
    for rep in range(reps):
        rng = np.random.default_rng([seed, m, rep])
        if model in RATER_EFFECT_PANELS:
            frame = simulate_rater_effects_panel(
                m, reference=table, random_state=rng, **RATER_EFFECT_PANELS[model]
            )
        else:
            frame = simulate_panel(m, reference=table, random_state=rng, **PANELS[model])
        X_test, y_test = draw_seg_ratings(table, N_TEST, rng)
        yield rep, frame, X_test, y_test


def noisy(table, sizes, reps, seed, models, oracle: bool, variants: list[str]) -> None:
    for model in models:
        for m in sizes:
            scores: dict[str, list[float]] = {"plain": [], "robust": []}
            if oracle:
                scores["oracle"] = []
            scores.update({name: [] for name in variants})
            seconds = {name: 0.0 for name in scores}
            for _, frame, X_test, y_test in panel_draws(table, model, m, reps, seed):
                X = frame[["reference", "estimate"]].to_numpy()
                y = frame["rating"].to_numpy()
                clean = ~frame["outlier"].to_numpy()
                runs = {
                    "plain": (BEST_RECIPE, X, y, None),
                    "robust": (ROBUST_RECIPE, X, y, frame["rater"].to_numpy()),
                    "oracle": (BEST_RECIPE, X[clean], y[clean], None),
                }
                runs.update(
                    {
                        name: (
                            VARIANTS[name],
                            X,
                            y,
                            frame["rater"].to_numpy() if VARIANTS[name].robust else None,
                        )
                        for name in variants
                    }
                )
                for name in scores:
                    recipe, X_fit, y_fit, raters = runs[name]
                    start = time.perf_counter()
                    fitted, _ = learned_model(recipe, X_fit, y_fit, raters)
                    seconds[name] += time.perf_counter() - start
                    scores[name].append(pairwise_misranking(y_test, fitted.predict(X_test)))
            row = {"section": "noisy", "panel": model, "m": m, "reps": reps, "seed": seed}
            for name, values in scores.items():
                row[f"{name}_misranking_mean"] = float(np.mean(values))
                row[f"{name}_misranking_sd"] = float(np.std(values, ddof=1)) if reps > 1 else 0.0
                row[f"{name}_misranking"] = [float(v) for v in values]
            for name in ("robust", *variants):
                row[f"{name}_minus_plain_paired"] = float(
                    np.mean(np.subtract(scores[name], scores["plain"]))
                )
            row["time_ratio_robust_over_plain"] = seconds["robust"] / seconds["plain"]
            row.update({f"{name}_seconds": value for name, value in seconds.items()})
            print(json.dumps(row), flush=True)


def defaults(table, sizes, reps, seed, models) -> None:
    """The recipe ``riskgrid learn`` picks by default (:func:`default_recipe`) fitted by
    :func:`learn_grid` on each draw's rating set, as the command does after reading its file:
    misranking on the test points, mean and sd over the draws, the recipes picked and λ."""
    for model in models:
        for m in sizes:
            scores, recipes, lams, seconds = [], [], [], 0.0
            for _, frame, X_test, y_test in panel_draws(table, model, m, reps, seed):
                ratings = read_rating_set(frame.drop(columns="outlier"), name="panel")
                recipe, _ = default_recipe(ratings)
                start = time.perf_counter()
                learned = learn_grid(ratings, PRESETS[recipe])
                seconds += time.perf_counter() - start
                scores.append(pairwise_misranking(y_test, learned.risk_model.predict(X_test)))
                recipes.append(recipe)
                lams.append(learned.lam)
            print(
                json.dumps(
                    {
                        "section": "defaults",
                        "panel": model,
                        "m": m,
                        "reps": reps,
                        "seed": seed,
                        "recipes": recipes,
                        "misranking_mean": float(np.mean(scores)),
                        "misranking_sd": float(np.std(scores, ddof=1)) if reps > 1 else 0.0,
                        "misranking": [float(v) for v in scores],
                        "lambda": lams,
                        "seconds": seconds,
                    }
                ),
                flush=True,
            )


def design(table, sizes, reps, seed, methods, start: int, batch: int) -> None:
    """Each method starts from the same ``start`` uniform random pairs and adds batches of
    ``batch`` pairs it proposes (clean SEG ratings), fitting the best recipe after each batch;
    misranking against the SEG at each size in ``sizes``."""
    for method in methods:
        scores: dict[int, list[float]] = {m: [] for m in sizes}
        start_time = time.perf_counter()
        for rep in range(reps):
            rng = np.random.default_rng([seed, rep])
            X_test, y_test = draw_seg_ratings(table, N_TEST, rng)
            X, y = draw_seg_ratings(table, start, rng)
            model, _ = learned_model(BEST_RECIPE, X, y)
            for m in sorted(sizes):
                while len(y) < m:
                    k = min(batch, m - len(y))
                    frame = pd.DataFrame({"reference": X[:, 0], "estimate": X[:, 1], "rating": y})
                    pairs = plan_pairs(
                        frame, k, seed=int(rng.integers(2**31)), method=method, model=model
                    )
                    new = pairs[["reference", "estimate"]].to_numpy(dtype=np.float64)
                    X, y = np.vstack([X, new]), np.r_[y, table.risk(new[:, 0], new[:, 1])]
                    model, _ = learned_model(BEST_RECIPE, X, y)
                scores[m].append(pairwise_misranking(y_test, model.predict(X_test)))
        for m in sorted(sizes):
            print(
                json.dumps(
                    {
                        "section": "design",
                        "method": method,
                        "m": m,
                        "start": start,
                        "batch": batch,
                        "reps": reps,
                        "seed": seed,
                        "misranking_mean": float(np.mean(scores[m])),
                        "misranking_sd": float(np.std(scores[m], ddof=1)) if reps > 1 else 0.0,
                        "misranking": [float(v) for v in scores[m]],
                        "seconds_all_sizes": time.perf_counter() - start_time,
                    }
                ),
                flush=True,
            )


def solver(table, sizes, seed) -> None:
    """The robust fit at one λ (pseudo-ratings re-solved on one eigendecomposition) against the
    same number of direct weighted solves (K + mλW⁻¹ with the intercept row, O(m³) each)."""
    for m in sizes:
        frame = simulate_panel(
            m, reference=table, random_state=seed, **PANEL_MODELS["noise-outliers"]
        )
        X = np.column_stack(
            [frame[["reference", "estimate"]].to_numpy(), pd.factorize(frame["rater"])[0]]
        )
        model = RobustRanker(
            SpectralRanker(kernel="laplacian", gamma=300.0, lam=1e-3), tol=1e-8, max_iter=2000
        )
        start = time.perf_counter()
        model.fit(X, frame["rating"].to_numpy())
        robust_seconds = time.perf_counter() - start
        K = model.kernel_(X[:, :2], X[:, :2])
        system = np.block(
            [
                [K + m * model.lam_ * np.diag(1 / model.weights_), np.ones((m, 1))],
                [np.ones((1, m)), np.zeros((1, 1))],
            ]
        )
        start = time.perf_counter()
        for _ in range(model.n_iter_):
            solution = np.linalg.solve(system, np.r_[model.targets_, 0.0])
        direct_seconds = time.perf_counter() - start
        direct = K @ solution[:m] + solution[m]
        print(
            json.dumps(
                {
                    "section": "solver",
                    "m": m,
                    "iterations": model.n_iter_,
                    "robust_fit_seconds": robust_seconds,
                    "direct_solves_seconds": direct_seconds,
                    "ratio_direct_over_robust": direct_seconds / robust_seconds,
                    "max_abs_difference": float(np.abs(direct - model.predict(X)).max()),
                }
            ),
            flush=True,
        )


def shape(table, sizes, reps, seed, models) -> None:
    """The plain and robust recipes as learned (``monotone=False``), the distance of their grids
    from the monotone shape, and the projection's time and effect on the misranking."""
    recipes = {"plain": BEST_RECIPE, "robust": VARIANTS["robust-as-learned"]}
    for model in models:
        for m in sizes:
            for rep, frame, X_test, y_test in panel_draws(table, model, m, reps, seed):
                X = frame[["reference", "estimate"]].to_numpy()
                y = frame["rating"].to_numpy()
                for name, recipe in recipes.items():
                    raters = frame["rater"].to_numpy() if recipe.robust else None
                    fitted, _ = learned_model(recipe, X, y, raters)
                    violations = monotone_violations(learned_grid(fitted))
                    start = time.perf_counter()
                    projected = MonotoneRisk.fit(fitted)
                    seconds = time.perf_counter() - start
                    print(
                        json.dumps(
                            {
                                "section": "shape",
                                "panel": model,
                                "m": m,
                                "rep": rep,
                                "seed": seed,
                                "learner": name,
                                "falling_step_share": violations["share"],
                                "largest_fall": violations["largest"],
                                "largest_on_diagonal": violations["diagonal"],
                                "projection_s": seconds,
                                "misranking_as_learned": pairwise_misranking(
                                    y_test, fitted.predict(X_test)
                                ),
                                "misranking_projected": pairwise_misranking(
                                    y_test, projected.predict(X_test)
                                ),
                            }
                        ),
                        flush=True,
                    )


def headroom(table, sizes, reps, seed, models) -> None:
    """What the robust recipe's λ choice costs: per draw, its grid's misranking against the
    same fit at the λ that is best in hindsight (an oracle that sees the test points): over its
    whole λ path as learned, and projected (``MonotoneRisk``) at the chosen λ and the
    ``HEADROOM_STEPS`` neighbouring grid values."""
    lams = ROBUST_RECIPE.lams()
    for model in models:
        for m in sizes:
            for rep, frame, X_test, y_test in panel_draws(table, model, m, reps, seed):
                fitted, lam = learned_model(
                    ROBUST_RECIPE,
                    frame[["reference", "estimate"]].to_numpy(),
                    frame["rating"].to_numpy(),
                    frame["rater"].to_numpy(),
                )
                signed = fitted.model.signed_model
                chosen = int(np.argmin(np.abs(lams - lam)))
                path = pairwise_misranking_rows(y_test, np.abs(signed.path(lams).predict(X_test)))
                projected = {}
                for step in HEADROOM_STEPS:
                    if 0 <= chosen + step < len(lams):
                        grid = MonotoneRisk.fit(AbsoluteRisk(signed.resolve(lams[chosen + step])))
                        projected[step] = pairwise_misranking(y_test, grid.predict(X_test))
                best = min(projected, key=projected.get)
                print(
                    json.dumps(
                        {
                            "section": "headroom",
                            "panel": model,
                            "m": m,
                            "rep": rep,
                            "seed": seed,
                            "lam": lam,
                            "recipe_misranking": pairwise_misranking(
                                y_test, fitted.predict(X_test)
                            ),
                            "as_learned_at_chosen_lam": float(path[chosen]),
                            "as_learned_best_on_path": float(np.nanmin(path)),
                            "as_learned_best_steps_from_chosen": int(np.nanargmin(path)) - chosen,
                            "projected_best_near_chosen": projected[best],
                            "projected_best_steps_from_chosen": best,
                        }
                    ),
                    flush=True,
                )


def band(table, sizes, reps, seed, models) -> None:
    """Coverage of the SEG surface by the robust fit's 95 % band, over the whole lattice."""
    for model_name in models:
        for m in sizes:
            coverage, uncertain, width = [], [], []
            for _, frame, _, _ in panel_draws(table, model_name, m, reps, seed):
                fitted, _ = learned_model(
                    ROBUST_RECIPE,
                    frame[["reference", "estimate"]].to_numpy(),
                    frame["rating"].to_numpy(),
                    frame["rater"].to_numpy(),
                )
                result = risk_band(fitted)
                truth = table.absolute
                coverage.append(float(((truth >= result.lower) & (truth <= result.upper)).mean()))
                uncertain.append(result.uncertain_share)
                width.append(float(result.width.mean()))
            print(
                json.dumps(
                    {
                        "section": "band",
                        "panel": model_name,
                        "m": m,
                        "reps": reps,
                        "seed": seed,
                        "coverage": coverage,
                        "uncertain_share": uncertain,
                        "mean_width": width,
                    }
                ),
                flush=True,
            )


def flags(table, sizes, reps, seed, models) -> None:
    """Precision and recall of the outlier flags against the simulated outliers."""
    for model_name in models:
        for m in sizes:
            hits = flagged = outliers = 0
            noise = []
            for _, frame, _, _ in panel_draws(table, model_name, m, reps, seed):
                truth = frame["outlier"].to_numpy()
                fit = learn_panel(read_rating_set(frame.drop(columns="outlier"), name="panel"))
                flag = fit.ratings["flagged"].to_numpy()
                hits += int((flag & truth).sum())
                flagged += int(flag.sum())
                outliers += int(truth.sum())
                noise.append(fit.robust.noise_sd_)
            print(
                json.dumps(
                    {
                        "section": "flags",
                        "panel": model_name,
                        "m": m,
                        "reps": reps,
                        "seed": seed,
                        "flagged": flagged,
                        "outliers": outliers,
                        "precision": hits / flagged if flagged else None,
                        "recall": hits / outliers if outliers else None,
                        "noise_sd": noise,
                    }
                ),
                flush=True,
            )


GAP_BINS = (0.0, 0.1, 0.25, 0.5, 1.0, 4.0)  # |Δ SEG risk| of a test pair, for ``errors``


def errors(table, sizes, reps, seed, models) -> None:
    """The robust fit's misranked test pairs by the SEG risk gap of the pair, and its RMSE."""
    for model_name in models:
        for m in sizes:
            counts, rmse = np.zeros(len(GAP_BINS) - 1), []
            for _, frame, X_test, y_test in panel_draws(table, model_name, m, reps, seed):
                fitted, _ = learned_model(
                    ROBUST_RECIPE,
                    frame[["reference", "estimate"]].to_numpy(),
                    frame["rating"].to_numpy(),
                    frame["rater"].to_numpy(),
                )
                predicted = fitted.predict(X_test)
                upper, lower = np.nonzero(y_test[:, None] > y_test[None, :])
                wrong = predicted[upper] <= predicted[lower]  # eq. (1)'s misranked pairs
                gap = y_test[upper] - y_test[lower]
                counts += np.histogram(gap[wrong], bins=GAP_BINS)[0]
                rmse.append(float(np.sqrt(np.mean((predicted - y_test) ** 2))))
            print(
                json.dumps(
                    {
                        "section": "errors",
                        "panel": model_name,
                        "m": m,
                        "reps": reps,
                        "seed": seed,
                        "gap_bins": GAP_BINS,
                        "share_of_misranked_pairs": (counts / counts.sum()).tolist(),
                        "rmse": rmse,
                    }
                ),
                flush=True,
            )


def folds(table, sizes, reps, seed, models) -> None:
    """Robust learning of large panels (``learn_grid(ratings, robust_settings())``, as
    ``riskgrid learn --robust huber``) validated on every fold (``method="exact"``) against the
    first fold only (``"one-fold"``, the rule from ``EXACT_UP_TO`` to ``ONE_FOLD_UP_TO``
    ratings): time, λ and the misranking of the 601 × 601 grid against the SEG
    (``compare_grids``), per draw."""
    for model_name in models:
        for m in sizes:
            for rep, frame, _, _ in panel_draws(table, model_name, m, reps, seed):
                ratings = read_rating_set(frame.drop(columns="outlier"))
                row = {"section": "folds", "panel": model_name, "m": m, "seed": seed, "rep": rep}
                for name, method in (("all_folds", "exact"), ("first_fold", "one-fold")):
                    start = time.perf_counter()
                    learned = learn_grid(ratings, replace(robust_settings(), method=method))
                    row[f"{name}_seconds"] = time.perf_counter() - start
                    row[f"{name}_lambda"] = learned.lam
                    row[f"{name}_misranking"] = compare_grids(table, learned.grid).misranking
                print(json.dumps(row), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", default="noisy")
    parser.add_argument("--m", default="100,400,1000", help="sizes for 'noisy'")
    parser.add_argument(
        "--panels", default=",".join(PANEL_MODELS), help=f"panel models: {', '.join(PANELS)}"
    )
    parser.add_argument("--reps", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--oracle", action="store_true")
    parser.add_argument("--variants", default="", help=f"further learners: {', '.join(VARIANTS)}")
    parser.add_argument("--design-m", default="50,100,200", help="sizes for 'design'")
    parser.add_argument("--methods", default=",".join(PLAN_METHODS))
    parser.add_argument("--start", type=int, default=20)
    parser.add_argument("--batch", type=int, default=20)
    args = parser.parse_args()
    table = find_seg_table()
    sections = args.sections.split(",")
    sizes, models = [int(v) for v in args.m.split(",")], args.panels.split(",")
    if "noisy" in sections:
        noisy(
            table,
            sizes,
            args.reps,
            args.seed,
            models,
            args.oracle,
            [v for v in args.variants.split(",") if v],
        )
    for name, section in (
        ("defaults", defaults),
        ("shape", shape),
        ("headroom", headroom),
        ("band", band),
        ("flags", flags),
        ("errors", errors),
        ("folds", folds),
    ):  # over panel models and sizes
        if name in sections:
            section(table, sizes, args.reps, args.seed, models)
    if "solver" in sections:
        solver(table, sizes, args.seed)
    if "design" in sections:
        design(
            table,
            [int(v) for v in args.design_m.split(",")],
            args.reps,
            args.seed,
            args.methods.split(","),
            args.start,
            args.batch,
        )


if __name__ == "__main__":
    main()
