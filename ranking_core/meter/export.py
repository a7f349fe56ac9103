"""Exports of the meter accuracy report: tables as CSV safe against formula injection, Plotly
figures as HTML (and PNG through a browser), the report's matplotlib plots as PNG and PDF."""

from __future__ import annotations

import os
from pathlib import Path

import plotly.graph_objects as go
from matplotlib.figure import Figure

from ranking_core.grids.risk_scale import RISK_CATEGORY_FILE_LABELS
from ranking_core.inputs.text import FORMULA_PREFIXES, safe_csv
from ranking_core.meter.grid_plots import figure_pdf
from ranking_core.meter.grid_plots import figure_png as static_png
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
    plots: dict[str, Figure] | None = None,
) -> list[Path]:
    """Write every table as ``<name>.csv`` (formula-safe), the per-pair table as ``pairs.csv``
    (SEG risk categories by their file labels), each Plotly figure as ``<name>.html`` (and
    ``<name>.png`` through kaleido when ``png``), and each matplotlib plot as ``<name>.png``
    and ``<name>.pdf`` (no browser needed; a Plotly figure of the same name is then written as
    HTML only); returns the paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    pairs = report.pairs
    if "risk_category" in pairs:  # "None" would be read back as missing
        labels = list(RISK_CATEGORY_FILE_LABELS)
        pairs = pairs.assign(risk_category=pairs["risk_category"].cat.rename_categories(labels))
    for name, table in {**report.tables(), "pairs": pairs}.items():
        path = out / f"{name}.csv"
        path.write_bytes(safe_csv(table).encode("utf-8"))
        written.append(path)
    for name, plot in (plots or {}).items():
        for suffix, draw in ((".png", static_png), (".pdf", figure_pdf)):
            path = out / f"{name}{suffix}"
            path.write_bytes(draw(plot))
            written.append(path)
    for name, fig in (figures or {}).items():
        path = out / f"{name}.html"
        path.write_text(figure_html(fig), encoding="utf-8")
        written.append(path)
        if png and name not in (plots or {}):
            path = out / f"{name}.png"
            path.write_bytes(figure_png(fig))
            written.append(path)
    return written
