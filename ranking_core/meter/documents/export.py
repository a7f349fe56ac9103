"""Exports of the meter accuracy report: the per-pair results (:func:`pair_results`), tables
as CSV safe against formula injection, Plotly figures as HTML (and PNG through a browser), the
report's matplotlib plots as PNG and PDF."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from matplotlib.figure import Figure

from ranking_core.grids.risk_scale import RISK_CATEGORY_FILE_LABELS
from ranking_core.inputs import MGDL_PER_MMOLL
from ranking_core.inputs.text import FORMULA_PREFIXES, safe_csv
from ranking_core.meter.drawing.grid_plots import figure_pdf
from ranking_core.meter.drawing.grid_plots import figure_png as static_png
from ranking_core.meter.report import HYPO_LIMIT, MeterReport
from ranking_core.meter.seg_tool import ISO_COMPLIANT

__all__ = [
    "FORMULA_PREFIXES",
    "FigureExportError",
    "figure_html",
    "figure_png",
    "pair_results",
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


def report_files(
    report: MeterReport,
    figures: dict[str, go.Figure] | None = None,
    png: bool = False,
    plots: dict[str, Figure] | None = None,
) -> dict[str, bytes]:
    """The report's files by name: every table as ``<name>.csv`` (formula-safe), the per-pair
    table as ``pairs.csv`` (SEG risk categories by their file labels), each Plotly figure as
    ``<name>.html`` (and ``<name>.png`` through kaleido when ``png``), and each matplotlib plot
    as ``<name>.png`` and ``<name>.pdf`` (no browser needed; a Plotly figure of the same name is
    then written as HTML only)."""
    files: dict[str, bytes] = {}
    pairs = report.pairs
    if "risk_category" in pairs:  # "None" would be read back as missing
        labels = list(RISK_CATEGORY_FILE_LABELS)
        pairs = pairs.assign(risk_category=pairs["risk_category"].cat.rename_categories(labels))
    for name, table in {**report.tables(), "pairs": pairs}.items():
        files[f"{name}.csv"] = safe_csv(table).encode("utf-8")
    for name, plot in (plots or {}).items():
        files[f"{name}.png"] = static_png(plot)
        files[f"{name}.pdf"] = figure_pdf(plot)
    for name, fig in (figures or {}).items():
        files[f"{name}.html"] = figure_html(fig).encode("utf-8")
        if png and name not in (plots or {}):
            files[f"{name}.png"] = figure_png(fig)
    return files


def write_report_files(
    report: MeterReport,
    directory: str | os.PathLike,
    figures: dict[str, go.Figure] | None = None,
    png: bool = False,
    plots: dict[str, Figure] | None = None,
) -> list[Path]:
    """Write :func:`report_files` into ``directory``; returns the paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in report_files(report, figures, png, plots).items():
        path = out / name
        path.write_bytes(content)
        written.append(path)
    return written


def pair_results(report: MeterReport) -> pd.DataFrame:
    """One row per valid input pair with the columns of
    :data:`~ranking_core.meter.report.PAIR_RESULT_COLUMNS` (SEG and learned columns only when the
    report has them; for mmol/L input also BGM and REF in mmol/L).
    Zones and risks are empty for pairs left out of the analysis."""
    pairs = report.pairs
    bgm, ref = pairs["BGM"].to_numpy(), pairs["REF"].to_numpy()
    out = {"line": pairs["row"], "BGM": bgm.astype(np.int64), "REF": ref.astype(np.int64)}
    if report.glucose_unit != "mg/dL":
        out["BGM_mmol_L"] = np.round(bgm / MGDL_PER_MMOLL, 2)
        out["REF_mmol_L"] = np.round(ref / MGDL_PER_MMOLL, 2)
    out["included"] = pairs["included"]
    if "abs_risk" in pairs:
        out["seg_risk"] = pairs["abs_risk"].round(3)
        category = pairs["risk_category"]
        out["seg_risk_category"] = category.cat.rename_categories(list(RISK_CATEGORY_FILE_LABELS))
        codes = category.cat.codes.to_numpy()
        out["seg_risk_category_id"] = pd.arrays.IntegerArray(codes, mask=codes < 0)
    for family in report.zone_grids:
        out[f"{family}_zone"] = pairs[family]
    if "learned_risk" in pairs:
        out["learned_risk"] = pairs["learned_risk"].round(3)
    out["iso_within_15"] = pairs["iso_diff"].le(ISO_COMPLIANT).where(pairs["included"])
    out["error_direction"] = np.where(
        bgm > ref, "BGM > REF", np.where(bgm < ref, "BGM < REF", "BGM = REF")
    )
    out["hypoglycaemia_missed"] = (ref < HYPO_LIMIT) & (bgm >= HYPO_LIMIT)
    return pd.DataFrame(out).reset_index(drop=True)
