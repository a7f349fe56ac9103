"""The command line starts without the numerical stack and still offers every command."""

from __future__ import annotations

import subprocess
import sys

import click
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
NUMERICAL = ("numpy", "pandas", "scipy", "sklearn", "plotly", "dask", "streamlit")
PROBE = (
    "import runpy, sys\n"
    "sys.argv = ['riskgrid', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('ranking_core.cli', run_name='__main__')\n"
    "except SystemExit as exc:\n"
    "    code = exc.code\n"
    "print('EXIT', code, file=sys.stderr)\n"
    "print('LOADED', sorted({m.split('.')[0] for m in sys.modules}), file=sys.stderr)\n"
)


def _loaded(tmp_path, *words: str) -> tuple[int, set[str]]:
    """The exit status of ``riskgrid WORDS`` run in a fresh process (the checkout's code, a fresh
    SQLite database) and the top-level modules it imported."""
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
    return int(lines["EXIT"]), set(ast.literal_eval(lines["LOADED"]))


def test_commands_that_read_records_or_show_help_load_no_numerical_stack(tmp_path) -> None:
    """Imports only where used: the records database is read with SQLAlchemy alone (no NumPy,
    pandas or Alembic, which only an upgrade needs); help and refusals print without them."""
    from ranking_core.storage import Store

    store = Store(f"sqlite:///{tmp_path / 'records.sqlite3'}")
    store.upgrade()  # a database in use (a new one is created, by Alembic, on first use)
    store.dispose()
    for words in (
        ("db", "--help"),
        ("records", "--help"),
        ("conformance", "--help"),
        ("records", "list"),
        ("db", "status"),
    ):
        status, loaded = _loaded(tmp_path, *words)
        assert status == 0, words
        assert not loaded & {*NUMERICAL, "alembic"}, (words, sorted(loaded & {*NUMERICAL}))
    status, loaded = _loaded(tmp_path, "records", "list")
    assert "sqlalchemy" in loaded  # the probe sees what a command imports
    status, loaded = _loaded(tmp_path, "learn", "--help")
    assert status == 0 and {"numpy", "sklearn"} <= loaded  # and it can fail: learn's help has them
