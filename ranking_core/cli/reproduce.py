"""``riskgrid reproduce …``: the papers' experiments, printed beside the published numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ranking_core.cli.progress import progress_bar
from ranking_core.experiments.academic import PAPER_TABLE1, run_academic

app = typer.Typer(help="Reproduce the experiments of the source papers.", no_args_is_help=True)
console = Console()


def _write_json(result: dict, out: Path | None) -> None:
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2))
        console.print(f"wrote {out}")


@app.command()
def academic(
    m: Annotated[list[int] | None, typer.Option("--m", help="Training-set sizes.")] = None,
    reps: Annotated[int, typer.Option(help="Repetitions per size.")] = 10,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    protocol: Annotated[str, typer.Option(
        help="refit: test the function refitted on all m points at the held-out λ; "
             "split: test the function fitted on the first m/2 points.")] = "refit",
    out: Annotated[Path | None, typer.Option("--out", "--json", help="Write JSON here.")] = None,
) -> None:
    """Seed 003 §4.1 (Table 1): ranking vs regression on x ∈ {0..100}, y = ⌊x/10⌋, γ = 100."""
    sizes = m or [12, 20, 28]
    with progress_bar(f"academic example ({protocol})") as update:
        result = run_academic(sizes, reps, seed=seed, protocol=protocol, progress=update)
    table = Table(title="Pairwise misranking, mean ± sd over repetitions (paper: seed 003 Table 1)")
    for column in ("m", "ranking (ours)", "ranking (paper)", "SLR (ours)", "SLR (paper)"):
        table.add_column(column, justify="right")
    for size in sizes:
        ours = result["sizes"][str(size)]
        paper = PAPER_TABLE1.get(size)

        def pct(pair: tuple[float, float] | None) -> str:
            return "—" if pair is None else f"{pair[0]:.2f} ± {pair[1]:.2f} %"

        def mine(name: str, ours: dict = ours) -> str:
            v = ours[name]
            return pct((100 * v["misranking_mean"], 100 * v["misranking_sd"]))

        table.add_row(str(size), mine("ranking"), pct(paper and paper["ranking"]),
                      mine("slr"), pct(paper and paper["slr"]))
    console.print(table)
    _write_json(result, out)
