"""The command line starts without the numerical stack and still offers every command."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
import typer
from typer.testing import CliRunner

from ranking_core.cli import COMMANDS, app


def test_help_lists_every_command_without_importing_the_numerical_stack() -> None:
    probe = (
        "import sys\n"
        "from ranking_core.cli import app\n"
        "from typer.testing import CliRunner\n"
        "result = CliRunner().invoke(app, ['--help'])\n"
        "assert result.exit_code == 0, result.output\n"
        "print(result.output)\n"
        "heavy = [m for m in ('numpy', 'scipy', 'sklearn', 'pandas', 'plotly', 'dask')\n"
        "         if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert "HEAVY []" in out
    for name in COMMANDS:
        assert f"  {name} " in out


def test_every_listed_command_loads_under_its_name() -> None:
    group = typer.main.get_command(app)
    context = click.Context(group)
    assert group.list_commands(context) == list(COMMANDS)
    for name in COMMANDS:
        command = group.get_command(context, name)
        assert command is not None and command.name == name
        assert CliRunner().invoke(app, [name, "--help"]).exit_code == 0
    assert group.get_command(context, "no-such-command") is None


# the heavy modules a command that reads no table and fits nothing must not load
NUMERICAL = (
    "numpy",
    "pandas",
    "scipy",
    "sklearn",
    "plotly",
    "dask",
    "streamlit",
    "statsmodels",
    "matplotlib",
    "reportlab",
)
PROBE = (
    "import runpy, sys\n"
    "sys.argv = ['riskgrid', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('ranking_core.cli', run_name='__main__')\n"
    "except SystemExit as exc:\n"
    "    code = exc.code\n"
    "print('EXIT', code, file=sys.stderr)\n"
    "print('LOADED', sorted({m.split('.')[0] for m, module in sys.modules.items()\n"
    "                        if module is not None}), file=sys.stderr)\n"
)


def _loaded(tmp_path, *words: str) -> tuple[int, set[str]]:
    """The exit status of ``riskgrid WORDS`` run in a fresh process (the checkout's code, the
    SQLite database ``records.sqlite3`` in ``tmp_path``) and the top-level modules it imported."""
    import ast
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = dict(
        os.environ,
        PYTHONPATH=str(root),
        RISKGRID_DATABASE_URL=f"sqlite:///{tmp_path / 'records.sqlite3'}",
    )
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *words],
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
        timeout=300,
    )
    lines = dict(line.split(" ", 1) for line in result.stderr.splitlines() if " " in line)
    return int(lines["EXIT"] or 0), set(ast.literal_eval(lines["LOADED"]))


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_commands_help_loads_no_numerical_library(tmp_path, name: str) -> None:
    """Imports only where used: a command's help (its options' choices and defaults, read from
    the registries of kernels, filters, λ rules, recipes, standards, bounds, learners, input
    formats, …) is built without NumPy, pandas, SciPy, scikit-learn or the plotting stack."""
    status, loaded = _loaded(tmp_path, name, "--help")
    assert status == 0
    assert not loaded & set(NUMERICAL), sorted(loaded & set(NUMERICAL))


def test_commands_that_read_records_load_no_numerical_library(tmp_path) -> None:
    """The records database is read with SQLAlchemy alone (no NumPy or pandas, nor Alembic,
    which only an upgrade needs): ``records list``, ``db status`` and the ``survey status`` of a
    survey with raters and answers; the probe sees what a command imports, and a command that
    learns does load the numerical stack."""
    from ranking_core.panels import start_design
    from ranking_core.storage import Store
    from ranking_core.surveys import SurveySettings, SurveyStore

    url = f"sqlite:///{tmp_path / 'records.sqlite3'}"
    store = Store(url)
    store.upgrade()  # a database in use (a new one is created, by Alembic, on first use)
    store.dispose()
    for words in (("records", "list"), ("db", "status")):
        status, loaded = _loaded(tmp_path, *words)
        assert status == 0, words
        assert not loaded & {*NUMERICAL, "alembic"}, (words, sorted(loaded & {*NUMERICAL}))
        assert "sqlalchemy" in loaded  # the probe sees what a command imports
    surveys = SurveyStore(url)
    surveys.create("ward", start_design(12, seed=0), SurveySettings(per_rater=6))
    ((_, link),) = surveys.invite("ward", 1)
    access = surveys.rater("ward", link.rsplit("token=", 1)[1])
    for item in surveys.queue(access.rater_id)[:4]:
        surveys.answer(access, item.position, 1.0)
    status, loaded = _loaded(tmp_path, "survey", "status", "ward")
    assert status == 0 and "sqlalchemy" in loaded
    assert not loaded & {*NUMERICAL, "alembic"}, sorted(loaded & {*NUMERICAL})
    # and it can fail: comparing learners loads NumPy and scikit-learn before the bad name is
    # refused
    status, loaded = _loaded(tmp_path, "learners", "compare", "--learner", "no-such-learner")
    assert status == 2 and {"numpy", "sklearn"} <= loaded


def test_a_command_reading_a_table_leaves_arrow_unloaded(tmp_path) -> None:
    """pandas imports pyarrow whenever it is installed (the dashboard's Streamlit installs it);
    the command line marks it absent (:func:`ranking_core.cli.without_arrow`), so that a
    command reading a table with pandas does not pay its memory."""
    import importlib.util

    import numpy as np

    if importlib.util.find_spec("pyarrow") is None:
        pytest.skip("pyarrow is not installed: there is nothing to keep unloaded")
    rng = np.random.default_rng(0)
    pairs = rng.uniform(40, 400, size=(60, 2))
    ratings = np.minimum(np.abs(pairs[:, 0] - pairs[:, 1]) / 60, 4)
    table = tmp_path / "ratings.csv"
    table.write_text(
        "reference,estimate,rating\n"
        + "".join(f"{a:.1f},{b:.1f},{r:.3f}\n" for (a, b), r in zip(pairs, ratings, strict=True))
    )
    status, loaded = _loaded(tmp_path, "learn", str(table), "--out-dir", str(tmp_path / "out"))
    assert status == 0
    assert "pandas" in loaded  # the command did read its table with pandas
    assert "pyarrow" not in loaded
    assert (tmp_path / "out" / "grid.csv").exists()
