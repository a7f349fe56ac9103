"""Start-up time of riskgrid's commands beside ``python -c "import typer"`` (prints JSON).

Each command is run as a fresh process (``python -m ranking_core.cli …`` from the checkout
``--root``, default this one), all of them in turn, ``--repeats`` times; the JSON gives each
one's best and median wall time (what to compare on a loaded machine), the heavy modules it
imported (NumPy, pandas, SciPy, scikit-learn, SQLAlchemy, …), and the load average. With
``--root`` given more than once, each round runs every command of each checkout in turn (timed
alternately, so that a change of load falls on both), and the JSON has one report per root.
Each checkout's modules are compiled first (``compileall``), as an installed package's are. The
commands are ``riskgrid --help``, every command's ``--help`` (:data:`ranking_core.cli.COMMANDS`),
``records list`` and ``survey status ward`` on a fresh SQLite database in a temporary folder,
which holds one survey (``ward``, made untimed by ``survey create ward --design 20`` first).

    python benchmarks/cli_startup.py --repeats 5
    python benchmarks/cli_startup.py --repeats 5 --root /path/to/before --root /path/to/after
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ranking_core.cli import COMMANDS as LISTED  # light: names and one line of help each

HEAVY = (
    "numpy",
    "pandas",
    "scipy",
    "sklearn",
    "sqlalchemy",
    "plotly",
    "streamlit",
    "dask",
    "matplotlib",
    "reportlab",
    "statsmodels",
)
COMMANDS = (
    ("--help",),
    *((name, "--help") for name in LISTED),
    ("records", "list"),
    ("survey", "status", "ward"),
)
SURVEY = ("survey", "create", "ward", "--design", "20")  # run once, untimed, before the rounds
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


def checkout_env(root: Path, scratch: Path) -> dict[str, str]:
    """The environment of ``root``'s commands: its code first, a fresh SQLite database in
    ``scratch`` holding the survey ``ward`` (made untimed), its modules compiled once."""
    env = dict(
        os.environ,
        PYTHONPATH=str(root),
        PYTHONDONTWRITEBYTECODE="1",
        RISKGRID_DATABASE_URL=f"sqlite:///{scratch / 'records.sqlite3'}",
    )
    for package in ("ranking_core", "dashboard"):
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(root / package)],
            stdout=subprocess.DEVNULL,
            check=True,
        )
    subprocess.run(
        [sys.executable, "-m", "ranking_core.cli", *SURVEY],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        check=True,
    )
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--root", type=Path, action="append", help="a checkout (repeat to time several)"
    )
    args = parser.parse_args()
    roots = [r.resolve() for r in args.root or [Path(__file__).resolve().parents[1]]]
    runs = {"python -c 'import typer'": [sys.executable, "-c", "import typer"]}
    runs |= {
        "riskgrid " + " ".join(words): [sys.executable, "-m", "ranking_core.cli", *words]
        for words in COMMANDS
    }
    with tempfile.TemporaryDirectory() as scratch:
        envs = {}
        for k, root in enumerate(roots):
            (Path(scratch) / str(k)).mkdir()
            envs[root] = checkout_env(root, Path(scratch) / str(k))
        times = {root: {name: [] for name in runs} for root in roots}
        for _ in range(args.repeats):
            for root in roots:
                for name, command in runs.items():
                    times[root][name].append(wall_seconds(command, root, envs[root]))
        reports: dict[str, dict[str, object]] = {
            str(root): {
                name: {
                    "best_s": round(min(values), 3),
                    "median_s": round(statistics.median(values), 3),
                    **(
                        {"imports": heavy_modules(tuple(name.split()[1:]), root, envs[root])}
                        if name.startswith("riskgrid")
                        else {}
                    ),
                }
                for name, values in times[root].items()
            }
            for root in roots
        }
    report: dict[str, object] = (
        dict(reports[str(roots[0])]) if len(roots) == 1 else {"roots": reports}
    )
    report["repeats"] = args.repeats
    report["load_average"] = os.getloadavg()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
