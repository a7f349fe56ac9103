"""``riskgrid dashboard``: start the Streamlit web app (``streamlit run`` in a subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

import ranking_core
from ranking_core.grids.seg import MISSING_SEG_MESSAGE, SEG_TABLE_ENV

app = typer.Typer(help="Start the web dashboard.")


def streamlit_command(app_path: Path, port: int, headless: bool) -> list[str]:
    """The ``python -m streamlit run`` command line for the app."""
    return [sys.executable, "-m", "streamlit", "run", str(app_path),
            "--server.port", str(port), "--server.headless", str(headless).lower()]


def streamlit_environment(seg_table: Path | None, environ: dict[str, str]) -> dict[str, str]:
    """The child's environment: ``SEG_TABLE`` from ``--seg-table`` (absolute path), and this
    checkout of ``ranking_core`` first on ``PYTHONPATH`` so the app runs the same code."""
    env = dict(environ)
    if seg_table is not None:
        env[SEG_TABLE_ENV] = str(seg_table.expanduser().resolve())
    root = str(Path(ranking_core.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


@app.callback(invoke_without_command=True)
def dashboard(
    port: Annotated[int, typer.Option(help="Port to serve on.", min=1, max=65535)] = 8501,
    seg_table: Annotated[
        Path | None,
        typer.Option("--seg-table", help=f"SEG RiskPairData file (else ${SEG_TABLE_ENV}, "
                     "else a table uploaded and stored earlier)."),
    ] = None,
    headless: Annotated[bool, typer.Option(help="Do not open a browser.")] = False,
) -> None:
    """Serve the dashboard at http://localhost:PORT (Ctrl+C stops it)."""
    from dashboard import APP_PATH

    if seg_table is not None and not seg_table.expanduser().is_file():
        typer.echo(f"SEG table file not found: {seg_table}. {MISSING_SEG_MESSAGE}", err=True)
        raise typer.Exit(2)
    command = streamlit_command(APP_PATH, port, headless)
    env = streamlit_environment(seg_table, dict(os.environ))
    try:  # the app folder is the working directory so that its .streamlit/config.toml applies
        code = subprocess.call(command, env=env, cwd=APP_PATH.parent)
    except KeyboardInterrupt:
        code = 0
    raise typer.Exit(code)
