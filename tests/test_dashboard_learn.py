"""The Learn page shows what it computed: after any sequence of uploads, setting changes and λ
steps, the settings on screen (widgets and the "Computed with" table) are those of the result
shown, and the downloads are built from that result, never from an earlier one."""

from __future__ import annotations

import dataclasses
import io
import json

import numpy as np
import pandas as pd
import pytest
from dashboard_support import (
    download_content,
    fresh_machine,
    metrics,
    open_app,
    plotly_numbers,
    plotly_traces,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ranking_core.learn import (
    PRESETS,
    LearnSettings,
    default_recipe,
    describe_settings,
    learn_grid,
    ratings_checksum,
    with_robust,
)
from ranking_core.meter.documents.figures import DISPLAY_STEP
from ranking_core.panels import risk_band, simulate_panel
from ranking_core.ratings import read_rating_set

SMALL_M = 30
# two small rating files, different data
FILES = {
    name: simulate_panel(SMALL_M, random_state=seed).to_csv(index=False).encode()
    for name, seed in (("a.csv", 11), ("b.csv", 12))
}
# widget key → (settings field, values to try); the Learn page's widgets write the field
CHOICES = {
    "learn_kernel": ("kernel", ("laplacian", "gaussian")),
    "learn_gamma": ("gamma", (100.0, 1e3, 1e4)),
    "learn_scale": ("scale", ("log", "linear")),
    "learn_signed": ("signed", (True, False)),
    "learn_anchors": ("anchors", (0, 10, 41)),
    "learn_rule": ("rule", ("kfold", "holdout", "manual")),
    "learn_filter": ("filter", ("lavrentiev", "iterated-lavrentiev", "showalter")),
    "learn_robust": ("robust", (None, "huber", "squared")),
    "learn_monotone": ("monotone", (False, True)),
}


def _widget_value(key, value):
    """What the widget ``key`` shows for a settings value (robust None is the option "none")."""
    return "none" if key == "learn_robust" and value is None else value


ACTIONS = st.one_of(
    st.tuples(st.just("upload"), st.sampled_from(sorted(FILES))),
    st.tuples(st.just("setting"), st.sampled_from(sorted(CHOICES)), st.integers(0, 2)),
    st.tuples(st.just("lambda"), st.integers(0, 10_000)),
)


def _widget(at, key):
    for kind in ("radio", "select_slider", "toggle", "number_input", "selectbox"):
        found = [w for w in getattr(at, kind) if w.key == key]
        if found:
            return found[0]
    raise LookupError(key)


def _shown_table(at) -> dict[str, str]:
    frame = next(d.value for d in at.dataframe if list(d.value.columns) == ["setting", "value"])
    return dict(zip(frame["setting"], frame["value"], strict=True))


def _check(at, expected: LearnSettings, data: bytes | None) -> None:
    """What the user sees equals what was computed, and both equal the settings asked for."""
    assert not at.exception, at.exception
    for key, (field, _) in CHOICES.items():
        assert _widget(at, key).value == _widget_value(key, getattr(expected, field)), key
    result = at.session_state["learn_result"] if "learn_result" in at.session_state else None
    if data is None:
        return
    assert result is not None and result.settings == expected
    table = _shown_table(at)
    assert {k: table[k] for k in describe_settings(expected)} == describe_settings(expected)
    ratings = read_rating_set(io.BytesIO(data), name="upload.csv")
    assert result.checksum == ratings_checksum(ratings.X, ratings.y)
    lam = at.session_state["learn_lam"]
    shown = metrics(at)
    assert shown["λ"] == f"{lam:.3g}"
    assert shown["Points fitted"] == f"{result.at(lam).points_fitted} / {len(result.y)}"


@settings(
    max_examples=5,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(actions=st.lists(ACTIONS, min_size=1, max_size=4))
def test_settings_shown_are_the_settings_of_the_result_shown(tmp_path, monkeypatch, actions):
    fresh_machine(tmp_path, monkeypatch)
    at = open_app(learn_source="Upload a file")
    expected, data, own = LearnSettings(), None, False
    _check(at, expected, data)
    for action in actions:
        if action[0] == "upload":
            data = FILES[action[1]]
            at.file_uploader(key="learn_upload").set_value((action[1], data, "text/csv"))
            if not own:  # the ratings' default recipe until a setting is changed by hand
                ratings = read_rating_set(io.BytesIO(data), name=action[1])
                expected = PRESETS[default_recipe(ratings)[0]]
        elif action[0] == "setting":
            key, index = action[1], action[2]
            field, values = CHOICES[key]
            value = values[index % len(values)]
            _widget(at, key).set_value(_widget_value(key, value))
            if getattr(expected, field) != value:  # a widget calls back on a change only
                changes = {field: value}
                if field == "kernel":  # another kernel starts from its own width
                    changes["gamma"] = None
                if field == "rule" and value == "manual":  # by hand, from the λ shown
                    changes["lam"] = (
                        at.session_state["learn_lam"] if "learn_lam" in at.session_state else 1e-3
                    )
                if field == "robust":  # the one policy of every front end: robust → monotone
                    expected, own = with_robust(expected, value), True
                else:
                    expected, own = dataclasses.replace(expected, **changes), True
        else:
            sliders = [s for s in at.select_slider if s.key == "learn_lam"]
            if not sliders:
                continue
            options = sliders[0].options
            sliders[0].set_value(float(options[action[1] % len(options)]))
        at.run()
        _check(at, expected, data)


def test_downloads_follow_the_upload_and_the_lambda_shown(tmp_path, monkeypatch, downloads):
    fresh_machine(tmp_path, monkeypatch)
    at = open_app(learn_source="Upload a file")
    for name in ("a.csv", "b.csv"):
        at.file_uploader(key="learn_upload").set_value((name, FILES[name], "text/csv"))
        at.run()
        assert not at.exception
        ratings = read_rating_set(io.BytesIO(FILES[name]), name=name)
        expected = learn_grid(ratings)
        meta = json.loads(download_content(at, downloads, "grid.json"))
        assert meta["ratings_checksum"] == ratings_checksum(ratings.X, ratings.y)
        assert meta["rating_set"] == name
        grid = np.load(io.BytesIO(download_content(at, downloads, "grid.npy")), allow_pickle=False)
        np.testing.assert_allclose(grid, np.clip(expected.grid, 0, 4), atol=1e-9)
        assert download_content(at, downloads, "grid.png").startswith(b"\x89PNG")
        assert download_content(at, downloads, "grid.csv").startswith(b"REF,BGM,risk\n0,0,")
    lam = float(expected.lams[50])
    next(s for s in at.select_slider if s.key == "learn_lam").set_value(lam)
    at.run()
    meta = json.loads(download_content(at, downloads, "grid.json"))
    assert meta["lambda"] == pytest.approx(lam, rel=1e-12)
    assert meta["lambda_chosen_by_rule"] == pytest.approx(expected.lam, rel=1e-12)
    grid = np.load(io.BytesIO(download_content(at, downloads, "grid.npy")), allow_pickle=False)
    np.testing.assert_allclose(grid, np.clip(expected.at(lam).grid, 0, 4), atol=1e-9)


def test_compare_page_reads_grid_files_back(tmp_path, monkeypatch):
    from ranking_core.grids.compare import compare_grids
    from ranking_core.learn import write_grid_files
    from ranking_core.panels import parkes_surface

    fresh_machine(tmp_path, monkeypatch)
    result = learn_grid(
        read_rating_set(io.BytesIO(FILES["a.csv"]), name="a.csv"),
        LearnSettings(rule="manual", lam=0.01),
    )
    paths = dict(zip(("npy", "csv"), write_grid_files(result, tmp_path / "out")[:2], strict=True))
    expected = compare_grids(parkes_surface(), np.clip(result.grid, 0, 4))
    at = open_app("compare")
    for kind, path in paths.items():
        at.file_uploader(key="compare_upload").set_value(
            (path.name, path.read_bytes(), "application/octet-stream")
        )
        at.run()
        at.selectbox(key="compare_b").set_value(f"file: grid.{kind}")
        at.run()
        assert not at.exception
        shown = metrics(at)
        assert shown["max |Δ|"] == f"{expected.max_abs_difference:.3f}"
        assert shown["mean |Δ|"] == f"{expected.mean_abs_difference:.3f}"
    at.file_uploader(key="compare_upload").set_value(("grid.npy", b"not numpy", "text/plain"))
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and "not a NumPy" in at.error[0].value


def test_a_panels_ratings_are_learned_robustly_by_default(tmp_path, monkeypatch):
    from ranking_core.learn import learn_panel, robust_settings

    fresh_machine(tmp_path, monkeypatch)
    frame = simulate_panel(80, random_state=5, n_raters=4, step=0.5, outlier_fraction=0.1)
    data = frame.drop(columns="outlier").to_csv(index=False).encode()
    at = open_app(learn_source="Upload a file")
    at.file_uploader(key="learn_upload").set_value(("panel.csv", data, "text/csv"))
    at.run()
    assert not at.exception
    assert (
        "Recipe: robust, the robust recipe for rater panels: the ratings come from a panel "
        "(4 raters and answers in steps of 0.5)"
    ) in [c.value for c in at.caption]
    ratings = read_rating_set(io.BytesIO(data), name="panel.csv")
    expected = learn_grid(ratings, robust_settings())
    result = at.session_state["learn_result"]
    assert result.settings == expected.settings  # the widgets show it too:
    _check(at, expected.settings, data)
    assert _widget(at, "learn_robust").value == "tukey" and _widget(at, "learn_monotone").value
    np.testing.assert_allclose(result.grid, expected.grid, atol=1e-9)
    assert metrics(at)["Ratings flagged as outlying"] == f"{expected.n_flagged} / 80"
    flagged = learn_panel(ratings).ratings["flagged"].to_numpy()  # the panel report's flags
    assert expected.n_flagged == flagged.sum() > 0
    assert (flagged & frame["outlier"].to_numpy()).sum() >= flagged.sum() / 2  # mostly outliers
    assert not any(b.key == "learn_robust_button" for b in at.button)
    # the rating points on the interactive heat map: the flagged ratings drawn as crosses
    at.toggle(key="learn_points").set_value(True)
    at.toggle(key="learn_interactive").set_value(True)
    at.run()
    assert not at.exception
    assert "× marks a rating flagged as outlying." in [c.value for c in at.caption]
    traces = plotly_traces(at)
    crosses = traces["flagged as outlying"]
    assert crosses["marker"]["symbol"] == "x"
    X = expected.X[expected.flagged_points]
    np.testing.assert_allclose(plotly_numbers(crosses["x"]), X[:, 0])
    np.testing.assert_allclose(plotly_numbers(crosses["y"]), X[:, 1])
    assert len(plotly_numbers(traces["ratings"]["x"])) == len(expected.X) - len(X)
    # the uncertainty band of the robust fit, as a map, its share and a download
    at.session_state["learn_view"] = "Uncertainty"
    at.run()
    assert not at.exception
    band = risk_band(expected.risk_model)
    assert any(f"open on {band.uncertain_share:.1%} of the grid" in c.value for c in at.caption)
    heatmap = plotly_traces(at)[None]
    assert np.nanmax(plotly_numbers(heatmap["z"])) == pytest.approx(
        band.width[::DISPLAY_STEP, ::DISPLAY_STEP].max(), rel=1e-6
    )
    assert any(b.label == "band.csv" for b in at.get("download_button"))
    at.toggle(key="learn_interactive").set_value(False)  # the picture: pale where left open
    at.run()
    assert not at.exception and len(at.get("image")) == 2  # the λ curve and the band picture
    _widget(at, "learn_robust").set_value("none")  # and back to least squares
    at.run()
    assert at.session_state["learn_result"].settings.robust is None
    assert at.session_state["learn_view"] == "Learned"  # no band without robust learning
    assert not any(b.label == "band.csv" for b in at.get("download_button"))


@pytest.mark.slow
def test_a_large_fit_runs_in_a_worker_process_and_gives_the_library_result(tmp_path, monkeypatch):
    """More than BACKGROUND_FROM ratings: the fit runs in another process (the server's
    interpreter stays free), polled until done; its grid is the library's. The worker starts
    although ``__main__`` is a page script that is gone (as Streamlit leaves it after a run)."""
    import sys
    import time
    import types

    from dashboard.jobs import job_runner, job_status
    from dashboard.learn_data import BACKGROUND_FROM, fit_job

    page_script = types.ModuleType("__main__")
    page_script.__file__ = str(tmp_path / "page_script_that_is_gone.py")
    monkeypatch.setitem(sys.modules, "__main__", page_script)
    job_runner.clear()  # start the workers and their progress board under this __main__

    rng = np.random.default_rng(0)
    X = rng.uniform(20, 580, (BACKGROUND_FROM + 100, 2))
    frame = pd.DataFrame(
        {
            "reference": X[:, 0],
            "estimate": X[:, 1],
            "rating": np.clip(np.abs(np.log(X[:, 0] / X[:, 1])) * 3, 0, 4),
        }
    )
    ratings = read_rating_set(frame, name="large")
    settings = LearnSettings()
    job = fit_job("large", ratings, settings)
    status = job_status(job)
    assert status is not None and not status.finished  # returned at once, with its progress
    while not status.finished:
        time.sleep(1)
        status = job_status(job)
        assert status is not None
    assert status.state == "done" and status.total > 0 and status.done == status.total
    state = status.result.learned  # the checked fit: the grid, its flags
    assert status.result.flags == []  # a grid inside the risk scale
    expected = learn_grid(ratings, settings)
    assert state.method == expected.method == "one-fold"
    np.testing.assert_allclose(state.grid, expected.grid, atol=1e-9)


@pytest.mark.slow
def test_a_background_fit_shows_its_progress_then_the_librarys_result(tmp_path, monkeypatch):
    """A fit run as a job: the page returns at once with its progress and a Cancel button (it
    never waits for the worker), and shows the library's result once the job is done."""
    import time

    import dashboard.learn_data
    from dashboard.jobs import job_runner

    fresh_machine(tmp_path, monkeypatch)
    monkeypatch.setattr(dashboard.learn_data, "BACKGROUND_FROM", 50)  # the panel's fit: a job
    job_runner.clear()
    at = open_app()
    assert not at.exception
    assert "learn_result" not in at.session_state  # the page did not wait for the fit
    assert any(b.label == "Cancel" for b in at.button)
    deadline = time.monotonic() + 300
    while "learn_result" not in at.session_state and time.monotonic() < deadline:
        time.sleep(1)
        at.run()
        assert not at.exception, at.exception
    from dashboard.common import SEGStatus
    from dashboard.learn_data import PanelChoice, learn_reference, simulated_panel

    shown = at.session_state["learn_result"]
    reference = learn_reference(SEGStatus(None, "none"))  # a fresh machine has no SEG table
    _, ratings = simulated_panel(PanelChoice(m=200), reference)
    expected = learn_grid(ratings, shown.settings)
    assert shown.n_ratings == 200 and shown.lam == expected.lam
    np.testing.assert_allclose(shown.grid, expected.grid, atol=1e-9)
