"""``riskgrid meter-report``: tables printed, JSON with every count, missing SEG table handled."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.grids import MISSING_SEG_MESSAGE

runner = CliRunner()
PAIRS = "BGM,REF\n110,100\n40,50\n300,200\n10,0\n700,100\n95.5,abc\n"


@pytest.fixture
def pairs_file(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text(PAIRS)
    return path


def test_report_with_seg_table_writes_every_count(pairs_file, tmp_path):
    seg = os.environ.get("SEG_TABLE")
    if not seg:
        pytest.skip("SEG_TABLE is not set (point it at RiskPairData.csv.gz)")
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["meter-report", str(pairs_file), "--seg-table", seg,
                                 "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "SEG risk grades" in result.output and "line 7" in result.output
    data = json.loads(out.read_text())
    assert data["seg_table_used"] is True
    counts = {r["pair_type"]: r["count"] for r in data["pair_types"]}
    assert counts["Total"] == 5 and counts["BGM > 600: excluded"] == 1
    assert counts["Total included in SEG analysis"] == 4
    assert sum(r["count"] for r in data["risk_categories"]) == 4
    assert sum(r["count"] for r in data["risk_grades"]) == 4
    assert [r["count"] for r in data["clarke"]] == [3, 1, 0, 0, 0]  # (BGM 300, REF 200) is B
    assert sum(r["count"] for r in data["dts"]) == 4 and "DTS Error Grid: zones" in result.output
    binomial = {k: v for k, v in data["binomial"][0].items() if not k.startswith("ci_")}
    assert binomial == {"n": 4, "compliant": 3, "compliant_percent": 75.0, "lower_bound": 3,
                        "lower_bound_percent": 75.0, "meets": True}
    assert data["accuracy"][0]["ref_zero_left_out"] == 1


def test_report_without_seg_table_explains_and_reports_the_rest(pairs_file, tmp_path,
                                                                 monkeypatch):
    monkeypatch.delenv("SEG_TABLE", raising=False)
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["meter-report", str(pairs_file), "--json", str(out),
                                 "--out-dir", str(tmp_path / "files")])
    assert result.exit_code == 0, result.output
    assert " ".join(MISSING_SEG_MESSAGE.split()[:6]) in " ".join(result.output.split())
    assert "ISO 15197 ranges" in result.output and "SEG risk grades" not in result.output
    data = json.loads(out.read_text())
    assert data["seg_table_used"] is False and "risk_grades" not in data
    assert (tmp_path / "files" / "bland_altman.html").exists()
    assert (tmp_path / "files" / "iso_ranges.csv").exists()
    files = {p.name for p in (tmp_path / "files").glob("*.png")}
    assert files == {"dts.png", "clarke.png", "parkes-type1.png"}  # no SEG plot without its table


def test_unreadable_pairs_exit_with_the_rule(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("glucose,lab value\n1,2\n")
    result = runner.invoke(app, ["meter-report", str(path)])
    assert result.exit_code == 1
    assert "missing column(s) BGM, REF" in " ".join(result.output.split())
