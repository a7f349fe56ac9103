"""``riskgrid plan-study``: the probability that a device passes a standard's criteria in a study
of a given size, and the sensors needed for a target probability
(:mod:`ranking_core.meter.standards.study_plan`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ranking_core.cli import shown
from ranking_core.cli.output import err, fail
from ranking_core.inputs.text import printable
from ranking_core.meter.standards.bound_methods import BOUNDS, PLAN_BOUNDS
from ranking_core.validation import MAX_SEED

console = Console()


def _agreement(text: str) -> dict[str, float]:
    """ "A=0.90,B=0.85" → {"A": 0.90, "B": 0.85}; ValueError names the bad item, or the
    criterion given twice."""
    out: dict[str, float] = {}
    for item in (i.strip() for i in text.split(",") if i.strip()):
        key, sep, value = item.partition("=")
        try:
            if not sep:
                raise ValueError
            share = float(value)
        except ValueError:
            raise ValueError(
                f"--agreement: write ID=SHARE pairs separated by commas (A=0.90,B=0.85); got "
                f"{shown(item)}"
            ) from None
        if key.strip() in out:
            raise ValueError(
                f"--agreement: criterion {shown(key.strip())} is given twice; give each criterion "
                "once"
            )
        out[key.strip()] = share
    return out


def plan_study(
    agreement: Annotated[
        str,
        typer.Option(
            "--agreement",
            help="Expected share of pairs each named criterion counts, 0–1: "
            "A=0.90,B=0.85,... (criteria not named are left out). For H and I: the share of pairs "
            "free of the error.",
        ),
    ],
    sensors: Annotated[
        int, typer.Option("--sensors", min=1, max=5_000, help="Sensors in the study.")
    ] = 20,
    pairs_per_sensor: Annotated[
        int,
        typer.Option(
            "--pairs-per-sensor",
            min=1,
            max=10_000,
            help="Pairs each sensor gives in each criterion's range.",
        ),
    ] = 30,
    profile: Annotated[str, typer.Option("--profile", help="The standard.")] = "icgm",
    icc: Annotated[
        float,
        typer.Option(
            "--icc",
            min=0.0,
            max=0.99,
            help="Intra-class correlation of a sensor's pairs "
            "(0: independent pairs, exact binomial where criteria share no pairs).",
        ),
    ] = 0.0,
    bound: Annotated[
        str | None,
        typer.Option(
            "--bound",
            help=f"Lower bound of the criteria judged by one: {', '.join(PLAN_BOUNDS)} "
            "(default: the one meter-report judges by, kg with an ICC above 0, else cp).",
        ),
    ] = None,
    target: Annotated[
        float | None,
        typer.Option(
            "--target",
            min=0.01,
            max=0.999,
            help="Also find the fewest sensors whose probability of passing all reaches this.",
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", min=0, max=MAX_SEED, help="Seed of the simulations.")
    ] = 1,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the plan as JSON.")] = None,
) -> None:
    """Probability of passing each criterion of a standard, and all of them, for a planned study
    (S sensors × M pairs, expected agreement, intra-class correlation)."""
    from ranking_core.meter.standards.registry import UnknownProfileError
    from ranking_core.meter.standards.study_plan import MODEL, plan

    try:
        result = plan(
            profile, sensors, pairs_per_sensor, _agreement(agreement), icc, bound, target, seed
        )
    except (ValueError, UnknownProfileError) as exc:
        fail(exc)
    for note in result.notes:
        err.print(Text(f"warning: {printable(note)}"))
    chosen = f"{result.bound} ({BOUNDS[result.bound].label.split(' (')[0]}"
    if result.bound_default:
        chosen += ", meter-report's bound for " + (
            "clustered pairs" if icc > 0 else "independent pairs"
        )
    chosen += ")"
    table = Table(
        title=f"{shown(result.profile)}: {sensors} sensors × {pairs_per_sensor} pairs, "
        f"ICC {icc:g}, bound {chosen}",
        title_justify="left",
    )
    for column in ("Criterion", "What is counted", "Agreement", "P(pass)", "How"):
        table.add_column(column)
    for c in result.criteria:
        table.add_row(c.id, c.label, f"{c.agreement:.3f}", f"{c.probability_pass:.3f}", c.method)
    table.add_row("all", "every criterion above", "", f"{result.all:.3f}", result.all_method)
    console.print(table)
    if target is not None:
        console.print(
            f"sensors needed for P(pass all) ≥ {target:g}: "
            + (
                str(result.sensors_needed)
                if result.sensors_needed is not None
                else "not reached by any study up to the planner's limit"
            ),
            highlight=False,
        )
    if json_out is not None:
        from ranking_core.cli.output import write_json

        write_json(json_out, result.to_dict())
    console.print(f"Model: {MODEL}.", highlight=False)
