"""``riskgrid learn --save`` and ``riskgrid records list / export / delete`` on SQLite and
PostgreSQL: the exported files are the files ``learn --out-dir`` wrote."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from rich.console import Console
from typer.testing import CliRunner

from ranking_core.cli import app, records
from ranking_core.panels import simulate_panel
from ranking_core.record_kinds import RECORD_KINDS
from ranking_core.storage import Store

runner = CliRunner()


@pytest.fixture
def database(database_url, monkeypatch):
    monkeypatch.setenv("RISKGRID_DATABASE_URL", database_url)
    return database_url


@pytest.fixture(scope="module")
def ratings_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("ratings") / "panel.csv"
    simulate_panel(80, random_state=3).to_csv(path, index=False)
    return path


def invoke(*args: str):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def test_learn_save_then_export_gives_the_files_learn_wrote(database, ratings_csv, tmp_path):
    learned = invoke(
        "learn",
        ratings_csv,
        "--robust",
        "huber",
        "--monotone",
        "--save",
        "robust monotone",
        "--out-dir",
        tmp_path / "A",
    )
    assert learned.exit_code == 0, learned.output
    assert "saved learned grid 'robust monotone'" in learned.output
    exported = invoke("records", "export", "robust monotone", "--out-dir", tmp_path / "B")
    assert exported.exit_code == 0, exported.output
    a, b = tmp_path / "A", tmp_path / "B"
    np.testing.assert_allclose(np.load(b / "grid.npy"), np.load(a / "grid.npy"), rtol=0, atol=1e-12)
    assert (a / "grid.csv").read_bytes() == (b / "grid.csv").read_bytes()
    assert json.loads((b / "grid.json").read_text()) == json.loads((a / "grid.json").read_text())
    metadata = json.loads((b / "grid.json").read_text())
    assert metadata["settings"]["robust"] == "huber" and metadata["settings"]["monotone"]
    assert metadata["rating_set"] == "panel.csv"
    # the stored grid is the grid learn showed (unclipped), not a refit
    store = Store(database)
    stored = store.load_learned_grid("robust monotone")
    np.testing.assert_allclose(np.clip(stored.grid, 0, 4), np.load(a / "grid.npy"), atol=1e-12)
    assert stored.lam == metadata["lambda"]
    store.dispose()


def test_learn_save_alone_stores_without_files_and_refuses_a_taken_name(
    database, ratings_csv, tmp_path
):
    first = invoke("learn", ratings_csv, "--save", "plain", "--rule", "manual", "--lambda", "0.01")
    assert first.exit_code == 0, first.output
    again = invoke("learn", ratings_csv, "--save", "plain", "--rule", "manual", "--lambda", "0.01")
    assert again.exit_code == 1 and "already exists" in again.output
    neither = invoke("learn", ratings_csv)
    assert neither.exit_code == 1 and "--out-dir" in neither.output


def test_a_bad_name_is_refused_before_the_fit(database, ratings_csv, tmp_path):
    result = invoke("learn", ratings_csv, "--save", "two\nlines", "--out-dir", tmp_path)
    assert result.exit_code == 1 and "one line of printable text" in result.output
    assert not (tmp_path / "grid.npy").exists()


def test_records_list_and_delete(database, tmp_path, monkeypatch):
    monkeypatch.setattr(records, "console", Console(highlight=False, width=200))
    store = Store(database)
    frame = pd.DataFrame(
        {"reference": [100.0, 200.0], "estimate": [120.0, 90.0], "rating": [0.5, 2.0]}
    )
    store.save_rating_set("panel [red]x[/red]", frame, saved_by="ada@example.org")
    store.save_meter_data("panel [red]x[/red]", pd.DataFrame({"BGM": [100], "REF": [90]}))
    store.save_rating_set("other", frame)
    with store.engine.begin() as conn:  # a name an earlier version let through
        conn.exec_driver_sql("update records set name = 'esc\x1b[31m' where name = 'other'")
    store.dispose()
    listed = invoke("records", "list")
    assert listed.exit_code == 0
    assert "panel [red]x[/red]" in listed.output  # shown as text, never as markup
    assert "\x1b[31m" not in listed.output and "esc\\x1b[31m" in listed.output
    assert "ada@example.org" in listed.output
    several = invoke("records", "delete", "panel [red]x[/red]")
    assert several.exit_code == 1 and "choose one with --kind" in several.output
    assert invoke("records", "delete", "panel [red]x[/red]", "--kind", "meter_data").exit_code == 0
    assert invoke("records", "delete", "esc\x1b[31m").exit_code == 0
    missing = invoke("records", "delete", "nothing")
    assert missing.exit_code == 1 and "no record named 'nothing'" in missing.output
    not_a_grid = invoke("records", "export", "panel [red]x[/red]", "--out-dir", tmp_path)
    assert not_a_grid.exit_code == 1 and "no learned grid named" in not_a_grid.output
    store = Store(database)
    assert [r.name for r in store.list_records("rating_set")] == ["panel [red]x[/red]"]
    assert store.list_records("meter_data") == []
    store.dispose()


def test_a_database_that_cannot_be_opened_is_one_sentence(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("RISKGRID_DATABASE_URL", f"sqlite:///{blocker}/db.sqlite3")
    result = invoke("records", "list")
    assert result.exit_code == 1 and "opening the database failed" in result.output
    assert "Traceback" not in result.output


def test_records_list_names_every_kind_saved_by_its_label(database):
    """Every kind of the registry is offered by --kind and listed with its label once a record
    of it is saved; an unknown kind is refused naming the registered ones."""
    store = Store()
    frame = pd.DataFrame({"reference": [100.0], "estimate": [90.0], "rating": [1.0]})
    store.save_rating_set("a panel", frame)
    store.save_meter_data("a meter", pd.DataFrame({"BGM": [100.0], "REF": [90.0]}))
    store.dispose()
    helped = invoke("records", "list", "--help")
    for name in RECORD_KINDS:
        assert name in helped.output
    listed = invoke("records", "list")
    assert listed.exit_code == 0, listed.output
    for name, shown in (("rating_set", "a panel"), ("meter_data", "a meter")):
        row = next(line for line in listed.output.splitlines() if shown in line)
        assert RECORD_KINDS[name].label in row
    refused = invoke("records", "list", "--kind", "grids")
    assert refused.exit_code == 1 and ", ".join(RECORD_KINDS) in refused.output
