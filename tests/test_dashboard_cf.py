"""The Collaborative-filtering page under Streamlit's AppTest: built-in synthetic ratings, a small
per-user experiment, an uploaded file with a broken line."""

from __future__ import annotations

import numpy as np
import pytest
from dashboard_support import fresh_machine, metrics, open_app, run_for_table

try:
    from ranking_core.cf import synthetic_ratings
    from ranking_core.cf.parallel import run_per_user
    from ranking_core.cf.per_user import PerUserConfig
    from ranking_core.experiments.cf_user import user_ranking
except ModuleNotFoundError as exc:  # the page needs the cf branch's modules
    pytest.skip(f"{exc.name} is missing (cf branch not merged)", allow_module_level=True)


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    return fresh_machine(tmp_path, monkeypatch)


def test_cf_page_on_built_in_synthetic_ratings_and_a_small_experiment(fresh):
    at = open_app("cf", cf_test_users=4, cf_repeats=2)
    data = synthetic_ratings(n_users=300, n_items=400, seed=0)
    shown = metrics(at)
    assert (shown["users"], shown["items"], shown["ratings"]) == (
        "300",
        "400",
        f"{data.n_ratings:,}",
    )
    config = PerUserConfig(group=(40, 60))
    expected = user_ranking(data, int(data.users_in(*config.test_range)[0]), config)
    assert shown["user id"] == str(expected.user)
    assert shown["pairwise misranking"] == f"{100 * expected.misranking:.1f} %"
    table = run_for_table(at, "cf_run", "Learner")
    assert list(table["Learner"]) == ["iterated-lavrentiev", "lavrentiev"]
    summary = run_per_user(
        data,
        PerUserConfig(
            group=(40, 60),
            n_test_users=4,
            repeats=2,
            learners=("iterated-lavrentiev", "lavrentiev"),
        ),
        scheduler="synchronous",
    )
    value = summary["learners"]["lavrentiev"]["pairwise_misranking"]
    assert table["Misranking (%)"][1] == f"{100 * value['mean']:.2f} ± {100 * value['sd']:.2f}"


def test_cf_page_runs_the_protocol_reading_chosen(fresh):
    """The protocol radio (default refit) feeds both the one-reviewer view and the experiment:
    with "split" the page shows the numbers of the split reading."""
    at = open_app("cf", cf_test_users=3, cf_repeats=1, cf_learners=["lavrentiev"])
    assert at.radio(key="cf_protocol").value == "refit"
    at.radio(key="cf_protocol").set_value("split").run()
    data = synthetic_ratings(n_users=300, n_items=400, seed=0)
    config = PerUserConfig(group=(40, 60), protocol="split")
    expected = user_ranking(data, int(data.users_in(*config.test_range)[0]), config)
    assert metrics(at)["pairwise misranking"] == f"{100 * expected.misranking:.1f} %"
    table = run_for_table(at, "cf_run", "Learner")
    summary = run_per_user(
        data,
        PerUserConfig(
            group=(40, 60), n_test_users=3, repeats=1, learners=("lavrentiev",), protocol="split"
        ),
        scheduler="synchronous",
    )
    value = summary["learners"]["lavrentiev"]["pairwise_misranking"]
    assert table["Misranking (%)"][0] == f"{100 * value['mean']:.2f} ± {100 * value['sd']:.2f}"
    assert any("Protocol split" in c.value for c in at.caption)


def test_cf_page_with_an_uploaded_file_reports_skipped_lines(fresh):
    rng = np.random.default_rng(5)
    lines = ["user_id,joke_id,rating"]
    for user in range(1, 121):
        for joke in rng.choice(100, size=int(rng.integers(25, 90)), replace=False):
            lines.append(f"{user},{joke + 1},{rng.uniform(-10, 10):.2f}")
    lines.insert(3, "7,3,42")  # line 4: rating outside −10..10
    at = open_app("cf", cf_source="Upload", cf_format="jester-long")
    at.file_uploader(key="cf_upload").set_value(
        ("jester.csv", "\n".join(lines).encode(), "text/csv")
    )
    at.run()
    assert not at.exception
    assert any("line 4" in w.value for w in at.warning)
    assert metrics(at)["ratings"] == f"{len(lines) - 2:,}"
    assert any("shifted by +10" in c.value for c in at.caption)


def test_the_learner_choice_survives_a_run_that_does_not_draw_it(tmp_path, monkeypatch):
    """A run that stops before the experiment's widgets (here: an empty upload source) keeps the
    user's learners; with none chosen, the page says why Run is disabled."""
    fresh_machine(tmp_path, monkeypatch)
    at = open_app("cf")
    at.multiselect(key="cf_learners").set_value(["lavrentiev"]).run()
    at.radio(key="cf_source").set_value(at.radio(key="cf_source").options[-1]).run()
    at.radio(key="cf_source").set_value(at.radio(key="cf_source").options[0]).run()
    assert not at.exception
    assert at.multiselect(key="cf_learners").value == ["lavrentiev"]
    at.multiselect(key="cf_learners").set_value([]).run()
    assert any("Choose at least one learner" in c.value for c in at.caption)
