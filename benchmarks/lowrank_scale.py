"""The low-rank engine through ``riskgrid learn`` and against the dense path. Prints JSON.

``learn``: ``python -m ranking_core.cli learn`` on m clean SEG ratings (pairs uniform on
0..600 mg/dL rated with the SEG risk at the rounded pair, :func:`learn.clean`) in a child
process, for the defaults (Laplacian kernel: the glucose lattice) and ``--kernel gaussian``
(the low-rank engine): seconds, peak RSS (``ru_maxrss`` of the child) and misranking of the
written grid against the SEG's absolute risk over all pairs of the 601 × 601 lattice
(``compare_grids(seg.absolute, grid).misranking``), each time as a ratio to one dense
``scipy.linalg.eigh`` of a 4,000 × 4,000 symmetric matrix timed in the same run (before and
after, averaged).

``accuracy``: at m where the dense path is feasible, ``learn_grid`` with the Gaussian kernel by
``method="low-rank"`` and by ``method="exact"`` (dense eigendecompositions, every fold): the λ
each chose, and the largest difference of the low-rank grid from the dense grid re-solved at the
low-rank λ, relative to the largest grid value (the lattice 0..600 mg/dL).

Run from the repository root with ``SEG_TABLE`` set:
``PYTHONPATH=. python benchmarks/lowrank_scale.py learn --sizes 20000 100000``,
``PYTHONPATH=. python benchmarks/lowrank_scale.py accuracy --sizes 2000``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from learn import clean, eigh_seconds, run_learn

from ranking_core.grids.compare import compare_grids
from ranking_core.grids.seg import find_seg_table
from ranking_core.learn import LearnSettings, learn_grid

ENGINES = {"defaults": [], "gaussian": ["--kernel", "gaussian"]}


def learn_runs(sizes: list[int], seed: int) -> list[dict]:
    seg = find_seg_table()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for m in sizes:
            frame = clean(seg, m, np.random.default_rng([seed, m, 0]))
            for name, options in ENGINES.items():
                runs.append({"m": m, "engine": name, **run_learn(frame, seg, Path(tmp), options)})
                print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
    return runs


def accuracy_runs(sizes: list[int], seed: int) -> list[dict]:
    seg = find_seg_table()
    runs = []
    for m in sizes:
        frame = clean(seg, m, np.random.default_rng([seed, m, 0]))
        ratings = (frame[["reference", "estimate"]].to_numpy(), frame["rating"].to_numpy())
        entry: dict = {"m": m}
        results = {}
        for method in ("low-rank", "exact"):
            start = time.perf_counter()
            results[method] = learn_grid(ratings, LearnSettings(kernel="gaussian", method=method))
            entry[f"{method}_seconds"] = round(time.perf_counter() - start, 2)
            entry[f"{method}_lambda"] = results[method].lam
            entry[f"{method}_misranking_pct"] = round(
                100 * compare_grids(seg.absolute, results[method].grid).misranking, 3
            )
        low = results["low-rank"]
        at_same = results["exact"].at(low.lam)  # the dense fit re-solved (refined) there
        entry["low_rank"] = low.low_rank
        entry["grid_relative_difference_at_low_rank_lambda"] = float(
            np.abs(low.grid - at_same.grid).max() / np.abs(at_same.grid).max()
        )
        runs.append(entry)
        print(json.dumps(entry), file=sys.stderr, flush=True)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("kind", choices=("learn", "accuracy"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[20000])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    before = eigh_seconds()
    runs = (learn_runs if args.kind == "learn" else accuracy_runs)(args.sizes, args.seed)
    after = eigh_seconds()
    reference = (before + after) / 2
    for run in runs:
        for key in [k for k in run if k.endswith("seconds")]:
            ratio_key = "ratio_to_eigh4000" if key == "seconds" else key + "_to_eigh4000"
            run[ratio_key] = round(run[key] / reference, 2)
    print(
        json.dumps(
            {
                "benchmark": f"lowrank_scale {args.kind}",
                "eigh4000_seconds": [round(before, 2), round(after, 2)],
                "runs": runs,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
