"""``riskgrid meter-report PAIRS``: the meter / CGM accuracy report, every section of the
report's registry (:data:`~ranking_core.meter.sections.SECTIONS`) printed in order at the
terminal's width, and the same sections as JSON, PDF or HTML, ``--out-dir`` files and per-pair
CSV. The pipeline is :mod:`ranking_core.meter.pipeline`: this command parses options, calls it
and prints."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from ranking_core.cli import shown
from ranking_core.cli.output import (
    OutputError,
    check_outputs,
    exit_without_collecting,
    fail,
    write_output,
    write_outputs,
)
from ranking_core.inputs import MGDL_PER_MMOLL, format_names
from ranking_core.meter.standards.bound_methods import BOUNDS
from ranking_core.meter.standards.registry import profile_names
from ranking_core.validation import MAX_SEED

if TYPE_CHECKING:  # the report's modules load when the command runs (the help starts at once)
    from ranking_core.meter.pipeline import ReportRun
    from ranking_core.meter.report import MeterReport

console = Console(highlight=False, soft_wrap=True)
STANDARD_NAMES = profile_names()
BOUND_NAMES = tuple(BOUNDS)
REPORT_FORMATS = (".pdf", ".html")


def print_report(report: MeterReport) -> None:
    """Every section of the report in order: its title, its one-line summary, its cautions,
    its tables at the terminal's width (stacked when they do not fit; nothing cut) and the
    figures that the documents and ``--out-dir`` hold."""
    from ranking_core.cli.text_tables import print_table
    from ranking_core.meter.drawing.display import FAILS, MEETS, PASSES

    verdict_styles = {PASSES: "bold green", MEETS: "bold green", FAILS: "bold red"}
    for view in report.views():
        console.print(f"\n[bold]{shown(view.title)}[/bold]", highlight=False, soft_wrap=False)
        console.print(shown(view.summary), highlight=False, soft_wrap=False)
        for caution in view.cautions:
            console.print(
                "[bold yellow]caution:[/bold yellow]",
                shown(caution),
                highlight=False,
                soft_wrap=False,
            )
        if view.key == "notes":  # the notes are the section's text
            for note in view.about:
                console.print(
                    "[yellow]note:[/yellow]", shown(note), highlight=False, soft_wrap=False
                )
        for table in view.tables:
            text = table.reader(report.glucose_unit)
            print_table(console, table.title, text, table.caption, verdict_styles)
        for figure in view.figures:
            console.print(
                f"[dim]figure {shown(figure.name)}: in --report and --out-dir[/dim]",
                highlight=False,
                soft_wrap=False,  # words wrapped at the console's width
            )


# the options of meter-report, one type each (the command reads as its list of choices)
PairsArgument = Annotated[
    Path,
    typer.Argument(help=f"{format_names()} with BGM and REF columns (see docs/INPUTS.md)."),
]
UnitOption = Annotated[
    str | None,
    typer.Option(
        "--unit",
        help="Glucose unit of the file: mg/dL or mmol/L (× 18.016 to mg/dL). Default: "
        "the unit named in the headers, else mg/dL; values that look like mmol/L "
        "are refused until the unit is given.",
    ),
]
SheetOption = Annotated[
    str | None, typer.Option("--sheet", help="XLSX sheet to read (default the first).")
]
MaxRowsOption = Annotated[
    int | None,
    typer.Option("--max-rows", min=1, help="Refuse files with more data rows (default 2,000,000)."),
]
MaxMbOption = Annotated[
    float | None,
    typer.Option(
        "--max-mb", min=0.001, help="Refuse files larger than this many MiB (default 256)."
    ),
]
SegTableOption = Annotated[
    Path | None,
    typer.Option(
        "--seg-table", help="SEG RiskPairData table (CSV, CSV.gz, XLSX); default $SEG_TABLE."
    ),
]
JsonOutOption = Annotated[
    Path | None, typer.Option("--json", help="Write every count and percentage as JSON here.")
]
ParkesTypeOption = Annotated[
    int, typer.Option(help="Diabetes type of the Parkes grid (1 or 2).", min=1, max=2)
]
LearnedGridOption = Annotated[
    Path | None,
    typer.Option(
        help="A learned risk grid file (grid.npy or grid.csv as written by riskgrid learn)."
    ),
]
OutDirOption = Annotated[
    Path | None,
    typer.Option(
        help="Also write the tables (formula-safe CSV), the interactive SEG heat map (HTML) "
        "and the report's plots (error grids, bland_altman, regression, dgr ...) as PNG and "
        "PDF here."
    ),
]
PngOption = Annotated[
    bool,
    typer.Option(
        help="With --out-dir, also write the interactive SEG heat map as PNG "
        "(needs Chrome/Chromium for kaleido; the report's plots need no browser)."
    ),
]
ReportFileOption = Annotated[
    Path | None,
    typer.Option(
        "--report",
        help="Write the whole report as one document: report.pdf or report.html "
        "(every section: tables, error-grid plots, criteria, method comparison ...).",
    ),
]
DeviceOption = Annotated[
    str | None,
    typer.Option(
        "--device",
        help="bgm (a blood glucose meter) or cgm (a continuous glucose monitor): picks the "
        "default standard (ISO 15197 for a meter, the FDA iCGM special controls for a CGM). "
        "Default: cgm when the file has sensor times or a sensor column, else bgm.",
    ),
]
ProfileOption = Annotated[
    str | None,
    typer.Option(
        "--profile",
        help="Standards to judge the pairs by, comma-separated, or all: "
        f"{', '.join(STANDARD_NAMES)}. Default: the device's standard.",
    ),
]
MeasuringRangeOption = Annotated[
    str | None,
    typer.Option(
        "--measuring-range",
        help="LOW-HIGH mg/dL (inclusive, by the device's reading) inside which every chosen "
        "standard judges, or none for every pair. Default: each standard's own (iCGM: "
        "40-400; the meter standards: none).",
    ),
]
BoundOption = Annotated[
    str | None,
    typer.Option(
        "--bound",
        help="Lower confidence bound of the criteria judged by one: "
        f"{', '.join(BOUND_NAMES)}. Default: kg with a sensor or subject column, else cp.",
    ),
]
ResamplesOption = Annotated[
    int,
    typer.Option(
        "--resamples", min=100, max=100_000, help="Bootstrap resamples (--bound bootstrap)."
    ),
]
SeedOption = Annotated[
    int,
    typer.Option("--seed", min=0, max=MAX_SEED, help="Seed of the bootstrap."),
]
RateGapOption = Annotated[
    float,
    typer.Option(
        "--rate-gap",
        min=0.1,
        max=1440,
        help="Minutes: consecutive pairs of a sensor at most this far apart give a rate of "
        "change (criteria J and K).",
    ),
]
ByOption = Annotated[
    str | None,
    typer.Option(
        "--by",
        help="A column of the file (population, site, lot) whose values each get every "
        "standard judged again.",
    ),
]
DemingRatioOption = Annotated[
    float,
    typer.Option(
        "--deming-ratio",
        min=1e-6,
        max=1e6,
        help="Method comparison: the Deming error ratio λ = σ²(reference) / σ²(device), the "
        "reference's error variance over the device's.",
    ),
]
DecisionLevelsOption = Annotated[
    str | None,
    typer.Option(
        "--decision-levels",
        help="Method comparison: the medical decision levels at which each regression's "
        "bias is given, comma-separated, in the file's unit (mg/dL, or mmol/L when the file "
        "is in mmol/L). Default: 70,180,250 mg/dL (3.89,9.99,13.88 mmol/L).",
    ),
]
PairsOutOption = Annotated[
    Path | None,
    typer.Option(
        "--pairs-out",
        help="Write every valid pair with its line, SEG risk and category, "
        "DTS, Clarke and Parkes zones, learned-grid risk, ISO within-15 "
        "flag, error direction and hypoglycaemia missed (REF < 70 mg/dL, "
        "BGM >= 70 mg/dL) as CSV here.",
    ),
]
FailOnVerdictOption = Annotated[
    bool,
    typer.Option(
        "--fail-on-verdict",
        help="Exit with status 3, after writing every output, when an acceptance criterion "
        "that was judged fails (criteria with no pairs in range are not judged and do not "
        "fail); the failed criteria are named on stderr.",
    ),
]


def meter_report(
    pairs: PairsArgument,
    unit: UnitOption = None,
    sheet: SheetOption = None,
    max_rows: MaxRowsOption = None,
    max_mb: MaxMbOption = None,
    seg_table: SegTableOption = None,
    json_out: JsonOutOption = None,
    parkes_type: ParkesTypeOption = 1,
    learned_grid: LearnedGridOption = None,
    out_dir: OutDirOption = None,
    png: PngOption = False,
    report_file: ReportFileOption = None,
    device: DeviceOption = None,
    profile: ProfileOption = None,
    measuring_range: MeasuringRangeOption = None,
    bound: BoundOption = None,
    resamples: ResamplesOption = 10_000,
    seed: SeedOption = 1,
    rate_gap: RateGapOption = 30.0,
    by: ByOption = None,
    deming_ratio: DemingRatioOption = 1.0,
    decision_levels: DecisionLevelsOption = None,
    pairs_out: PairsOutOption = None,
    fail_on_verdict: FailOnVerdictOption = False,
) -> None:
    """Meter or CGM accuracy report of BGM/REF pairs: the verdicts of the standards chosen, point
    accuracy, the method comparison (Passing–Bablok, Deming, bias at decision levels,
    Bland–Altman), the SEG tool's tables, DTS, Clarke and Parkes zones, the CGM analyses."""
    from ranking_core.grids.files import GridFileError
    from ranking_core.grids.seg_source import SEGTableError
    from ranking_core.meter.pairs.readings import PairsFileError
    from ranking_core.meter.pipeline import (
        ReportRequest,
        failed_verdicts,
        judge_settings,
        run_report,
    )

    request = ReportRequest(
        device=device,
        profile=profile,
        measuring_range=measuring_range,
        bound=bound,
        resamples=resamples,
        seed=seed,
        rate_gap=rate_gap,
        parkes_type=parkes_type,
        deming_ratio=deming_ratio,
        decision_levels=decision_levels,
    )
    outputs = {"--pairs-out": pairs_out, "--json": json_out, "--report": report_file}
    inputs = [pairs, seg_table, learned_grid]
    try:  # every choice and every output checked before anything is read or computed
        judge_settings(request, None)
        if report_file is not None and report_file.suffix.lower() not in REPORT_FORMATS:
            raise ValueError(
                f"--report: the file must end in {' or '.join(REPORT_FORMATS)}; got "
                f"'{report_file.name}'"
            )
        check_outputs(outputs, inputs)
        if out_dir is not None and (out_dir.is_symlink() or out_dir.is_file()):
            raise OutputError(f"--out-dir {out_dir} is not a folder; give a folder")
    except (ValueError, OutputError) as exc:
        fail(exc)
    exit_without_collecting()  # every output below goes through write_output; no database
    try:
        run = run_report(
            pairs,
            request,
            unit=unit,
            sheet=sheet,
            max_rows=max_rows,
            max_bytes=None if max_mb is None else int(max_mb * 2**20),
            by=by,
            seg_option=seg_table,
            learned_grid=learned_grid,
        )
    except (PairsFileError, SEGTableError, GridFileError, ValueError) as exc:
        fail(exc)
    _print_reading(run)
    print_report(run.report)
    try:
        _write_outputs(run, inputs, pairs_out, report_file, json_out, out_dir, png)
    except OutputError as exc:
        fail(exc)
    if fail_on_verdict:  # last: every output above is written whatever the verdicts
        failed, judged = failed_verdicts(run.report)
        if failed:
            typer.echo(
                f"meter-report: {len(failed)} of {judged} acceptance criteria failed: "
                f"{', '.join(failed)}",
                err=True,
            )
            raise typer.Exit(3)


def _print_reading(run: ReportRun) -> None:
    """What was read: the reader's summary, the unit's conversion, a missing SEG table."""
    console.print(shown(run.pairs.messages[0]), highlight=False)
    if run.pairs.glucose_unit != "mg/dL":
        console.print(
            f"glucose read in {run.pairs.glucose_unit}, converted to mg/dL "
            f"(× {MGDL_PER_MMOLL}) for the SEG tool's tables; glucose below is in "
            f"{run.pairs.glucose_unit} with mg/dL beside it"
        )
    if run.seg_missing:
        console.print(
            f"[yellow]{shown(run.seg_missing)}[/yellow]\nThe SEG risk tables are left out; "
            "the other tables follow."
        )


def _write_outputs(
    run: ReportRun,
    inputs: list[Path | None],
    pairs_out: Path | None,
    report_file: Path | None,
    json_out: Path | None,
    out_dir: Path | None,
    png: bool,
) -> None:
    """Every output of ``meter-report`` through :func:`~ranking_core.cli.output.write_output`
    (never an input file, never through a symbolic link, one sentence on failure)."""
    from ranking_core.meter.pipeline import out_dir_files, pairs_csv, report_document, report_json

    report = run.report
    if pairs_out is not None:
        write_output(pairs_out, pairs_csv(report), "--pairs-out", inputs)
        console.print(f"wrote {shown(pairs_out)}")
    if report_file is not None:
        with console.status(f"Writing {shown(report_file.name)}…"):
            document = report_document(report, report_file.suffix, name=report.source or None)
            write_output(report_file, document, "--report", inputs)
        console.print(f"wrote {shown(report_file)}")
    if json_out is not None:
        write_output(json_out, report_json(report), "--json", inputs)
        console.print(f"wrote {shown(json_out)}")
    if out_dir is not None:
        from ranking_core.meter.documents.export import FigureExportError

        try:
            files = out_dir_files(report, png=png)
        except FigureExportError as exc:
            fail(exc)
        paths = write_outputs(out_dir, files, "--out-dir", inputs)
        console.print(f"wrote {len(paths)} files to {shown(out_dir)}")
