"""The library's fit + 200-λ path against RLScore's GlobalRankRLS on the same data. Prints JSON.

Both sides learn the ranker of Kriukova et al. 2014, eq. (4), with the Gaussian kernel
exp(−‖x − x'‖²/γ), γ = 10⁴ (mg/dL)², on m glucose-like pairs (``path.data``: uniform on
[0, 600]², ratings |REF − estimate|/120 plus noise, clipped to 0..4) and predict m/2 validation
pairs at each of the paper's 200 λ (0.95^j). RLScore's GlobalRankRLS minimises the pairwise
squared loss plus regparam·‖f‖²: its regparam is m²·λ (checked here: the predictions agree once
each side's constant is removed, RLScore fitting no intercept).

* ``library``: ``LowRankRanker(GaussianKernel(γ)).fit(X, y).path(lams).predict(X_val)``, the
  low-rank engine the fit plan chooses for the Gaussian kernel from 2,000 ratings on (pivoted
  Cholesky factor to ε = 10⁻¹⁰, one r × r eigendecomposition, every λ in O(m·r)).
* ``rlscore``: ``GlobalRankRLS(X, y, kernel="GaussianKernel", gamma=1/γ)`` (one m × m
  eigendecomposition), then for each λ ``solve(m²λ)`` and ``predict(X_val)`` as its API offers
  them (each prediction evaluates the validation kernel again): ``rlscore_seconds``; and the
  same with the validation kernel evaluated once and multiplied by each solution's
  coefficients (``learner.A``), the faster use of RLScore: ``rlscore_shared_kernel_seconds``.

The two are timed alternately (library first in even rounds, RLScore first in odd ones), both
with the same number of BLAS threads (``--threads``, default 1: two spinning OpenBLAS threads on
a shared 2-core machine time the load more than the work), and the ratios are of the medians.
Accuracy, once: the largest difference over all λ and validation points between the library's,
RLScore's and the library's dense path (``SpectralRanker(solver="dense")``) predictions, each
centred, relative to the largest centred dense prediction.

RLScore is not a dependency: make it importable, e.g. built from its repository
(``python setup.py build_ext --inplace`` in a clone, then ``PYTHONPATH=.:/path/to/RLScore``; the
PyPI source 0.8.1 ships C files that no longer compile on Python 3.11). Run from the repository
root:

    PYTHONPATH=.:/path/to/RLScore python benchmarks/rlscore_path.py --m 4000 --rounds 3 --threads 1
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from path import GAMMA, data

from ranking_core import SpectralRanker
from ranking_core.kernels import GaussianKernel
from ranking_core.learners.lowrank import LowRankRanker
from ranking_core.selection import paper_lambda_grid


def library_path(X: np.ndarray, y: np.ndarray, X_val: np.ndarray, lams: np.ndarray) -> tuple:
    """Seconds and (L, n_val) predictions of the low-rank fit + path, and its rank."""
    start = time.perf_counter()
    model = LowRankRanker(GaussianKernel(GAMMA)).fit(X, y)
    predictions = model.path(lams).predict(X_val)
    return time.perf_counter() - start, predictions, model.factor_.rank


def rlscore_path(X: np.ndarray, y: np.ndarray, X_val: np.ndarray, lams: np.ndarray) -> tuple:
    """Seconds of RLScore's fit + path as its API runs it, seconds with the validation kernel
    shared, and the (L, n_val) predictions."""
    from rlscore.learner.global_rankrls import GlobalRankRLS

    m = len(y)
    start = time.perf_counter()
    learner = GlobalRankRLS(
        X, y, regparam=m * m * lams[0], kernel="GaussianKernel", gamma=1 / GAMMA
    )
    fitted = time.perf_counter()
    solve = predict = 0.0
    coefficients, predictions = [], []
    for lam in lams:
        t0 = time.perf_counter()
        learner.solve(m * m * lam)
        t1 = time.perf_counter()
        predictions.append(np.asarray(learner.predict(X_val)).ravel())
        t2 = time.perf_counter()
        coefficients.append(np.asarray(learner.A).ravel())
        solve, predict = solve + t1 - t0, predict + t2 - t1
    t0 = time.perf_counter()
    shared = learner.svdad.kernel.getKM(X_val) @ np.column_stack(coefficients)
    shared_seconds = time.perf_counter() - t0
    fit = fitted - start
    assert np.allclose(shared.T, predictions, rtol=1e-9, atol=1e-12), "the same RLScore model"
    return fit + solve + predict, fit + solve + shared_seconds, np.array(predictions)


def _centred_difference(a: np.ndarray, b: np.ndarray, scale: np.ndarray) -> float:
    """Largest |a − b| over all λ and points, each row centred, relative to max |scale| centred."""
    centre = lambda p: p - p.mean(axis=1, keepdims=True)  # noqa: E731
    return float(np.abs(centre(a) - centre(b)).max() / np.abs(centre(scale)).max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--m", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads of both sides")
    args = parser.parse_args()
    with threadpool_limits(limits=args.threads, user_api="blas"):
        print(json.dumps(run(args), indent=2))


def run(args: argparse.Namespace) -> dict:
    """The alternating rounds and the accuracy check (module doc)."""
    X, y, X_val = data(args.m, args.seed)
    lams = paper_lambda_grid()
    library, rlscore, rlscore_shared = [], [], []
    for round_ in range(args.rounds):
        for side in ("library", "rlscore") if round_ % 2 == 0 else ("rlscore", "library"):
            if side == "library":
                seconds, low_rank, rank = library_path(X, y, X_val, lams)
                library.append(seconds)
            else:
                seconds, shared, rls = rlscore_path(X, y, X_val, lams)
                rlscore.append(seconds)
                rlscore_shared.append(shared)
            print(json.dumps({"round": round_, "side": side, "seconds": seconds}), file=sys.stderr)
    dense = (
        SpectralRanker(GaussianKernel(GAMMA), solver="dense").fit(X, y).path(lams).predict(X_val)
    )
    median = {
        k: float(np.median(v))
        for k, v in (("library", library), ("rlscore", rlscore), ("rlscore_shared", rlscore_shared))
    }
    return {
        "benchmark": "rlscore_path",
        "m": args.m,
        "validation_points": len(X_val),
        "lambdas": len(lams),
        "lambda_range": [float(lams.min()), float(lams.max())],
        "blas_threads": args.threads,
        "low_rank_rank": rank,
        "library_seconds": [round(s, 3) for s in library],
        "rlscore_seconds": [round(s, 3) for s in rlscore],
        "rlscore_shared_kernel_seconds": [round(s, 3) for s in rlscore_shared],
        "ratio_rlscore_to_library": round(median["rlscore"] / median["library"], 1),
        "ratio_rlscore_shared_kernel_to_library": round(
            median["rlscore_shared"] / median["library"], 1
        ),
        "max_relative_difference": {
            "library_vs_rlscore": _centred_difference(low_rank, rls, dense),
            "library_vs_dense": _centred_difference(low_rank, dense, dense),
            "rlscore_vs_dense": _centred_difference(rls, dense, dense),
        },
    }


if __name__ == "__main__":
    main()
