"""Write data/sample_meter_pairs.csv: synthetic BGM/REF pairs (mg/dL) for the dashboard demo.

A made-up meter, no third-party data: REF log-uniform on 40..450 mg/dL, BGM = REF·(1 + 2 % bias +
6 % noise) + 3 mg/dL noise, with 3 % gross errors (BGM off by ±35–60 %), rounded to integers.

    python scripts/make_sample_meter_pairs.py [--n 300] [--seed 0] [--out PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd


def sample_pairs(n: int, seed: int) -> pd.DataFrame:
    """n synthetic (BGM, REF) pairs in whole mg/dL."""
    rng = np.random.default_rng(seed)
    ref = np.exp(rng.uniform(np.log(40), np.log(450), n))
    bgm = ref * (1 + 0.02 + 0.06 * rng.standard_normal(n)) + 3 * rng.standard_normal(n)
    gross = rng.random(n) < 0.03
    bgm[gross] = ref[gross] * (
        1 + rng.choice([-1, 1], gross.sum()) * rng.uniform(0.35, 0.6, gross.sum())
    )
    return pd.DataFrame(
        {"BGM": np.clip(np.rint(bgm), 1, 600).astype(int), "REF": np.rint(ref).astype(int)}
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "data" / "sample_meter_pairs.csv",
    )
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sample_pairs(args.n, args.seed).to_csv(args.out, index=False)
    print(f"wrote {args.n} pairs to {args.out}")


if __name__ == "__main__":
    main()
