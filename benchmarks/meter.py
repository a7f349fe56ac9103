"""Meter report timings (JSON): read_pairs + meter_report of n synthetic pairs through the
library, against ``pandas.read_csv`` of the same file timed in the same process, and peak memory.

    SEG_TABLE=/path/RiskPairData.csv.gz PYTHONPATH=. python benchmarks/meter.py \
        [--sizes 100000 1000000 10000000] [--repeat 3]

Each size runs in its own subprocess (``--one N FILE``): the library path (read_pairs, then
meter_report) runs once, then ``pandas.read_csv`` and the library path alternate ``--repeat``
times, so that both see the same load; each time is the best of its runs (the first library run
pays one-off costs such as lazy imports, reported apart as ``first_library_s``). The peak
resident memory is the subprocess's ``ru_maxrss`` after the first library run, before pandas
reads (the library's peak, import and SEG table included); the parent's ``RUSAGE_CHILDREN``
value is the largest child so far, pandas included. The CSV files are written to a temporary
folder and removed. ``ratio`` is (read_pairs + meter_report) / pandas.read_csv, split into
``read_ratio`` and ``report_ratio``; the import of ``ranking_core.meter`` is timed apart
(``import_s``). Timings on a shared machine are noisy: compare the ratios, both sides being
timed in one process.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd


def _write(path: Path, n: int) -> None:
    """n synthetic (BGM, REF) pairs in mg/dL, written in blocks of a million rows."""
    rng = np.random.default_rng(0)
    with path.open("w") as out:
        out.write("BGM,REF\n")
        for start in range(0, n, 1_000_000):
            m = min(1_000_000, n - start)
            ref = rng.integers(20, 601, m)
            bgm = np.clip(np.rint(ref * (1 + 0.08 * rng.standard_normal(m))), 0, 650)
            pd.DataFrame({"BGM": bgm, "REF": ref}).to_csv(out, header=False, index=False)


def _one(n: int, path: str, repeat: int) -> None:
    start = time.perf_counter()
    from ranking_core.grids import find_seg_table
    from ranking_core.inputs import Limits
    from ranking_core.meter import meter_report, read_pairs

    import_s = time.perf_counter() - start
    seg = find_seg_table()
    limits = Limits(max_rows=max(n, Limits().max_rows), max_bytes=2**31)
    read_runs, report_runs, pandas_runs = [], [], []

    def library() -> int:
        start = time.perf_counter()
        pairs = read_pairs(path, limits=limits)
        read_runs.append(time.perf_counter() - start)
        start = time.perf_counter()
        report = meter_report(pairs, seg)
        report_runs.append(time.perf_counter() - start)
        return int(report.binomial["n"].iloc[0])

    included = library()
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # before pandas reads
    for _ in range(repeat):  # interleaved, so that both sides see the same load
        start = time.perf_counter()
        frame = pd.read_csv(path)
        pandas_runs.append(time.perf_counter() - start)
        del frame
        library()
    read_s, report_s, pandas_s = min(read_runs), min(report_runs), min(pandas_runs)
    print(
        json.dumps(
            {
                "n_pairs": n,
                "import_s": round(import_s, 3),
                "pandas_read_csv_s": round(pandas_s, 3),
                "read_pairs_s": round(read_s, 3),
                "meter_report_s": round(report_s, 3),
                "first_library_s": round(read_runs[0] + report_runs[0], 3),
                "read_ratio": round(read_s / pandas_s, 2),
                "report_ratio": round(report_s / pandas_s, 2),
                "ratio": round((read_s + report_s) / pandas_s, 2),
                "repeat": repeat,
                "included": included,
                "peak_rss_mib": round(peak_kib / 1024, 1),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs of each side; the best time of each is reported"
    )
    parser.add_argument("--one", nargs=2, metavar=("N", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        _one(int(args.one[0]), args.one[1], args.repeat)
        return
    results = []
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "pairs.csv"
            _write(path, n)
            done = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--one",
                    str(n),
                    str(path),
                    "--repeat",
                    str(args.repeat),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            row = json.loads(done.stdout.strip().splitlines()[-1])
            row["largest_child_rss_mib"] = round(
                resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1
            )
            row["file_mib"] = round(path.stat().st_size / 2**20, 1)
            results.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
