"""``riskgrid learners …``: every learner of ``ranking_core.learners.LEARNERS`` side by side."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.console import Console
from rich.table import Table
from sklearn.base import clone

from ranking_core.cli.progress import progress_bar
from ranking_core.grids import find_seg_table
from ranking_core.learners import LEARNERS, LearnerSpec
from ranking_core.metrics import pairwise_misranking
from ranking_core.selection import holdout_lambda

app = typer.Typer(help="Compare the ranking learners of the source papers.", no_args_is_help=True)
console = Console()


def _draw(rng: np.random.Generator, risk, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Inputs uniform on [0, 600]² mg/dL labelled with the SEG absolute risk."""
    X = rng.uniform(0.0, 600.0, (size, 2))
    return X, risk(X[:, 0], X[:, 1])


def fit_with_holdout(spec: LearnerSpec, gamma: float, X: np.ndarray, y: np.ndarray):
    """Seed 003 §4.3: fit on the first half, pick the parameter on the second half by pairwise
    misranking (eq. (1)); one decomposition for path learners, one fit per grid value otherwise."""
    half = len(y) // 2
    if spec.has_path:
        choice = holdout_lambda(spec.make(gamma), X, y, spec.grid(half))
        return choice.model, choice.lam
    base = spec.make(gamma)
    best = None
    for value in spec.grid(half):
        model = clone(base).set_params(**{spec.param: value}).fit(X[:half], y[:half])
        error = pairwise_misranking(y[half:], model.predict(X[half:]))
        if best is None or error < best[0]:
            best = (error, model, value)
    return best[1], float(best[2])


@app.command()
def compare(
    seg_table: Annotated[Path | None, typer.Option(
        "--seg-table", help="SEG risk table (default: $SEG_TABLE).")] = None,
    m: Annotated[int, typer.Option(help="Ratings per repetition (half fit, half pick λ).")] = 400,
    reps: Annotated[int, typer.Option(help="Repetitions (new draws).")] = 3,
    learner: Annotated[list[str] | None, typer.Option(
        "--learner", help=f"Learners to run (default: all). One of {', '.join(LEARNERS)}.")] = None,
    test_size: Annotated[int, typer.Option(help="Unseen test inputs per repetition.")] = 1000,
    gamma: Annotated[float, typer.Option(help="Gaussian kernel width γ (mg/dL²).")] = 1e4,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    out: Annotated[Path | None, typer.Option("--json", help="Write JSON here.")] = None,
) -> None:
    """Misranking (seed 003 eq. (1)) of every learner on the SEG reconstruction, mean ± sd."""
    names = learner or list(LEARNERS)
    unknown = [name for name in names if name not in LEARNERS]
    if unknown:
        raise typer.BadParameter(f"unknown learner(s) {unknown}; choose from {list(LEARNERS)}",
                                 param_hint="--learner")
    risk = find_seg_table(seg_table).risk
    rng = np.random.default_rng(seed)
    draws = [(_draw(rng, risk, m), _draw(rng, risk, test_size)) for _ in range(reps)]
    rows = []
    table = Table("learner", "m", "misranking %", "parameter", "fit s", "note")
    with progress_bar("learners on the SEG reconstruction") as update:
        for index, name in enumerate(names):
            spec = LEARNERS[name]
            size = m if spec.max_m is None else min(m, spec.max_m)
            note = f"capped at m = {size}" if size < m else ""
            errors, values, seconds = [], [], 0.0
            for (X, y), (X_test, y_test) in draws:
                start = time.perf_counter()
                model, value = fit_with_holdout(spec, gamma, X[:size], y[:size])
                seconds += time.perf_counter() - start
                errors.append(100 * pairwise_misranking(y_test, model.predict(X_test)))
                values.append(value)
            row = {"learner": name, "m": size, "misranking_mean": float(np.mean(errors)),
                   "misranking_sd": float(np.std(errors, ddof=1)) if reps > 1 else 0.0,
                   "param": spec.param, "values": values,
                   "seconds_per_fit": seconds / reps, "note": note}
            rows.append(row)
            table.add_row(name, str(size),
                          f"{row['misranking_mean']:.2f} ± {row['misranking_sd']:.2f}",
                          f"{spec.param} ≈ {np.median(values):.3g}",
                          f"{row['seconds_per_fit']:.2f}", note)
            console.print(f"{name}: {row['misranking_mean']:.2f} ± {row['misranking_sd']:.2f} % "
                          f"({row['seconds_per_fit']:.2f} s per fit) {note}")
            update(index + 1, len(names))
    console.print(table)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"m": m, "reps": reps, "gamma": gamma, "seed": seed,
                                   "test_size": test_size, "rows": rows}, indent=2))
        console.print(f"wrote {out}")
