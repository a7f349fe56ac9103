"""Which reading of Kriukova et al. 2014, §4.1 reproduces Table 1? Prints JSON.

For each m and each learner, mean test misranking (%) over ``--reps`` draws of:
``split`` (fit on the first m/2, λ by hold-out), ``split_oracle`` (fit on the first m/2, λ chosen
on the test set), ``refit`` (λ by hold-out, refit on all m) and ``refit_oracle``.

    python benchmarks/academic_protocols.py [--reps 30] [--seed 0]
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from ranking_core import SpectralRanker, SpectralRegressor
from ranking_core.experiments.academic import _draw
from ranking_core.metrics import pairwise_misranking_rows
from ranking_core.selection import paper_lambda_grid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    lams = paper_lambda_grid()
    out: dict = {}
    for m in (12, 20, 28):
        rng = np.random.default_rng(args.seed)
        scores: dict[str, list[float]] = {}
        for _ in range(args.reps):
            X, y = _draw(rng, m)
            x_test = rng.integers(0, 101, size=100).astype(np.float64)[:, None]
            y_test = np.floor(x_test[:, 0] / 10.0)
            half = m // 2
            for name, learner in (
                ("ranking", SpectralRanker(gamma=100.0)),
                ("slr", SpectralRegressor(gamma=100.0)),
            ):
                split = learner.fit(X[:half], y[:half]).path(lams)
                curve = pairwise_misranking_rows(y[half:], split.predict(X[half:]))
                chosen = int(np.argmin(curve))
                test_split = pairwise_misranking_rows(y_test, split.predict(x_test))
                test_refit = pairwise_misranking_rows(
                    y_test, learner.fit(X, y).path(lams).predict(x_test)
                )
                for key, value in (
                    ("split", test_split[chosen]),
                    ("split_oracle", test_split.min()),
                    ("refit", test_refit[chosen]),
                    ("refit_oracle", test_refit.min()),
                ):
                    scores.setdefault(f"{name}_{key}", []).append(float(value))
        out[str(m)] = {k: round(100 * float(np.mean(v)), 2) for k, v in scores.items()}
    print(
        json.dumps(
            {
                "benchmark": "academic_protocols",
                "reps": args.reps,
                "seed": args.seed,
                "mean_misranking_percent": out,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
