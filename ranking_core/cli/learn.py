"""``riskgrid learn RATINGS --out-dir DIR``: learn a risk grid from a rating file and write it as
``grid.npy``, ``grid.csv``, ``grid.png`` and ``grid.json`` (:mod:`ranking_core.grids.files`).

The options map one to one onto :class:`ranking_core.learn.LearnSettings`: they change the
recipe named by ``--recipe`` (a preset, :data:`ranking_core.learn.PRESETS`), by default the one
the ratings call for (:func:`ranking_core.learn.default_recipe`: robust for a rater panel, best
otherwise). The choices offered (kernels, filters, λ rules, recipes) are read from their
registries. The pipeline (settings, fit, the one check, the grid clipped to the risk scale) is
the library's, :mod:`ranking_core.learn.pipeline`, which the Learn page's fit runs too: this
command parses the options, checks its files, and prints.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ranking_core.cli import shown
from ranking_core.cli.output import (
    OutputError,
    check_output,
    exit_without_collecting,
    fail,
    write_outputs,
)
from ranking_core.filters import FILTERS, MAX_LAMBDA, MAX_ORDER
from ranking_core.inputs import format_names
from ranking_core.learn import KERNELS, PRESETS, RULES

__all__ = ["learn", "write_band"]

console = Console(highlight=False, soft_wrap=True)
MAX_ANCHORS = 10_000  # zero-risk diagonal points (the default is 101)
BAND_FILES = ("band.csv", "band_lower.npy", "band_upper.npy", "band.png", "band.json")


def _names(registry) -> str:
    names = list(registry)
    return ", ".join(names[:-1]) + " or " + names[-1]


RatingsArgument = Annotated[
    Path,
    typer.Argument(
        help=f"Rating set: {format_names()} with columns reference, estimate, rating (0..4)."
    ),
]
OutDirOption = Annotated[
    Path | None,
    typer.Option(
        "--out-dir",
        help="Folder for grid.npy, grid.csv, grid.png and grid.json (created if needed).",
    ),
]
UnitOption = Annotated[
    str | None,
    typer.Option(
        help="Glucose unit of the file: mg/dL or mmol/L (default: as named in the header, "
        "else mg/dL; values that look like mmol/L are refused without it)."
    ),
]
RecipeOption = Annotated[
    str | None,
    typer.Option(
        help=f"Named recipe the options below change: {_names(PRESETS)} (default: robust when "
        "the ratings come from a panel, i.e. a rater column or answers in steps of 1 or "
        "0.5; best otherwise)."
    ),
]
KernelOption = Annotated[
    str | None, typer.Option(help=f"Kernel: {_names(KERNELS)} (default: laplacian).")
]
GammaOption = Annotated[
    float | None,
    typer.Option(
        help="Kernel width γ of the glucose coordinates (default: the kernel's own, "
        + ", ".join(
            f"{entry.glucose_width:g} {entry.width_unit} for the {name}"
            for name, entry in KERNELS.items()
        )
        + ")."
    ),
]
ScaleOption = Annotated[
    str | None, typer.Option(help="Glucose coordinates: log or linear (default: log).")
]
FilterOption = Annotated[
    str | None,
    typer.Option("--filter", help=f"Spectral filter: {_names(FILTERS)} (default: lavrentiev)."),
]
OrderOption = Annotated[
    int | None,
    typer.Option(min=1, max=MAX_ORDER, help="Order k of iterated Lavrentiev (1 to 100)."),
]
RuleOption = Annotated[
    str | None, typer.Option(help=f"How λ is chosen: {_names(RULES)} (default: kfold).")
]
LamOption = Annotated[
    float | None,
    typer.Option("--lambda", help=f"λ for --rule manual (above 0, at most {MAX_LAMBDA:g})."),
]
SignedOption = Annotated[
    bool | None,
    typer.Option(
        "--signed/--unsigned",
        help="Learn sign(REF − estimate)·rating and take |f| (default: signed).",
    ),
]
AnchorsOption = Annotated[
    int | None,
    typer.Option(
        min=0,
        max=MAX_ANCHORS,
        help="Zero-risk points on the diagonal added to the ratings (default: 101, one "
        "every 6 mg/dL).",
    ),
]
RefitAllOption = Annotated[
    bool,
    typer.Option("--refit-all", help="With --rule holdout: refit on all ratings at the chosen λ."),
]
RobustOption = Annotated[
    str | None,
    typer.Option(
        help="Robust learning for real panels: huber or tukey (weights for outlying ratings, "
        "a rater model when the file has a rater column, coarse answers as intervals), "
        "squared (rater model only) or none. Default: the recipe's (tukey for the robust "
        "recipe), huber with --panel-report or --band."
    ),
]
CriterionOption = Annotated[
    str | None,
    typer.Option(
        help="What cross-validation or hold-out minimises: misranking or absolute-error "
        "(mean absolute error of the validation ratings, steadier; the default)."
    ),
]
MonotoneOption = Annotated[
    bool | None,
    typer.Option(
        "--monotone/--as-learned",
        help="Make the grid rise away from the diagonal along every row and column (the "
        "nearest "
        "such grid, as the SEG is). Default: monotone with robust learning, else as "
        "learned.",
    ),
]
PanelReportOption = Annotated[
    Path | None,
    typer.Option(
        "--panel-report",
        help="Write every rating with its consensus risk, weight and outlier "
        "flag to this CSV, the per-rater table beside it "
        "(…-raters.csv), and print the panel report.",
    ),
]
BandOption = Annotated[
    bool,
    typer.Option(
        "--band",
        help="Also write the 95 % uncertainty band of the learned risk into the "
        "folder (band.csv, band_lower.npy, band_upper.npy, band.png) and print "
        "the share of the grid whose risk category it leaves open. The noise "
        "level comes from robust learning (huber unless --robust names "
        "another).",
    ),
]
SaveOption = Annotated[
    str | None,
    typer.Option(
        "--save",
        help="Also save the grid under this name in the dashboard's database "
        "(riskgrid records list / export / delete).",
    ),
]


def learn(
    ratings: RatingsArgument,
    out_dir: OutDirOption = None,
    unit: UnitOption = None,
    recipe: RecipeOption = None,
    kernel: KernelOption = None,
    gamma: GammaOption = None,
    scale: ScaleOption = None,
    filter: FilterOption = None,
    order: OrderOption = None,
    rule: RuleOption = None,
    lam: LamOption = None,
    signed: SignedOption = None,
    anchors: AnchorsOption = None,
    refit_all: RefitAllOption = False,
    robust: RobustOption = None,
    criterion: CriterionOption = None,
    monotone: MonotoneOption = None,
    panel_report: PanelReportOption = None,
    band: BandOption = False,
    save: SaveOption = None,
) -> None:
    """Learn a risk grid from a rating set and write it as files (NumPy, CSV, PNG, JSON)."""
    from ranking_core.learn.pipeline import LearnChoice, choose_settings
    from ranking_core.ratings import RatingSetError, read_rating_set

    if lam is not None and not (math.isfinite(lam) and 0 < lam <= MAX_LAMBDA):
        fail(
            f"--lambda must be a number above 0 and at most {MAX_LAMBDA:g} (beyond it only the "
            f"mean rating is left); got {lam:g}",
            code=2,
        )
    try:
        if out_dir is None and (save is None or band):
            raise ValueError("give --out-dir DIR for the files (or only --save NAME)")
        _check_targets(ratings, out_dir, band, panel_report)
        if save is not None:
            from ranking_core.storage import check_record_name

            check_record_name(save, "learned_grid")  # before the fit, not after it
        data = read_rating_set(ratings, unit=unit)
    except (RatingSetError, ValueError, OSError) as exc:
        fail(exc)
    if data.report():
        console.print(
            f"[yellow]{len(data.frame)} ratings kept; refused or noted:[/yellow]\n"
            f"{shown(data.report())}"
        )
    try:
        choice: LearnChoice = choose_settings(
            data,
            recipe,
            robust=robust,
            monotone=monotone,
            panel_report=panel_report is not None,
            band=band,
            kernel=kernel,
            gamma=gamma,
            scale=scale,
            filter=filter,
            order=order,
            rule=rule,
            lam=lam,
            signed=signed,
            refit_all=refit_all or None,
            anchors=anchors,
            criterion=criterion,
        )
    except ValueError as exc:
        fail(f"cannot learn from {ratings.name}: {exc}")
    if lam is not None and choice.settings.rule != "manual":
        console.print(
            f"[yellow]note:[/yellow] --lambda applies to --rule manual only; λ is chosen by "
            f"the {choice.settings.rule} rule"
        )
    _fit_write_and_save(data, choice, ratings, out_dir, save, band, panel_report)


def _fit_write_and_save(
    data,
    choice,
    ratings: Path,
    out_dir: Path | None,
    save: str | None,
    band: bool,
    panel_report: Path | None,
) -> None:
    """The fit and its one check (:func:`ranking_core.learn.pipeline.fit_checked`), then what
    the options ask for: the grid's files, the record, the band, the panel report."""
    from ranking_core.blas_threads import fit_threads, one_malloc_arena, reuse_freed_memory
    from ranking_core.cli.progress import progress_bar
    from ranking_core.learn.pipeline import fit_checked

    one_malloc_arena()  # the fit's worker threads give back what they free (memory bound)
    reuse_freed_memory()  # … and each λ's factorisation reuses the last one's memory
    saving = None
    if save is not None:  # the database opens and takes the name before the fit, not after it
        from ranking_core.cli.records import store_for_saving

        saving = store_for_saving(save)
    else:  # only files, each written and closed by write_outputs
        exit_without_collecting()
    console.print(choice.line, soft_wrap=True, highlight=False)
    try:
        with progress_bar("fitting") as update, fit_threads(len(data.frame)):
            outcome = fit_checked(
                data, choice.settings, panel=panel_report is not None, progress=update
            )
    except ValueError as exc:  # the fit refused the data, or the grid is no usable grid
        fail(f"cannot learn from {ratings.name}: {exc}")
    for flag in outcome.flags:
        console.print(f"[yellow]note:[/yellow] {shown(flag)}")
    written = outcome.shown  # what is written is what is saved: the grid clipped to 0..4
    try:
        paths = [] if out_dir is None else _write_grid(written, out_dir, ratings)
    except OutputError as exc:
        fail(exc)
    _show(outcome, paths)
    if save is not None:
        from ranking_core.cli.records import save_learned

        save_learned(written, save, ratings.name, saving)
    if band:
        assert out_dir is not None  # --band needs --out-dir (checked before the fit)
        _write_band(outcome.learned, written.grid, out_dir, ratings)
    if panel_report is not None:
        from ranking_core.cli.panels import show_panel_report

        show_panel_report(outcome.panel, panel_report, inputs=[ratings])


def _show(outcome, paths: list[Path]) -> None:
    """The learned grid's settings and figures (standard output), the advice (standard
    error, one line each) and the files written."""
    from ranking_core.cli.output import err
    from ranking_core.learn import describe_settings

    result = outcome.learned
    table = Table(title="Learned grid", title_justify="left", show_header=False)
    table.add_column("what")
    table.add_column("value")
    for label, value in describe_settings(result.settings).items():
        table.add_row(label, value)
    table.add_row("λ chosen", f"{result.lam:.4g}")
    table.add_row("Computed by", result.computed_by)
    table.add_row("Ratings", f"{result.n_ratings:,}")
    table.add_row("Points fitted", f"{result.points_fitted:,} of {len(result.y):,}")
    console.print(table)
    console.print(f"ratings checksum {result.checksum}", soft_wrap=True)
    for advice in outcome.advice:  # warnings: on standard error, one line each
        err.print(f"[yellow]note:[/yellow] {shown(advice)}")
    for path in paths:
        console.print(f"wrote {shown(path)}")


def _write_band(learned, grid, out_dir: Path, ratings: Path) -> None:
    """``--band``: the 95 % band of the learned risk written beside the grid, and the share of
    the grid whose risk category it leaves open."""
    from ranking_core.panels import risk_band

    with console.status("computing the uncertainty band…"):
        learned_band = risk_band(learned.risk_model)
        try:
            paths = write_band(learned_band, grid, out_dir, ratings)
        except OutputError as exc:
            fail(exc)
    console.print(
        f"share of the grid whose risk category the {learned_band.level:.0%} band "
        f"leaves open: {learned_band.uncertain_share:.1%}"
    )
    for path in paths:
        console.print(f"wrote {shown(path)}")


def _check_targets(
    ratings: Path, out_dir: Path | None, band: bool, panel_report: Path | None
) -> None:
    """Every file ``learn`` will write checked before the ratings are read: none is an input,
    a folder or a symbolic link, none lies below a file."""
    from ranking_core.grids.files import GRID_FILES

    if out_dir is not None:
        for name in GRID_FILES + (BAND_FILES if band else ()):
            check_output(out_dir / name, "--out-dir", [ratings])
    if panel_report is not None:
        check_output(panel_report, "--panel-report", [ratings])
        raters = panel_report.with_name(f"{panel_report.stem}-raters.csv")
        check_output(raters, "--panel-report", [ratings])


def _write_grid(result, out_dir: Path, ratings: Path) -> list[Path]:
    """The grid's files (:func:`~ranking_core.grids.files.grid_file_contents`, as
    ``ranking_core.learn.write_grid_files`` writes them), each written safely."""
    from ranking_core.grids.files import grid_file_contents
    from ranking_core.learn import grid_metadata

    files = grid_file_contents(result.grid, grid_metadata(result, source=ratings.name))
    return write_outputs(out_dir, files, "--out-dir", [ratings])


def write_band(band, grid, out_dir: Path, ratings: Path) -> list[Path]:
    """The band's files (``ranking_core.learn.write_band_files``), made in a private temporary
    folder and each written into ``out_dir`` safely."""
    import tempfile

    from ranking_core.learn import write_band_files

    with tempfile.TemporaryDirectory() as scratch:
        made = write_band_files(band, grid, scratch)
        files = {path.name: path.read_bytes() for path in made}
    return write_outputs(out_dir, files, "--out-dir", [ratings])
