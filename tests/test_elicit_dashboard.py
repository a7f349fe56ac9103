"""The Compare page shows an elicited grid (``riskgrid elicit``'s grid.npy) uploaded beside the
other grids, with the numbers of ``compare_grids``."""

from __future__ import annotations

import io

import numpy as np
from dashboard_support import fresh_machine, metrics, open_app

from ranking_core.elicit import (
    elicited_files,
    elicited_grids,
    read_answers,
    simulate_answers,
)


def test_compare_page_shows_an_elicited_grid(tmp_path, monkeypatch):
    from ranking_core.grids.compare import compare_grids
    from ranking_core.panels import parkes_surface

    fresh_machine(tmp_path, monkeypatch)
    thresholds, matrix = simulate_answers(3, scenarios=("s1",), seed=1)
    t, m = tmp_path / "t.csv", tmp_path / "m.csv"
    thresholds.to_csv(t, index=False)
    matrix.to_csv(m, index=False)
    answers = read_answers(t, m)
    grids = elicited_grids(answers.maps)
    files = elicited_files(answers, grids, {"thresholds": (str(t), b""), "matrix": (str(m), b"")})
    grid = np.load(io.BytesIO(files["grid.npy"]))
    expected = compare_grids(parkes_surface(), grid)
    at = open_app("compare")
    at.file_uploader(key="compare_upload").set_value(
        ("grid.npy", files["grid.npy"], "application/octet-stream")
    )
    at.run()
    at.selectbox(key="compare_b").set_value("file: grid.npy")
    at.run()
    assert not at.exception
    shown = metrics(at)
    assert shown["max |Δ|"] == f"{expected.max_abs_difference:.3f}"
    assert shown["mean |Δ|"] == f"{expected.mean_abs_difference:.3f}"
