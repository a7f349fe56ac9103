"""What one move of the Learn page's λ slider costs, against refitting (JSON on stdout).

The page keeps the fitted ranker (its eigendecomposition) in a shared cache; a slider move calls
``resolve(λ)`` (O(m·r)), evaluates the 601 × 601 grid by the Gaussian factorisation and compares
it with the reference. Refitting would add the O(m³) decomposition every time. Learner: the
best SEG recipe's kernel and filter (on the ratings as given).

    python benchmarks/dashboard_slider.py [--m 1000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import time

from sklearn.base import clone

from ranking_core.grids.compare import compare_grids
from ranking_core.grids.learned import learned_grid
from ranking_core.learn import PRESETS
from ranking_core.panels import parkes_surface, simulate_panel
from ranking_core.selection import paper_lambda_grid


def best_of(repeats: int, work) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    panel = simulate_panel(args.m, random_state=0)
    X, y = panel[["reference", "estimate"]].to_numpy(), panel["rating"].to_numpy()
    ranker = PRESETS["best"].ranker().set_params(solver="dense")
    reference = parkes_surface()
    lams = paper_lambda_grid()[[40, 80, 120]]
    fitted = clone(ranker).fit(X, y)

    def slider_move() -> None:
        for lam in lams:
            compare_grids(reference, learned_grid(fitted.resolve(lam)))

    def refit_move() -> None:
        for lam in lams:
            model = clone(ranker).set_params(lam=lam).fit(X, y)
            compare_grids(reference, learned_grid(model))

    slider = best_of(args.repeats, slider_move) / len(lams)
    refit = best_of(args.repeats, refit_move) / len(lams)
    resolve_only = best_of(args.repeats, lambda: [fitted.resolve(lam) for lam in lams]) / len(lams)
    print(
        json.dumps(
            {
                "m": args.m,
                "repeats": args.repeats,
                "slider_move_seconds": round(slider, 4),
                "resolve_seconds": round(resolve_only, 5),
                "refit_move_seconds": round(refit, 4),
                "refit_over_slider": round(refit / slider, 2),
                "note": "slider = resolve(λ) + 601×601 grid + comparison; best of repeats, per λ",
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
