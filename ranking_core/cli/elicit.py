"""``riskgrid elicit THRESHOLDS MATRIX --out-dir DIR`` (or ``--survey NAME``): a grid from
SEG-method answers, the learned grid smoothing it, and the pairs to ask next.

The pipeline is :func:`ranking_core.elicit.pipeline.run_elicit` (the organiser's page calls it
too); this command checks every output path, reads the answers (two files, or the stored answers
of a SEG-method survey, which the operator may read), prints refused rows and excluded raters ×
scenarios as one line each on standard error, runs the pipeline and writes its files: ``grid.npy``,
one grid per scenario, ``spread.npy``, ``count.npy``, ``grid.png``, ``RiskPairData.csv``,
``grid.json``; with ``--propose N`` the pairs of largest disagreement (``--pairs-out``); unless
``--no-learn``, the learned grid and its 95 % band in ``DIR/learned/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ranking_core.cli.output import OutputError, check_output, err, fail, say, write_outputs
from ranking_core.inputs import format_names
from ranking_core.inputs.text import named
from ranking_core.validation import MAX_SEED, counted

MAX_PER_MAP = 200  # points drawn per rater map (ranking_core.elicit.pipeline.MAX_PER_MAP)
MAX_PROPOSED = 2_000  # ranking_core.elicit.pipeline.MAX_PROPOSED
DEFAULT_PAIRS_FILE = "proposed-pairs.csv"


def elicit(
    thresholds: Annotated[
        Path | None,
        typer.Argument(
            help=f"Action thresholds: {format_names()} with columns rater, scenario, action "
            "(A-D), max (whole mg/dL 0-599; see docs/INPUTS.md). Not with --survey."
        ),
    ] = None,
    matrix: Annotated[
        Path | None,
        typer.Argument(
            help="Risk scores: columns rater, scenario, measured, actual (actions A-E), score "
            "(1-9; a missing diagonal cell is 1). Not with --survey."
        ),
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out-dir",
            help="Folder for grid.npy (pooled), scenario-*.npy, spread.npy, count.npy, "
            "grid.png, RiskPairData.csv, grid.json and learned/ (created if needed; required).",
        ),
    ] = None,
    survey: Annotated[
        str | None,
        typer.Option(
            "--survey",
            help="Read the stored answers of this SEG-method survey (no export needed; the "
            "answers of its linked rated-pair survey are learned with them).",
        ),
    ] = None,
    scenario: Annotated[
        str | None,
        typer.Option(
            "--scenario",
            help="Learn (and propose pairs for) this scenario's answers only (default: all).",
        ),
    ] = None,
    learn: Annotated[
        bool,
        typer.Option(
            "--learn/--no-learn",
            help="Learn the smooth grid and its 95 % band from the mapped answers into "
            "DIR/learned/ (default: learn).",
        ),
    ] = True,
    per_map: Annotated[
        int | None,
        typer.Option(
            "--ratings-per-rater",
            min=1,
            max=MAX_PER_MAP,
            help="Points (REF, BGM) drawn in 20-580 mg/dL from each rater's map per scenario, "
            "rated with that rater's mapped risk, to learn from (default: 1,200 points in all "
            "spread over the maps, 1-200 per map).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(min=0, max=MAX_SEED, help="Seed of the points drawn.")] = 0,
    ratings: Annotated[
        Path | None,
        typer.Option(
            "--ratings",
            help="A rating set (reference, estimate, rating 0-4, optional rater; e.g. the "
            "answers to --propose pairs from riskgrid survey export) learned together with "
            "the mapped answers.",
        ),
    ] = None,
    propose: Annotated[
        int | None,
        typer.Option(
            "--propose",
            min=1,
            max=MAX_PROPOSED,
            help="Propose N pairs where the raters' maps disagree most (largest spread, spread "
            "over the plane), as a pair file for riskgrid survey create --pairs.",
        ),
    ] = None,
    pairs_out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--pairs-out",
            help=f"File of the --propose pairs (default: DIR/{DEFAULT_PAIRS_FILE}).",
        ),
    ] = None,
    save: Annotated[
        str | None,
        typer.Option(
            "--save",
            help="Also save the learned grid under this name in the dashboard's database "
            "(shown on the Compare page).",
        ),
    ] = None,
) -> None:
    """Map SEG-method answers (action thresholds and risk scores of a rater panel per scenario) to
    a risk grid, as the SEG was made; learn the smooth grid and its band from them; propose the
    pairs where the raters disagree most."""
    from ranking_core.elicit.pipeline import ElicitSettings

    if out_dir is None:
        fail("--out-dir DIR is required (the folder of the grid's files)", code=2)
    if (survey is None) == (thresholds is None or matrix is None) or (
        survey is not None and (thresholds or matrix)
    ):
        fail("give either the two answer files THRESHOLDS MATRIX or --survey NAME", code=2)
    if not learn and (ratings is not None or save is not None):
        fail("--ratings and --save need learning; leave out --no-learn", code=2)
    if pairs_out is not None and propose is None:
        fail("-o/--pairs-out names the file of --propose N; give --propose", code=2)
    inputs = [p for p in (thresholds, matrix, ratings) if p is not None]
    pairs_path = pairs_out if pairs_out is not None else out_dir / DEFAULT_PAIRS_FILE
    _check_targets(out_dir, inputs, learn, pairs_path if propose else None, save)
    given = _read(thresholds, matrix, survey, ratings)
    settings = ElicitSettings(scenario, learn, per_map, seed, propose)
    done = _run(given, settings)
    files = dict(done.files)
    pairs_file = files.pop(DEFAULT_PAIRS_FILE, None)
    try:
        paths = write_outputs(out_dir, files, "--out-dir", inputs)
        if pairs_file is not None:
            paths += write_outputs(
                pairs_path.parent, {pairs_path.name: pairs_file}, "--pairs-out", inputs
            )
    except OutputError as exc:
        fail(exc)
    _report(done, paths, pairs_path)
    if save is not None and done.learned is not None:
        _save(done, save)


def _check_targets(
    out_dir: Path, inputs: list[Path], learn: bool, pairs: Path | None, save: str | None
) -> None:
    """Every output checked before any answer is read."""
    try:
        for name in ("grid.npy", "grid.json", "RiskPairData.csv"):
            check_output(out_dir / name, "--out-dir", inputs)
        if learn:
            check_output(out_dir / "learned" / "grid.npy", "--out-dir", inputs)
        if pairs is not None:
            check_output(pairs, "--pairs-out", inputs)
        if save is not None:
            from ranking_core.cli.records import store_for_saving

            store_for_saving(save)
    except (OutputError, ValueError) as exc:
        fail(exc)


def _read(thresholds: Path | None, matrix: Path | None, survey: str | None, ratings: Path | None):
    """The answers (files or the stored survey) and the rated pairs to learn with; the rows
    refused and the answers excluded printed on standard error."""
    from ranking_core.elicit.pipeline import answers_from_files, with_ratings
    from ranking_core.inputs import InputError
    from ranking_core.ratings import RatingSetError
    from ranking_core.surveys.seg_grid import answers_from_survey

    try:
        if survey is not None:
            from ranking_core.cli.survey_admin import open_surveys

            given = with_ratings(answers_from_survey(open_surveys(), survey), ratings)
        elif thresholds is not None and matrix is not None:
            given = with_ratings(answers_from_files(thresholds, matrix), ratings)
    except (InputError, RatingSetError, OSError, ValueError) as exc:
        fail(exc)
    for message in given.answers.messages:
        err.print(message, markup=False, highlight=False)
    for exclusion in given.answers.exclusions:
        err.print(f"warning: {exclusion.message()}", markup=False, highlight=False, style="yellow")
    return given


def _run(given, settings):
    """The pipeline with a progress bar; its refusals as one sentence (exit 1)."""
    from ranking_core.cli.progress import progress_bar
    from ranking_core.elicit.pipeline import run_elicit
    from ranking_core.ratings import RatingSetError

    try:
        with progress_bar("mapping and learning") as update:
            return run_elicit(given, settings, progress=update)
    except (RatingSetError, ValueError) as exc:
        fail(exc)


def _report(done, paths: list[Path], pairs_path: Path) -> None:
    """What was used, written and learned; the warnings of the learned grid."""
    from ranking_core.elicit.comparison import raters_apart

    grids = done.grids
    say(
        f"{counted(len(done.answers.raters), 'rater')}, "
        f"{counted(len(grids.scenarios), 'scenario')}, {counted(grids.n_maps, 'rater map')} "
        f"used, {len(done.answers.exclusions):,} excluded"
    )
    for name, raters in grids.raters.items():
        say(f"scenario {named(name)}: {counted(len(raters), 'rater')}")
    for row in raters_apart(grids).itertuples():
        if row.apart:
            say(f"rater {named(row.rater)}'s maps stand apart (distance {row.distance:.2f})")
    for note in done.notes:
        say(f"{note}: {pairs_path}" if note.startswith("proposed") else note)
    learned = done.learned
    if learned is not None:
        say(f"learning from {learned.ratings:,} ratings: recipe {learned.recipe} ({learned.why})")
        say(
            f"learned grid: λ {learned.lam:.4g}; the 95 % band leaves the risk category open on "
            f"{learned.open_share:.1%} of the grid"
        )
        if learned.warning:
            err.print(f"warning: {learned.warning}", markup=False, highlight=False, style="yellow")
    for path in paths:
        say(f"wrote {path}")


def _save(done, name: str) -> None:
    """``--save NAME``: the learned grid as written, with its grid.json, into the records."""
    from ranking_core.storage import StorageError, Store

    try:
        Store().save_learned_grid(name, done.learned.grid, done.learned.metadata)
    except StorageError as exc:
        fail(f"not saved: {exc}")
    say(
        f"saved learned grid {named(name.strip())} (riskgrid records export NAME --out-dir DIR "
        "writes its files)"
    )
