"""One error printer for every command: an error is one sentence on standard error, nothing on
standard output, no traceback; exit status 1 for refused input, 2 for a usage error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ranking_core.cli import COMMANDS, app

ROOT = Path(__file__).resolve().parents[1]


def _one_sentence(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert "Traceback" not in text and "Usage:" not in text and "Error:" not in text
    return lines[0]


def test_db_status_with_a_bad_url_says_so_on_standard_error() -> None:
    """Run as a user would: a database URL naming another database, in a fresh process."""
    env = dict(os.environ, RISKGRID_DATABASE_URL="mysql://user:secret@host/db")
    for command in (["db", "status"], ["db", "upgrade"], ["records", "list"]):
        result = subprocess.run(
            [sys.executable, "-m", "ranking_core.cli", *command],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=env,
            timeout=120,
        )
        assert result.returncode == 1 and result.stdout == ""
        line = _one_sentence(result.stderr)
        assert line.startswith("the database URL mysql://user:***@host/db names a mysql database")
        assert "secret" not in result.stderr


def _leaves(group: str) -> list[list[str]]:
    """The command ``group`` and, for a group, each of its commands (as argument lists)."""
    import click
    import typer

    root = typer.main.get_command(app)
    command = root.get_command(click.Context(root), group)
    below = getattr(command, "commands", None)
    return [[group, name] for name in below] if below else [[group]]


@pytest.mark.parametrize("group", list(COMMANDS))
def test_a_usage_error_is_one_sentence_naming_the_command_and_its_help(group: str) -> None:
    for words in _leaves(group):
        result = CliRunner().invoke(app, [*words, "--no-such-option"])
        assert result.exit_code == 2 and result.stdout == ""
        path = " ".join(["riskgrid", *words])
        line = _one_sentence(result.stderr)  # click may name a near option between
        assert line.startswith(f"{path}: no such option: --no-such-option")
        assert line.endswith(f"; see {path} --help")


def test_values_out_of_range_and_unknown_commands_are_one_sentence() -> None:
    cases = {
        ("learn", "ratings.csv", "--order", "0"): "riskgrid learn: invalid value for '--order'",
        ("learn",): "riskgrid learn: missing argument 'RATINGS'",
        ("no-such-command",): "riskgrid: no such command 'no-such-command'",
    }
    for words, start in cases.items():
        result = CliRunner().invoke(app, list(words))
        assert result.exit_code == 2 and result.stdout == ""
        assert _one_sentence(result.stderr).startswith(start)


def test_a_command_without_arguments_still_shows_its_help() -> None:
    result = CliRunner().invoke(app, ["records"])
    assert "Usage: riskgrid records" in result.output and "list" in result.output
