"""The best SEG recipe at large m: time, peak memory and misranking, against one dense eigh(4000).

For each m, a fresh subprocess draws m ratings (inputs uniform on [0, 600]² mg/dL, the SEG risk
at the rounded point; Kriukova et al. 2014 §4.3), runs the whole best recipe (``BEST_RECIPE``:
choice of λ by 5-fold validation misranking, refit, the 601 × 601 learned grid) with the fast
k-fold path (``solver="auto"``: ``ranking_core.learners.direct``), and reports its wall time, its
peak resident memory (``ru_maxrss``, the whole process) and the misranking (eq. (1), %) against
the SEG on held-out uniform inputs. With ``--exact-max``, the exact path (``solver="spectral"``,
k + 1 dense eigendecompositions) is run too for m up to that size, with its time and the largest
relative difference of the two paths' predictions.

The reference is ``scipy.linalg.eigh`` of a 4,000 × 4,000 symmetric matrix, timed in this process
before and after the sizes (the machine is shared: compare ratios, not seconds). Prints JSON;
``--plot DIR`` also writes ``scale_time.png`` and ``scale_misranking.png`` (plotly + kaleido).

Run from the repository root (needs ``SEG_TABLE``):
``PYTHONPATH=. python benchmarks/scale.py --sizes 1000 2000 4000 8000 20000 --exact-max 2000``
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.linalg

from ranking_core.experiments.seg import draw_seg_ratings
from ranking_core.grids.learned import learned_grid
from ranking_core.grids.seg import find_seg_table
from ranking_core.metrics import pairwise_misranking
from ranking_core.recipes import BEST_RECIPE, fit_recipe


def eigh_seconds(size: int = 4000, seed: int = 0) -> float:
    A = np.random.default_rng(seed).standard_normal((size, size))
    A += A.T
    start = time.perf_counter()
    scipy.linalg.eigh(A, driver="evd", overwrite_a=True)
    return time.perf_counter() - start


def run_recipe(recipe, X, y, X_test, y_test) -> tuple[dict, np.ndarray]:
    start = time.perf_counter()
    model, lam, _ = fit_recipe(recipe, X, y)
    chosen = time.perf_counter()
    learned_grid(model)
    done = time.perf_counter()
    predicted = model.predict(X_test)
    inner = model.signed_model
    entry = {
        "seconds": round(done - start, 3),
        "choice_and_refit_seconds": round(chosen - start, 3),
        "grid_seconds": round(done - chosen, 3),
        "lambda": lam,
        "misranking_percent": round(100 * pairwise_misranking(y_test, predicted), 4),
        "solver": getattr(inner, "solver_", "spectral"),
    }
    if hasattr(inner, "relative_residual_"):
        entry["relative_residual"] = float(f"{inner.relative_residual_:.3g}")
        entry["lattice_step_mgdl"] = inner.lattice_step_
    return entry, predicted


def one_size(m: int, n_test: int, seed: int, exact: bool) -> dict:
    table = find_seg_table()
    X_test, y_test = draw_seg_ratings(table, n_test, np.random.default_rng(seed))
    X, y = draw_seg_ratings(table, m, np.random.default_rng(seed + m))
    fast, predicted = run_recipe(BEST_RECIPE, X, y, X_test, y_test)
    row = {"m": m, "fast": fast}
    if exact:
        spectral = dataclasses.replace(BEST_RECIPE, solver="spectral")
        row["exact"], reference = run_recipe(spectral, X, y, X_test, y_test)
        gap = np.abs(predicted - reference).max() / np.abs(reference).max()
        row["max_relative_difference"] = float(f"{gap:.3g}")
    row["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return row


def plot(summary: dict, directory: Path) -> None:
    import plotly.graph_objects as go

    from ranking_core.meter.export import figure_png

    rows = summary["results"]
    sizes = [r["m"] for r in rows]
    directory.mkdir(parents=True, exist_ok=True)
    exact = [r for r in rows if "exact" in r]

    def paths_figure(key: str, label: str) -> go.Figure:
        """``key`` of the fast path over m and, where measured, of the exact path."""
        fig = go.Figure()
        fig.add_scatter(x=sizes, y=[r["fast"][key] for r in rows],
                        name=f"{label}fast path", mode="lines+markers")
        if exact:
            fig.add_scatter(x=[r["m"] for r in exact], y=[r["exact"][key] for r in exact],
                            name=f"{label}exact path", mode="lines+markers")
        return fig

    time_fig = paths_figure("ratio_to_eigh_4000", "best recipe, ")
    time_fig.update_layout(title="Time / one dense eigh(4000) in the same run",
                           xaxis={"title": "m (ratings)", "type": "log"},
                           yaxis={"title": "ratio", "type": "log"}, width=640, height=400)
    mis_fig = paths_figure("misranking_percent", "")
    mis_fig.update_layout(title="Misranking against the SEG on held-out inputs",
                          xaxis={"title": "m (ratings)", "type": "log"},
                          yaxis={"title": "misranking (%)"}, width=640, height=400)
    (directory / "scale_time.png").write_bytes(figure_png(time_fig, scale=1.0))
    (directory / "scale_misranking.png").write_bytes(figure_png(mis_fig, scale=1.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000, 8000, 20000])
    parser.add_argument("--exact-max", type=int, default=0,
                        help="also run the exact path up to this m")
    parser.add_argument("--n-test", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child process: one size
    parser.add_argument("--plot", type=Path, help="directory for the PNG plots")
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one_size(args.one, args.n_test, args.seed, args.one <= args.exact_max)))
        return
    before = eigh_seconds()
    results = []
    for m in args.sizes:
        child = subprocess.run(
            [sys.executable, __file__, "--one", str(m), "--exact-max", str(args.exact_max),
             "--n-test", str(args.n_test), "--seed", str(args.seed)],
            check=True, capture_output=True, text=True)
        results.append(json.loads(child.stdout.strip().splitlines()[-1]))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    after = eigh_seconds()
    reference = (before + after) / 2
    for row in results:
        row["fast"]["ratio_to_eigh_4000"] = round(row["fast"]["seconds"] / reference, 3)
        if "exact" in row:
            row["exact"]["ratio_to_eigh_4000"] = round(row["exact"]["seconds"] / reference, 3)
    summary = {
        "recipe": BEST_RECIPE.describe(),
        "eigh_4000_seconds": round(reference, 3),
        "eigh_4000_seconds_before_after": [round(before, 3), round(after, 3)],
        "n_test": args.n_test,
        "seed": args.seed,
        "results": results,
    }
    print(json.dumps(summary, indent=2))
    if args.plot is not None:
        plot(summary, args.plot)


if __name__ == "__main__":
    main()
