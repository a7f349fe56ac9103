"""``riskgrid cf …``: the papers' collaborative-filtering experiments (Cortes et al. 2007, §4,
Kriukova et al. 2014, §4.2, Duchi et al. 2010, §4)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from ranking_core.cf.protocol_learners import LEARNERS
from ranking_core.cli import MAX_CF_PAIRS, MAX_REPS, MAX_ROUNDS, MAX_USERS, MAX_WORKERS, shown
from ranking_core.cli.options import ProtocolOption, SeedOption
from ranking_core.cli.output import OutputError, check_output, fail, write_output
from ranking_core.cli.progress import progress_bar
from ranking_core.inputs.text import named
from ranking_core.learners.choices import PAIRWISE_LOSSES as LOSSES

if TYPE_CHECKING:  # the experiments load when a command runs (the help starts at once)
    from ranking_core.cf import RatingMatrix

app = typer.Typer(
    help="Collaborative-filtering experiments of the papers (MovieLens, Jester).",
    no_args_is_help=True,
    add_completion=False,
)
console = Console(highlight=False)  # the readable tables: standard output
JSON_HELP = "Write the results as JSON here ('-': on standard output, the table then on stderr)."


class DataFormat(StrEnum):
    ml_100k = "ml-100k"
    ml_1m = "ml-1m"
    jester = "jester"
    jester_long = "jester-long"
    synthetic = "synthetic"


# the choices come from the registries (one home for the names), so mypy cannot list them
Learner = StrEnum("Learner", {name.replace("-", "_"): name for name in LEARNERS})  # type: ignore[misc]
Loss = StrEnum("Loss", {name.replace("-", "_"): name for name in LOSSES})  # type: ignore[misc]


def _range(text: str, option: str) -> tuple[int, int]:
    try:
        low, high = (int(part) for part in text.split("-"))
    except ValueError:
        raise typer.BadParameter(f"{option} must look like 40-60; got {named(text)}") from None
    return low, high


def load(data: Path | None, format: DataFormat, seed: int) -> RatingMatrix:
    """The rating data named on the command line (``synthetic`` needs no path)."""
    from ranking_core.cf import read_ratings, synthetic_ratings

    if format is DataFormat.synthetic:
        return synthetic_ratings(seed=seed)
    if data is None:
        raise typer.BadParameter(f"--data is required for --format {format.value}")
    try:
        return read_ratings(data, format.value)
    except (ValueError, FileNotFoundError) as error:
        raise typer.BadParameter(str(error)) from None


def _print_table(result: dict, dataset: str, group: str) -> None:
    from ranking_core.cf.per_user import METRICS
    from ranking_core.cf.published import CORTES_2007_TABLE1, KRIUKOVA_2014_TABLE2

    table = Table(
        title=f"per-user ranking, {dataset} {group}, protocol "
        f"{result['config']['protocol']}: mean ± sd over repetitions"
    )
    for column in (
        "learner",
        "users run",
        "misranking (ours)",
        "misranking (paper)",
        "MSD (ours)",
        "MSD (paper)",
        "M1D (ours)",
        "NDCG@10 (ours)",
    ):
        table.add_column(column, justify="right")
    published = KRIUKOVA_2014_TABLE2.get((dataset, group), {})
    msd_published = CORTES_2007_TABLE1.get((dataset, group), {}).get("msd", {})

    def cell(pair: tuple[float, float] | None, scale: float = 1.0, unit: str = "") -> str:
        return "—" if pair is None else f"{scale * pair[0]:.2f} ± {scale * pair[1]:.2f}{unit}"

    for name, metrics in result["learners"].items():
        ours = {k: (metrics[k]["mean"], metrics[k]["sd"]) for k in METRICS}
        table.add_row(
            name,
            str(metrics["test_users_run"]),
            cell(ours["pairwise_misranking"], 100, " %"),
            cell(published.get(name), 100, " %"),
            cell(ours["msd"]),
            cell(msd_published.get(name)),
            cell(ours["m1d"]),
            cell(ours["ndcg10"]),
        )
    console.print(table)


@app.command("per-user")
def per_user(
    data: Annotated[
        Path | None, typer.Option(help="Rating file (or ml-100k / ml-1m folder).")
    ] = None,
    format: Annotated[
        DataFormat, typer.Option("--format", help="Data format.")
    ] = DataFormat.ml_100k,
    group: Annotated[
        str, typer.Option(help="Reference reviewers' number of ratings, low-high.")
    ] = "40-60",
    learner: Annotated[
        list[Learner] | None,
        typer.Option(help="Learner (repeat the option for several; they share every draw)."),
    ] = None,
    test_users: Annotated[
        int, typer.Option(help="Test reviewers per repetition.", min=1, max=MAX_USERS)
    ] = 300,
    repeats: Annotated[
        int, typer.Option(help="Repetitions with new reviewer draws.", min=1, max=MAX_REPS)
    ] = 10,
    reference: Annotated[
        int, typer.Option(help="Reference reviewers per test reviewer.", min=1, max=MAX_USERS)
    ] = 300,
    test_range: Annotated[str, typer.Option(help="Test reviewers' number of ratings.")] = "50-300",
    gamma: Annotated[
        list[float] | None,
        typer.Option(help="Gaussian γ; several values are chosen from on the validation part."),
    ] = None,
    missing: Annotated[
        str,
        typer.Option(
            help="'minus-one' (Kriukova et al. 2014) or 'median' (Cortes et al. 2007) for unrated "
            "items."
        ),
    ] = "minus-one",
    shift: Annotated[
        float | None,
        typer.Option(help="Added to every rating; default +10 for Jester, 0 otherwise."),
    ] = None,
    max_rounds: Annotated[
        int, typer.Option(help="RankBoost's largest number of rounds.", min=1, max=MAX_ROUNDS)
    ] = 200,
    protocol: ProtocolOption = "refit",
    tie_threshold: Annotated[
        float,
        typer.Option(
            help="Misranking counts only test pairs whose ratings differ by more than this "
            "(rating units); 0 is eq. (1) as printed, where only equal ratings are not pairs. "
            "λ is still chosen by eq. (1).",
            min=0.0,
        ),
    ] = 0.0,
    seed: SeedOption = 0,
    scheduler: Annotated[
        str | None,
        typer.Option(
            help="'synchronous' (no Dask), a Dask scheduler address tcp://host:port, or unset for "
            "a local Dask cluster on all cores."
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(help="Local cluster size (default: all cores).", min=1, max=MAX_WORKERS),
    ] = None,
    out: Annotated[Path | None, typer.Option("--json", help=JSON_HELP)] = None,
) -> None:
    """Per-user ranking on MovieLens / Jester (Cortes et al. 2007, §4.1, Kriukova et al. 2014, §4.2,
    Table 2)."""
    from ranking_core.cf.parallel import run_per_user
    from ranking_core.cf.per_user import JESTER_SHIFT, PerUserConfig

    _check_json(out, data)
    jester = format in (DataFormat.jester, DataFormat.jester_long)
    try:
        config = PerUserConfig(
            group=_range(group, "--group"),
            test_range=_range(test_range, "--test-range"),
            n_reference=reference,
            n_test_users=test_users,
            repeats=repeats,
            learners=tuple(item.value for item in learner) if learner else PerUserConfig.learners,
            gammas=tuple(gamma or [1e4]),
            missing=missing,
            max_rounds=max_rounds,
            seed=seed,
            protocol=protocol,
            tie_threshold=tie_threshold,
            shift=(JESTER_SHIFT if jester else 0.0) if shift is None else shift,
        )
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    ratings = load(data, format, seed)
    group_size = len(ratings.users_in(*config.group))
    console.print(
        f"{shown(ratings.source)}: {ratings.n_users} users, {ratings.n_items} items, "
        f"{ratings.n_ratings} ratings; group {shown(group)}: {group_size} users"
        + (f" (fewer than {reference}: all are used)" if group_size <= reference else "")
    )
    with progress_bar(f"per-user {group}") as update:
        result = run_per_user(
            ratings, config, scheduler=scheduler, n_workers=workers, progress=update
        )
    result["data"] = {
        "source": ratings.source,
        "format": format.value,
        "users": ratings.n_users,
        "items": ratings.n_items,
        "ratings": ratings.n_ratings,
        "group_size": group_size,
    }
    result["scheduler"] = scheduler or "local Dask cluster"
    if len(config.learners) == 1:
        result.update(result["learners"][config.learners[0]])
    dataset = "jester" if jester else "synthetic" if format is DataFormat.synthetic else "movielens"
    _print_table(result, dataset, group)
    _write(result, out)


def _to_stdout(out: Path | None) -> bool:
    return out is not None and str(out) == "-"


def _check_json(out: Path | None, *inputs: Path | None) -> None:
    """``--json`` checked before anything runs (never an input, a folder or a link)."""
    console.stderr = _to_stdout(out)  # standard output then holds the JSON alone
    if out is not None and not _to_stdout(out):
        try:
            check_output(out, "--json", inputs)
        except OutputError as exc:
            fail(exc)


def _write(result: dict, out: Path | None) -> None:
    """The results as JSON: only with ``--json`` (a file, or '-' for standard output)."""
    if out is None:
        return
    text = json.dumps(result, indent=2)
    if _to_stdout(out):
        typer.echo(text)
        return
    try:
        write_output(out, text, "--json")
    except OutputError as exc:
        fail(exc)
    console.print(f"wrote {shown(out)}")


@app.command("pairs")
def pairs(
    data: Annotated[
        Path | None, typer.Option(help="MovieLens 100K folder (u.data and u.item) or u.data path.")
    ] = None,
    format: Annotated[
        DataFormat, typer.Option("--format", help="ml-100k or synthetic.")
    ] = DataFormat.ml_100k,
    items: Annotated[Path | None, typer.Option(help="u.item (default: beside u.data).")] = None,
    train_pairs: Annotated[
        list[int] | None,
        typer.Option(
            help="Training pairs (repeat; default 20000 40000 80000 120000 160000).",
            min=1,
            max=MAX_CF_PAIRS,
        ),
    ] = None,
    test_pairs: Annotated[
        int, typer.Option(help="Test pairs per run.", min=1, max=MAX_CF_PAIRS)
    ] = 40000,
    validation_pairs: Annotated[
        int, typer.Option(help="Validation pairs per run.", min=1, max=MAX_CF_PAIRS)
    ] = 20000,
    experiments: Annotated[
        int, typer.Option(help="Runs (distinct validation/test parts).", min=1, max=MAX_REPS)
    ] = 15,
    alpha: Annotated[
        list[float] | None, typer.Option(help="ℓ2 regularization candidates (repeat).")
    ] = None,
    loss: Annotated[list[Loss] | None, typer.Option(help="Losses (repeat; default all).")] = None,
    seed: SeedOption = 0,
    out: Annotated[Path | None, typer.Option("--json", help=JSON_HELP)] = None,
) -> None:
    """Pair-sampling experiment of Duchi et al. 2010, §4 (Table 1): linear models from weighted
    pairs."""
    from ranking_core.cf.pairs import (
        DUCHI_2010_TABLE1,
        PairsConfig,
        read_movie_info,
        run_pairs,
        synthetic_movie_info,
    )

    _check_json(out, data, items)
    defaults = PairsConfig()
    try:
        config = PairsConfig(
            train_pairs=tuple(train_pairs or defaults.train_pairs),
            test_pairs=test_pairs,
            validation_pairs=validation_pairs,
            experiments=experiments,
            alphas=tuple(alpha or defaults.alphas),
            losses=tuple(item.value for item in loss) if loss else defaults.losses,
            seed=seed,
        )
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    if format not in (DataFormat.ml_100k, DataFormat.synthetic):
        raise typer.BadParameter(
            "the pairs experiment needs movie metadata: --format ml-100k or synthetic"
        )
    ratings = load(data, format, seed)
    if format is DataFormat.synthetic:
        info = synthetic_movie_info(ratings.n_items, seed)
    else:
        folder = data if data is not None and data.is_dir() else Path(ratings.source).parent
        try:
            info = read_movie_info(items or folder, ratings.item_ids)
        except (ValueError, FileNotFoundError) as error:
            raise typer.BadParameter(str(error)) from None
    with progress_bar("pair-sampling runs") as update:
        result = run_pairs(ratings, info, config, progress=update)
    result["data"] = {"source": ratings.source, "format": format.value}
    table = Table(title="test loss (weighted disagreement), mean (standard error) over runs")
    table.add_column("train pairs", justify="right")
    for name in config.losses:
        table.add_column(f"{name} (ours)", justify="right")
        if format is DataFormat.ml_100k:
            table.add_column(f"{name} (paper)", justify="right")
    for n in config.train_pairs:
        row = [str(n)]
        for name in config.losses:
            ours = result["test_loss"][name][str(n)]
            row.append(f"{ours['mean']:.3f} ({ours['se']:.3f})")
            if format is DataFormat.ml_100k:
                paper = DUCHI_2010_TABLE1[name].get(n)
                row.append("—" if paper is None else f"{paper[0]:.3f} ({paper[1]:.3f})")
        table.add_row(*row)
    console.print(table)
    _write(result, out)
