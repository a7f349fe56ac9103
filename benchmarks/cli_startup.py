"""Start-up time of riskgrid's commands beside ``python -c "import typer"`` (prints JSON).

Each command is run as a fresh process (``python -m ranking_core.cli …`` from the checkout
``--root``, default this one), all of them in turn, ``--repeats`` times; the JSON gives each
one's best and median wall time (what to compare on a loaded machine), the heavy modules it
imported (NumPy, pandas, SciPy, scikit-learn, SQLAlchemy, …), and the load average. ``survey
status`` and ``records list`` read a fresh SQLite database in a temporary folder.

    python benchmarks/cli_startup.py --repeats 5
    python benchmarks/cli_startup.py --repeats 5 --root /path/to/another/checkout
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

HEAVY = ("numpy", "pandas", "scipy", "sklearn", "sqlalchemy", "plotly", "streamlit", "dask")
COMMANDS = (
    ("--help",),
    ("db", "--help"),
    ("records", "--help"),
    ("conformance", "--help"),
    ("learn", "--help"),
    ("survey", "--help"),
    ("records", "list"),
    ("survey", "status", "ward"),
)
# the same command in a process that then names the heavy modules it imported
PROBE = (
    "import runpy, sys\n"
    "sys.argv = ['riskgrid', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('ranking_core.cli', run_name='__main__')\n"
    "except SystemExit:\n"
    "    pass\n"
    f"print('HEAVY', [m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)\n"
)


def wall_seconds(command: list[str], root: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def heavy_modules(words: tuple[str, ...], root: Path, env: dict[str, str]) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *words], cwd=root, env=env, capture_output=True, text=True
    )
    line = next(x for x in result.stderr.splitlines() if x.startswith("HEAVY "))
    return json.loads(line.removeprefix("HEAVY ").replace("'", '"'))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    root = args.root.resolve()
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(
            os.environ,
            PYTHONPATH=str(root),
            PYTHONDONTWRITEBYTECODE="1",
            RISKGRID_DATABASE_URL=f"sqlite:///{Path(scratch) / 'records.sqlite3'}",
        )
        runs = {"python -c 'import typer'": [sys.executable, "-c", "import typer"]}
        runs |= {
            "riskgrid " + " ".join(words): [sys.executable, "-m", "ranking_core.cli", *words]
            for words in COMMANDS
        }
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.repeats):
            for name, command in runs.items():
                times[name].append(wall_seconds(command, root, env))
        report: dict[str, object] = {
            name: {
                "best_s": round(min(values), 3),
                "median_s": round(statistics.median(values), 3),
                **(
                    {"imports": heavy_modules(tuple(name.split()[1:]), root, env)}
                    if name.startswith("riskgrid")
                    else {}
                ),
            }
            for name, values in times.items()
        }
    report["repeats"] = args.repeats
    report["load_average"] = os.getloadavg()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
