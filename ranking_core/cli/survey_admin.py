"""``riskgrid survey list|delete|link``: the surveys the caller may see, deleting one with
everything it holds, and a new organiser link for one. The command line acts as the operator
(every survey of the database); :func:`register` adds these commands to ``riskgrid survey``."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.text import Text

from ranking_core.cli.output import err, fail, out, say
from ranking_core.inputs.text import named, printable


def _surveys():
    from ranking_core.cli.survey import _surveys as surveys

    return surveys()


def list_surveys(
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the list as JSON (for programs) instead.")
    ] = False,
) -> None:
    """The surveys you may see: name, method, owner, created, raters, answers, open or closed."""
    from rich.table import Table

    from ranking_core.storage import StorageError
    from ranking_core.surveys.admin import MAX_LISTED, survey_count, survey_summaries

    surveys = _surveys()
    try:
        listed = survey_summaries(surveys, MAX_LISTED)
        total = survey_count(surveys) if len(listed) >= MAX_LISTED else len(listed)
    except StorageError as exc:
        fail(exc)
    if total > len(listed):
        err.print(
            Text(f"the first {len(listed):,} of {total:,} surveys (oldest first) are listed"),
            style="yellow",
        )
    if json_out:
        typer.echo(json.dumps([s.to_dict() for s in listed], indent=2, ensure_ascii=True))
        return
    if not listed:
        say("no surveys stored yet; create one with 'riskgrid survey create'")
        return
    table = Table(title="Surveys", title_justify="left")
    for column in ("Name", "Method", "Owner", "Created (UTC)", "Raters", "Answers", "State"):
        table.add_column(column, justify="right" if column in ("Raters", "Answers") else "left")
    for s in listed:
        table.add_row(
            Text(printable(s.name)),
            Text(printable(s.method)),
            Text("operator" if s.owner is None else printable(s.owner)),
            s.created_at.strftime("%Y-%m-%d %H:%M"),
            f"{s.raters:,}",
            f"{s.answers:,}",
            "open" if s.is_open else "closed",
        )
    out.print(table)


def delete(
    name: Annotated[str, typer.Argument(help="The survey to delete.")],
    yes: Annotated[
        bool, typer.Option("--yes", help="Do not ask for the name again (for scripts).")
    ] = False,
) -> None:
    """Delete a survey with its raters' links, queues and answers (export it first to keep the
    answers); asks for the survey's name again unless --yes."""
    from ranking_core.storage import StorageError
    from ranking_core.surveys.admin import delete_survey

    surveys = _surveys()
    try:
        survey = surveys.get(name)  # an unknown name is refused before anything is asked
    except StorageError as exc:
        fail(exc)
    if not yes:
        try:
            typed = typer.prompt(
                f"This deletes survey {named(survey.name)} with all its answers; type its "
                "name to confirm",
                default="",
                show_default=False,
            )
        except (typer.Abort, EOFError):
            fail("not deleted: no confirmation was given (type the name, or pass --yes)")
        if typed != survey.name:
            fail(f"not deleted: {named(typed)} is not the survey's name")
    try:
        deleted = delete_survey(surveys, survey.name)
    except StorageError as exc:
        fail(exc)
    say(
        f"deleted survey {named(survey.name)}: {deleted['raters']:,} raters' links, "
        f"{deleted['answers']:,} answers and {deleted['pairs']:,} pairs"
    )


def link(name: Annotated[str, typer.Argument(help="The survey.")]) -> None:
    """Print a new organiser link for the survey (shown once; the old link stops working)."""
    from ranking_core.storage import StorageError
    from ranking_core.surveys.admin import new_organiser_token

    try:
        survey, token = new_organiser_token(_surveys(), name)
    except StorageError as exc:
        fail(exc)
    say(f"survey {named(survey.name)}: the old organiser link no longer works")
    say("new organiser link (keep it private; it is shown once):")
    typer.echo(survey.organiser_link(token))


def register(app: typer.Typer) -> None:
    """Add ``list``, ``delete`` and ``link`` to the ``riskgrid survey`` commands."""
    app.command("list")(list_surveys)
    app.command()(delete)
    app.command()(link)
