"""``riskgrid reproduce …``: the papers' experiments, printed beside the published numbers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from ranking_core.cli import MAX_REPS, MAX_SIZE
from ranking_core.cli.options import ProtocolOption, SeedOption
from ranking_core.cli.output import OutputError, check_output, fail, write_json
from ranking_core.cli.progress import progress_bar
from ranking_core.inputs.text import named
from ranking_core.lambda_rules import PROTOCOLS

if TYPE_CHECKING:
    from ranking_core.grids.seg import SEGTable

app = typer.Typer(
    help="Reproduce the experiments of the source papers.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()


def _check_json(out: Path | None, *inputs: Path | None) -> None:
    """``--json`` checked before the experiment runs."""
    if out is not None:
        try:
            check_output(out, "--json", inputs)
        except OutputError as exc:
            fail(exc)


@app.command()
def academic(
    m: Annotated[
        list[int] | None, typer.Option("--m", help="Training-set sizes.", min=4, max=MAX_SIZE)
    ] = None,
    reps: Annotated[int, typer.Option(help="Repetitions per size.", min=1, max=MAX_REPS)] = 10,
    seed: SeedOption = 0,
    protocol: ProtocolOption = "refit",
    out: Annotated[Path | None, typer.Option("--out", "--json", help="Write JSON here.")] = None,
) -> None:
    """Kriukova et al. 2014, §4.1 (Table 1): ranking vs regression on x ∈ {0..100}, y = ⌊x/10⌋, γ =
    100."""
    from ranking_core.experiments.academic import PAPER_TABLE1, run_academic

    sizes = m or [12, 20, 28]
    _check_json(out)
    if protocol not in PROTOCOLS:
        raise typer.BadParameter(
            f"--protocol must be one of {', '.join(PROTOCOLS)}; got {named(protocol)}"
        )
    with progress_bar(f"academic example ({protocol})") as update:
        result = run_academic(sizes, reps, seed=seed, protocol=protocol, progress=update)
    table = _right_aligned_table(
        "Pairwise misranking, mean ± sd over repetitions (paper: Kriukova et al. 2014, Table 1)",
        (
            "m",
            "ranking (ours)",
            "ranking (paper)",
            "SLR (ours)",
            "SLR (paper)",
            "SLR − ranking, paired ± se",
        ),
    )
    for size in sizes:
        ours = result["sizes"][str(size)]
        paper = PAPER_TABLE1.get(size)

        def pct(pair: tuple[float, float] | None) -> str:
            return "—" if pair is None else f"{pair[0]:.2f} ± {pair[1]:.2f} %"

        def mine(name: str, ours: dict = ours) -> str:
            v = ours[name]
            return pct((100 * v["misranking_mean"], 100 * v["misranking_sd"]))

        gain = ours["slr_minus_ranking"]
        table.add_row(
            str(size),
            mine("ranking"),
            pct(paper["ranking"] if paper else None),
            mine("slr"),
            pct(paper["slr"] if paper else None),
            f"{100 * gain['mean']:+.2f} ± {100 * gain['standard_error']:.2f} pts",
        )
    console.print(table)
    write_json(out, result)


def _right_aligned_table(title: str, columns: tuple[str, ...]) -> Table:
    """A table titled ``title`` with these columns, all right-aligned."""
    table = Table(title=title)
    for column in columns:
        table.add_column(column, justify="right")
    return table


def _seg_table_or_exit(path: Path | None) -> SEGTable:
    """The SEG table from --seg-table or $SEG_TABLE; otherwise say how to get one, exit 2."""
    from ranking_core.grids.seg import SEGTableError, SEGTableMissing, find_seg_table

    try:
        return find_seg_table(path)
    except (SEGTableMissing, SEGTableError) as exc:
        fail(exc, code=2)


def _recipe_or_exit(name: str):
    """The preset ``name`` of :data:`ranking_core.learn.PRESETS`; otherwise say which exist,
    exit 2."""
    from ranking_core.learn import PRESETS

    if name not in PRESETS:
        fail(f"--recipe must be one of {', '.join(PRESETS)}; got '{name}'", code=2)
    return PRESETS[name]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f} %"


SegTableOption = Annotated[
    Path | None,
    typer.Option("--seg-table", help="SEG RiskPairData CSV/CSV.gz/XLSX (default: $SEG_TABLE)."),
]
RecipeOption = Annotated[
    str,
    typer.Option(
        "--recipe",
        help="paper (Kriukova et al.'s exact recipe), best (the project's best) or "
        "robust (the best, learning robustly).",
    ),
]
RepsOption = Annotated[int, typer.Option(help="Repetitions per size.", min=1, max=MAX_REPS)]
JsonOutOption = Annotated[Path | None, typer.Option("--json", "--out", help="Write JSON here.")]


@app.command("seg-table3")
def seg_table3(
    seg_table: SegTableOption = None,
    m: Annotated[
        list[int] | None, typer.Option("--m", help="Training-set sizes.", min=4, max=MAX_SIZE)
    ] = None,
    reps: RepsOption = 20,
    recipe: RecipeOption = "paper",
    seed: SeedOption = 0,
    out: JsonOutOption = None,
) -> None:
    """Kriukova et al. 2014, §4.3 (Table 3): reconstruct the SEG from m ratings, m/2 fit and m/2
    choose λ."""
    from ranking_core.experiments.seg import PAPER_TABLE3, run_seg_table3
    from ranking_core.grids.compare import DIFFERENCE_BINS

    _check_json(out, seg_table)
    table = _seg_table_or_exit(seg_table)
    chosen = _recipe_or_exit(recipe)
    sizes = m or [100, 200, 300, 400]
    with progress_bar(f"SEG reconstruction ({recipe})") as update:
        result = run_seg_table3(table, sizes, reps, chosen, seed=seed, progress=update)
    grid = Table(
        title=f"SEG reconstruction, recipe {named(recipe)}: % of 1,000 test points per "
        "|Δy| bin and pairwise misranking (mean ± sd), ours | paper "
        "(Kriukova et al. 2014, Table 3)"
    )
    grid.add_column("Δy")
    for size in sizes:
        grid.add_column(f"m={size} ours", justify="right")
        grid.add_column("paper", justify="right")
    # the table's rows: bins (% per |Δy| bin, None where the paper gives none), misranking (%)
    paper: dict[int, dict[str, Any] | None] = {size: PAPER_TABLE3.get(size) for size in sizes}
    for k, label in enumerate(DIFFERENCE_BINS):
        row = [label]
        for size in sizes:
            row.append(_pct(100 * list(result["sizes"][str(size)]["delta_bins"].values())[k]))
            published = paper[size]
            row.append(_pct(published["bins"][k]) if published else "—")
        grid.add_row(*row)
    row = ["misranking"]
    for size in sizes:
        ours = result["sizes"][str(size)]
        row.append(f"{100 * ours['misranking_mean']:.2f} ± {100 * ours['misranking_sd']:.2f} %")
        published = paper[size]
        row.append(f"{published['misranking']:.2f} %" if published else "—")
    grid.add_row(*row)
    console.print(grid)
    write_json(out, result)


@app.command()
def apriori(
    seg_table: SegTableOption = None,
    m: Annotated[
        list[int] | None,
        typer.Option("--m", help="Sizes to apply the rule at.", min=4, max=MAX_SIZE),
    ] = None,
    reps: RepsOption = 20,
    recipe: RecipeOption = "paper",
    draws: Annotated[
        int, typer.Option(help="Subsets per small size for λ₊ (paper: 1).", min=1, max=MAX_REPS)
    ] = 1,
    beta_max: Annotated[float, typer.Option(help="Upper bound of β (theory: 1).")] = 1.0,
    seed: SeedOption = 0,
    out: JsonOutOption = None,
) -> None:
    """Kriukova et al. 2014, §4.4: a-priori λ̃(m) = α·m^(−β/2) from λ₊ on m = 20..50, applied at m =
    400."""
    import numpy as np

    from ranking_core.experiments.seg import PAPER_APRIORI, run_apriori

    _check_json(out, seg_table)
    table = _seg_table_or_exit(seg_table)
    chosen = _recipe_or_exit(recipe)
    published: dict[str, Any] = PAPER_APRIORI  # m (the size), misranking (%), sizes
    sizes = m or [published["m"]]
    with progress_bar(f"a-priori λ ({recipe})") as update:
        result = run_apriori(
            table, sizes, reps, chosen, draws=draws, beta_max=beta_max, seed=seed, progress=update
        )
    grid = _right_aligned_table(
        f"A-priori λ̃(m) from λ₊ on m = 20, 30, 40, 50, recipe {named(recipe)}: "
        "pairwise misranking on 1,000 unseen points (paper: Kriukova et al. 2014, §4.4)",
        ("m", "misranking (ours)", "paper", "α (median)", "β (median)", "λ̃(m) (median)"),
    )
    for size in sizes:
        ours = result["sizes"][str(size)]
        rules = ours["rules"]
        grid.add_row(
            str(size),
            f"{100 * ours['misranking_mean']:.2f} ± {100 * ours['misranking_sd']:.2f} %",
            f"{PAPER_APRIORI['misranking']:.2f} %" if size == PAPER_APRIORI["m"] else "—",
            f"{np.median([r['alpha'] for r in rules]):.3g}",
            f"{np.median([r['beta'] for r in rules]):.3g}",
            f"{np.median([r['lambda'] for r in rules]):.3g}",
        )
    console.print(grid)
    write_json(out, result)
