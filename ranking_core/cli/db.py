"""``riskgrid db …``: the database the dashboard, ``riskgrid records`` and ``riskgrid survey`` use
(``$RISKGRID_DATABASE_URL``, else SQLite in the user's data directory).

``db upgrade`` brings its schema to this riskgrid's revision, once, after an update (the
dashboard's start and the first write do the same); reads never upgrade and never wait for a
writer. ``db status`` says where the database is, whether its schema is current and, for SQLite,
its journal mode (WAL: readers never wait for the one writer).
"""

from __future__ import annotations

import typer

from ranking_core.cli.output import fail, say

app = typer.Typer(
    help="The records database: upgrade its schema after an update, show its state.",
    no_args_is_help=True,
    add_completion=False,
)
STATES = {
    "current": "current (this riskgrid's schema)",
    "empty": "empty (created by the first use, or by riskgrid db upgrade)",
    "outdated": "older than this riskgrid: run riskgrid db upgrade",
}


@app.command()
def upgrade() -> None:
    """Upgrade the database's schema to this riskgrid's (creating a new database); one process at
    a time, the others' writes wait for it. Run it once after updating riskgrid."""
    from ranking_core.storage import SCHEMA_REVISION, StorageError, Store

    try:
        store = Store()
        before = store.upgrade()
    except StorageError as exc:
        fail(exc)
    done = {
        "current": "was already at",
        "empty": "created at",
        "outdated": "upgraded to",
    }[before]
    say(f"{store.where} {done} schema revision {SCHEMA_REVISION}")
    store.dispose()


@app.command()
def status() -> None:
    """Where the database is, whether its schema is current, and SQLite's journal mode."""
    from ranking_core.storage import StorageError, Store

    try:
        store = Store()
        state = store.schema()
        mode = store.journal_mode()
    except StorageError as exc:
        fail(exc)
    say(f"database: {store.where}")
    say(f"schema: {STATES.get(state, f'made by a newer riskgrid (revision {state})')}")
    if mode is not None:
        say(f"journal mode: {mode}" + ("" if mode == "wal" else " (riskgrid db upgrade sets WAL)"))
    store.dispose()
