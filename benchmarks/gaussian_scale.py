"""Gaussian-kernel ranking at large m: accuracy lost against the exact solver and time saved.

SEG-like reconstruction (Kriukova et al. 2014, §4.3): inputs drawn uniformly on [0, 600]² mg/dL,
each labelled with the SEG risk at the rounded (REF, BGM); with ``SEG_TABLE`` unset, a smooth
synthetic risk surface stands in (and the JSON says so). Gaussian kernel γ = 10⁴ (Kriukova et al.
2014, §4.3), Lavrentiev filter. λ is chosen once, by pairwise misranking on a validation set, from
the exact solver's path at m = ``--choose-at``; every method and every m then uses that λ.
Misranking (Kriukova et al. 2014, eq. 1, %) is measured against the true risk on a separate test
set of uniform inputs.

Methods: ``exact`` (SpectralRanker, dense eigh, O(m³), up to ``--exact-max``), ``low-rank``
(SpectralRanker solver="low-rank": pivoted Cholesky + thin SVD), ``nystrom-greedy-R`` and
``nystrom-uniform-R`` (NystromRanker), ``cg`` (exact Lavrentiev system by matrix-free conjugate
gradients with a rank-``--cg-rank`` Nyström preconditioner, up to ``--cg-max``).

Run from the repository root: ``PYTHONPATH=. python benchmarks/gaussian_scale.py``
(about 10 minutes on 2 busy cores).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import numpy as np
import pandas as pd

from ranking_core import GaussianKernel, NystromRanker, SpectralRanker
from ranking_core.learners.conjugate_gradient import lavrentiev_cg
from ranking_core.metrics import pairwise_misranking

GAMMA = 1e4


def risk_lookup() -> tuple[np.ndarray, str]:
    """(601, 601) risk by [REF, BGM] in mg/dL, and the source name."""
    path = os.environ.get("SEG_TABLE")
    if path and os.path.exists(path):
        table = pd.read_csv(path, usecols=["REF", "BGM", "abs_risk"])
        grid = np.full((601, 601), np.nan)
        grid[table["REF"].to_numpy(), table["BGM"].to_numpy()] = table["abs_risk"].to_numpy()
        if np.isnan(grid).any():
            raise ValueError(f"{path}: the SEG table does not cover every (REF, BGM) in 0..600")
        return grid, "SEG table"
    ref, bgm = np.meshgrid(np.arange(601.0), np.arange(601.0), indexing="ij")
    # a smooth stand-in: risk grows with the relative error |BGM − REF| / (REF + 40)
    return np.clip(3.0 * np.tanh(np.abs(bgm - ref) / (ref + 40.0)), 0, 4), "synthetic surface"


def draw(rng: np.random.Generator, grid: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    X = rng.uniform(0.0, 600.0, size=(m, 2))
    index = np.rint(X).astype(int)
    return X, grid[index[:, 0], index[:, 1]]


def timed(fit):
    start = time.perf_counter()
    model = fit()
    return model, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 4000, 8000, 20000])
    parser.add_argument("--centers", type=int, nargs="+", default=[200, 400])
    parser.add_argument("--exact-max", type=int, default=4000)
    parser.add_argument("--cg-max", type=int, default=20000)
    parser.add_argument("--cg-rank", type=int, default=400)
    parser.add_argument("--choose-at", type=int, default=4000)
    parser.add_argument("--n-test", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    grid, source = risk_lookup()
    rng = np.random.default_rng(args.seed)
    X_test, y_test = draw(rng, grid, args.n_test)
    X_val, y_val = draw(rng, grid, args.n_test)
    X_all, y_all = draw(rng, grid, max([*args.sizes, args.choose_at]))

    lams = 10.0 ** np.linspace(-1, -8, 36)
    chooser, chooser_seconds = timed(
        lambda: SpectralRanker(gamma=GAMMA, solver="dense").fit(
            X_all[: args.choose_at], y_all[: args.choose_at]
        )
    )
    curve = [pairwise_misranking(y_val, p) for p in chooser.path(lams).predict(X_val)]
    lam = float(lams[int(np.argmin(curve))])
    chosen = (chooser.resolve(lam), chooser_seconds)  # the exact fit at m = choose_at

    results = []
    for m in args.sizes:
        X, y = X_all[:m], y_all[:m]
        fits = {}
        if m <= args.exact_max:
            fits["exact"] = lambda X=X, y=y: SpectralRanker(
                gamma=GAMMA, lam=lam, solver="dense"
            ).fit(X, y)
        fits["low-rank"] = lambda X=X, y=y: SpectralRanker(
            gamma=GAMMA, lam=lam, solver="low-rank"
        ).fit(X, y)
        for r in args.centers:
            for rule in ("greedy", "uniform"):
                fits[f"nystrom-{rule}-{r}"] = lambda X=X, y=y, r=r, rule=rule: NystromRanker(
                    gamma=GAMMA, lam=lam, n_centers=r, centers=rule
                ).fit(X, y)
        row = {"m": m, "methods": {}}
        predicted = {}
        for name, fit in fits.items():
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                if name == "exact" and m == args.choose_at:
                    model, seconds = chosen
                else:
                    model, seconds = timed(fit)
            predictions = predicted[name] = model.predict(X_test)
            entry = {
                "fit_seconds": round(seconds, 3),
                "misranking_percent": round(100 * pairwise_misranking(y_test, predictions), 3),
                "rank": int(model.spectrum_.rank),
                "method": model.spectrum_.method,
            }
            if caught:
                entry["warnings"] = [str(w.message) for w in caught]
            row["methods"][name] = entry
        if m <= args.cg_max:
            start = time.perf_counter()
            solution = lavrentiev_cg(
                GaussianKernel(GAMMA), X, y, lam, tol=1e-6, preconditioner_rank=args.cg_rank
            )
            seconds = time.perf_counter() - start
            predictions = predicted["cg"] = (
                GaussianKernel(GAMMA)(X_test, X) @ solution.coef + solution.intercept
            )
            row["methods"]["cg"] = {
                "fit_seconds": round(seconds, 3),
                "misranking_percent": round(100 * pairwise_misranking(y_test, predictions), 3),
                "iterations": solution.iterations,
                "converged": solution.converged,
            }
        reference = "exact" if "exact" in predicted else "cg" if "cg" in predicted else None
        if reference is not None:
            row["reference"] = reference
            for name, entry in row["methods"].items():
                gap = np.abs(predicted[name] - predicted[reference]).max()
                entry["max_abs_difference_to_reference"] = float(f"{gap:.3g}")
        results.append(row)

    exact_at = {
        r["m"]: r["methods"]["exact"]["misranking_percent"]
        for r in results
        if "exact" in r["methods"]
    }
    summary = {
        "source": source,
        "gamma": GAMMA,
        "lam": lam,
        "lam_chosen_at_m": args.choose_at,
        "n_test": args.n_test,
        "results": results,
        "exact_misranking_percent": exact_at,
    }
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
