"""``riskgrid elicit THRESHOLDS MATRIX --out-dir DIR``: a grid from SEG-method answers
(:mod:`ranking_core.elicit`), the learned grid smoothing it, and the pairs to ask next.

Steps, in order: every output path checked; both answer files read (refused rows and excluded
raters × scenarios printed as one line each on standard error); the rater maps averaged
(``grid.npy``, one grid per scenario, ``spread.npy``, ``count.npy``, ``grid.png``,
``RiskPairData.csv``, ``grid.json``); with ``--propose N`` the pairs of largest disagreement
(``--pairs-out``); unless ``--no-learn``, the grid learned from ``--ratings-per-rater`` points of
each rater map (plus the ratings of ``--ratings``) with its 95 % band in ``DIR/learned/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ranking_core.cli.output import OutputError, check_output, err, fail, say, write_outputs
from ranking_core.inputs import format_names
from ranking_core.inputs.text import named
from ranking_core.validation import MAX_SEED, counted

MAX_PER_MAP = 200  # points drawn per rater map
MAX_LEARNED_RATINGS = 6_000  # mapped points plus --ratings rows: the lattice solver's range
MAX_PROPOSED = 2_000
DEFAULT_PAIRS_FILE = "proposed-pairs.csv"


def _learn(frame, out_dir: Path, source: str, inputs: list[Path], save: str | None) -> None:
    """Learn the grid of the rating set ``frame`` with the default recipe for a rater panel
    (robust, so that the band exists) and write its files and band into ``out_dir``."""
    from ranking_core.blas_threads import fit_threads
    from ranking_core.cli.learn import OnScale, write_band
    from ranking_core.cli.progress import progress_bar
    from ranking_core.grids.files import grid_file_contents
    from ranking_core.grids.risk_scale import GridOffScale, check_learned_grid
    from ranking_core.learn import (
        PRESETS,
        default_recipe,
        fit_method,
        grid_metadata,
        learn_grid,
        with_robust,
    )
    from ranking_core.panels import risk_band
    from ranking_core.ratings import RatingSetError, read_rating_set

    try:
        data = read_rating_set(frame, name=source)
        recipe, why = default_recipe(data)
        settings = PRESETS[recipe]
        if not settings.has_band:
            settings = with_robust(settings, "huber", None)
        fit_method(settings, len(data.frame))
    except (RatingSetError, ValueError) as exc:
        fail(f"cannot learn from the mapped answers: {exc}")
    saving = None
    if save is not None:
        from ranking_core.cli.records import store_for_saving

        saving = store_for_saving(save)
    say(f"learning from {len(data.frame):,} ratings: recipe {recipe} ({why})")
    try:
        with progress_bar("fitting") as update, fit_threads(len(data.frame)):
            result = learn_grid(data, settings, progress=update)
        check_learned_grid(result.grid, rating_spread=float(data.y.max() - data.y.min()))
    except (ValueError, GridOffScale) as exc:
        fail(f"cannot learn from the mapped answers: {exc}")
    shown = OnScale(result)
    try:
        files = grid_file_contents(shown.grid, grid_metadata(shown, source=source))
        paths = write_outputs(out_dir, files, "--out-dir", inputs)
        with err.status("computing the uncertainty band…"):
            band = risk_band(result.risk_model)
            paths += write_band(band, shown.grid, out_dir, inputs[0])
    except OutputError as exc:
        fail(exc)
    say(
        f"learned grid: λ {result.lam:.4g}; the 95 % band leaves the risk category open on "
        f"{band.uncertain_share:.1%} of the grid"
    )
    for path in paths:
        say(f"wrote {path}")
    if save is not None:
        from ranking_core.cli.records import save_learned

        save_learned(shown, save, source, saving)


def elicit(
    thresholds: Annotated[
        Path,
        typer.Argument(
            help=f"Action thresholds: {format_names()} with columns rater, scenario, action "
            "(A-D), max (whole mg/dL; see docs/INPUTS.md)."
        ),
    ],
    matrix: Annotated[
        Path,
        typer.Argument(
            help="Risk scores: columns rater, scenario, measured, actual (actions A-E), score "
            "(1-9; a missing diagonal cell is 1)."
        ),
    ],
    out_dir: Annotated[
        Path,
        typer.Option(
            "--out-dir",
            help="Folder for grid.npy (pooled), scenario-*.npy, spread.npy, count.npy, "
            "grid.png, RiskPairData.csv, grid.json and learned/ (created if needed).",
        ),
    ],
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
        int,
        typer.Option(
            "--ratings-per-rater",
            min=1,
            max=MAX_PER_MAP,
            help="Points (REF, BGM) drawn in 20-580 mg/dL from each rater's map per scenario, "
            "rated with that rater's mapped risk, to learn from.",
        ),
    ] = 3,
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
    from ranking_core.cli.progress import progress_bar
    from ranking_core.elicit import (
        elicited_files,
        elicited_grids,
        mapped_ratings,
        propose_pairs,
        read_answers,
    )
    from ranking_core.inputs import InputError
    from ranking_core.inputs.text import safe_csv

    if not learn and (ratings is not None or save is not None):
        fail("--ratings and --save need learning; leave out --no-learn", code=2)
    if pairs_out is not None and propose is None:
        fail("-o/--pairs-out names the file of --propose N; give --propose", code=2)
    inputs = [thresholds, matrix, ratings]
    learned_dir = out_dir / "learned"
    pairs_path = pairs_out if pairs_out is not None else out_dir / DEFAULT_PAIRS_FILE
    try:
        for name in ("grid.npy", "grid.json", "RiskPairData.csv"):
            check_output(out_dir / name, "--out-dir", inputs)
        if learn:
            check_output(learned_dir / "grid.npy", "--out-dir", inputs)
        if propose is not None:
            check_output(pairs_path, "--pairs-out", inputs)
        if save is not None:
            from ranking_core.storage import check_record_name

            check_record_name(save, "learned_grid")
        answers = read_answers(thresholds, matrix)
        sources = {"thresholds": thresholds, "matrix": matrix}
        contents = {role: (str(path), path.read_bytes()) for role, path in sources.items()}
    except (InputError, OSError, ValueError) as exc:
        fail(exc)
    for message in answers.messages:
        err.print(message, markup=False, highlight=False)
    for exclusion in answers.exclusions:
        err.print(f"warning: {exclusion.message()}", markup=False, highlight=False, style="yellow")
    if not answers.maps:
        fail(
            f"no rater × scenario can be used: all {len(answers.exclusions)} are excluded "
            "(reasons above)"
        )
    if scenario is not None and scenario not in answers.scenarios:
        fail(
            f"--scenario {named(scenario)} is none of the scenarios with valid answers: "
            + ", ".join(named(s) for s in answers.scenarios)
        )
    chosen = [m for m in answers.maps if scenario is None or m.scenario == scenario]
    total = len(chosen) * per_map
    if learn and total > MAX_LEARNED_RATINGS:
        fail(
            f"{len(chosen):,} rater maps × {per_map} points is {total:,} ratings; at "
            f"most {MAX_LEARNED_RATINGS:,} are learned from (lower --ratings-per-rater)",
            code=2,
        )
    with progress_bar("mapping") as update:
        grids = elicited_grids(answers.maps, progress=update)
    try:
        paths = write_outputs(
            out_dir, elicited_files(answers, grids, contents), "--out-dir", inputs
        )
    except OutputError as exc:
        fail(exc)
    say(
        f"{counted(len(answers.raters), 'rater')}, {counted(len(grids.scenarios), 'scenario')}, "
        f"{counted(grids.n_maps, 'rater map')} used, {len(answers.exclusions):,} excluded"
    )
    for name, raters in grids.raters.items():
        say(f"scenario {named(name)}: {counted(len(raters), 'rater')}")
    for path in paths:
        say(f"wrote {path}")
    if propose is not None:
        spread = grids.spread if scenario is None else elicited_grids(chosen).spread
        pairs = propose_pairs(spread, propose)
        try:
            write_outputs(
                pairs_path.parent,
                {pairs_path.name: safe_csv(pairs).encode()},
                "--pairs-out",
                inputs,
            )
        except OutputError as exc:
            fail(exc)
        at = spread[pairs["reference"].to_numpy(), pairs["estimate"].to_numpy()]
        top = float(at.max()) if len(pairs) else 0.0
        say(
            f"proposed {len(pairs):,} pairs where the raters disagree most (largest spread "
            f"{top:.3g}) in {pairs_path}"
        )
        if len(pairs) < propose:
            say(f"only {len(pairs):,} pairs have any spread between the raters")
    if not learn:
        return
    import pandas as pd

    frame = mapped_ratings(chosen, per_map, seed)
    source = (
        f"mapped answers of {thresholds.name} and {matrix.name} ({per_map} per map, seed {seed})"
    )
    if ratings is not None:
        from ranking_core.ratings import RatingSetError, read_rating_set

        try:
            extra = read_rating_set(ratings)
        except RatingSetError as exc:
            fail(exc)
        if extra.report():
            err.print(extra.report(), markup=False, highlight=False)
        added = extra.frame.reset_index(drop=True)
        if "rater" not in added:
            added["rater"] = "unknown"
        frame = pd.concat([frame, added[["reference", "estimate", "rating", "rater"]]])
        source += f" and {ratings.name}"
        if len(frame) > MAX_LEARNED_RATINGS:
            fail(
                f"{len(frame):,} ratings with --ratings; at most {MAX_LEARNED_RATINGS:,} are "
                "learned from (lower --ratings-per-rater)",
                code=2,
            )
    _learn(frame.reset_index(drop=True), learned_dir, source, [thresholds, matrix], save)
