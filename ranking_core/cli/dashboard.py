"""``riskgrid dashboard``: replace this process with the Streamlit web app (``os.execvpe``).

The server is this process afterwards, so SIGTERM / SIGINT (Ctrl+C) stop it and free the port;
no child is left behind. Safe defaults for a server: it listens on 127.0.0.1 unless ``--address``
says otherwise, shows errors to the browser as one plain sentence (details in the server log)
and does not watch the page files unless ``--development``, serves Streamlit's metrics endpoint
only with ``--metrics``, and ``--public`` makes a demo (built-in data only: no uploads, no server
paths, no records; jobs capped to a few seconds). Long jobs run on a local dask.distributed
cluster, or on a team's scheduler with ``--scheduler``. The server refuses to start, saying why,
when the database cannot be opened or the scheduler's address is malformed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

import ranking_core
from dashboard import APP_PATH, DATA_DIR_ENV, METRICS_ENV, PUBLIC_ENV
from ranking_core.grids.seg_source import SEG_TABLE_ENV
from ranking_core.job_cluster import SCHEDULER_ENV, check_scheduler_address

app = typer.Typer(help="Start the web dashboard.", add_completion=False)


def streamlit_command(
    app_path: Path, port: int, headless: bool, address: str = "127.0.0.1", development: bool = False
) -> list[str]:
    """The ``streamlit run`` command line for the app, run through :mod:`dashboard.server`
    (which prepares the pages before Streamlit starts serving)."""
    return [
        sys.executable,
        "-m",
        "dashboard.server",
        "run",
        str(app_path),
        "--server.port",
        str(port),
        "--server.address",
        address,
        "--server.headless",
        str(headless).lower(),
        "--client.showErrorDetails",
        "full" if development else "none",
        *(["--server.fileWatcherType", "auto"] if development else []),
    ]


def streamlit_environment(
    seg_table: Path | None,
    environ: dict[str, str],
    *,
    public: bool = False,
    data_dir: Path | None = None,
    metrics: bool = False,
    scheduler: str | None = None,
) -> dict[str, str]:
    """The app's environment: ``SEG_TABLE`` from ``--seg-table`` and ``RISKGRID_DATA_DIR`` from
    ``--data-dir`` (absolute paths), ``RISKGRID_SCHEDULER`` from ``--scheduler`` (else as
    inherited), ``RISKGRID_PUBLIC=1`` for ``--public``,
    ``RISKGRID_METRICS=1`` for ``--metrics`` (else unset), and this checkout of ``ranking_core``
    first on ``PYTHONPATH`` so the app runs the same code."""
    env = dict(environ)
    env.pop(METRICS_ENV, None)
    if metrics:
        env[METRICS_ENV] = "1"
    if seg_table is not None:
        env[SEG_TABLE_ENV] = str(seg_table.expanduser().resolve())
    if data_dir is not None:
        env[DATA_DIR_ENV] = str(data_dir.expanduser().resolve())
    if public:
        env[PUBLIC_ENV] = "1"
    if scheduler is not None:
        env[SCHEDULER_ENV] = scheduler
    root = str(Path(ranking_core.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


@app.callback(invoke_without_command=True)
def dashboard(
    port: Annotated[int, typer.Option(help="Port to serve on.", min=1, max=65535)] = 8501,
    address: Annotated[
        str,
        typer.Option(
            help="Address to listen on; 127.0.0.1 serves this machine only. Use 0.0.0.0 to serve "
            "other machines (then consider --public, or a login in .streamlit/secrets.toml)."
        ),
    ] = "127.0.0.1",
    seg_table: Annotated[
        Path | None,
        typer.Option(
            "--seg-table",
            help=f"SEG RiskPairData file (else ${SEG_TABLE_ENV}, "
            "else a table uploaded and stored earlier).",
        ),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            help=f"Folder whose rating files the collaborative-filtering "
            f"page may open (else ${DATA_DIR_ENV}); no other server path is read.",
        ),
    ] = None,
    public: Annotated[
        bool,
        typer.Option(
            help="Public demo: built-in data only (no uploads, no server files), no records, and "
            "every job capped to a few seconds.",
        ),
    ] = False,
    metrics: Annotated[
        bool,
        typer.Option(
            help="Serve Streamlit's /_stcore/metrics endpoint (sessions, caches; unauthenticated). "
            "Off by default.",
        ),
    ] = False,
    development: Annotated[
        bool,
        typer.Option(
            help="Show full error details (tracebacks) in the browser and rerun pages when their "
            "files change; for development only.",
        ),
    ] = False,
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            help=f"Run the long jobs on the dask.distributed scheduler at tcp://HOST:PORT "
            f"(else ${SCHEDULER_ENV}, else a local cluster on this machine); its workers run "
            "this riskgrid. Keep its port on a private network (docs/OPERATIONS.md).",
        ),
    ] = None,
    browser: Annotated[
        bool,
        typer.Option(
            "--browser/--headless",
            help="Open a web browser on this machine once the dashboard "
            "is up. Default: none (as on a server); --headless is "
            "the default, kept for scripts.",
        ),
    ] = False,
) -> None:
    """Serve the dashboard at http://ADDRESS:PORT (Ctrl+C stops it)."""
    from ranking_core.cli.output import fail

    if seg_table is not None and not seg_table.expanduser().is_file():
        fail(
            f"SEG table file not found: --seg-table {seg_table} is no file; give the 2014 SEG "
            f"risk table (RiskPairData as CSV, CSV.gz or XLSX) or set {SEG_TABLE_ENV}=PATH "
            "instead (riskgrid does not ship it)",
            code=2,
        )
    if data_dir is not None and not data_dir.expanduser().is_dir():
        fail(f"Data folder not found: --data-dir {data_dir} is no folder", code=2)
    if scheduler is not None:
        try:
            scheduler = check_scheduler_address(scheduler)
        except ValueError as exc:
            fail(f"--scheduler: {exc}", code=2)
    command = streamlit_command(APP_PATH, port, not browser, address, development)
    env = streamlit_environment(
        seg_table,
        dict(os.environ),
        public=public,
        data_dir=data_dir,
        metrics=metrics,
        scheduler=scheduler,
    )
    sys.stdout.flush()
    sys.stderr.flush()
    # the app folder is the working directory so that its .streamlit/config.toml applies
    os.chdir(APP_PATH.parent)
    os.execvpe(command[0], command, env)
