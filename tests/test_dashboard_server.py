"""The server's warm-up: the Learn page's opening result computed before serving is the one a fresh
session shows, and only for exactly the data and settings it was computed with."""

from __future__ import annotations

from dashboard_support import fresh_machine
from streamlit.testing.v1 import AppTest

from dashboard import APP_PATH
from dashboard.common import seg_status
from dashboard.learn_data import PanelChoice, warm_opening_result
from ranking_core.learn import PRESETS, ratings_checksum
from ranking_core.panels import simulate_panel
from ranking_core.ratings import read_rating_set


def test_a_fresh_session_shows_the_warmed_result_and_other_data_are_fitted_anew(
    tmp_path, monkeypatch
):
    fresh_machine(tmp_path, monkeypatch)
    warmed = warm_opening_result(seg_status())
    # the warm result is the default panel around the built-in surface, with the recipe its
    # ratings call for (a simulated panel names its raters: the robust recipe)
    choice = PanelChoice()
    panel = read_rating_set(
        simulate_panel(
            choice.m,
            design=choice.design,
            reference=None,
            n_raters=choice.raters,
            noise=choice.noise,
            outlier_fraction=choice.outliers,
            random_state=choice.draw,
        )
    )
    assert warmed.settings == PRESETS["robust"]
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
