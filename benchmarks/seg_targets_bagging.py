"""SEG reconstruction with a target transform or bagging on top of a recipe. Prints JSON.

Two ideas that change the fitting, not the recipe (docs/RESULTS.md), on the Table 3 draws of
``run_seg_table3`` (same seed → same training and test points as ``benchmarks/seg_recipes.py``):

* ``power P``: learn sign(REF − est)·y^P and predict |f| (misranking is invariant to monotone
  transforms of the prediction, not of the targets);
* ``bag-folds``: λ chosen by the recipe's k-fold misranking, then the signed predictions of the k
  fold models at that λ are averaged (``bag-folds-all``: and of the model refitted on all m).

    SEG_TABLE=... python benchmarks/seg_targets_bagging.py --base laplacian --reps 5 --seed 1
"""

from __future__ import annotations

import argparse
import dataclasses
import json

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import KFold

from ranking_core.experiments.seg import draw_seg_ratings
from ranking_core.grids.seg import find_seg_table
from ranking_core.grids.signed import side_of_diagonal
from ranking_core.learn import PRESETS, with_diagonal_anchors
from ranking_core.metrics import pairwise_misranking
from ranking_core.selection import choose

BASES = {
    "laplacian": PRESETS["best"],
    "gaussian": dataclasses.replace(PRESETS["best"], kernel="gaussian", gamma=1.6e4),
}
VARIANTS = ("plain", "power0.5", "power0.75", "power1.5", "power2", "bag-folds", "bag-folds-all")


def signed_prediction(variant: str, recipe, X, y, X_test) -> np.ndarray:
    """|f(X_test)| for one variant; the recipe must be signed with k-fold selection."""
    X, y = with_diagonal_anchors(recipe.anchors, X, y)
    power = float(variant[5:]) if variant.startswith("power") else 1.0
    targets = side_of_diagonal(X) * y**power
    ranker = recipe.ranker()
    choice = choose(
        ranker,
        X,
        targets,
        rule="kfold",
        grid=recipe.lams(),
        n_splits=recipe.n_splits,
        random_state=0,
        criterion=recipe.criterion,
    )
    if not variant.startswith("bag"):
        return np.abs(choice.model.predict(X_test))
    folds = KFold(n_splits=recipe.n_splits, shuffle=True, random_state=0).split(X)
    signed = [
        clone(ranker).set_params(lam=choice.value).fit(X[train], targets[train]).predict(X_test)
        for train, _ in folds
    ]
    if variant == "bag-folds-all":
        signed.append(choice.model.predict(X_test))
    return np.abs(np.mean(signed, axis=0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", choices=sorted(BASES), default="laplacian")
    parser.add_argument("--variants", default=",".join(VARIANTS), help=", ".join(VARIANTS))
    parser.add_argument("--m", type=int, default=400)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    table = find_seg_table()
    for variant in args.variants.split(","):
        if variant not in VARIANTS:
            parser.error(f"unknown variant {variant!r}; choose from {', '.join(VARIANTS)}")
        rng = np.random.default_rng(args.seed)  # the draws of run_seg_table3 with this seed
        scores = []
        for _ in range(args.reps):
            X, y = draw_seg_ratings(table, args.m, rng)
            X_test, y_test = draw_seg_ratings(table, 1000, rng)
            predicted = signed_prediction(variant, BASES[args.base], X, y, X_test)
            scores.append(pairwise_misranking(y_test, predicted))
        print(
            json.dumps(
                {
                    "base": args.base,
                    "variant": variant,
                    "m": args.m,
                    "reps": args.reps,
                    "seed": args.seed,
                    "misranking_mean": float(np.mean(scores)),
                    "misranking_sd": float(np.std(scores, ddof=1)),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
