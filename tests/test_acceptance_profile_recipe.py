"""The recipe of docs/ARCHITECTURE.md ("How to add an acceptance profile"), on a throw-away
profile: one ``AcceptanceProfile`` in the registry, and the report, its tables and
``riskgrid meter-report --profile`` judge pairs by it with nothing else to edit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.meter import acceptance, meter_report
from ranking_core.meter.acceptance import AcceptanceProfile, Criterion, profile_names
from ranking_core.meter.display import display_frame
from ranking_core.meter.pairs import read_pairs

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample_meter_pairs.csv"


def _within(limit: float):
    def select(d: acceptance.AcceptanceData) -> tuple[np.ndarray, np.ndarray]:
        return np.ones(d.ref.size, dtype=bool), np.abs(d.bgm - d.ref) <= limit

    return select


THROWAWAY = AcceptanceProfile(
    name="throwaway",
    title="Throw-away Standard",
    citation="none: a standard made up for a test",
    criteria=(
        Criterion("T1", "within ±10 mg/dL", 50.0, "share", _within(10)),
        Criterion("T2", "within ±30 mg/dL", 90.0, "share", _within(30)),
    ),
)


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(acceptance._PROFILES, THROWAWAY.name, THROWAWAY)
    return THROWAWAY


def test_a_registered_profile_is_judged_by_the_report_and_the_cli(registered):
    assert profile_names()[-1] == "throwaway"
    pairs = read_pairs(SAMPLE)
    report = meter_report(pairs, None, profiles=("throwaway",))
    bgm, ref = pairs.frame["BGM"].to_numpy(), pairs.frame["REF"].to_numpy()
    for (_, row), limit, required in zip(
        report.acceptance.iterrows(), (10, 30), (50, 90), strict=True
    ):
        hits = int((np.abs(bgm - ref) <= limit).sum())  # brute force over the pairs
        assert (row["profile"], row["count"], row["n"]) == ("throwaway", hits, 300)
        assert bool(row["passes"]) == (100 * hits / 300 >= required)
    shown = display_frame(report.acceptance)  # wide: transposed, one column per criterion
    assert "Throw-away Standard" in {*shown.columns, *shown.to_numpy().ravel()}

    result = CliRunner().invoke(
        app, ["meter-report", str(SAMPLE), "--profile", "throwaway"], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert "Throw-away Standard acceptance criteria" in result.output
    every = CliRunner().invoke(app, ["meter-report", str(SAMPLE)], env={"COLUMNS": "200"})
    assert "Throw-away Standard acceptance criteria" in every.output  # "all" includes it


def test_an_unregistered_profile_is_refused_naming_the_registered_ones():
    result = CliRunner().invoke(app, ["meter-report", str(SAMPLE), "--profile", "throwaway"])
    assert result.exit_code != 0
    assert all(name in result.output for name in profile_names())


@pytest.mark.xfail(
    strict=True,
    reason="meter-report prints a one-criterion profile through display_frame, which turns a "
    "one-row table into Measure/Value columns; the CLI then drops a 'Profile' column that is "
    "not there (KeyError)",
)
def test_a_profile_of_one_criterion_is_printed(monkeypatch):
    single = AcceptanceProfile("single", "Single Standard", "none", THROWAWAY.criteria[:1])
    monkeypatch.setitem(acceptance._PROFILES, single.name, single)
    result = CliRunner().invoke(app, ["meter-report", str(SAMPLE), "--profile", "single"])
    assert result.exit_code == 0 and "Single Standard acceptance criteria" in result.output
