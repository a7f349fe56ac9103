"""``riskgrid learners …``: every learner of ``ranking_core.learners.LEARNERS`` side by side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ranking_core.cli import MAX_REPS, MAX_SIZE, MAX_TEST_SIZE, shown
from ranking_core.cli.options import SeedOption
from ranking_core.cli.output import OutputError, check_output, fail, write_output
from ranking_core.cli.progress import progress_bar
from ranking_core.learners import LEARNERS

app = typer.Typer(
    help="Compare the ranking learners of the source papers.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()


@app.command()
def compare(
    seg_table: Annotated[
        Path | None, typer.Option("--seg-table", help="SEG risk table (default: $SEG_TABLE).")
    ] = None,
    m: Annotated[
        int,
        typer.Option(help="Ratings per repetition (half fit, half pick λ).", min=4, max=MAX_SIZE),
    ] = 400,
    reps: Annotated[int, typer.Option(help="Repetitions (new draws).", min=1, max=MAX_REPS)] = 3,
    learner: Annotated[
        list[str] | None,
        typer.Option(
            "--learner", help=f"Learners to run (default: all). One of {', '.join(LEARNERS)}."
        ),
    ] = None,
    test_size: Annotated[
        int, typer.Option(help="Unseen test inputs per repetition.", min=1, max=MAX_TEST_SIZE)
    ] = 1000,
    gamma: Annotated[float, typer.Option(help="Gaussian kernel width γ (mg/dL²).")] = 1e4,
    seed: SeedOption = 0,
    out: Annotated[Path | None, typer.Option("--json", help="Write JSON here.")] = None,
) -> None:
    """Misranking (Kriukova et al. 2014, eq. (1)) of every learner on the SEG reconstruction, mean ±
    sd."""
    from ranking_core.experiments.learners import check_learner_names, compare_learners
    from ranking_core.grids.seg import SEGTableError, SEGTableMissing, find_seg_table

    try:
        names = check_learner_names(learner or list(LEARNERS))
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--learner") from exc

    try:
        if out is not None:
            check_output(out, "--json", [seg_table])
        seg = find_seg_table(seg_table)
    except OutputError as exc:
        fail(exc)
    except (SEGTableMissing, SEGTableError) as exc:
        fail(exc, code=2)
    with progress_bar("learners on the SEG reconstruction") as update:
        results = compare_learners(
            seg, names, m, reps, gamma=gamma, test_size=test_size, seed=seed, progress=update
        )
    rows = []
    table = Table("learner", "m", "misranking %", "parameter", "fit s", "note")
    for result in results:
        note = f"capped at m = {result['m']}" if result["capped"] else ""
        row = {
            "learner": result["learner"],
            "m": result["m"],
            "misranking_mean": 100 * result["misranking_mean"],
            "misranking_sd": 100 * result["misranking_sd"],
            "param": result["param"],
            "values": result["values"],
            "seconds_per_fit": result["seconds_per_fit"],
            "note": note,
        }
        rows.append(row)
        table.add_row(
            row["learner"],
            str(row["m"]),
            f"{row['misranking_mean']:.2f} ± {row['misranking_sd']:.2f}",
            f"{row['param']} ≈ {result['value_median']:.3g}",
            f"{row['seconds_per_fit']:.2f}",
            note,
        )
        console.print(
            f"{row['learner']}: {row['misranking_mean']:.2f} ± "
            f"{row['misranking_sd']:.2f} % ({row['seconds_per_fit']:.2f} s per fit) "
            f"{note}"
        )
    console.print(table)
    if out is not None:
        text = json.dumps(
            {
                "m": m,
                "reps": reps,
                "gamma": gamma,
                "seed": seed,
                "test_size": test_size,
                "rows": rows,
            },
            indent=2,
        )
        try:
            write_output(out, text, "--json")
        except OutputError as exc:
            fail(exc)
        console.print(f"wrote {shown(out)}")
