"""Exports of the meter accuracy report: tables as CSV safe against formula injection, figures as
HTML and PNG."""

from __future__ import annotations

import os
from pathlib import Path

import plotly.graph_objects as go

from ranking_core.inputs.text import FORMULA_PREFIXES, safe_csv
from ranking_core.meter.report import MeterReport

__all__ = [
    "FORMULA_PREFIXES",
    "FigureExportError",
    "figure_html",
    "figure_png",
    "safe_csv",
    "write_report_files",
]

PNG_HELP = (
    "PNG export uses kaleido, which (from version 1) drives a Chrome or Chromium browser and "
    "found none that works. Install one (Debian/Ubuntu: apt-get install chromium; or run "
    "plotly_get_chrome), or point the BROWSER_PATH environment variable at its executable. "
    "HTML export works without a browser."
)


class FigureExportError(RuntimeError):
    """A figure could not be exported; the message says what to install."""


def figure_html(fig: go.Figure, include_plotlyjs: bool | str = True) -> str:
    """A standalone HTML page of the figure (plotly.js embedded by default, works offline)."""
    return fig.to_html(include_plotlyjs=include_plotlyjs, full_html=True)


def figure_png(fig: go.Figure, scale: float = 2.0) -> bytes:
    """PNG bytes through kaleido; raises :class:`FigureExportError` when no browser works."""
    try:
        return fig.to_image(format="png", scale=scale)
    except Exception as exc:  # kaleido reports a missing browser as RuntimeError
        raise FigureExportError(f"{PNG_HELP} (kaleido said: {str(exc).strip()[:300]})") from exc


def write_report_files(
    report: MeterReport,
    directory: str | os.PathLike,
    figures: dict[str, go.Figure] | None = None,
    png: bool = False,
) -> list[Path]:
    """Write every table as ``<name>.csv`` (formula-safe), the per-pair table as ``pairs.csv``,
    and each figure as ``<name>.html`` (and ``<name>.png`` when ``png``); returns the paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, table in {**report.tables(), "pairs": report.pairs}.items():
        path = out / f"{name}.csv"
        path.write_bytes(safe_csv(table).encode("utf-8"))
        written.append(path)
    for name, fig in (figures or {}).items():
        path = out / f"{name}.html"
        path.write_text(figure_html(fig), encoding="utf-8")
        written.append(path)
        if png:
            path = out / f"{name}.png"
            path.write_bytes(figure_png(fig))
            written.append(path)
    return written
