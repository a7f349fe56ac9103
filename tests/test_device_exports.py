"""Nightscout and Tidepool exports through ``riskgrid pair EXPORT``: each meter reading paired
with the latest CGM reading at most 5 minutes before it, values outside 40–600 mg/dL left out
and counted; checked against the rule applied by hand, record by record."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from ranking_core.cli import app

runner = CliRunner()
T0 = 1_700_000_000_000  # epoch ms


def _nightscout(rng: np.random.Generator) -> list[dict]:
    records: list[dict] = []
    for i in range(120):  # CGM every 5 min, with a gap of 30 min after reading 60
        if 60 < i < 66:
            continue
        records.append(
            {
                "type": "sgv",
                "sgv": int(rng.integers(35, 420)),
                "date": T0 + i * 300_000,
                "direction": "Flat",
                "device": "xDrip",
            }
        )
    for _ in range(40):  # meter readings at random times
        at = T0 + int(rng.integers(0, 120 * 300_000))
        records.append({"type": "mbg", "mbg": int(rng.integers(30, 450)), "date": at})
    records.append({"type": "cal", "slope": 900})
    records.append({"type": "mbg", "mbg": "HIGH", "date": T0})
    return records


def _by_hand(records: list[dict], before_ms: int) -> list[tuple[float, float, int]]:
    cgm = sorted((r["date"], r["sgv"]) for r in records if r["type"] == "sgv")
    out = []
    for number, r in enumerate(records, start=1):
        if r["type"] != "mbg" or not isinstance(r["mbg"], int):
            continue
        earlier = [(t, v) for t, v in cgm if r["date"] - before_ms <= t <= r["date"]]
        if not earlier:
            continue
        v = max(earlier)[1]
        if 40 <= v <= 600 and 40 <= r["mbg"] <= 600:
            out.append((float(v), float(r["mbg"]), number))
    return sorted(out, key=lambda x: x[2])


def test_nightscout_entries_are_paired_by_the_rule(tmp_path):
    records = _nightscout(np.random.default_rng(4))
    source = tmp_path / "entries.json"
    source.write_text(json.dumps(records))
    out = tmp_path / "pairs.csv"
    result = runner.invoke(app, ["pair", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    pairs = pd.read_csv(out)
    expected = _by_hand(records, 5 * 60_000)
    got = sorted(zip(pairs["BGM"], pairs["REF"], pairs["record"], strict=True), key=lambda x: x[2])
    assert got == expected
    assert f"record {len(records)}" in result.output  # the mbg "HIGH", by its record number
    assert (pairs["delta_seconds"] <= 0).all() and (pairs["delta_seconds"] >= -300).all()
    # meter-report reads the pairs as a CGM's (sensor times): judged by the iCGM rules
    report = tmp_path / "r.json"
    assert runner.invoke(app, ["meter-report", str(out), "--json", str(report)]).exit_code == 0
    assert json.loads(report.read_text())["device"] == "cgm"


def test_a_tidepool_export_in_mmol_is_converted(tmp_path):
    records = [
        {"type": "cbg", "value": 5.5, "units": "mmol/L", "time": "2024-05-01T08:00:00.000Z"},
        {"type": "cbg", "value": 6.1, "units": "mmol/L", "time": "2024-05-01T08:05:00.000Z"},
        {"type": "smbg", "value": 110, "units": "mg/dL", "time": "2024-05-01T08:07:00.000Z"},
        {"type": "smbg", "value": 6.0, "units": "mmol/L", "time": "2024-05-01T08:20:00.000Z"},
        {"type": "basal", "rate": 1.0, "time": "2024-05-01T08:00:00.000Z"},
    ]
    source = tmp_path / "tidepool.json"
    source.write_text(json.dumps(records))
    out = tmp_path / "pairs.csv"
    result = runner.invoke(app, ["pair", str(source), "-o", str(out), "--before", "5"])
    assert result.exit_code == 0, result.output
    pairs = pd.read_csv(out)
    # 08:07 meter pairs with 08:05 CGM (6.1 × 18.016); 08:20 has no CGM in the 5 min before
    assert pairs["BGM"].tolist() == pytest.approx([6.1 * 18.016])
    assert pairs["REF"].tolist() == [110.0]
    assert pairs["sensor_time"].tolist() == ["2024-05-01T08:05:00+00:00"]
    assert "1 without one" in " ".join(result.output.split())


@pytest.mark.parametrize("before", ["0", "61", "-5"])
def test_before_is_bounded(tmp_path, before):
    source = tmp_path / "e.json"
    source.write_text(
        json.dumps(
            [{"type": "sgv", "sgv": 100, "date": T0}, {"type": "mbg", "mbg": 100, "date": T0}]
        )
    )
    result = runner.invoke(
        app, ["pair", str(source), "-o", str(tmp_path / "p.csv"), "--before", before]
    )
    assert result.exit_code == 1 and "--before" in result.output
    assert not (tmp_path / "p.csv").exists()


def test_not_an_export_is_one_sentence(tmp_path):
    source = tmp_path / "x.json"
    source.write_text('{"a": 1')
    result = runner.invoke(app, ["pair", str(source), "-o", str(tmp_path / "p.csv")])
    assert result.exit_code == 1 and "Traceback" not in result.output
    text = " ".join(result.output.split())
    assert "not a readable Nightscout or Tidepool export" in text and "line 1, column 8" in text
    assert text.count("not valid JSON") == 1  # said once, not once per format tried


def test_a_json_file_beyond_its_cap_is_refused_before_parsing(tmp_path, monkeypatch):
    from ranking_core.inputs import json_records

    monkeypatch.setattr(json_records, "MAX_JSON_BYTES", 1000)
    source = tmp_path / "big.json"
    source.write_text(json.dumps([{"type": "sgv", "sgv": 100, "date": T0 + i} for i in range(50)]))
    result = runner.invoke(app, ["pair", str(source), "-o", str(tmp_path / "p.csv")])
    assert result.exit_code == 1 and "limit for JSON" in " ".join(result.output.split())
