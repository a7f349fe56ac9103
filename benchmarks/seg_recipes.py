"""SEG-reconstruction variants of the presets (docs/RESULTS.md). Prints JSON.

Each variant is the Table 3 protocol (``run_seg_table3``: m ratings uniform on [0, 600]², SEG
abs_risk labels, misranking on 1,000 new points) with one :class:`~ranking_core.learn.
LearnSettings`, a preset of :data:`ranking_core.learn.PRESETS` with some fields changed; every fit
goes through :func:`~ranking_core.learn.learn_grid`. The same seed gives every variant the same
training and test draws, so differences between variants are paired.

    SEG_TABLE=... PYTHONPATH=. python benchmarks/seg_recipes.py --variants paper,best --reps 8

(Earlier rounds also tried γ chosen among several widths, anisotropic and rotated kernels and
sums of kernels; those experiments and their figures are in the history of this file and of
docs/RESULTS.md.)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

import numpy as np

from ranking_core.experiments.seg import run_seg_table3
from ranking_core.grids.seg import find_seg_table
from ranking_core.learn import PRESETS, LearnSettings

PAPER, BEST = PRESETS["paper"], PRESETS["best"]


def variant(base: LearnSettings, **changes) -> LearnSettings:
    return dataclasses.replace(base, **changes)


VARIANTS: dict[str, LearnSettings] = {
    **PRESETS,
    "paper-lams400": variant(PAPER, n_lams=400),
    "paper-kfold": variant(PAPER, rule="kfold"),
    "paper-log50": variant(PAPER, scale="log", n_lams=400),
    "paper-iterated2": variant(PAPER, filter="iterated-lavrentiev", order=2, n_lams=400),
    "paper-signed": variant(PAPER, signed=True),
    **{f"best-gamma-{g:g}": variant(BEST, gamma=g) for g in (250.0, 700.0, 1500.0, 4000.0)},
    "best-no-anchors": variant(BEST, anchors=0),
    "best-41-anchors": variant(BEST, anchors=41),
    "best-unsigned": variant(BEST, signed=False),
    "best-linear": variant(BEST, scale="linear"),
    "best-10fold": variant(BEST, n_splits=10),
    "best-log20": variant(BEST, log_offset=20.0),
    "best-log100": variant(BEST, log_offset=100.0),
    "best-misranking": variant(BEST, criterion="misranking"),
    "best-monotone": variant(BEST, monotone=True),
    **{f"gaussian-{g:g}": variant(BEST, kernel="gaussian", gamma=g) for g in (1e4, 2e4, 4e4, 1e5)},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="paper,best", help=f"of {', '.join(VARIANTS)}")
    parser.add_argument("--m", type=int, default=400)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    table = find_seg_table()
    names = args.variants.split(",")
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    for name in names:
        start = time.perf_counter()
        result = run_seg_table3(table, (args.m,), args.reps, VARIANTS[name], seed=args.seed)
        entry = result["sizes"][str(args.m)]
        print(
            json.dumps(
                {
                    "variant": name,
                    "m": args.m,
                    "reps": args.reps,
                    "seed": args.seed,
                    "misranking_mean": entry["misranking_mean"],
                    "misranking_sd": entry["misranking_sd"],
                    "misranking": entry["misranking"],
                    "share_below_0.5": entry["delta_bins"]["0–0.5"],
                    "lambda_median": float(np.median(entry["lambda"])),
                    "seconds": time.perf_counter() - start,
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
