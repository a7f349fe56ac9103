"""The server's warm-up: the Learn page's opening result computed before serving is the one a fresh
session shows, and only for exactly the data and settings it was computed with."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from dashboard_support import fresh_machine
from streamlit.testing.v1 import AppTest
from threadpoolctl import threadpool_info

from dashboard import APP_PATH
from dashboard.common import seg_status
from dashboard.learn_data import PanelChoice, warm_opening_result
from dashboard.threads import PARALLEL_FIT_FROM, fit_threads
from ranking_core.learn import LearnSettings, ratings_checksum
from ranking_core.panels import simulate_panel
from ranking_core.ratings import read_rating_set


def test_a_fresh_session_shows_the_warmed_result_and_other_data_are_fitted_anew(
        tmp_path, monkeypatch):
    fresh_machine(tmp_path, monkeypatch)
    warmed = warm_opening_result(seg_status())
    # the warm result is the default panel around the built-in surface, with default settings
    choice = PanelChoice()
    panel = read_rating_set(simulate_panel(
        choice.m, design=choice.design, reference=None, n_raters=choice.raters,
        noise=choice.noise, outlier_fraction=choice.outliers, random_state=choice.draw))
    assert warmed.settings == LearnSettings()
    assert warmed.checksum == ratings_checksum(panel.X, panel.y)
    assert warmed.grid.shape == (601, 601)

    at = AppTest.from_file(str(APP_PATH), default_timeout=180)
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["learn_result"] is warmed  # served from the shared cache

    at.number_input(key="learn_m").set_value(choice.m - 50)
    at.run()
    assert not at.exception, at.exception
    refitted = at.session_state["learn_result"]
    assert refitted is not warmed and refitted.n_ratings == choice.m - 50
    assert refitted.checksum != warmed.checksum


def test_the_server_runs_every_blas_on_one_thread():
    """In a fresh process (the limit is process-wide): after ``one_blas_thread`` each loaded BLAS
    (NumPy's and SciPy's) uses one thread, and a LAPACK call still works."""
    script = ("import json; from dashboard.threads import one_blas_thread; one_blas_thread(); "
              "import numpy, scipy.linalg; from threadpoolctl import threadpool_info; "
              "scipy.linalg.eigh(numpy.eye(3)); "
              "print(json.dumps([p['num_threads'] for p in threadpool_info() "
              "if p['user_api'] == 'blas']))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, cwd=Path(APP_PATH).parents[1])
    threads = json.loads(out.stdout)
    assert threads and all(n == 1 for n in threads)


@pytest.mark.parametrize(("n_ratings", "load", "expected"), [
    (300, 0.0, 1),  # small fits: one thread is as fast
    (PARALLEL_FIT_FROM, 0.0, "cores"),  # a large fit on a free machine: every core
    (PARALLEL_FIT_FROM, 2.0, 1),  # … but not when the cores are busy
])
def test_a_fit_uses_every_core_only_when_it_is_large_and_the_cores_are_free(
        monkeypatch, n_ratings, load, expected):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    import numpy  # noqa: F401 - loads the BLAS whose threads are counted
    with fit_threads(n_ratings):
        threads = {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}
    assert threads == {2 if expected == "cores" else 1}
