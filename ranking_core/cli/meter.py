"""``riskgrid meter-report PAIRS``: the SEG tool's meter accuracy report, the DTS, Clarke and Parkes
zones, ISO 15197:2013 criteria and statistics by range; optionally one PDF or HTML document."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ranking_core.cli import shown
from ranking_core.cli.output import OutputError, check_outputs, fail, write_output, write_outputs
from ranking_core.grids.registry import get_grid
from ranking_core.grids.seg import (
    MISSING_SEG_MESSAGE,
    SEG_TABLE_ENV,
    SEGTableError,
    SEGTableMissing,
    find_seg_table,
)
from ranking_core.inputs import MGDL_PER_MMOLL, format_names, with_limits
from ranking_core.inputs.text import named
from ranking_core.meter.pairs.readings import PairsFileError, read_pairs
from ranking_core.meter.report import MeterReport, device_of
from ranking_core.meter.report import meter_report as build_report
from ranking_core.meter.standards.acceptance import default_standards
from ranking_core.meter.standards.bounds import BOUNDS
from ranking_core.meter.standards.registry import DEVICES, profile_names
from ranking_core.validation import MAX_SEED

console = Console(highlight=False, soft_wrap=True)
STANDARD_NAMES = profile_names()
BOUND_NAMES = tuple(BOUNDS)


def _standards(profile: str | None) -> tuple[str, ...] | None:
    """--profile NAME[,NAME] or all → the standards' names (None: the device's default)."""
    if profile is None:
        return None
    names = tuple(n.strip() for n in profile.split(",") if n.strip())
    if names == ("all",):
        return STANDARD_NAMES
    unknown = [n for n in names if n not in STANDARD_NAMES]
    if unknown or not names:
        raise ValueError(
            f"--profile: choose from {', '.join(STANDARD_NAMES)} or all (comma-separated); "
            f"got {named(profile)}"
        )
    return tuple(dict.fromkeys(names))


def _print_table(title: str, text: pd.DataFrame, caption: str | None = None) -> None:
    from ranking_core.meter.drawing.display import FAILS, MEETS, PASSES

    styles = {PASSES: "bold green", MEETS: "bold green", FAILS: "bold red"}
    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    for i, column in enumerate(text.columns):
        short = max((len(cell) for cell in text[column]), default=0) <= 12
        # short cells (numbers, verdicts) never wrap: long texts take the remaining width
        table.add_column(
            str(column), justify="left" if i == 0 or not short else "right", no_wrap=short
        )
    for row in text.itertuples(index=False):
        table.add_row(*(Text(cell, style=styles.get(cell, "")) for cell in row))
    console.print(table)


def _print_tables(report: MeterReport) -> None:
    from ranking_core.meter.drawing.display import display_frame
    from ranking_core.meter.standards.acceptance import get_profile

    titles = report.titles()
    for name, frame in report.tables().items():
        if name == "acceptance":  # one table per standard, narrow enough for 80 columns
            keys = ["group", "profile"] if "group" in frame else ["profile"]
            for key, rows in frame.groupby(keys, sort=False):
                group, profile = key if len(keys) == 2 else ("", key[0])
                text = display_frame(rows, name, report.glucose_unit)
                text = text.drop(
                    columns=[c for c in ("Group", "Profile", "Rule") if c in text]
                ).rename(
                    columns={
                        "Criterion": "",
                        "Pairs counted / in range": "Pairs",
                        "95 % lower bound (%)": "Bound %",
                        "Share (%)": "%",
                        "Required (%)": "Needs %",
                    }
                )
                rules = "; ".join(
                    f"{', '.join(part['id'])}: {rule}"
                    for rule, part in rows.groupby("rule", sort=False)
                )
                where = f" — {report.group_column} {group}" if group != "" else ""
                _print_table(
                    f"{get_profile(str(profile)).title} acceptance criteria{where}",
                    text,
                    f"Verdict: {rules}",
                )
            continue
        purpose = get_grid(report.zone_grids[name]).purpose if name in report.zone_grids else None
        _print_table(titles[name], display_frame(frame, name, report.glucose_unit), purpose)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(2**20), b""):
            digest.update(block)
    return digest.hexdigest()


def _seg_provenance(option: Path | None) -> str:
    """The SEG table used, for the report's provenance: its file name, the first 12 hex digits of
    the file's SHA-256 and who gave it (the operator, by --seg-table or $SEG_TABLE)."""
    import os

    path = Path(option if option is not None else os.environ[SEG_TABLE_ENV])
    given_by = "--seg-table" if option is not None else f"${SEG_TABLE_ENV}"
    return f"{path.name} (sha256 {_sha256(path)[:12]}, the operator's file: {given_by})"


def _learned_provenance(path: Path) -> dict[str, str | int | float]:
    """The learned grid's file name and, from the grid.json written beside it by riskgrid
    learn (when present and readable), its λ (a number) and the checksum of its ratings; for a
    grid written by riskgrid elicit, its number of raters and the checksums of its inputs."""
    out: dict[str, str | int | float] = {"learned grid": path.name}
    try:
        meta = json.loads((path.parent / "grid.json").read_text(encoding="utf-8"))
        if isinstance(meta, dict) and meta.get("kind") == "elicited grid":  # riskgrid elicit
            out["learned grid λ"] = "none (elicited by the SEG method, not learned)"
            out["learned grid raters"] = len(meta["raters"])
            out["learned grid inputs checksum"] = ", ".join(
                str(item["sha256"]) for item in meta["inputs"].values()
            )
            return out
        lam = float(meta["lambda"])
        if not math.isfinite(lam):
            raise ValueError(lam)
        out["learned grid λ"] = lam
        out["learned grid ratings checksum"] = str(meta["ratings_checksum"])
    except (OSError, ValueError, KeyError, TypeError):
        out["learned grid λ"] = "unknown (no grid.json beside the grid file)"
    return out


def meter_report(
    pairs: Annotated[
        Path,
        typer.Argument(help=f"{format_names()} with BGM and REF columns (see docs/INPUTS.md)."),
    ],
    unit: Annotated[
        str | None,
        typer.Option(
            "--unit",
            help="Glucose unit of the file: mg/dL or mmol/L (× 18.016 to mg/dL). Default: "
            "the unit named in the headers, else mg/dL; values that look like mmol/L "
            "are refused until the unit is given.",
        ),
    ] = None,
    sheet: Annotated[
        str | None, typer.Option("--sheet", help="XLSX sheet to read (default the first).")
    ] = None,
    max_rows: Annotated[
        int | None,
        typer.Option(
            "--max-rows", min=1, help="Refuse files with more data rows (default 2,000,000)."
        ),
    ] = None,
    max_mb: Annotated[
        float | None,
        typer.Option(
            "--max-mb", min=0.001, help="Refuse files larger than this many MiB (default 256)."
        ),
    ] = None,
    seg_table: Annotated[
        Path | None,
        typer.Option(
            "--seg-table", help="SEG RiskPairData table (CSV, CSV.gz, XLSX); default $SEG_TABLE."
        ),
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write every count and percentage as JSON here.")
    ] = None,
    parkes_type: Annotated[
        int, typer.Option(help="Diabetes type of the Parkes grid (1 or 2).", min=1, max=2)
    ] = 1,
    learned_grid: Annotated[
        Path | None,
        typer.Option(
            help="A learned risk grid file (grid.npy or grid.csv as written by riskgrid learn)."
        ),
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            help="Also write the tables (formula-safe CSV), the interactive figures (HTML) and "
            "the report's plots (error grids, bland_altman) as PNG and PDF here."
        ),
    ] = None,
    png: Annotated[
        bool,
        typer.Option(
            help="With --out-dir, also write the interactive SEG heat map as PNG "
            "(needs Chrome/Chromium for kaleido; the report's plots need no browser)."
        ),
    ] = False,
    report_file: Annotated[
        Path | None,
        typer.Option(
            "--report",
            help="Write the whole report as one document: report.pdf or report.html "
            "(tables, error-grid plots, ISO criteria, statistics by range).",
        ),
    ] = None,
    device: Annotated[
        str | None,
        typer.Option(
            "--device",
            help="bgm (a blood glucose meter) or cgm (a continuous glucose monitor): picks the "
            "default standard (ISO 15197 for a meter, the FDA iCGM special controls for a CGM). "
            "Default: cgm when the file has sensor times or a sensor column, else bgm.",
        ),
    ] = None,
    profile: Annotated[
        str | None,
        typer.Option(
            "--profile",
            help="Standards to judge the pairs by, comma-separated, or all: "
            f"{', '.join(STANDARD_NAMES)}. Default: the device's standard.",
        ),
    ] = None,
    measuring_range: Annotated[
        str | None,
        typer.Option(
            "--measuring-range",
            help="LOW-HIGH mg/dL (inclusive, by the device's reading) inside which every chosen "
            "standard judges, or none for every pair. Default: each standard's own (iCGM: "
            "40-400; the meter standards: none).",
        ),
    ] = None,
    bound: Annotated[
        str | None,
        typer.Option(
            "--bound",
            help="Lower confidence bound of the criteria judged by one: "
            f"{', '.join(BOUND_NAMES)}. Default: kg with a sensor or subject column, else cp.",
        ),
    ] = None,
    resamples: Annotated[
        int,
        typer.Option(
            "--resamples", min=100, max=100_000, help="Bootstrap resamples (--bound bootstrap)."
        ),
    ] = 10_000,
    seed: Annotated[
        int,
        typer.Option("--seed", min=0, max=MAX_SEED, help="Seed of the bootstrap."),
    ] = 1,
    rate_gap: Annotated[
        float,
        typer.Option(
            "--rate-gap",
            min=0.1,
            max=1440,
            help="Minutes: consecutive pairs of a sensor at most this far apart give a rate of "
            "change (criteria J and K).",
        ),
    ] = 30.0,
    by: Annotated[
        str | None,
        typer.Option(
            "--by",
            help="A column of the file (population, site, lot) whose values each get every "
            "standard judged again.",
        ),
    ] = None,
    pairs_out: Annotated[
        Path | None,
        typer.Option(
            "--pairs-out",
            help="Write every valid pair with its line, SEG risk and category, "
            "DTS, Clarke and Parkes zones, learned-grid risk, ISO within-15 "
            "flag, error direction and hypoglycaemia missed (REF < 70 mg/dL, "
            "BGM >= 70 mg/dL) as CSV here.",
        ),
    ] = None,
    fail_on_verdict: Annotated[
        bool,
        typer.Option(
            "--fail-on-verdict",
            help="Exit with status 3, after writing every output, when an acceptance criterion "
            "that was judged fails (criteria with no pairs in range are not judged and do not "
            "fail); the failed criteria are named on stderr.",
        ),
    ] = False,
) -> None:
    """Meter accuracy report of BGM/REF pairs: the official SEG tool's tables, DTS, Clarke and
    Parkes zones, ISO 15197:2013 criteria, statistics by glucose range."""
    from ranking_core.meter.standards.acceptance import JudgeSettings, parse_measuring_range

    try:
        standards = _standards(profile)
        span = "default" if measuring_range is None else parse_measuring_range(measuring_range)
        if device is not None and device not in DEVICES:
            raise ValueError(f"--device: choose bgm or cgm; got {named(device)}")
        if bound is not None and bound not in BOUND_NAMES:
            raise ValueError(f"--bound: choose one of {', '.join(BOUND_NAMES)}; got {named(bound)}")
    except ValueError as exc:
        fail(exc)
    if report_file is not None:
        from ranking_core.meter.documents.document import REPORT_FORMATS

        if report_file.suffix.lower() not in REPORT_FORMATS:
            fail(
                f"--report: the file must end in {' or '.join(REPORT_FORMATS)}; got "
                f"'{report_file.name}'"
            )
    inputs = [pairs, seg_table, learned_grid]
    try:  # every output checked before anything is read or computed
        check_outputs(
            {"--pairs-out": pairs_out, "--json": json_out, "--report": report_file}, inputs
        )
        if out_dir is not None and (out_dir.is_symlink() or out_dir.is_file()):
            raise OutputError(f"--out-dir {out_dir} is not a folder; give a folder")
    except OutputError as exc:
        fail(exc)
    limits = with_limits(
        None, max_rows=max_rows, max_bytes=None if max_mb is None else int(max_mb * 2**20)
    )
    try:
        data = read_pairs(pairs, unit=unit, sheet=sheet, limits=limits, by=by)
    except PairsFileError as exc:
        fail(exc)
    console.print(shown(data.messages[0]), highlight=False)
    if data.glucose_unit != "mg/dL":
        console.print(
            f"glucose read in {data.glucose_unit}, converted to mg/dL "
            f"(× {MGDL_PER_MMOLL}) for the SEG tool's tables; glucose below is in "
            f"{data.glucose_unit} with mg/dL beside it"
        )
    try:
        table = find_seg_table(seg_table)
    except SEGTableMissing as exc:
        console.print(
            f"[yellow]{shown(exc)}[/yellow]\nThe SEG risk tables are left out; the other "
            "tables follow."
        )
        table = None
    except SEGTableError as exc:
        fail(exc)
    learned = None
    given: dict[str, str | int | float] = {
        "input file": pairs.name,
        "input file sha256": _sha256(pairs),
    }
    if table is not None:  # which SEG table: file name, sha256 prefix, who provided it
        given["SEG table"] = _seg_provenance(seg_table)
    if learned_grid is not None:
        from ranking_core.grids.files import GridFileError, read_grid_file

        try:
            learned = read_grid_file(learned_grid)
        except GridFileError as exc:
            fail(exc)
        given.update(_learned_provenance(learned_grid))
    try:
        chosen = device or device_of(data)
        judge = JudgeSettings(
            standards or default_standards(chosen),
            measuring_range=span,
            bound=bound,
            resamples=resamples,
            seed=seed,
        )
        report = build_report(
            data,
            table,
            learned,
            parkes_type=parkes_type,
            provenance=given,
            judge=judge,
            device=chosen,
            rate_gap=rate_gap,
        )
    except ValueError as exc:
        fail(exc)
    for message in report.messages:
        if message not in (MISSING_SEG_MESSAGE, data.messages[0]):  # both printed above
            console.print("[yellow]note:[/yellow]", shown(message), highlight=False)
    _print_tables(report)
    for note in report.acceptance_notes:
        console.print(shown(note), highlight=False)
    for caveat in report.caveats:
        console.print("[bold yellow]caution:[/bold yellow]", shown(caveat), highlight=False)
    try:
        _write_outputs(
            report, table, learned, pairs, inputs, pairs_out, report_file, json_out, out_dir, png
        )
    except OutputError as exc:
        fail(exc)
    if fail_on_verdict:  # last: every output above is written whatever the verdicts
        _exit_on_failed_verdicts(report)


def _write_outputs(
    report: MeterReport,
    table,
    learned,
    pairs: Path,
    inputs: list[Path | None],
    pairs_out: Path | None,
    report_file: Path | None,
    json_out: Path | None,
    out_dir: Path | None,
    png: bool,
) -> None:
    """Every output of ``meter-report`` through :func:`~ranking_core.cli.output.write_output`
    (never an input file, never through a symbolic link, one sentence on failure)."""
    if pairs_out is not None:
        from ranking_core.meter.documents.export import pair_results, safe_csv

        write_output(pairs_out, safe_csv(pair_results(report)), "--pairs-out", inputs)
        console.print(f"wrote {shown(pairs_out)}")
    if report_file is not None:
        from ranking_core.meter.documents.document import report_blocks, report_html, report_pdf

        with console.status(f"Writing {shown(report_file.name)}…"):
            blocks = report_blocks(report, table, learned, name=pairs.name)
            document = (
                report_pdf(blocks)
                if report_file.suffix.lower() == ".pdf"
                else report_html(blocks).encode("utf-8")
            )
            write_output(report_file, document, "--report", inputs)
        console.print(f"wrote {shown(report_file)}")
    if json_out is not None:
        write_output(json_out, json.dumps(report.to_dict(), indent=2), "--json", inputs)
        console.print(f"wrote {shown(json_out)}")
    if out_dir is not None:
        from ranking_core.meter.documents.document import bland_altman_report_plot, report_figures
        from ranking_core.meter.documents.export import FigureExportError, report_files
        from ranking_core.meter.documents.figures import bland_altman_figure, seg_heatmap

        figures = {"bland_altman": bland_altman_figure(report)}
        if table is not None:
            figures["seg_heatmap"] = seg_heatmap(table, report)
        # the report's plots as PNG and PDF (matplotlib: no browser needed)
        plots = report_figures(report, table, learned)
        plots["bland_altman"] = bland_altman_report_plot(report)[0]
        if report.cg_diva is not None:
            from ranking_core.meter.drawing.grid_plots import cg_diva_plot

            plots["cg_diva"] = cg_diva_plot(report.cg_diva)
        try:
            files = report_files(report, figures, png=png, plots=plots)
        except FigureExportError as exc:
            fail(exc)
        paths = write_outputs(out_dir, files, "--out-dir", inputs)
        console.print(f"wrote {len(paths)} files to {shown(out_dir)}")


def _exit_on_failed_verdicts(report: MeterReport) -> None:
    """Exit with status 3, naming the failed criteria on stderr, when a judged criterion fails
    (criteria with no pair in range are not judged and never fail)."""
    from ranking_core.inputs.text import printable
    from ranking_core.meter.standards.registry import profile_title

    judged = report.tables()["acceptance"]
    failed = [
        printable(f"{profile_title(row['profile'])} {row['id']}")
        + (f" ({printable(row['group'])})" if pd.notna(row.get("group")) else "")
        for _, row in judged.iterrows()
        if pd.notna(row["passes"]) and not row["passes"]
    ]
    if failed:
        typer.echo(
            f"meter-report: {len(failed)} of {len(judged)} acceptance criteria "
            f"failed: {', '.join(failed)}",
            err=True,
        )
        raise typer.Exit(3)
