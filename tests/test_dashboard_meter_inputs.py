"""The Meter page's inputs under Streamlit's AppTest: a glucose unit, and two series paired by time
instead of a pairs file."""

from __future__ import annotations

import pytest
from dashboard_support import fresh_machine, metrics, open_app, upload_meter_csv

SENSOR = (b"timestamp,glucose\n2024-05-01T08:00:00,100\n2024-05-01T08:05:00,110\n"
          b"2024-05-01T08:10:00,120\n2024-05-01T09:00:00,150\n")
REFERENCE = (b"timestamp,glucose\n2024-05-01T08:01:00,100\n2024-05-01T08:06:00,100\n"
             b"2024-05-01T08:30:00,130\n2024-05-01T09:02:00,125\n")


MGDL = b"BGM,REF\n120,110\n200,190\n90,95\n300,310\n"


def unit_choice(at):
    """The Meter page's unit choice for the file shown (one per file)."""
    return next(r for r in at.radio if r.label == "glucose unit of this file")


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    return fresh_machine(tmp_path, monkeypatch)


def test_two_series_are_paired_then_reported(fresh):
    at = open_app("meter")
    at.radio(key="meter_source").set_value("Sensor + reference")
    at.run()
    at.file_uploader(key="meter_sensor").set_value(("sensor.csv", SENSOR, "text/csv"))
    at.file_uploader(key="meter_reference").set_value(("ref.csv", REFERENCE, "text/csv"))
    at.run()
    assert not at.exception
    assert any("3 of 4 reference readings paired" in t.value for t in at.text)
    shown = metrics(at)
    # pairs (BGM, REF): (100, 100), (110, 100), (150, 125): rel 0, +0.1, +0.2
    assert shown["pairs analysed"] == "3"
    assert shown["MARD"] == "10.0 %" and shown["bias"] == "+10.0 %"


def test_mmol_upload_is_refused_until_the_unit_is_chosen(fresh):
    at = open_app("meter")
    upload_meter_csv(at, "mmol.csv", b"BGM;REF\n5,55;5,55\n6,66;5,55\n")
    assert any("look like mmol/L" in t.value for t in at.text)
    assert "pairs analysed" not in metrics(at)
    unit_choice(at).set_value("mmol/L")
    at.run()
    shown = metrics(at)
    assert shown["pairs analysed"] == "2"
    # 5.55 and 6.66 mmol/L → 99.99 and 119.99 mg/dL → 100 and 120: rel 0 and +0.2
    assert shown["MARD"] == "10.0 %"
    assert any("glucose read in mmol/L" in c.value for c in at.caption)
    # the next file starts with no unit chosen: a mg/dL file is read as mg/dL
    at.file_uploader(key="meter_upload").set_value(("mg.csv", MGDL, "text/csv"))
    at.run()
    assert unit_choice(at).value is None
    assert metrics(at)["pairs analysed"] == "4"


def test_mmol_stated_for_mgdl_values_is_refused_naming_the_page_control(fresh):
    at = open_app("meter")
    upload_meter_csv(at, "mg.csv", MGDL)
    unit_choice(at).set_value("mmol/L")
    at.run()
    assert not at.exception
    refusal = " ".join(t.value for t in at.text)
    assert "look like mg/dL" in refusal and "glucose unit of this file" in refusal
    assert "--unit" not in refusal
    assert "pairs analysed" not in metrics(at)


def test_learn_page_refuses_mmol_ratings_until_the_unit_is_chosen(fresh):
    at = open_app(learn_source="Upload a file")
    csv = b"reference,estimate,rating\n5.5,6.1,0.2\n3.0,12.0,3\n8,8.5,0\n"
    at.file_uploader(key="learn_upload").set_value(("panel.csv", csv, "text/csv"))
    at.run()
    assert not at.exception
    assert any("look like mmol/L" in e.value for e in at.error)
    assert at.radio(key="learn_unit").value is None
