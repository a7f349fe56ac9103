"""The "Plan a survey" page under AppTest: start design, a simulated panel's report and map."""

from __future__ import annotations

import numpy as np
import pytest

from ranking_core.panels.design import DEFAULT_PLAN_METHOD, PLAN_METHOD_LABELS, PLAN_METHODS
from tests.dashboard_support import fresh_machine, metrics, open_app, plotly_numbers, plotly_traces


def test_start_design_without_ratings(tmp_path, monkeypatch):
    fresh_machine(tmp_path, monkeypatch)
    at = open_app("plan", plan_k=12)
    assert "Next 12 pairs to rate" in [h.value for h in at.subheader]
    table = at.dataframe[-1].value
    assert len(table) == 12 and table["Reference (mg/dL)"].between(0, 600).all()
    # the figure beside the table draws the same pairs
    pairs = plotly_traces(at)["next pairs"]
    np.testing.assert_array_equal(plotly_numbers(pairs["x"]), table["Reference (mg/dL)"])
    np.testing.assert_array_equal(plotly_numbers(pairs["y"]), table["Estimate (mg/dL)"])
    # every planning method is offered, by its label, the default first
    chooser = at.selectbox(key="plan_method")
    assert chooser.options == list(PLAN_METHOD_LABELS.values())
    assert chooser.value == DEFAULT_PLAN_METHOD == PLAN_METHODS[0]


@pytest.mark.slow
def test_simulated_panel_shows_report_uncertainty_and_next_pairs(tmp_path, monkeypatch):
    fresh_machine(tmp_path, monkeypatch)
    at = open_app("plan", plan_source="Simulated panel (demonstration)", plan_demo_m=120, plan_k=10)
    assert not at.exception, at.exception
    share = metrics(at)["Share of the grid whose risk category is uncertain"]
    assert 0 <= float(share.rstrip("%")) <= 100
    raters = at.dataframe[0].value
    assert raters["Ratings"].sum() == 120 and len(raters) == 8
    # the simulator's careless rater (the last) weighs least, and is named above the table
    assert raters[raters["Mean weight"] < 0.25]["Rater"].tolist() == ["R08"]
    assert [w.value for w in at.warning if "weigh less" in w.value] == [
        "Ratings of R08 weigh less than 0.25 on average: their answers lie far from the "
        "consensus throughout. Check them before the next round."
    ]
    assert raters["Share flagged"].between(0, 100).all()  # in per cent
    assert len(at.dataframe[-1].value) == 10
    assert "Panel report" in [h.value for h in at.subheader]
