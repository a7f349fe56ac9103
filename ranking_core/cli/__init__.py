"""The ``riskgrid`` command line: one module per command group, loaded when its command runs.

``riskgrid --help`` lists the commands from :data:`COMMANDS` without importing them (no NumPy,
SciPy, pandas or Plotly at start-up: ``benchmarks/cli_startup.py`` measures it); a command's
module is imported when the command is called or asked for its own help.
"""

from __future__ import annotations

import importlib

import click
import typer
from typer.core import TyperGroup

# name → (module, attribute: a Typer app or a command function, one line of help)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "reproduce": ("ranking_core.cli.reproduce", "app",
                  "Reproduce the experiments of the source papers."),
    "learners": ("ranking_core.cli.learners", "app",
                 "Compare the ranking learners of the source papers."),
    "meter-report": ("ranking_core.cli.meter", "meter_report",
                     "Meter accuracy report of BGM/REF pairs: SEG tables, Clarke, Parkes, DTS."),
    "pair": ("ranking_core.cli.pair", "pair",
             "Pair sensor readings with reference readings nearest in time."),
    "learn": ("ranking_core.cli.learn", "learn",
              "Learn a risk grid from a rating set and write it as files."),
    "plan-panel": ("ranking_core.cli.panels", "plan_panel",
                   "Propose the next pairs a rating panel should rate, as a rating form."),
    "cf": ("ranking_core.cli.cf", "app",
           "Collaborative-filtering experiments of the papers (MovieLens, Jester)."),
    "records": ("ranking_core.cli.records", "app",
                "List, export and delete saved records (the dashboard's database)."),
    "dashboard": ("ranking_core.cli.dashboard", "app", "Start the web dashboard."),
}


class LazyCommands(TyperGroup):
    """A command group whose subcommands are imported only when one of them is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute, _ = COMMANDS[name]
        target = getattr(importlib.import_module(module), attribute)
        if isinstance(target, typer.Typer):  # a group, even with one command (as add_typer did)
            command = typer.main.get_group(target)
        else:
            single = typer.Typer(add_completion=False)
            single.command(name)(target)
            command = typer.main.get_command(single)
        command.name = name
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, text) for name, (_, _, text) in COMMANDS.items()])


app = typer.Typer(
    name="riskgrid",
    help="Learned clinical error grids by regularized ranking.",
    no_args_is_help=True,
    add_completion=False,
    cls=LazyCommands,
    rich_markup_mode=None,  # the listing above, without building every command for rich
)


@app.callback()
def riskgrid() -> None:
    """Learned clinical error grids by regularized ranking."""


def main() -> None:  # pragma: no cover - console entry point
    app()
