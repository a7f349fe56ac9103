"""``riskgrid records …``: the saved records of the database the dashboard uses
(``$RISKGRID_DATABASE_URL``, else SQLite in the user's data directory).

``records list`` shows them, ``records export NAME --out-dir DIR`` writes a saved learned grid as
the files ``riskgrid learn --out-dir`` writes (``grid.npy``, ``grid.csv``, ``grid.png``,
``grid.json``; the JSON is the metadata stored with the grid), ``records delete NAME`` removes
one. ``riskgrid learn RATINGS --save NAME`` saves a grid (:func:`save_learned`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ranking_core.cli.output import fail
from ranking_core.record_kinds import RECORD_KINDS

app = typer.Typer(
    help="List, export and delete saved records (the dashboard's database).",
    no_args_is_help=True,
    add_completion=False,
)
console = Console(highlight=False)


def _store():
    from ranking_core.storage import StorageError, Store

    try:
        return Store()
    except StorageError as exc:
        fail(exc)


def store_for_saving(name: str):
    """``learn --save NAME``, before the fit: the database opens, accepts writes and has no
    learned grid named ``name`` (else one sentence, exit 1); returns the store."""
    from ranking_core.storage import StorageError, Store

    try:
        store = Store()
        store.check_can_save("learned_grid", name)
    except StorageError as exc:
        fail(f"not learned: --save {name.strip()!r}: {exc}")
    return store


def save_learned(result, name: str, source: str | None, store=None) -> None:
    """``learn --save NAME``: store the grid shown (written) with its grid.json metadata; a taken
    name is refused (exit 1), nothing is replaced."""
    from ranking_core.learn import grid_metadata
    from ranking_core.storage import StorageError

    try:
        (store or _store()).save_learned_grid(name, result.grid, grid_metadata(result, source))
    except StorageError as exc:
        fail(f"not saved: {exc}")
    console.print(
        Text(
            f"saved learned grid {name.strip()!r} (riskgrid records export NAME "
            "--out-dir DIR writes its files)"
        ),
        soft_wrap=True,
    )


def _kind_of(store, name: str, kind: str | None) -> str:
    """The kind of the record ``name``: ``kind`` if given, else the one kind holding that name."""
    if kind is not None:
        if kind not in RECORD_KINDS:
            fail(f"--kind must be one of {', '.join(RECORD_KINDS)}; got {kind!r}")
        return kind
    kinds = [k for k in RECORD_KINDS if any(r.name == name for r in store.list_records(k))]
    if not kinds:
        fail(f"no record named {name!r} is stored")
    if len(kinds) > 1:
        fail(
            f"records of several kinds are named {name!r} ({', '.join(kinds)}); "
            "choose one with --kind"
        )
    return kinds[0]


@app.command("list")
def list_records(
    kind: Annotated[
        str | None, typer.Option(help=f"Only this kind: {', '.join(RECORD_KINDS)} (default: all).")
    ] = None,
) -> None:
    """The saved records, newest first per kind: name, when and by whom they were saved, size."""
    from ranking_core.storage import StorageError, display_name

    if kind is not None and kind not in RECORD_KINDS:
        fail(f"--kind must be one of {', '.join(RECORD_KINDS)}; got {kind!r}")
    store = _store()
    table = Table(title="Saved records", title_justify="left")
    for column in ("kind", "name", "saved (UTC)", "saved by", "ratings / rows", "λ"):
        table.add_column(column)
    try:
        for k in [kind] if kind else list(RECORD_KINDS):
            for info in store.list_records(k):
                metadata = info.meta.get("metadata") or {}
                lam = metadata.get("lambda") if isinstance(metadata, dict) else None
                size = info.meta.get("rows", info.meta.get("m"))
                table.add_row(
                    RECORD_KINDS[k].label,
                    Text(display_name(info.name)),
                    info.created_at.strftime("%Y-%m-%d %H:%M"),
                    Text(display_name(info.saved_by or "—")),
                    f"{size:,}" if isinstance(size, int) else "",
                    f"{lam:.4g}" if isinstance(lam, float) else "",
                )
    except StorageError as exc:
        fail(exc)
    if not table.rows:
        console.print("no records saved yet")
        return
    console.print(table)


@app.command()
def export(
    name: Annotated[str, typer.Argument(help="Name of a saved learned grid.")],
    out_dir: Annotated[
        Path,
        typer.Option(
            "--out-dir",
            help="Folder for grid.npy, grid.csv, grid.png and grid.json (created if needed).",
        ),
    ],
) -> None:
    """Write a saved learned grid as the files of ``riskgrid learn --out-dir``."""
    from ranking_core.cli.output import OutputError, write_outputs
    from ranking_core.grids.files import grid_file_contents
    from ranking_core.storage import StorageError

    try:
        stored = _store().load_learned_grid(name)
        files = grid_file_contents(stored.grid, stored.metadata)
        # a temporary file beside each target, then os.replace: a link there is refused
        write_outputs(out_dir, files, "--out-dir")
    except (StorageError, OutputError) as exc:
        fail(exc)
    for file_name in files:
        console.print(Text(f"wrote {out_dir / file_name}"), soft_wrap=True)


@app.command()
def delete(
    name: Annotated[str, typer.Argument(help="Name of the record, exactly as listed.")],
    kind: Annotated[
        str | None,
        typer.Option(
            help=f"Kind of the record: {', '.join(RECORD_KINDS)} (needed only when records of "
            "several kinds have that name)."
        ),
    ] = None,
) -> None:
    """Delete a saved record."""
    from ranking_core.storage import StorageError, display_name

    store = _store()
    try:
        chosen = _kind_of(store, name, kind)
        store.delete(chosen, name)
    except StorageError as exc:
        fail(exc)
    console.print(
        Text(f"deleted {RECORD_KINDS[chosen].label} “{display_name(name)}”"), soft_wrap=True
    )
