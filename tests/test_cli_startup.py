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
