"""``riskgrid survey``: run a rating survey in the browser (create, invite, revoke, status, next,
export, close). The survey lives in the records database (``RISKGRID_DATABASE_URL``, else SQLite
in the user's data folder); raters answer through their personal links on ``riskgrid dashboard``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.text import Text

from ranking_core.cli.output import (
    OutputError,
    check_output,
    err,
    fail,
    out,
    say,
    write_json,
    write_output,
)
from ranking_core.cli.survey_admin import open_surveys as _surveys
from ranking_core.cli.survey_admin import register
from ranking_core.inputs.text import named, printable
from ranking_core.surveys.coverage import batch_warning, coverage_warning, overlap_needs
from ranking_core.surveys.design import (
    MAX_CHECKS,
    MAX_OVERLAP,
    MAX_PAIRS,
    MAX_RATERS,
    MAX_SEED,
)

DEFAULT_BATCH = 20  # pairs added by `survey next` when the survey has no batch size
NAMES_BYTES = 1_000_000  # a --names file is read up to this many bytes (never whole)
app = typer.Typer(
    help="Run a rating survey in the browser: a panel rates pairs through personal links.",
    add_completion=False,
    no_args_is_help=True,
)


def _fail(message: object) -> NoReturn:
    fail(message)


def read_capped(path: Path, cap: int, option: str) -> str:
    """A UTF-8 text file of at most ``cap`` bytes, reading at most ``cap`` + 1 bytes (never the
    whole of a larger file or of a device such as /dev/zero); ValueError naming the option."""
    try:
        with open(path, "rb") as stream:
            data = stream.read(cap + 1)
    except OSError as exc:
        raise ValueError(
            f"{option} {printable(path)}: cannot be read ({exc.strerror or exc})"
        ) from None
    if len(data) > cap:
        raise ValueError(f"{option} {printable(path)}: larger than {cap:,} bytes; not read")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(f"{option} {printable(path)}: not UTF-8 text") from None


@app.command()
def create(
    name: Annotated[str, typer.Argument(help="The survey's name (in the links).")],
    pairs: Annotated[
        Path | None,
        typer.Option(
            "--pairs",
            help="Start design: a pair file with columns reference, estimate in mg/dL "
            "(e.g. plan-panel's form).",
        ),
    ] = None,
    design: Annotated[
        int | None,
        typer.Option("--design", min=1, max=MAX_PAIRS, help="Start design: N space-filling pairs."),
    ] = None,
    glucose_range: Annotated[
        tuple[float, float],
        typer.Option("--range", metavar="LO HI", help="Glucose range of the pairs, mg/dL."),
    ] = (20.0, 600.0),
    unit: Annotated[
        str | None,
        typer.Option(
            help="Unit shown to raters and of the --pairs file: mg/dL or mmol/L (default: "
            "mg/dL; a --pairs file may name its unit in its header)."
        ),
    ] = None,
    per_rater: Annotated[
        int | None,
        typer.Option(
            "--per-rater",
            min=1,
            max=MAX_PAIRS,
            help="Start-design pairs per rater (default: all).",
        ),
    ] = None,
    overlap: Annotated[int, typer.Option(min=1, max=MAX_OVERLAP, help="Raters per pair.")] = 2,
    repeats: Annotated[
        float,
        typer.Option(
            min=0.0, max=1.0, help="Share of each rater's pairs shown again (test-retest)."
        ),
    ] = 0.1,
    checks: Annotated[
        int,
        typer.Option(min=0, max=MAX_CHECKS, help="Check pairs with an obvious answer per rater."),
    ] = 2,
    batch: Annotated[
        int,
        typer.Option(
            min=0,
            max=MAX_PAIRS,
            help="Pairs per adaptive batch, planned when a batch is answered (0: off; "
            "`riskgrid survey next` adds a batch by hand).",
        ),
    ] = 0,
    base_url: Annotated[
        str, typer.Option("--base-url", help="Where the dashboard is served (for the links).")
    ] = "http://127.0.0.1:8501",
    instructions: Annotated[
        Path | None,
        typer.Option(
            "--instructions", help="Plain-text file with the instructions shown to raters."
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option(min=0, max=MAX_SEED, help="Seed of the design and the shuffles.")
    ] = 0,
    method: Annotated[
        str,
        typer.Option(
            "--method",
            help="How raters answer: pairs (rate pairs) or seg (the SEG's method: per scenario "
            "the action thresholds, then a 5 x 5 risk matrix).",
        ),
    ] = "pairs",
    scenarios: Annotated[
        Path | None,
        typer.Option(
            "--scenarios",
            help="--method seg: a file with columns name, description (optional insulin: "
            "yes/no); default: the SEG's four scenarios.",
        ),
    ] = None,
) -> None:
    """Create a survey and print the organiser's link (keep it: it is shown once)."""
    from ranking_core.inputs import InputError
    from ranking_core.panels import start_design
    from ranking_core.storage import StorageError
    from ranking_core.surveys import SurveySettings
    from ranking_core.surveys.design import default_instructions
    from ranking_core.surveys.pairs_file import read_survey_pairs
    from ranking_core.surveys.storage import INSTRUCTIONS_MAX

    if method not in ("pairs", "seg"):
        fail(f"--method is pairs or seg; got {named(method)}", 2)
    if method == "seg":
        from ranking_core.cli.survey_seg import create_seg

        text = None
        if instructions is not None:
            try:
                text = read_capped(instructions, 4 * INSTRUCTIONS_MAX, "--instructions")
            except ValueError as exc:
                _fail(exc)
        given = pairs is not None or design is not None
        create_seg(_surveys(), name, scenarios, unit, base_url, text, given)
        return
    if scenarios is not None:
        fail("--scenarios is for --method seg", 2)
    if (pairs is None) == (design is None):
        _fail("give the start design as either --pairs FORM.csv or --design N")
    messages: tuple[str, ...] = ()
    try:
        text = None
        if instructions is not None:  # before any pair is read
            text = read_capped(instructions, 4 * INSTRUCTIONS_MAX, "--instructions")
        settings = SurveySettings(
            unit=unit or "mg/dL",
            glucose_range=glucose_range,
            per_rater=per_rater,
            overlap=overlap,
            repeats=repeats,
            checks=checks,
            batch=batch,
            base_url=base_url,
            seed=seed,
        )
        if pairs is not None:
            read = read_survey_pairs(pairs, settings.glucose_range, unit=unit)
            frame, messages = read.frame, read.messages
        else:
            frame = start_design(int(design or 0), seed=seed, glucose_range=settings.glucose_range)
        if text is None:
            text = default_instructions(settings)
        survey, token = _surveys().create(name, frame, settings, text)
    except (ValueError, InputError, StorageError) as exc:
        _fail(exc)
    for message in messages:
        say(message)
    stored = survey_pair_count(survey.name)
    say(
        f"survey {named(survey.name)}: {stored:,} pairs stored, range "
        f"{settings.glucose_range[0]:g}-{settings.glucose_range[1]:g} mg/dL; "
        "invite raters with 'riskgrid survey invite'"
    )
    say(overlap_needs(stored, survey.settings))
    say("organiser link (keep it private):")
    typer.echo(survey.organiser_link(token))


def survey_pair_count(name: str) -> int:
    """The start-design pairs stored for the survey (the database's count, not the file's)."""
    from sqlalchemy import func, select

    from ranking_core.surveys.storage import PAIRS, SURVEYS

    surveys = _surveys()
    with surveys.engine.connect() as conn:
        return int(
            conn.scalar(
                select(func.count())
                .select_from(PAIRS.join(SURVEYS, PAIRS.c.survey_id == SURVEYS.c.id))
                .where(SURVEYS.c.name == name, PAIRS.c.expected.is_(None))
            )
        )


@app.command()
def invite(
    name: Annotated[str, typer.Argument(help="The survey.")],
    raters: Annotated[
        int | None,
        typer.Option("--raters", min=1, max=MAX_RATERS, help="How many raters to invite."),
    ] = None,
    names: Annotated[
        Path | None,
        typer.Option(
            "--names", help="Text file with one rater name per line (instead of rater-1, …)."
        ),
    ] = None,
    links_out: Annotated[
        Path, typer.Option("--out", "-o", help="Links to write (CSV: rater, link).")
    ] = Path("links.csv"),
) -> None:
    """Invite raters: one personal link each, written to a CSV (rater, link)."""
    import pandas as pd

    from ranking_core.inputs.text import safe_csv
    from ranking_core.storage import StorageError
    from ranking_core.surveys import InviteInterrupted

    try:
        check_output(links_out, "--out", [names])
        if names is not None:
            listed = [
                line.strip()
                for line in read_capped(names, NAMES_BYTES, "--names").splitlines()
                if line.strip()
            ]
            if len(listed) > MAX_RATERS:
                _fail(f"--names names {len(listed):,} raters; at most {MAX_RATERS:,} at once")
            if raters is not None and raters != len(listed):
                _fail(f"--raters {raters} but --names names {len(listed)} raters")
            who: int | list[str] = listed
        elif raters is not None:
            who = raters
        else:
            _fail("give --raters N or --names FILE")
        links = _surveys().invite(name, who)
    except InviteInterrupted as exc:  # the links of the raters invited before it still count
        text = safe_csv(pd.DataFrame(exc.links, columns=["rater", "link"]))
        try:
            write_output(links_out, text, "--out")
        except OutputError as error:
            typer.echo(text)
            _fail(f"{exc}; {error}; their links are printed above instead")
        _fail(f"{exc}; their links are in {printable(links_out)}")
    except (OSError, StorageError, ValueError) as exc:
        _fail(exc)
    text = safe_csv(pd.DataFrame(links, columns=["rater", "link"]))
    try:
        write_output(links_out, text, "--out")
    except OutputError as exc:  # the raters are invited: their links must not be lost
        typer.echo(text)
        _fail(f"{exc}; the raters are invited and their links are printed above instead")
    say(
        f"invited {len(links)} raters; wrote their links to {printable(links_out)} (send each "
        "rater their own link only)"
    )
    warn_coverage(name, say_needs=True)


def warn_coverage(name: str, *, say_needs: bool = False) -> None:
    """Print (with ``say_needs``) how many raters the survey's overlap needs, and warn in one
    line on standard error when its active raters leave start pairs short of the overlap."""
    from ranking_core.storage import StorageError
    from ranking_core.surveys.admin import survey_coverage

    try:
        state = survey_coverage(_surveys(), name)
        needs = overlap_needs(state.n_pairs, _surveys().get(name).settings)
    except StorageError as exc:  # the survey was changed meanwhile: the figures are not known
        err.print(Text(f"warning: the raters' coverage cannot be read: {printable(exc)}"))
        return
    if say_needs:
        say(needs)
    warning = coverage_warning(state)
    if warning is not None:
        err.print(Text(f"warning: {warning}", style="yellow"))


@app.command()
def revoke(
    name: Annotated[str, typer.Argument(help="The survey.")],
    rater: Annotated[str, typer.Argument(help="The rater whose link stops working.")],
) -> None:
    """Revoke a rater's link (their answers so far are kept)."""
    from ranking_core.storage import StorageError

    try:
        _surveys().revoke(name, rater)
    except StorageError as exc:
        _fail(exc)
    say(f"revoked the link of {named(rater)}")


@app.command()
def status(
    name: Annotated[str, typer.Argument(help="The survey.")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write it as JSON.")] = None,
) -> None:
    """Progress per rater: answered, time per answer, test-retest agreement, check pairs."""
    from rich.table import Table

    from ranking_core.cli.survey_seg import is_seg, seg_status
    from ranking_core.panels.missing import reason_note, shown
    from ranking_core.storage import StorageError
    from ranking_core.surveys.progress import status as survey_status

    if is_seg(_surveys(), name):
        seg_status(_surveys(), name, json_out)
        return
    try:
        if json_out is not None:
            check_output(json_out, "--json")
        state = survey_status(_surveys(), name)
    except (StorageError, OutputError) as exc:
        _fail(exc)
    say(
        f"survey {named(state['survey'])}: {'open' if state['open'] else 'closed'}, "
        f"{state['answers']} of {state['queued']} answers, {state['batches']} "
        f"batch(es), {state['pairs_asked']} pairs asked"
    )
    table = Table(title="Raters", title_justify="left")
    for column in (
        "Rater",
        "Answered",
        "Queued",
        "s per answer",
        "Retest agreement",
        "Checks as expected",
        "Link",
    ):
        table.add_column(column, justify="left" if column in ("Rater", "Link") else "right")
    for r in state["raters"]:
        table.add_row(
            Text(printable(r["rater"])),
            str(r["answered"]),
            str(r["queued"]),
            shown(r["seconds_per_answer"], "{:.1f}", "seconds_per_answer", reason=False),
            shown(r["retest_agreement"], "{:.0%}", "retest_agreement", reason=False),
            f"{r['checks_passed']} of {r['checks_answered']}",
            "revoked" if r["revoked"] else "open",
        )
    out.print(table)
    note = reason_note(
        {"seconds_per_answer": "s per answer", "retest_agreement": "retest agreement"},
        {
            key: [r[key] for r in state["raters"]]
            for key in ("seconds_per_answer", "retest_agreement")
        },
    )
    if note is not None:
        say(note)
    warn_coverage(name)
    write_json(json_out, state)


@app.command("next")
def next_(
    name: Annotated[str, typer.Argument(help="The survey.")],
    batch: Annotated[
        int | None,
        typer.Option(
            "--batch",
            min=1,
            max=MAX_PAIRS,
            help=f"Pairs to add (default: the survey's batch size, else {DEFAULT_BATCH}).",
        ),
    ] = None,
) -> None:
    """Plan the next batch from the answers so far and add it to the raters' queues now."""
    from ranking_core.blas_threads import fit_threads
    from ranking_core.cli.progress import progress_bar
    from ranking_core.cli.survey_seg import is_seg, refuse_batches
    from ranking_core.storage import StorageError
    from ranking_core.surveys.results import next_batch

    surveys = _surveys()
    if is_seg(surveys, name):
        refuse_batches(name)
    added: dict = {}
    try:
        with progress_bar("learning from the answers so far") as update, fit_threads(1000):
            size = batch or surveys.get(name).settings.batch or DEFAULT_BATCH
            after = next_batch(surveys, name, size, force=True, progress=update, added=added)
    except (StorageError, ValueError) as exc:
        _fail(exc)
    if not added:  # the database had a batch added meanwhile by another request
        say(
            f"no batch added: another request added batch {after} while this one was "
            f"planning (the survey has {after} batches)"
        )
        return
    say(
        f"batch {added['batch']} added: {added['pairs']} pairs in "
        f"{added['raters']} raters' queues ({after} batches)"
    )
    short = batch_warning(added["raters"], surveys.get(name).settings.overlap)
    if short is not None:
        err.print(Text(f"warning: {short}", style="yellow"))


@app.command()
def export(
    name: Annotated[str, typer.Argument(help="The survey.")],
    ratings_out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="Ratings to write (CSV); for a SEG-method survey the folder that gets "
            "thresholds.csv and matrix.csv.",
        ),
    ] = Path("ratings.csv"),
) -> None:
    """Write every answer (reference, estimate, rating, rater, answered_at, role); the file is a
    rating set for `riskgrid learn`. A SEG-method survey writes two tables into the folder -o:
    thresholds.csv (rater, scenario, action, max in mg/dL) and matrix.csv (rater, scenario,
    measured, actual, score 1-9), the input of `riskgrid elicit`."""
    from ranking_core.cli.survey_seg import export_seg, is_seg
    from ranking_core.inputs.text import safe_csv
    from ranking_core.storage import StorageError
    from ranking_core.surveys.results import export_frame

    if is_seg(_surveys(), name):
        export_seg(_surveys(), name, ratings_out)
        return
    try:
        check_output(ratings_out, "--out")
        frame = export_frame(_surveys().answers(name))
        write_output(ratings_out, safe_csv(frame), "--out")
    except (StorageError, OutputError) as exc:
        _fail(exc)
    say(f"wrote {len(frame)} answers to {printable(ratings_out)}")


@app.command()
def close(name: Annotated[str, typer.Argument(help="The survey.")]) -> None:
    """Close the survey: links stop taking answers; export still works."""
    from ranking_core.storage import StorageError

    try:
        _surveys().close(name)
    except StorageError as exc:
        _fail(exc)
    say(f"survey {named(name)} is closed")


# list, delete and link: ranking_core/cli/survey_admin.py

register(app)
