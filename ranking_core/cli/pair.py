"""``riskgrid pair SENSOR REFERENCE -o PAIRS.csv``: pair sensor readings with reference readings."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ranking_core.cli import shown
from ranking_core.inputs import format_names

console = Console()


def pair(
    sensor: Annotated[
        Path,
        typer.Argument(
            help=f"Sensor series ({format_names()}): a generic table (timestamp, "
            "glucose), a Dexcom Clarity or LibreView export."
        ),
    ],
    reference: Annotated[
        Path, typer.Argument(help="Reference series (finger-stick or lab), same formats.")
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            help="Write the pairs here (CSV: "
            "BGM, REF, reference_time, sensor_time, "
            "delta_seconds; glucose in mg/dL).",
        ),
    ],
    window: Annotated[
        float,
        typer.Option(help="Pair within ± this many minutes (more than 0, at most 1,440: a day)."),
    ] = 5.0,
    lag: Annotated[
        float,
        typer.Option(
            help="Minutes added to the sensor times before pairing "
            "(a sensor's physiological delay; -1,440 to "
            "+1,440)."
        ),
    ] = 0.0,
    format: Annotated[
        str, typer.Option("--format", help="Format of both files: auto, generic, dexcom or libre.")
    ] = "auto",
    unit: Annotated[
        str | None,
        typer.Option(
            "--unit",
            help="Glucose unit of both files: mg/dL or mmol/L. Default: named in the "
            "headers, else mg/dL; values that look like mmol/L are refused.",
        ),
    ] = None,
    reference_unit: Annotated[
        str | None,
        typer.Option(
            "--reference-unit", help="Unit of the reference file when it differs from --unit."
        ),
    ] = None,
    dayfirst: Annotated[
        bool | None,
        typer.Option(
            "--dayfirst/--monthfirst",
            help="Day/month order of dates written with the year last "
            "(e.g. 05-04-2024). Default: decided from the whole file (a number above 12 can only "
            "be a day); refused when nothing decides it.",
            show_default=False,
        ),
    ] = None,
    device: Annotated[
        str | None,
        typer.Option(
            "--device",
            help="Pair only this sensor device's readings (Dexcom Source Device ID); "
            "needed when devices overlap in time.",
        ),
    ] = None,
    max_rows: Annotated[
        int | None,
        typer.Option(
            "--max-rows", min=1, help="Refuse files with more data rows (default 2,000,000)."
        ),
    ] = None,
) -> None:
    """Pair each reference reading with the sensor reading nearest in time within ±window
    minutes (after shifting sensor times by --lag; a tie goes to the earlier sensor reading)."""
    from ranking_core.inputs import InputError, with_limits
    from ranking_core.inputs.series import SERIES_FORMATS, read_series
    from ranking_core.meter.pairing import check_window_lag, pair_series

    if format not in SERIES_FORMATS:
        console.print(f"--format must be one of {', '.join(SERIES_FORMATS)}", style="red")
        raise typer.Exit(2)
    try:
        check_window_lag(window, lag, ("--window", "--lag"))
        limits = with_limits(None, max_rows=max_rows)
        sensor_series = read_series(sensor, format, unit=unit, limits=limits, dayfirst=dayfirst)
        reference_series = read_series(
            reference,
            format,
            unit=reference_unit or unit,
            limits=limits,
            unit_option="--reference-unit" if reference_unit else "--unit",
            dayfirst=dayfirst,
        )
        result = pair_series(sensor_series, reference_series, window=window, lag=lag, device=device)
    except (InputError, ValueError) as exc:
        console.print(shown(exc), style="red", soft_wrap=True, highlight=False)
        raise typer.Exit(1) from exc
    for message in result.messages:
        console.print(shown(message), soft_wrap=True, highlight=False)
    if result.pairs.empty:
        console.print(
            "no reference reading has a sensor reading in the window; nothing written", style="red"
        )
        raise typer.Exit(1)
    output.parent.mkdir(parents=True, exist_ok=True)
    result.pairs.to_csv(output, index=False)
    console.print(f"wrote {len(result.pairs):,} pairs to {shown(output)}", highlight=False)
