"""Start-up time of ``riskgrid --help`` beside ``python -c "import typer"`` (prints JSON).

Both are run as fresh processes, alternately, ``--repeats`` times each; the JSON gives the best
and the median wall time of each and their ratio (best over best), which is what to compare on a
loaded machine. The commands' modules (NumPy, SciPy, pandas, Plotly, Dask) are imported only when
a command runs, so ``--help`` costs little more than Typer itself.

    python benchmarks/cli_startup.py --repeats 7
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time


def wall_seconds(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    riskgrid = shutil.which("riskgrid") or os.path.join(os.path.dirname(sys.executable), "riskgrid")
    commands = {
        "riskgrid --help": [riskgrid, "--help"],
        "python -c 'import typer'": [sys.executable, "-c", "import typer"],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeats):
        for name, command in commands.items():
            times[name].append(wall_seconds(command))
    report = {
        name: {"best_s": min(values), "median_s": statistics.median(values)}
        for name, values in times.items()
    }
    report["ratio_best"] = (
        report["riskgrid --help"]["best_s"] / report["python -c 'import typer'"]["best_s"]
    )
    report["repeats"] = args.repeats
    report["load_average"] = os.getloadavg()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
