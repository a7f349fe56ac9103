"""Every learner of issue 7 on the SEG reconstruction at small m (prints JSON).

Seed 003 §4.3 protocol without the λ search: m ratings drawn uniformly on [0, 600]² mg/dL and
labelled with the SEG risk (``SEG_TABLE``; a smooth synthetic surface when unset), Gaussian kernel
γ = 10⁴, one λ for every learner in its own scaling (SpectralRanker λ; RankRLS m²λ; MPRank
C = 1/(2λ); SVRank C = 1/λ), misranking (seed 003 eq. (1), %) against the true risk on 5,000
uniform test inputs, averaged over ``--repeats`` draws. Also the exact leave-pair-out estimate of
the Lavrentiev ranker's misranking (seed 002 §3.4) for comparison with its test misranking.

Run from the repository root: ``PYTHONPATH=. python benchmarks/learners_seg.py``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from scale import GAMMA, draw, risk_lookup

from ranking_core import NystromRanker, OnlineMPRank, PreferenceRanker, SpectralRanker, SVRank
from ranking_core.metrics import pairwise_misranking
from ranking_core.selection import leave_pair_out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=200)
    parser.add_argument("--svrank-m", type=int, default=80)
    parser.add_argument("--lam", type=float, default=1e-4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    grid, source = risk_lookup()
    rng = np.random.default_rng(0)
    X_test, y_test = draw(rng, grid, 5000)
    m, lam = args.m, args.lam
    learners = {
        "SpectralRanker (Lavrentiev)": lambda: SpectralRanker(gamma=GAMMA, lam=lam),
        "SpectralRanker (iterated Lavrentiev)": lambda: SpectralRanker(
            gamma=GAMMA, lam=lam, filter="iterated-lavrentiev"),
        "NystromRanker (greedy, |R| = m/4)": lambda: NystromRanker(
            gamma=GAMMA, lam=lam, n_centers=m // 4),
        "PreferenceRanker cost (21)": lambda: PreferenceRanker(gamma=GAMMA, lam=m * m * lam),
        "PreferenceRanker cost (20)": lambda: PreferenceRanker(
            gamma=GAMMA, lam=m * m * lam, cost="unit"),
        "PreferenceRanker cost (22)": lambda: PreferenceRanker(
            gamma=GAMMA, lam=m * m * lam, cost="relative"),
        "OnlineMPRank": lambda: OnlineMPRank(gamma=GAMMA, lam=lam, max_passes=2000),
    }
    scores: dict[str, list] = {name: [] for name in [*learners, "SVRank", "LPO estimate"]}
    seconds: dict[str, float] = dict.fromkeys(scores, 0.0)
    for _ in range(args.repeats):
        X, y = draw(rng, grid, m)
        for name, make in learners.items():
            start = time.perf_counter()
            model = make().fit(X, y)
            seconds[name] += time.perf_counter() - start
            scores[name].append(pairwise_misranking(y_test, model.predict(X_test)))
        start = time.perf_counter()
        scores["LPO estimate"].append(leave_pair_out(SpectralRanker(gamma=GAMMA, lam=lam), X, y))
        seconds["LPO estimate"] += time.perf_counter() - start
        small = slice(0, args.svrank_m)
        start = time.perf_counter()
        model = SVRank(gamma=GAMMA, lam=lam, epsilon=0.05, tol=1e-6).fit(X[small], y[small])
        seconds["SVRank"] += time.perf_counter() - start
        scores["SVRank"].append(pairwise_misranking(y_test, model.predict(X_test)))
    print(json.dumps({
        "source": source, "m": m, "svrank_m": args.svrank_m, "lam": lam, "gamma": GAMMA,
        "repeats": args.repeats,
        "misranking_percent": {k: round(100 * float(np.mean(v)), 2) for k, v in scores.items()},
        "seconds_per_fit": {k: round(v / args.repeats, 3) for k, v in seconds.items()},
    }, indent=2))


if __name__ == "__main__":
    main()
