"""``riskgrid learn`` as a user runs it: time, peak memory and misranking against the SEG.

Every fit is the command itself, ``python -m ranking_core.cli learn FILE --out-dir DIR [options]``,
in a fresh subprocess (its wall time and peak resident memory, ``ru_maxrss`` of the child), on a
rating file written beforehand; the misranking (Kriukova et al. 2014, eq. (1)) compares the
``grid.npy`` it wrote with the SEG (``compare_grids(seg.absolute, grid).misranking``). The time
reference is a dense ``scipy.linalg.eigh`` of a 4,000 × 4,000 symmetric matrix timed in this
process before and after the fits (the machine is shared: compare ratios, not seconds).

Rating sets (never written anywhere but a temporary folder):

* ``clean``: m pairs uniform on 0..600 mg/dL (REF, estimate), rating = the SEG risk at the
  rounded pair (continuous values, no rater column): what the defaults meet on clean data.
* ``survey``: the size of the SEG survey (8,420 ratings) as a rater panel of :func:`panel`:
  the defaults learn it robustly.
* ``panel``: m ratings from :func:`panel`, a panel model unlike the project's simulator
  (:mod:`ranking_core.panels.simulation`): 9 raters, each with its own offset and scale, one who
  compresses the scale towards its middle, noise growing with the risk, answers rounded to 0.5
  and 5 % reversed outliers (4 − risk). Defaults, ``--recipe best`` and ``--recipe robust`` on
  the same files.

Prints JSON. Run from the repository root (needs ``SEG_TABLE``), e.g.
``PYTHONPATH=. python benchmarks/learn.py clean --sizes 4000 20000``,
``PYTHONPATH=. python benchmarks/learn.py survey``,
``PYTHONPATH=. python benchmarks/learn.py panel --sizes 400 --draws 5``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.linalg

from ranking_core.grids.compare import compare_grids
from ranking_core.grids.seg import GLUCOSE_MAX, SEGTable, find_seg_table

SURVEY_SIZE = 8420  # ratings of the SEG survey
# Runs the command in a child and prints its peak resident memory (kB on Linux).
MEASURED = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "sys.stderr.write(code.stdout + code.stderr[-2000:])\n"
    "print(code.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def eigh_seconds(size: int = 4000, seed: int = 0) -> float:
    """Seconds of one dense ``scipy.linalg.eigh`` (evd) of a random symmetric size × size matrix."""
    A = np.random.default_rng(seed).standard_normal((size, size))
    A += A.T
    start = time.perf_counter()
    scipy.linalg.eigh(A, driver="evd", overwrite_a=True)
    return time.perf_counter() - start


def clean(seg: SEGTable, m: int, rng: np.random.Generator) -> pd.DataFrame:
    """m pairs uniform on 0..600 mg/dL rated with the SEG risk at the rounded pair."""
    X = rng.uniform(0.0, GLUCOSE_MAX, size=(m, 2))
    return pd.DataFrame(
        {"reference": X[:, 0], "estimate": X[:, 1], "rating": seg.risk(X[:, 0], X[:, 1])}
    )


def panel(seg: SEGTable, m: int, rng: np.random.Generator, n_raters: int = 9) -> pd.DataFrame:
    """m answers of a panel unlike the project's simulator (module doc): pairs uniform on
    0..600 mg/dL, rater k answers b_k + s_k·risk + ε with ε ~ N(0, (0.15 + 0.1·risk)²), the
    last rater compressing (s = 0.5 around the scale's middle), answers clipped to 0..4 and
    rounded to 0.5, 5 % of them reversed (4 − risk)."""
    X = rng.uniform(0.0, GLUCOSE_MAX, size=(m, 2))
    risk = seg.risk(X[:, 0], X[:, 1])
    rater = rng.integers(0, n_raters, size=m)
    bias = rng.normal(0.0, 0.25, n_raters)
    scale = rng.uniform(0.8, 1.25, n_raters)
    bias[-1], scale[-1] = 1.0, 0.5  # the compressing rater: 2 + (risk − 2)/2
    answer = bias[rater] + scale[rater] * risk + rng.normal(0.0, 0.15 + 0.1 * risk)
    reversed_ = rng.random(m) < 0.05
    answer[reversed_] = 4.0 - risk[reversed_]
    answer = np.round(np.clip(answer, 0.0, 4.0) * 2) / 2
    return pd.DataFrame(
        {
            "reference": X[:, 0],
            "estimate": X[:, 1],
            "rating": answer,
            "rater": [f"rater {k + 1}" for k in rater],
        }
    )


def run_learn(frame: pd.DataFrame, seg: SEGTable, folder: Path, options: list[str]) -> dict:
    """``riskgrid learn`` on ``frame`` with ``options``: seconds, peak MB, misranking (%), and
    the recipe line it printed."""
    source = folder / "ratings.csv"
    frame.to_csv(source, index=False)
    out = folder / "grid"
    command = [
        sys.executable,
        "-m",
        "ranking_core.cli",
        "learn",
        str(source),
        "--out-dir",
        str(out),
        *options,
    ]
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-c", MEASURED, *command], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    code, peak_kb = run.stdout.split()
    entry = {
        "options": options,
        "exit_code": int(code),
        "seconds": round(seconds, 2),
        "peak_mb": round(int(peak_kb) / 1024),
    }
    recipe = [line for line in run.stderr.splitlines() if line.startswith("recipe:")]
    entry["recipe_line"] = recipe[0] if recipe else None
    if int(code) == 0:
        grid = np.load(out / "grid.npy")
        entry["misranking_pct"] = round(100 * compare_grids(seg.absolute, grid).misranking, 3)
        entry["lambda"] = json.loads((out / "grid.json").read_text())["lambda"]
    else:
        entry["output"] = run.stderr[-1500:]
    return entry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("kind", choices=("clean", "survey", "panel"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[4000, 20000])
    parser.add_argument("--draws", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--options",
        nargs=argparse.REMAINDER,
        default=[],
        help="extra options of riskgrid learn (clean and survey)",
    )
    args = parser.parse_args()
    seg = find_seg_table()
    before = eigh_seconds()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for m in args.sizes if args.kind != "survey" else [SURVEY_SIZE]:
            for draw in range(args.draws):
                rng = np.random.default_rng([args.seed, m, draw])
                if args.kind == "clean":
                    runs.append(
                        {
                            "m": m,
                            "draw": draw,
                            **run_learn(clean(seg, m, rng), seg, folder, args.options),
                        }
                    )
                elif args.kind == "survey":
                    runs.append(
                        {
                            "m": m,
                            "draw": draw,
                            **run_learn(panel(seg, m, rng), seg, folder, args.options),
                        }
                    )
                else:
                    frame = panel(seg, m, rng)
                    for options in ([], ["--recipe", "best"], ["--recipe", "robust"]):
                        runs.append(
                            {"m": m, "draw": draw, **run_learn(frame, seg, folder, options)}
                        )
                    runs.append(
                        {
                            "m": m,
                            "draw": draw,
                            "ratings": "clean",
                            **run_learn(clean(seg, m, rng), seg, folder, []),
                        }
                    )
                print(json.dumps(runs[-1]), file=sys.stderr)
    after = eigh_seconds()
    reference = (before + after) / 2
    for run in runs:
        run["ratio_to_eigh4000"] = round(run["seconds"] / reference, 2)
    summary = {}
    if args.kind == "panel":
        for label, pick in (
            ("defaults", lambda r: r["options"] == [] and "ratings" not in r),
            ("best", lambda r: r["options"] == ["--recipe", "best"]),
            ("robust", lambda r: r["options"] == ["--recipe", "robust"]),
            ("clean defaults", lambda r: r.get("ratings") == "clean"),
        ):
            for m in args.sizes:
                values = [
                    r["misranking_pct"]
                    for r in runs
                    if pick(r) and r["m"] == m and "misranking_pct" in r
                ]
                summary[f"{label}, m={m}"] = round(float(np.mean(values)), 3) if values else None
    print(
        json.dumps(
            {
                "kind": args.kind,
                "eigh4000_seconds": [round(before, 2), round(after, 2)],
                "peak_mb_is": "ru_maxrss of the riskgrid process",
                "runs": runs,
                "mean_misranking_pct": summary,
                "python": sys.version.split()[0],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
