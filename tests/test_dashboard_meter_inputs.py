"""The Meter page's inputs under Streamlit's AppTest: a glucose unit, and two series paired by time
instead of a pairs file."""

from __future__ import annotations

import pytest
from dashboard_support import fresh_machine, metrics, open_app, upload_meter_csv

SENSOR = (
    b"timestamp,glucose\n2024-05-01T08:00:00,100\n2024-05-01T08:05:00,110\n"
    b"2024-05-01T08:10:00,120\n2024-05-01T09:00:00,150\n"
)
REFERENCE = (
    b"timestamp,glucose\n2024-05-01T08:01:00,100\n2024-05-01T08:06:00,100\n"
    b"2024-05-01T08:30:00,130\n2024-05-01T09:02:00,125\n"
)


MGDL = b"BGM,REF\n120,110\n200,190\n90,95\n300,310\n"


DEXCOM_HEADER = (
    "Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type,Event Subtype,Patient Info,"
    "Device Info,Source Device ID,Glucose Value (mg/dL),Insulin Value (u),"
    "Carb Value (grams),Duration (hh:mm:ss),Glucose Rate of Change (mg/dL/min),"
    "Transmitter Time (Long Integer),Transmitter ID\n"
)


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


def pair_files(at, sensor: bytes, reference: bytes) -> None:
    """On the Meter page: the "Sensor + reference" source with these two CSV files."""
    at.radio(key="meter_source").set_value("Sensor + reference")
    at.run()
    at.file_uploader(key="meter_sensor").set_value(("sensor.csv", sensor, "text/csv"))
    at.file_uploader(key="meter_reference").set_value(("ref.csv", reference, "text/csv"))
    at.run()
    assert not at.exception, at.exception


def test_ambiguous_dates_are_refused_naming_the_page_control_and_paired_once_chosen(fresh):
    # sensor dates written with the year last, no day above 12: 05-04 is 5 April or 4 May
    sensor = (
        b"timestamp,glucose\n05-04-2024 08:00,100\n05-04-2024 08:05,110\n"
        b"05-04-2024 08:10,120\n05-04-2024 09:00,150\n"
    )
    reference = (
        b"timestamp,glucose\n2024-04-05T08:01:00,100\n2024-04-05T08:06:00,100\n"
        b"2024-04-05T08:30:00,130\n2024-04-05T09:02:00,125\n"
    )
    at = open_app("meter")
    pair_files(at, sensor, reference)
    refusal = " ".join(t.value for t in at.text)
    assert "ambiguous" in refusal and 'the "day/month order of the dates" choice' in refusal
    assert "--dayfirst" not in refusal and "--monthfirst" not in refusal
    assert "pairs analysed" not in metrics(at)
    order = next(r for r in at.radio if r.label == "day/month order of the dates")
    assert order.value == "automatic"
    order.set_value("day first")
    at.run()
    assert not at.exception
    assert any("3 of 4 reference readings paired" in t.value for t in at.text)
    # 5 April: (100, 100), (110, 100), (150, 125) as in the ISO files above
    assert metrics(at)["pairs analysed"] == "3" and metrics(at)["MARD"] == "10.0 %"
    # the pairs carry their times: a CGM, judged by the iCGM rules with J and K on the page
    table = next(t.value for t in at.table if "What is counted" in t.value.columns)
    assert table["Criterion"].tolist() == [*"ABCDEFGHIJK"]
    notes = [c.value for c in at.caption] + [t.value for t in at.text]
    assert not any("agreement needs" in n for n in notes)  # J/K not left out


def test_overlapping_devices_are_refused_naming_the_page_control_and_paired_one_by_one(fresh):
    rows = [DEXCOM_HEADER]
    for k in range(12):
        rows.append(f"{2 * k + 1},2024-05-01T08:{5 * k:02d}:00,EGV,,,,devA,{100 + k},,,,,,X\n")
        rows.append(f"{2 * k + 2},2024-05-01T08:{5 * k:02d}:30,EGV,,,,devB,{150 + k},,,,,,Y\n")
    reference = b"timestamp,glucose\n2024-05-01T08:20:10,105\n"
    at = open_app("meter")
    pair_files(at, "".join(rows).encode(), reference)
    refusal = " ".join(t.value for t in at.text)
    assert "Source Device ID" in refusal and 'the "sensor device" choice' in refusal
    assert "--device" not in refusal
    assert "pairs analysed" not in metrics(at)
    device = next(s for s in at.selectbox if s.label == "sensor device")
    assert device.options[1:] == ["devA", "devB"]
    # devA read 104 at 08:20:00, devB 154 at 08:20:30; the reference 105 at 08:20:10
    for name, mard in (("devA", "1.0 %"), ("devB", "46.7 %")):
        next(s for s in at.selectbox if s.label == "sensor device").set_value(name)
        at.run()
        assert not at.exception
        assert metrics(at)["pairs analysed"] == "1" and metrics(at)["MARD"] == mard
        assert any(
            f"only '{name}' paired (the \"sensor device\" choice)" in t.value for t in at.text
        )
