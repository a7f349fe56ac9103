"""``riskgrid meter-report`` as a user runs it, beside one dense eigendecomposition (prints JSON).

Each run is the whole command in a fresh process, ``python -m ranking_core.cli meter-report FILE
--json OUT`` (and ``--report OUT.pdf``), from the checkout ``--root`` (default this one; several
roots are timed in turn, so that a change is compared with its base in the same run): its wall
time, imports included, and its peak resident memory (the child's own ``ru_maxrss``). The time
reference is one ``numpy.linalg.eigh`` of a random symmetric 4,000 × 4,000 matrix, timed in this
process before every round of commands; ``ratio`` is a command's median over the median eigh,
``best_ratio`` its best over the best eigh (the machine is shared: compare ratios, not seconds;
a loaded machine slows the two-threaded eigh more than the mostly one-threaded command). CPU
seconds (user + system, every thread) are given beside the wall times: they vary less with the
load.

The files (written to a temporary folder and removed):

* ``meter``: n meter pairs (default 10,000), REF lognormal around 140 mg/dL (σ 0.45 on the log
  scale) clipped to 20–550, BGM = REF·N(1.02, 0.07) + N(0, 3), both rounded to whole mg/dL
  (default seed 42): 427 distinct REF values, 5,851 distinct pairs at n = 10,000.
* ``cgm``: a CGM study of 10,000 pairs, tests/test_meter_comparison_sections.py's
  ``_study(subjects=50, draws=100, seed=7)`` (50 subjects × 2 sensors × 100 draws, with times,
  device readings to 0.1 mg/dL).

    SEG_TABLE=/path/RiskPairData.csv.gz PYTHONPATH=. python benchmarks/meter_command.py \
        [--files meter cgm] [--outputs json pdf] [--repeat 3] [--n 10000] [--seed 42] \
        [--root . --root /other/checkout]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = {"json": ("--json", "out.json"), "pdf": ("--report", "out.pdf")}


def eigh_seconds(size: int = 4000, seed: int = 0) -> tuple[float, float]:
    """Wall and CPU seconds of one dense ``numpy.linalg.eigh`` of a random symmetric
    size × size matrix (CPU: every thread of this process)."""
    a = np.random.default_rng(seed).standard_normal((size, size))
    a += a.T
    start, cpu = time.perf_counter(), time.process_time()
    np.linalg.eigh(a)
    return time.perf_counter() - start, time.process_time() - cpu


def meter_pairs(n: int = 10_000, seed: int = 42) -> pd.DataFrame:
    """n meter pairs in whole mg/dL (module docstring)."""
    rng = np.random.default_rng(seed)
    ref = np.round(np.clip(rng.lognormal(np.log(140), 0.45, n), 20, 550))
    bgm = np.round(ref * rng.normal(1.02, 0.07, n) + rng.normal(0, 3, n))
    return pd.DataFrame({"BGM": bgm, "REF": ref})


def cgm_study() -> pd.DataFrame:
    """The CGM study of the report's tests, 50 subjects × 2 sensors × 100 draws."""
    sys.path.insert(0, str(ROOT / "tests"))
    from test_meter_comparison_sections import _study

    return _study(subjects=50, draws=100, seed=7)


# Runs the command in a grandchild of a small process, so that the peak resident memory is the
# command's own (a child forked from this process would start with this process's pages), and
# prints its wall seconds, CPU seconds (user + system) and that peak (kB on Linux).
MEASURED = (
    "import resource, subprocess, sys, time\n"
    "start = time.perf_counter()\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "wall = time.perf_counter() - start\n"
    "sys.stderr.write(code.stderr.decode()[-2000:])\n"
    "used = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(code.returncode, wall, used.ru_utime + used.ru_stime, used.ru_maxrss)\n"
)


def run_command(root: Path, pairs: Path, output: str, folder: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak resident MiB of one ``meter-report`` in a fresh
    process."""
    option, name = OUTPUTS[output]
    command = [sys.executable, "-m", "ranking_core.cli", "meter-report", str(pairs)]
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, *command, option, str(folder / name)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
    )
    status, wall, cpu, peak_kib = done.stdout.split()
    if status != "0":
        raise RuntimeError(f"meter-report failed in {root}: {done.stderr[-2000:]}")
    return float(wall), float(cpu), int(peak_kib) / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", nargs="+", choices=("meter", "cgm"), default=["meter", "cgm"])
    parser.add_argument("--outputs", nargs="+", choices=tuple(OUTPUTS), default=["json", "pdf"])
    parser.add_argument("--n", type=int, default=10_000, help="pairs of the meter file")
    parser.add_argument("--seed", type=int, default=42, help="seed of the meter file")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--root", type=Path, action="append", help="checkouts to time in turn")
    args = parser.parse_args()
    roots = [r.resolve() for r in args.root or [ROOT]]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = {}
        for name in args.files:
            frame = meter_pairs(args.n, args.seed) if name == "meter" else cgm_study()
            files[name] = folder / f"{name}.csv"
            frame.to_csv(files[name], index=False)
        eighs: list[tuple[float, float]] = []
        runs: dict[tuple[str, str, str], list[tuple[float, float, float]]] = {}
        for _ in range(args.repeat):  # each round: eigh, then every command once
            eighs.append(eigh_seconds())
            for name, path in files.items():
                for output in args.outputs:
                    for root in roots:
                        key = (str(root), name, output)
                        runs.setdefault(key, []).append(run_command(root, path, output, folder))
    walls = [w for w, _ in eighs]
    eigh_median = statistics.median(walls)
    results = [
        {
            "root": root,
            "file": name,
            "output": output,
            "best_s": round(min(w for w, _, _ in found), 3),
            "median_s": round(statistics.median(w for w, _, _ in found), 3),
            "ratio": round(statistics.median(w for w, _, _ in found) / eigh_median, 3),
            "best_ratio": round(min(w for w, _, _ in found) / min(walls), 3),
            "best_cpu_s": round(min(c for _, c, _ in found), 3),
            "peak_rss_mib": round(max(m for _, _, m in found), 1),
        }
        for (root, name, output), found in runs.items()
    ]
    print(
        json.dumps(
            {
                "eigh4000_s": [round(w, 3) for w in walls],
                "eigh4000_cpu_s": [round(c, 3) for _, c in eighs],
                "eigh4000_median_s": round(eigh_median, 3),
                "load_average": [round(x, 2) for x in os.getloadavg()],
                "meter_pairs": args.n,
                "meter_seed": args.seed,
                "runs": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
