"""Benchmark: the whole 200-λ path from one decomposition vs 200 separate solves vs KernelRidge.

For each m, on glucose-like data (uniform on [0, 600]², Gaussian γ = 10⁴), times in one run:

* ``path``: ``SpectralRanker.fit`` (one decomposition, solver chosen by ``"auto"``) + coefficients
  for all 200 λ + predictions on m/2 validation points for every λ;
* ``separate``: for each λ a dense Cholesky solve of (K̃ + λI)c = Cy/m + the same predictions
  (the Gram matrix is formed once, which favours this baseline);
* ``kernel_ridge``: ``sklearn.kernel_ridge.KernelRidge(kernel="rbf")`` refitted for each λ.

Both sides use medians, so that a burst of load from other processes on the shared cores does not
decide the ratio. The path time is the median of ``--repeats`` runs. Each baseline is timed per λ,
and its median per-λ time is multiplied by 200. Baselines at m ≥ 2000 are timed on ``--sample``
λ values only, which the output marks. Prints JSON; compare ratios, which are measured in the same
run.

    python benchmarks/path.py [--sizes 200 400 1000 2000 4000] [--sample 20]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import scipy.linalg
from sklearn.kernel_ridge import KernelRidge

from ranking_core import SpectralRanker
from ranking_core.kernels import GaussianKernel
from ranking_core.selection import paper_lambda_grid

GAMMA = 1e4


def data(m: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 600, size=(m, 2))
    y = np.clip(np.abs(X[:, 0] - X[:, 1]) / 120 + rng.normal(scale=0.2, size=m), 0, 4)
    return X, y, rng.uniform(0, 600, size=(m // 2, 2))


def time_path(
    X: np.ndarray, y: np.ndarray, Xv: np.ndarray, lams: np.ndarray, repeats: int
) -> tuple[float, dict]:
    """Median over ``repeats`` of fit + 200-λ coefficients + validation predictions."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        model = SpectralRanker(gamma=GAMMA).fit(X, y)
        model.path(lams).predict(Xv)
        times.append(time.perf_counter() - start)
    return float(np.median(times)), {"solver": model.spectrum_.method, "rank": model.spectrum_.rank}


def time_separate(X: np.ndarray, y: np.ndarray, Xv: np.ndarray, lams: np.ndarray) -> float:
    """Gram set-up once, then the median time of one dense solve + predictions, per λ."""
    m = len(y)
    kernel = GaussianKernel(GAMMA)
    start = time.perf_counter()
    K = kernel(X, X)
    Kt = K - K.mean(axis=0) - K.mean(axis=1, keepdims=True) + K.mean()
    Kt /= m
    b = (y - y.mean()) / m
    Kv = kernel(Xv, X)
    setup = time.perf_counter() - start
    per_lambda = []
    for lam in lams:
        start = time.perf_counter()
        c = scipy.linalg.solve(Kt + lam * np.eye(m), b, assume_a="pos")
        Kv @ c
        per_lambda.append(time.perf_counter() - start)
    return setup, float(np.median(per_lambda))


def time_kernel_ridge(X: np.ndarray, y: np.ndarray, Xv: np.ndarray, lams: np.ndarray) -> float:
    """Median time of one KernelRidge fit + predict, per λ."""
    m = len(y)
    per_lambda = []
    for lam in lams:
        start = time.perf_counter()
        KernelRidge(alpha=m * lam, kernel="rbf", gamma=1.0 / GAMMA).fit(X, y).predict(Xv)
        per_lambda.append(time.perf_counter() - start)
    return float(np.median(per_lambda))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 400, 1000, 2000, 4000])
    parser.add_argument(
        "--sample", type=int, default=20, help="λ values timed for baselines at m >= 2000"
    )
    parser.add_argument("--repeats", type=int, default=5, help="runs of the path (median)")
    args = parser.parse_args()
    lams = paper_lambda_grid()
    rows = []
    for m in args.sizes:
        X, y, Xv = data(m, seed=m)
        path_s, info = time_path(X, y, Xv, lams, args.repeats)
        timed = lams if m < 2000 else lams[:: max(1, len(lams) // args.sample)]
        setup_s, per_solve_s = time_separate(X, y, Xv, timed)
        separate_s = setup_s + per_solve_s * len(lams)
        ridge_s = time_kernel_ridge(X, y, Xv, timed) * len(lams)
        rows.append(
            {
                "m": m,
                "n_lambda": len(lams),
                **info,
                "path_s": round(path_s, 4),
                "separate_solves_s": round(separate_s, 4),
                "kernel_ridge_s": round(ridge_s, 4),
                "separate_over_path": round(separate_s / path_s, 1),
                "kernel_ridge_over_path": round(ridge_s / path_s, 1),
                "baseline_lambdas_timed": len(timed),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    print(json.dumps({"benchmark": "path", "gamma": GAMMA, "results": rows}, indent=2))


if __name__ == "__main__":
    main()
