"""Meter report figures and exports: colour stops, Bland–Altman bounds, formula-safe CSV, HTML,
PNG (or a clear message without a browser)."""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest

from ranking_core.grids import SEGTable
from ranking_core.meter import meter_report
from ranking_core.meter.documents.export import (
    FigureExportError,
    figure_html,
    figure_png,
    safe_csv,
    write_report_files,
)
from ranking_core.meter.documents.figures import risk_heatmap, seg_heatmap


@pytest.fixture(scope="module")
def report():
    pairs = pd.DataFrame({"BGM": [110, 40, 300, 10, 700], "REF": [100, 50, 200, 0, 100]})
    return meter_report(pairs, SEGTable(np.zeros((601, 601))))


def test_heatmap_uses_official_colour_stops_and_draws_included_pairs(report):
    surface = np.zeros((601, 601))
    surface[200, 300] = -2.5  # [REF, BGM]; the heat map shows |risk|
    fig = risk_heatmap(surface, pairs=report, step=1)
    heat, points = fig.data
    assert [list(s) for s in heat.colorscale] == [
        [0.0, "#00A500"],
        [0.4375 / 4, "#00FF00"],
        [1.0625 / 4, "#FFFF00"],
        [2.75 / 4, "#FF0000"],
        [1.0, "#800000"],
    ]
    assert (heat.zmin, heat.zmax) == (0.0, 4.0)
    assert np.asarray(heat.z)[300, 200] == 2.5  # rows are BGM, columns REF
    assert list(points.x) == [100, 50, 200, 0] and list(points.y) == [110, 40, 300, 10]
    assert seg_heatmap(SEGTable(surface), None, step=4).data[0].z.shape == (151, 151)
    with pytest.raises(ValueError, match="601"):
        risk_heatmap(np.zeros((3, 3)))


def test_safe_csv_neutralises_formulas():
    frame = pd.DataFrame(
        {
            "=name": ["=HYPERLINK(1)", "+1", "-2+3", "@SUM(A1)", "\tx", "\ry", "plain", "a=b"],
            "n": [1, -2, 3, 4, 5, 6, 7, 8],
        }
    )
    rows = list(csv.reader(io.StringIO(safe_csv(frame), newline="")))
    assert rows[0] == ["'=name", "n"]
    assert [r[0] for r in rows[1:]] == [
        "'=HYPERLINK(1)",
        "'+1",
        "'-2+3",
        "'@SUM(A1)",
        "'\tx",
        "'\ry",
        "plain",
        "a=b",
    ]
    assert [r[1] for r in rows[1:]][:2] == ["1", "-2"]  # numbers stay numbers


def test_write_report_files_and_html(report, tmp_path):
    fig = seg_heatmap(SEGTable(np.zeros((601, 601))), report, step=4)
    html = figure_html(fig)
    assert html.lstrip().lower().startswith("<html") and "plotly" in html.lower()
    paths = write_report_files(report, tmp_path, {"seg_heatmap": fig})
    names = {p.name for p in paths}
    assert {
        "pair_types.csv",
        "iso_ranges.csv",
        "binomial.csv",
        "pairs.csv",
        "seg_heatmap.html",
    } <= names
    table = pd.read_csv(tmp_path / "risk_categories.csv")
    assert table["count"].tolist() == report.risk_categories["count"].tolist()


def test_png_without_a_browser_fails_with_instructions(report, monkeypatch):
    monkeypatch.setenv("BROWSER_PATH", "/nonexistent/chromium")
    with pytest.raises(FigureExportError, match="Chrome or Chromium"):
        figure_png(seg_heatmap(SEGTable(np.zeros((601, 601))), report, step=4))


@pytest.mark.slow
def test_png_with_a_browser(report):
    try:
        png = figure_png(seg_heatmap(SEGTable(np.zeros((601, 601))), report, step=4), scale=1)
    except FigureExportError as exc:
        pytest.skip(f"no working browser for kaleido here: {exc}")
    assert png.startswith(b"\x89PNG\r\n\x1a\n")


def test_grade_lines_of_a_linear_grid_are_the_closed_form_iso_lines():
    from ranking_core.meter.documents.figures import grade_line_vertices

    estimate = np.arange(601.0)
    grid = np.tile(estimate / 150.0, (601, 1))  # [REF, estimate]: risk = estimate / 150
    x, y = grade_line_vertices(grid, step=3)
    gaps = np.flatnonzero(np.isnan(x))
    assert len(gaps) == 4 and np.array_equal(np.isnan(x), np.isnan(y))  # one line per grade
    for line_x, line_y, level in zip(
        np.split(x, gaps + 1), np.split(y, gaps + 1), (0.5, 1.5, 2.5, 3.5), strict=False
    ):
        line_x, line_y = line_x[~np.isnan(line_x)], line_y[~np.isnan(line_y)]
        np.testing.assert_allclose(line_y, 150.0 * level, atol=1e-3)  # risk = level there
        assert line_x.min() == 0 and line_x.max() == 600  # across every REF
