"""The recipe of docs/ARCHITECTURE.md ("How to add an acceptance standard"), on a throw-away
standard: one ``Standard`` in ``ranking_core.meter.standards.registry.STANDARDS``, and the report,
its tables and ``riskgrid meter-report --profile`` judge pairs by it with nothing else to edit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ranking_core.meter import meter_report
from ranking_core.meter.drawing.display import display_frame
from ranking_core.meter.pairs.readings import read_pairs
from ranking_core.meter.standards import registry as standards
from ranking_core.meter.standards.registry import Standard, profile_names

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample_meter_pairs.csv"
# the throw-away standard, as source: defined here from it, and registered by the CLI test in a
# fresh process before the command line is imported, as an edit of standards.py would
THROWAWAY_SOURCE = """
import numpy as np
from ranking_core.meter.standards.registry import Criterion, Standard

def within(limit):
    return lambda d: (np.ones(d.ref.size, dtype=bool), np.abs(d.bgm - d.ref) <= limit)

THROWAWAY = Standard(
    name="throwaway",
    title="Throw-away Standard",
    device="bgm",
    citation="none: a standard made up for a test",
    criteria=(
        Criterion("T1", "within ±10 mg/dL", 50.0, "share", within(10)),
        Criterion("T2", "within ±30 mg/dL", 90.0, "share", within(30)),
    ),
)
"""
_DEFINED: dict = {}
exec(THROWAWAY_SOURCE, _DEFINED)
THROWAWAY: Standard = _DEFINED["THROWAWAY"]


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(standards.STANDARDS, THROWAWAY.name, THROWAWAY)
    return THROWAWAY


def test_a_registered_standard_is_judged_by_the_report(registered):
    assert profile_names()[-1] == "throwaway"
    pairs = read_pairs(SAMPLE)
    report = meter_report(pairs, None, profiles=("throwaway",))
    bgm, ref = pairs.frame["BGM"].to_numpy(), pairs.frame["REF"].to_numpy()
    rows = report.acceptance.to_dict("records")
    for row, limit, required in zip(rows, (10, 30), (50, 90), strict=True):
        hits = int((np.abs(bgm - ref) <= limit).sum())  # brute force over the pairs
        assert (row["profile"], row["count"], row["n"]) == ("throwaway", hits, len(bgm))
        assert bool(row["passes"]) == (100 * hits / len(bgm) >= required)
    shown = display_frame(report.acceptance, "acceptance")
    assert "Throw-away Standard" in {*shown.columns, *shown.to_numpy().ravel()}


def test_meter_report_judges_by_a_registered_standard():
    probe = (
        THROWAWAY_SOURCE
        + "from ranking_core.meter.standards import registry as standards\n"
        + "standards.STANDARDS[THROWAWAY.name] = THROWAWAY\n"
        + "from ranking_core.cli import app\n"
        + f"app(['meter-report', {str(SAMPLE)!r}, '--profile', 'throwaway'])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    assert "Throw-away Standard acceptance criteria" in result.stdout
    assert "T1" in result.stdout and "T2" in result.stdout


def test_an_unregistered_standard_is_refused_naming_the_registered_ones():
    from typer.testing import CliRunner

    from ranking_core.cli import app

    result = CliRunner().invoke(app, ["meter-report", str(SAMPLE), "--profile", "throwaway"])
    assert result.exit_code in (1, 2), result.output
    assert all(name in " ".join(result.output.split()) for name in profile_names())
