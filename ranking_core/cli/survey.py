"""``riskgrid survey``: run a rating survey in the browser (create, invite, revoke, status, next,
export, close). The survey lives in the records database (``RISKGRID_DATABASE_URL``, else SQLite
in the user's data folder); raters answer through their personal links on ``riskgrid dashboard``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

console = Console()
DEFAULT_BATCH = 20  # pairs added by `survey next` when the survey has no batch size
app = typer.Typer(
    help="Run a rating survey in the browser: a panel rates pairs through personal links.",
    add_completion=False,
    no_args_is_help=True,
)


def _fail(message: object) -> None:
    console.print(str(message), soft_wrap=True, highlight=False, markup=False, style="red")
    raise typer.Exit(1)


def _surveys():
    from ranking_core.storage import StorageError
    from ranking_core.surveys import SurveyStore

    try:
        return SurveyStore()
    except StorageError as exc:  # the database URL cannot be used
        _fail(exc)


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
        int | None, typer.Option("--design", min=1, help="Start design: N space-filling pairs.")
    ] = None,
    glucose_range: Annotated[
        tuple[float, float],
        typer.Option("--range", metavar="LO HI", help="Glucose range of the pairs, mg/dL."),
    ] = (20.0, 600.0),
    unit: Annotated[str, typer.Option(help="Unit shown to raters: mg/dL or mmol/L.")] = "mg/dL",
    per_rater: Annotated[
        int | None,
        typer.Option("--per-rater", min=1, help="Start-design pairs per rater (default: all)."),
    ] = None,
    overlap: Annotated[int, typer.Option(min=1, help="Raters per pair.")] = 2,
    repeats: Annotated[
        float,
        typer.Option(
            min=0.0, max=1.0, help="Share of each rater's pairs shown again (test-retest)."
        ),
    ] = 0.1,
    checks: Annotated[
        int, typer.Option(min=0, help="Check pairs with an obvious answer per rater.")
    ] = 2,
    batch: Annotated[
        int,
        typer.Option(
            min=0,
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
    seed: Annotated[int, typer.Option(help="Seed of the design and the shuffles.")] = 0,
) -> None:
    """Create a survey and print the organiser's link (keep it: it is shown once)."""
    from ranking_core.panels import start_design
    from ranking_core.ratings import RatingSetError
    from ranking_core.storage import StorageError
    from ranking_core.surveys import SurveySettings
    from ranking_core.surveys.design import default_instructions

    if (pairs is None) == (design is None):
        _fail("give the start design as either --pairs FORM.csv or --design N")
    try:
        settings = SurveySettings(
            unit=unit,
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
            frame = _read_pairs(pairs)
        else:
            frame = start_design(design, seed=seed, glucose_range=settings.glucose_range)
        text = (
            default_instructions(settings)
            if instructions is None
            else instructions.read_text(encoding="utf-8")
        )
        survey, token = _surveys().create(name, frame, settings, text)
    except (ValueError, OSError, StorageError, RatingSetError) as exc:
        _fail(exc)
    console.print(
        f"survey {survey.name!r}: {len(frame)} pairs, range "
        f"{settings.glucose_range[0]:g}-{settings.glucose_range[1]:g} mg/dL; "
        "invite raters with `riskgrid survey invite`",
        soft_wrap=True,
        highlight=False,
        markup=False,
    )
    console.print("organiser link (keep it private):", highlight=False)
    typer.echo(survey.organiser_link(token))


def _read_pairs(path: Path):
    """Columns reference and estimate (mg/dL) of a pair file (CSV/TSV/XLSX; a rating column,
    filled or empty, is ignored)."""
    import pandas as pd

    if path.suffix.lower() == ".xlsx":
        table = pd.read_excel(path)
    else:
        table = pd.read_csv(path, sep=None, engine="python")
    by_lower = {str(c).strip().lower(): c for c in table.columns}
    missing = [c for c in ("reference", "estimate") if c not in by_lower]
    if missing:
        raise ValueError(
            f"{path.name}: no {' or '.join(missing)} column (the pair file needs "
            "reference and estimate in mg/dL)"
        )
    return pd.DataFrame(
        {"reference": table[by_lower["reference"]], "estimate": table[by_lower["estimate"]]}
    )


@app.command()
def invite(
    name: Annotated[str, typer.Argument(help="The survey.")],
    raters: Annotated[
        int | None, typer.Option("--raters", min=1, help="How many raters to invite.")
    ] = None,
    names: Annotated[
        Path | None,
        typer.Option(
            "--names", help="Text file with one rater name per line (instead of rater-1, …)."
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Links to write (CSV: rater, link).")
    ] = Path("links.csv"),
) -> None:
    """Invite raters: one personal link each, written to a CSV (rater, link)."""
    import pandas as pd

    from ranking_core.meter.export import safe_csv
    from ranking_core.storage import StorageError
    from ranking_core.surveys import InviteInterrupted

    try:
        if names is not None:
            listed = [
                line.strip()
                for line in names.read_text(encoding="utf-8").splitlines()
                if line.strip()
            ]
            if raters is not None and raters != len(listed):
                _fail(f"--raters {raters} but {names.name} names {len(listed)} raters")
            who: int | list[str] = listed
        elif raters is not None:
            who = raters
        else:
            _fail("give --raters N or --names FILE")
        links = _surveys().invite(name, who)
    except InviteInterrupted as exc:  # the links of the raters invited before it still count
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(safe_csv(pd.DataFrame(exc.links, columns=["rater", "link"])), "utf-8")
        _fail(f"{exc}; their links are in {out}")
    except (OSError, StorageError, ValueError) as exc:
        _fail(exc)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(safe_csv(pd.DataFrame(links, columns=["rater", "link"])), encoding="utf-8")
    console.print(
        f"invited {len(links)} raters; wrote their links to {out} (send each rater "
        "their own link only)",
        soft_wrap=True,
        highlight=False,
        markup=False,
    )


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
    console.print(f"revoked the link of {rater!r}", highlight=False, markup=False)


@app.command()
def status(
    name: Annotated[str, typer.Argument(help="The survey.")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write it as JSON.")] = None,
) -> None:
    """Progress per rater: answered, time per answer, test-retest agreement, check pairs."""
    from rich.markup import escape
    from rich.table import Table

    from ranking_core.storage import StorageError
    from ranking_core.surveys.results import status as survey_status

    try:
        state = survey_status(_surveys(), name)
    except StorageError as exc:
        _fail(exc)
    console.print(
        f"survey {escape(state['survey'])!r}: {'open' if state['open'] else 'closed'}, "
        f"{state['answers']} of {state['queued']} answers, {state['batches']} "
        f"batch(es), {state['pairs_asked']} pairs asked",
        highlight=False,
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
            escape(r["rater"]),
            str(r["answered"]),
            str(r["queued"]),
            "–" if r["seconds_per_answer"] is None else f"{r['seconds_per_answer']:.1f}",
            "–" if r["retest_agreement"] is None else f"{r['retest_agreement']:.0%}",
            f"{r['checks_passed']} of {r['checks_answered']}",
            "revoked" if r["revoked"] else "open",
        )
    console.print(table)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(state, indent=2), encoding="utf-8")
        console.print(f"wrote {json_out}", highlight=False, markup=False)


@app.command("next")
def next_(
    name: Annotated[str, typer.Argument(help="The survey.")],
    batch: Annotated[
        int | None,
        typer.Option(
            "--batch",
            min=1,
            help=f"Pairs to add (default: the survey's batch size, else {DEFAULT_BATCH}).",
        ),
    ] = None,
) -> None:
    """Plan the next batch from the answers so far and add it to the raters' queues now."""
    from ranking_core.blas_threads import fit_threads
    from ranking_core.cli.progress import progress_bar
    from ranking_core.storage import StorageError
    from ranking_core.surveys.results import next_batch

    surveys = _surveys()
    try:
        before = surveys.get(name).batches
        with progress_bar("learning from the answers so far") as update, fit_threads(1000):
            size = batch or surveys.get(name).settings.batch or DEFAULT_BATCH
            after = next_batch(surveys, name, size, force=True, progress=update)
    except (StorageError, ValueError) as exc:
        _fail(exc)
    added = surveys.answers(name)
    new = added[added["batch"] == before]
    console.print(
        f"batch {before + 1} added: {new['pair_id'].nunique()} pairs in "
        f"{new['rater'].nunique()} raters' queues ({after} batches)",
        highlight=False,
    )


@app.command()
def export(
    name: Annotated[str, typer.Argument(help="The survey.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Ratings to write (CSV).")] = Path(
        "ratings.csv"
    ),
) -> None:
    """Write every answer (reference, estimate, rating, rater, answered_at, role); the file is a
    rating set for `riskgrid learn`."""
    from ranking_core.meter.export import safe_csv
    from ranking_core.storage import StorageError
    from ranking_core.surveys.results import export_frame

    try:
        frame = export_frame(_surveys().answers(name))
    except StorageError as exc:
        _fail(exc)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(safe_csv(frame), encoding="utf-8")
    console.print(f"wrote {len(frame)} answers to {out}", highlight=False, markup=False)


@app.command()
def close(name: Annotated[str, typer.Argument(help="The survey.")]) -> None:
    """Close the survey: links stop taking answers; export still works."""
    from ranking_core.storage import StorageError

    try:
        _surveys().close(name)
    except StorageError as exc:
        _fail(exc)
    console.print(f"survey {name!r} is closed", highlight=False, markup=False)
