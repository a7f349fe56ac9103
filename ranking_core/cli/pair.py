"""``riskgrid pair SENSOR REFERENCE -o PAIRS.csv``: pair sensor readings with reference readings;
``riskgrid pair EXPORT -o PAIRS.csv``: pair the meter and CGM readings of one Nightscout or
Tidepool export (:mod:`ranking_core.meter.pairs.device_exports`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from ranking_core.cli import shown
from ranking_core.cli.output import OutputError, check_output, fail, write_output
from ranking_core.inputs import format_names

if TYPE_CHECKING:
    import pandas as pd

console = Console(highlight=False, soft_wrap=True)


def pair(
    sensor: Annotated[
        Path,
        typer.Argument(
            help=f"Sensor series ({format_names()}): a generic table (timestamp, "
            "glucose), a Dexcom Clarity or LibreView export."
        ),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            help="Write the pairs here (CSV: "
            "BGM, REF, reference_time, sensor_time, "
            "delta_seconds; glucose in mg/dL; from an export also sensor, subject when named, "
            "and record).",
        ),
    ],
    reference: Annotated[
        Path | None,
        typer.Argument(
            help="Reference series (finger-stick or lab), same formats. Leave it out when the "
            "first file is a Nightscout (entries: sgv and mbg records) or Tidepool (cbg and "
            "smbg records) export, JSON or CSV: each meter reading is then paired with the "
            "latest reading of each CGM device of its subject at most --before minutes before "
            "it (one pair per device)."
        ),
    ] = None,
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
    before: Annotated[
        float,
        typer.Option(
            "--before",
            help="With one export file: minutes a CGM reading may precede the meter reading "
            "(more than 0, at most 60).",
        ),
    ] = 5.0,
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
    from ranking_core.meter.pairs.pairing import check_window_lag, pair_series

    if reference is None:
        _pair_export(sensor, output, before, max_rows)
        return
    if format not in SERIES_FORMATS:
        fail(f"--format must be one of {', '.join(SERIES_FORMATS)}; got '{format}'", code=2)
    try:
        check_output(output, "--output", [sensor, reference])
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
    except (InputError, ValueError, OutputError) as exc:
        fail(exc)
    _write_pairs(
        result.pairs,
        result.messages,
        output,
        [sensor, reference],
        "no reference reading has a sensor reading in the window",
    )


def _pair_export(source: Path, output: Path, before: float, max_rows: int | None) -> None:
    """``riskgrid pair EXPORT -o PAIRS.csv``: meter readings paired with the CGM readings of
    one Nightscout or Tidepool export; BGM the CGM value, REF the meter's."""
    from ranking_core.inputs import InputError, with_limits
    from ranking_core.meter.pairs.device_exports import pair_export

    try:
        check_output(output, "--output", [source])
        result = pair_export(source, before, limits=with_limits(None, max_rows=max_rows))
    except (InputError, ValueError, OutputError) as exc:
        fail(exc)
    _write_pairs(
        result.frame,
        result.messages,
        output,
        [source],
        "no meter reading has a CGM reading before it in the window",
    )


def _write_pairs(
    pairs: pd.DataFrame, messages: Sequence[str], output: Path, inputs: list[Path], none: str
) -> None:
    """Print the pairing's ``messages``, then write ``pairs`` as CSV to ``output`` (never over
    one of ``inputs``); fail with ``none`` when no pair was made."""
    for message in messages:
        console.print(shown(message))
    if pairs.empty:
        fail(f"{none}; nothing written")
    try:
        write_output(output, pairs.to_csv(index=False), "--output", inputs)
    except OutputError as exc:
        fail(exc)
    console.print(f"wrote {len(pairs):,} pairs to {shown(output)}")
