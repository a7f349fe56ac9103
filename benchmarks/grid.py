"""Benchmark: the learned 601 × 601 grid by Gaussian / Laplacian factorisation vs direct kernel
evaluation, and the wall time per repetition of the SEG reconstruction (Kriukova et al. 2014, §4.3).
Prints JSON.

    python benchmarks/grid.py [--reps 3]

The SEG table comes from $SEG_TABLE; without it the grid part runs on a synthetic surface and the
reproduction part is reported as skipped.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from ranking_core import SpectralRanker
from ranking_core.experiments.seg import run_seg_table3
from ranking_core.grids.learned import GLUCOSE_AXIS, lattice_points, learned_grid
from ranking_core.grids.seg import SEGTableMissing, find_seg_table
from ranking_core.kernels import LaplacianKernel
from ranking_core.learn import PRESETS


def best_of(function, repeats: int) -> tuple[float, object]:
    times, value = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - start)
    return min(times), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=3, help="SEG repetitions per recipe")
    parser.add_argument("--m", type=int, default=400)
    args = parser.parse_args()
    try:
        table = find_seg_table()
    except SEGTableMissing:
        table = None
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 600, size=(args.m, 2))
    y = table.risk(X[:, 0], X[:, 1]) if table is not None else np.abs(X[:, 0] - X[:, 1]) / 150
    points = lattice_points(GLUCOSE_AXIS)
    result: dict = {}
    for label, kernel in (
        ("grid", "gaussian gamma=1e4"),
        ("grid_laplacian", "laplacian gamma=1e3"),
    ):
        model = (
            SpectralRanker(gamma=1e4, lam=1e-4)
            if label == "grid"
            else SpectralRanker(kernel=LaplacianKernel(1e3), lam=1e-4)
        ).fit(X, y)
        t_fact, fast = best_of(lambda model=model: learned_grid(model), 3)
        t_direct, direct = best_of(lambda model=model: model.predict(points).reshape(601, 601), 3)
        result[label] = {
            "m": args.m,
            "lattice": [601, 601],
            "kernel": kernel,
            "factorised_seconds": t_fact,
            "direct_seconds": t_direct,
            "speedup": t_direct / t_fact,
            "max_abs_difference": float(np.max(np.abs(fast - direct))),
            "targets": "SEG abs_risk" if table is not None else "synthetic |REF-BGM|/150",
        }
    if table is None:
        result["seg_reproduction"] = "skipped: SEG_TABLE is not set"
    else:
        result["seg_reproduction"] = {}
        for name, recipe in PRESETS.items():
            start = time.perf_counter()
            run_seg_table3(table, (args.m,), args.reps, recipe, seed=0)
            result["seg_reproduction"][name] = {
                "m": args.m,
                "repeats": args.reps,
                "seconds_per_repetition": (time.perf_counter() - start) / args.reps,
            }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
