"""``riskgrid plan-panel``: the next (reference, estimate) pairs a panel should rate, as a rating
form (CSV with an empty rating column, and an HTML sheet to print)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from ranking_core.cli import shown
from ranking_core.cli.output import OutputError, check_outputs, fail, titled_table, write_output
from ranking_core.inputs import format_names
from ranking_core.panels.planning import DEFAULT_PLAN_METHOD, PLAN_METHOD_LABELS
from ranking_core.validation import MAX_SEED

console = Console(highlight=False, soft_wrap=True)


def plan_panel(
    ratings: Annotated[
        Path | None,
        typer.Argument(
            help=f"Ratings so far ({format_names()} with columns reference, estimate, rating and "
            "optionally rater). Leave out to get a space-filling start design."
        ),
    ] = None,
    next_: Annotated[
        int, typer.Option("--next", "-n", help="How many pairs to propose (1 to 200,000).")
    ] = 20,
    out: Annotated[Path, typer.Option("--out", "-o", help="Rating form to write (CSV).")] = Path(
        "next.csv"
    ),
    html: Annotated[
        Path | None,
        typer.Option("--html", help="Printable sheet (default: the form's name with .html)."),
    ] = None,
    seed: Annotated[
        int, typer.Option(min=0, max=MAX_SEED, help="Seed of the candidate pairs.")
    ] = 0,
    method: Annotated[
        str,
        typer.Option(
            help="How the pairs are picked: "
            + "; ".join(f"{name}: {label}" for name, label in PLAN_METHOD_LABELS.items())
            + "."
        ),
    ] = DEFAULT_PLAN_METHOD,
    unit: Annotated[
        str | None,
        typer.Option(
            help="Glucose unit of the ratings file: mg/dL or mmol/L (default: named in the "
            "headers, else mg/dL)."
        ),
    ] = None,
    glucose_range: Annotated[
        tuple[float, float],
        typer.Option(
            "--range",
            metavar="LO HI",
            help="Glucose range of the proposed pairs, mg/dL (references and meter readings).",
        ),
    ] = (20.0, 600.0),
) -> None:
    """Propose the next pairs to rate and write them as a rating form."""
    from ranking_core.panels.design import MIN_RATINGS, check_next

    sheet = out.with_suffix(".html") if html is None else html
    try:  # before anything is read or learned
        check_next(next_)
    except ValueError as exc:
        fail(f"--next: {exc}")
    try:
        check_outputs({"--out": out, "--html": sheet}, [ratings])
    except OutputError as exc:
        fail(exc)
    from ranking_core.blas_threads import fit_threads
    from ranking_core.cli.progress import progress_bar
    from ranking_core.learn import learn_panel
    from ranking_core.panels import plan_pairs
    from ranking_core.panels.design import rating_form_csv, rating_form_html
    from ranking_core.ratings import RatingSetError, read_rating_set

    data = None
    try:
        if ratings is not None:
            data = read_rating_set(ratings, unit=unit)
            if data.report():
                console.print(
                    f"[yellow]{len(data.frame)} ratings kept; refused or noted:"
                    f"[/yellow]\n{shown(data.report())}",
                    highlight=False,
                )
        model = None
        if data is not None and len(data.frame) >= MIN_RATINGS and method != "random":
            with progress_bar("learning the grid so far") as update, fit_threads(len(data.frame)):
                model = learn_panel(data, progress=update).model
        pairs = plan_pairs(
            data, next_, seed=seed, method=method, model=model, glucose_range=glucose_range
        )
    except (RatingSetError, ValueError) as exc:
        fail(exc)
    try:
        write_output(out, rating_form_csv(pairs), "--out", [ratings])
        write_output(sheet, rating_form_html(pairs), "--html", [ratings])
    except OutputError as exc:
        fail(exc)
    if "shortfall" in pairs.attrs:
        console.print(f"[yellow]{pairs.attrs['shortfall']}[/yellow]", highlight=False)
    if data is None or len(data.frame) < MIN_RATINGS:
        console.print(f"start design: {len(pairs)} space-filling pairs")
    else:
        console.print(
            f"{len(pairs)} pairs chosen by '{shown(method)}' after {len(data.frame)} ratings"
        )
    console.print(
        f"wrote {shown(out)} and {shown(sheet)}; fill in the rating column (0..4) and the "
        "rater, then add the rows to the ratings"
    )


def show_panel_report(fit, path: Path, inputs: list[Path | None] | None = None) -> None:
    """Print the panel report of a :class:`~ranking_core.learn.PanelFit`; write the ratings with
    their weights and flags to ``path`` and the per-rater table beside it (never over one of
    ``inputs``; a file that cannot be written ends the command with one sentence)."""
    from ranking_core.inputs.text import safe_csv
    from ranking_core.panels import panel_report
    from ranking_core.panels.missing import MISSING, REASONS, reason_note
    from ranking_core.panels.missing import shown as shown_value
    from ranking_core.panels.report import LOW_WEIGHT

    report = panel_report(fit)
    raters_path = path.with_name(f"{path.stem}-raters.csv")
    # rater names come from the user's file: written so that no cell starts a formula
    try:
        ratings_csv = safe_csv(fit.ratings.rename_axis("line").reset_index())
        write_output(path, ratings_csv, "--panel-report", inputs or [])
        write_output(raters_path, safe_csv(report.raters), "--panel-report", inputs or [])
    except OutputError as exc:
        fail(exc)
    table = titled_table(
        "Raters",
        ("Rater", "Ratings", "Offset", "Scale", "Noise sd", "Agreement", "Flagged", "Mean weight"),
        left=("Rater",),
    )
    # the flagged share in %, a column of numbers (a row's fields are typed as any scalar)
    raters = report.raters.assign(flagged_percent=100 * report.raters["flagged_share"])
    for row in raters.itertuples(index=False):
        table.add_row(
            shown(row.rater),
            f"{row.ratings:,}",
            shown_value(row.bias, "{:+.2f}", "bias", reason=False),
            shown_value(row.scale, "{:.2f}", "scale", reason=False),
            shown_value(row.noise_sd, "{:.2f}", "noise_sd", reason=False),
            shown_value(row.agreement, "{:.2f}", "agreement", reason=False),
            f"{row.flagged_percent:.1f} %",
            f"{row.mean_weight:.2f}",
        )
    console.print(table)
    note = reason_note(
        {"bias": "Offset, scale and noise", "agreement": "Agreement"},
        {k: report.raters[k].tolist() for k in ("bias", "agreement")},
    )
    if note is not None:
        console.print(Text(note))
    alpha = (
        f"{MISSING} ({REASONS['alpha']})"
        if report.alpha is None
        else f"{report.alpha:.3f} over {report.shared_scenarios} shared scenarios"
    )
    console.print(f"Krippendorff's α (interval): {alpha}", highlight=False)
    explained = shown_value(100 * report.consensus_r2, "{:.1f}", "consensus_r2", " %")
    console.print(
        f"Consensus explains {explained} of the ratings' "
        f"variance; answer step {report.step:g}; {len(report.flagged)} of "
        f"{report.n_ratings} ratings flagged as outlying",
        highlight=False,
    )
    if report.low_weight_raters:
        console.print(
            f"[yellow]Ratings of {shown(', '.join(report.low_weight_raters))} "
            f"weigh less than {LOW_WEIGHT:g} on average: their answers lie far from "
            "the consensus throughout.[/yellow]",
            highlight=False,
        )
    if len(report.flagged):
        columns = "Line|Reference mg/dL|Estimate mg/dL|Rating|Rater|Consensus|Residual|Weight"
        flagged = titled_table("Flagged ratings (largest residual first)", columns.split("|"))
        for line, rating in report.flagged.head(20).iterrows():
            flagged.add_row(
                str(line),
                f"{rating.reference:.0f}",
                f"{rating.estimate:.0f}",
                f"{rating.rating:g}",
                shown(rating.rater),
                f"{rating.consensus:.2f}",
                f"{rating.residual:+.1f}",
                f"{rating.weight:.2f}",
            )
        console.print(flagged)
    console.print(f"wrote {shown(path)} and {shown(raters_path)}")
