"""The ``riskgrid`` command line: one module per command group, loaded when its command runs.

``riskgrid --help`` lists the commands from :data:`COMMANDS` without importing them (no NumPy,
SciPy, pandas or Plotly at start-up: ``benchmarks/cli_startup.py`` measures it); a command's
module is imported when the command is called or asked for its own help.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup, TyperOption

if TYPE_CHECKING:  # Typer's own copy of click: the classes its groups and commands are built on
    from typer._click import Command, Context, HelpFormatter

# name → (module, attribute: a Typer app or a command function, one line of help)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "reproduce": (
        "ranking_core.cli.reproduce",
        "app",
        "Reproduce the experiments of the source papers.",
    ),
    "learners": (
        "ranking_core.cli.learners",
        "app",
        "Compare the ranking learners of the source papers.",
    ),
    "meter-report": (
        "ranking_core.cli.meter",
        "meter_report",
        "Meter accuracy report of BGM/REF pairs: SEG tables, Clarke, Parkes, DTS.",
    ),
    "pair": (
        "ranking_core.cli.pair",
        "pair",
        "Pair sensor readings with reference readings nearest in time.",
    ),
    "learn": (
        "ranking_core.cli.learn",
        "learn",
        "Learn a risk grid from a rating set and write it as files.",
    ),
    "elicit": (
        "ranking_core.cli.elicit",
        "elicit",
        "Map SEG-method answers (action ranges, risk scores) to a grid; learn and propose pairs.",
    ),
    "plan-panel": (
        "ranking_core.cli.panels",
        "plan_panel",
        "Propose the next pairs a rating panel should rate, as a rating form.",
    ),
    "survey": (
        "ranking_core.cli.survey",
        "app",
        "Rating surveys in the browser (rated pairs or the SEG's method): create, list, export, ….",
    ),
    "cf": (
        "ranking_core.cli.cf",
        "app",
        "Collaborative-filtering experiments of the papers (MovieLens, Jester).",
    ),
    "plan-study": (
        "ranking_core.cli.plan_study",
        "plan_study",
        "Probability that a device passes a standard in a planned study; sensors needed.",
    ),
    "conformance": (
        "ranking_core.cli.conformance",
        "conformance",
        "Check riskgrid's statistics against public test vectors; write docs/CONFORMANCE.md.",
    ),
    "records": (
        "ranking_core.cli.records",
        "app",
        "List, export and delete saved records (the dashboard's database).",
    ),
    "db": (
        "ranking_core.cli.db",
        "app",
        "The records database: upgrade its schema after an update, show its state.",
    ),
    "dashboard": ("ranking_core.cli.dashboard", "app", "Start the web dashboard."),
}

# bounds of the experiments' count options, checked before anything runs: a fit on m ratings
# holds m × m kernel matrices (128 MB each at m = 4,000) and predicts m × test-size blocks
MAX_SIZE = 4_000
MAX_TEST_SIZE = 10_000
MAX_REPS = 1_000
MAX_USERS = 100_000  # reviewers per draw (MovieLens 1M has 6,040, Jester 73,421)
MAX_CF_PAIRS = 1_000_000  # preference pairs per part of the pairs experiment (≈1 GB at the cap)
MAX_ROUNDS = 10_000
MAX_WORKERS = 256


def shown(text: object) -> str:
    """User text for a terminal line printed with Rich markup: unsafe characters escaped, line
    breaks kept, Rich markup taken literally (:func:`ranking_core.inputs.text.terminal`)."""
    from ranking_core.inputs.text import terminal

    return terminal(text)


def _readable_help(command: Command) -> None:
    """Help that reads whole in 80 columns: arguments named in upper case in the usage line
    (PAIRS, not {pairs}) and, in a group's listing, each command's whole first paragraph (click
    cuts at the first full stop, as in "et al."). Typer brings its own copy of click, so the
    parameters are told apart by their kind, not by click's classes."""
    for param in command.params:
        if param.param_type_name == "argument":
            param.metavar = param.name.upper()
            # Typer's usage line wraps a required argument in braces: name it plainly
            param._usage_display_name = (  # type: ignore[attr-defined]
                lambda p=param: p.metavar if p.required else f"[{p.metavar}]"
            )
        elif (
            isinstance(param, TyperOption)
            and len(choices := getattr(param.type_descriptor, "choices", None) or ()) > 6
        ):  # a long list of choices: one word, the choices in the help
            param.metavar = param.name.upper()
            param.help = (
                f"{param.help or ''} Choices: "
                f"{', '.join(str(getattr(c, 'value', c)) for c in choices)}."
            ).strip()
    for sub in getattr(command, "commands", {}).values():
        if sub.help and not sub.short_help:
            sub.short_help = " ".join(sub.help.split("\n\n")[0].split())
        _readable_help(sub)


class LazyCommands(TyperGroup):
    """A command group whose subcommands are imported only when one of them is used; an error
    in parsing the command line (of the group or of any command below it) is printed as one
    sentence by the one error printer, :func:`ranking_core.cli.output.fail` (exit status 2)."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: Context | None = None,
        **extra: Any,
    ) -> Context:
        with _one_sentence_usage_errors():
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: Context) -> Any:
        with _one_sentence_usage_errors():
            return super().invoke(ctx)

    def list_commands(self, ctx: Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Context, name: str) -> Command | None:
        if name not in COMMANDS:
            return None
        module, attribute, _ = COMMANDS[name]
        target = getattr(importlib.import_module(module), attribute)
        if (
            isinstance(target, typer.Typer)
            and not (target.registered_commands or target.registered_groups)
            and target.registered_callback is not None
        ):  # a Typer app with only a callback is one command, not a group (no COMMAND usage)
            target = target.registered_callback.callback
        command: Command
        if isinstance(target, typer.Typer):  # a group, even with one command (as add_typer did)
            target.rich_markup_mode = None  # plain help: whole words in an 80-column terminal
            command = typer.main.get_group(target)
        else:
            single = typer.Typer(add_completion=False, rich_markup_mode=None)
            single.command(name)(target)
            command = typer.main.get_command(single)
        command.name = name
        _readable_help(command)
        return command

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, text) for name, (_, _, text) in COMMANDS.items()])


@contextmanager
def _one_sentence_usage_errors() -> Iterator[None]:
    """Click's parsing errors (usage line, hint and "Error:" on four lines) as one sentence on
    standard error; help shown for a command given no arguments stays help."""
    from typer._click.exceptions import ClickException, NoArgsIsHelpError

    try:
        yield
    except NoArgsIsHelpError:
        raise
    except ClickException as exc:
        from ranking_core.cli.output import fail, usage_sentence

        context = getattr(exc, "ctx", None)
        command = context.command_path if context is not None else "riskgrid"
        fail(usage_sentence(command, exc.format_message()), code=exc.exit_code)


app = typer.Typer(
    name="riskgrid",
    help="Learned clinical error grids by regularized ranking.",
    no_args_is_help=True,
    add_completion=False,
    cls=LazyCommands,
    rich_markup_mode=None,  # the listing above, without building every command for rich
)


def _print_version(value: bool) -> None:
    if value:
        from ranking_core.version import riskgrid_version

        typer.echo(f"riskgrid {riskgrid_version()}")
        raise typer.Exit()


@app.callback()
def riskgrid(
    version: bool = typer.Option(
        False,
        "--version",
        help="Print the version and exit.",
        callback=_print_version,
        is_eager=True,
    ),
) -> None:
    """Learned clinical error grids by regularized ranking."""


def without_arrow() -> None:
    """Keep pandas from importing Arrow in a command's process.

    pandas imports ``pyarrow`` whenever it is installed (Streamlit, for the dashboard, installs
    it), and no command reads or writes Arrow: the dashboard runs in a process of its own. With
    the module marked absent (Python's import system: ``sys.modules[name] = None``) pandas takes
    its Arrow-less path, as where pyarrow is not installed. On ``riskgrid learn`` with 20,000
    ratings the peak memory falls from 462–468 to 423–424 MiB (``/usr/bin/time``, docs/SCALE.md).
    A process that has already imported it keeps it."""
    if "pyarrow" not in sys.modules:
        sys.modules["pyarrow"] = None  # type: ignore[assignment]  # the import system's "absent"


def main() -> None:  # pragma: no cover - console entry point
    without_arrow()
    app()
