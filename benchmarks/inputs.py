"""Input layer timings (JSON): reading n meter pairs through the one table reader against
pandas.read_csv of the same file (the reference, timed in the same process), and pairing a sensor
series with a reference series.

    PYTHONPATH=. python benchmarks/inputs.py [--n 200000] [--sensor 1000000] [--reference 100000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ranking_core.meter import read_pairs
from ranking_core.meter.pairs.pairing import nearest_in_window


def _timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--sensor", type=int, default=1_000_000)
    parser.add_argument("--reference", type=int, default=100_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    ref = rng.integers(20, 601, args.n)
    bgm = np.rint(ref * (1 + 0.08 * rng.standard_normal(args.n)))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pairs.csv"
        pd.DataFrame({"BGM": bgm, "REF": ref}).to_csv(path, index=False)
        pairs, read_s = _timed(lambda: read_pairs(path))
        _, pandas_s = _timed(lambda: pd.read_csv(path))
    sensor = np.sort(rng.integers(0, 300 * args.sensor, args.sensor)) * 10**9
    reference = rng.integers(0, 300 * args.sensor, args.reference) * 10**9
    match, pair_s = _timed(lambda: nearest_in_window(sensor, reference, 300 * 10**9))
    print(
        json.dumps(
            {
                "n_pairs": len(pairs),
                "read_pairs_s": round(read_s, 3),
                "pandas_read_csv_s": round(pandas_s, 3),
                "read_pairs_over_pandas": round(read_s / pandas_s, 1),
                "n_sensor": args.sensor,
                "n_reference": args.reference,
                "pairing_s": round(pair_s, 3),
                "paired": int((match >= 0).sum()),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
