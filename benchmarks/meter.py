"""Meter report timings (JSON): reading and reporting n synthetic pairs, with the SEG table.

    SEG_TABLE=/path/RiskPairData.csv.gz PYTHONPATH=. python benchmarks/meter.py [--n 100000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ranking_core.grids import find_seg_table
from ranking_core.meter import meter_report, read_pairs
from ranking_core.meter.figures import bland_altman_figure, seg_heatmap


def _timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    ref = rng.integers(20, 601, args.n)
    bgm = np.clip(np.rint(ref * (1 + 0.08 * rng.standard_normal(args.n))), 0, 650)
    seg, load_s = _timed(find_seg_table)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pairs.csv"
        pd.DataFrame({"BGM": bgm, "REF": ref}).to_csv(path, index=False)
        pairs, read_s = _timed(lambda: read_pairs(path))
    report, report_s = _timed(lambda: meter_report(pairs, seg))
    _, no_seg_s = _timed(lambda: meter_report(pairs, None))
    _, figures_s = _timed(lambda: (seg_heatmap(seg, report), bland_altman_figure(report)))
    print(json.dumps({
        "n_pairs": args.n, "seg_table_load_s": round(load_s, 3),
        "read_csv_s": round(read_s, 3), "meter_report_with_seg_s": round(report_s, 3),
        "meter_report_without_seg_s": round(no_seg_s, 3), "build_figures_s": round(figures_s, 3),
        "included": int(report.binomial["n"].iloc[0]),
    }, indent=2))


if __name__ == "__main__":
    main()
