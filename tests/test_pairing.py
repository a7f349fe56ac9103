"""Sensor-to-reference pairing against a brute-force O(n·m) pairing, and the series formats."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.inputs import InputError
from ranking_core.inputs.series import read_series
from ranking_core.meter import meter_report, read_pairs
from ranking_core.meter.pairs.pairing import PAIRED_COLUMNS, nearest_in_window, pair_series
from ranking_core.meter.standards.acceptance import JudgeSettings
from ranking_core.validation import counted

runner = CliRunner()


def brute_force(sensor: np.ndarray, reference: np.ndarray, window: int) -> np.ndarray:
    """For each reference, scan every sensor reading: nearest within the window, ties to the
    earlier time, then to the first in the file."""
    out = np.full(len(reference), -1)
    for i, r in enumerate(reference):
        best = None
        for j, s in enumerate(sensor):
            d = abs(int(s) - int(r))
            if d > window:
                continue
            key = (d, int(s), j)
            if best is None or key < best:
                best = key
        if best is not None:
            out[i] = best[2]
    return out


@pytest.mark.parametrize("seed", range(12))
def test_nearest_in_window_matches_brute_force_with_gaps_jitter_and_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 80))
    # a 5-minute sensor grid (in seconds) with jitter, gaps, repeats and exact ties
    sensor = np.arange(n) * 300 + rng.integers(-20, 21, n)
    sensor = np.delete(sensor, rng.choice(n, size=n // 5, replace=False)) if n else sensor
    sensor = rng.permutation(np.concatenate([sensor, sensor[: len(sensor) // 10]]))
    reference = rng.integers(-600, 300 * max(n, 1) + 600, int(rng.integers(0, 60)))
    reference = np.concatenate([reference, (sensor[:5] + np.roll(sensor, 1)[:5]) // 2])
    window = int(rng.choice([60, 150, 300, 450]))
    np.testing.assert_array_equal(
        nearest_in_window(sensor, reference, window), brute_force(sensor, reference, window)
    )


def test_tie_goes_to_the_earlier_sensor_reading_and_window_is_inclusive():
    sensor = np.array([100, 0, 200, 200])
    assert nearest_in_window(sensor, np.array([50, 150, 260, 301, 200]), 100).tolist() == [
        1,
        0,
        2,
        -1,
        2,
    ]


def _series(text: str, **kw):
    return read_series(io.BytesIO(text.encode()), name="s.csv", **kw)


SENSOR = (
    "timestamp,glucose\n2024-05-01T08:00:00,100\n2024-05-01T08:05:00,110\n"
    "2024-05-01T08:10:00,120\nnot a time,130\n2024-05-01T09:00:00,150\n"
)
REFERENCE = (
    "time;glucose\n2024-05-01T08:02:30;98\n2024-05-01T08:07:00;105\n"
    "2024-05-01T08:30:00;130\n2024-05-01 09:04;140\n"
)


def test_pair_series_writes_the_documented_columns():
    sensor = _series(SENSOR)
    assert sensor.lines.tolist() == [2, 3, 4, 6]
    assert sensor.table.refused[0].rule.startswith("timestamp is not a time")
    result = pair_series(sensor, _series(REFERENCE), window=5)
    assert tuple(result.pairs.columns) == PAIRED_COLUMNS
    assert result.pairs["BGM"].tolist() == [100, 110, 150]  # 08:02:30 is a tie: the earlier
    assert result.pairs["REF"].tolist() == [98, 105, 140]
    assert result.pairs["sensor_time"].tolist() == [
        "2024-05-01T08:00:00",
        "2024-05-01T08:05:00",
        "2024-05-01T09:00:00",
    ]
    assert result.pairs["delta_seconds"].tolist() == [-150, -120, -240]
    assert result.n_unpaired == 1 and "1 left out" in result.messages[0]
    lagged = pair_series(sensor, _series(REFERENCE), window=5, lag=2.5)  # sensor + 2.5 min
    assert lagged.pairs["BGM"].tolist() == [100, 110, 150]
    assert lagged.pairs["delta_seconds"].tolist() == [0, 30, -90]


def test_sub_second_times_are_written_in_full():
    sensor = _series("timestamp,glucose\n2024-05-01T08:00:00.250,100\n")
    reference = _series("timestamp,glucose\n2024-05-01T08:01:00,98\n")
    result = pair_series(sensor, reference)
    assert result.pairs["sensor_time"].tolist() == ["2024-05-01T08:00:00.250"]
    assert result.pairs["reference_time"].tolist() == ["2024-05-01T08:01:00"]
    assert result.pairs["delta_seconds"].tolist() == [-59.75]


def test_offsets_are_compared_in_utc_and_never_mixed():
    utc = _series("timestamp,glucose\n2024-05-01T08:00:00Z,100\n2024-05-01T08:10:00Z,120\n")
    local = _series("timestamp,glucose\n2024-05-01T10:09:00+02:00,119\n")
    result = pair_series(utc, local, window=2)
    assert result.pairs["BGM"].tolist() == [120]
    assert result.pairs["reference_time"].tolist() == ["2024-05-01T08:09:00+00:00"]
    # each time with its own offset: 07:00 and 06:10 UTC
    two = _series(
        "timestamp,glucose\n2024-05-01T08:00:00+01:00,100\n2024-05-01T08:10:00+02:00,120\n"
    )
    assert [str(t)[11:16] for t in two.times] == ["07:00", "06:10"]
    with pytest.raises(InputError, match=r"offset in line 2 and none in line 3"):
        _series("timestamp,glucose\n2024-05-01T08:00:00+01:00,100\n2024-05-01T08:10:00,120\n")
    stray = _series("timestamp,glucose\n2024-05-01T08+01:00,100\n2024-05-01T08:10:00,120\n")
    assert stray.lines.tolist() == [3]  # an offset not after a time of day: not a time
    assert stray.table.refused[0].rule.startswith("timestamp is not a time")
    naive = _series("timestamp,glucose\n2024-05-01T08:09:00,119\n")
    with pytest.raises(InputError, match="cannot be compared"):
        pair_series(utc, naive)


DEXCOM = (
    "Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type,Event Subtype,Patient Info,Device Info,"
    "Source Device ID,Glucose Value (mmol/L),Insulin Value (u),Carb Value (grams),"
    "Duration (hh:mm:ss),Glucose Rate of Change (mmol/L/min),Transmitter Time (Long Integer),"
    "Transmitter ID\n"
    "1,,FirstName,,Ann,,,,,,,,,\n"
    "2,,Device,,,G6 Mobile App,android G6,,,,,,,\n"
    "3,,Alert,High,,,,11.1,,,,,,\n"
    "4,2024-05-01T08:00:00,EGV,,,,android G6,5.5,,,,,4237574,8AM1EY\n"
    "5,2024-05-01 8:05:00,EGV,,,,android G6,Low,,,,,4237874,8AM1EY\n"
    "6,2024-05-01T08:10:00,Calibration,,,,android G6,6.1,,,,,,8AM1EY\n"
    "7,2024-05-01T08:15:00,EGV,,,,android G6,6.2,,,,,4238474,8AM1EY\n"
)

LIBRE = (
    "Glucose Data,Generated on,05-02-2024 10:00 UTC,Generated by,Ann\n"
    "Device,Serial Number,Device Timestamp,Record Type,Historic Glucose mg/dL,"
    "Scan Glucose mg/dL,Non-numeric Rapid-Acting Insulin,Notes\n"
    "FreeStyle LibreLink,ABC,05-01-2024 08:00,0,100,,,\n"
    "FreeStyle LibreLink,ABC,05-01-2024 08:07,1,,112,,\n"
    "FreeStyle LibreLink,ABC,05-01-2024 08:10,6,,,,note\n"
    "FreeStyle LibreLink,ABC,05-01-2024 08:15,0,118,,,\n"
    "FreeStyle LibreLink,ABC,05-13-2024 08:15,0,121,,,\n"
    "FreeStyle LibreLink,ABC,yesterday,0,118,,,\n"
)


def test_dexcom_clarity_export_keeps_egv_rows_in_the_stated_unit():
    series = _series(DEXCOM)
    assert series.format == "dexcom" and series.table.unit == "mmol/L"
    assert series.lines.tolist() == [5, 8]
    np.testing.assert_allclose(series.glucose, [5.5 * 18.016, 6.2 * 18.016])
    # "Low" has no value: kept apart (not refused), its time still takes part in the pairing
    assert series.beyond_lines.tolist() == [6] and not series.table.refused
    assert any("marked Low or High" in n and "line 6" in n for n in series.table.notes)
    assert any("4 rows skipped: not glucose readings" in n for n in series.table.notes)
    with pytest.raises(InputError, match="headers say mmol/L but --unit mg/dL"):
        _series(DEXCOM, unit="mg/dL")


def test_libreview_export_keeps_historic_and_scan_records():
    series = _series(LIBRE)
    assert series.format == "libre"
    assert series.lines.tolist() == [3, 4, 6, 7]
    assert series.glucose.tolist() == [100, 112, 118, 121]
    # 05-13-2024 fits only month-day-year, so the whole file is read that way
    assert str(series.times[1]) == "2024-05-01T08:07:00.000000000"
    assert series.table.refused[0].lines.tolist() == [8]
    assert any("line 1 above the header skipped" in n for n in series.table.notes)
    day_first = _series(LIBRE.replace("05-13-2024", "13-05-2024"))
    assert str(day_first.times[1]) == "2024-01-05T08:07:00.000000000"
    with pytest.raises(InputError, match=r"ambiguous.*--dayfirst or --monthfirst"):
        _series(LIBRE.replace("05-13-2024", "05-12-2024"))
    given = read_series(
        io.BytesIO(LIBRE.replace("05-13-2024", "05-12-2024").encode()), name="s.csv", dayfirst=False
    )
    assert str(given.times[1]) == "2024-05-01T08:07:00.000000000"


def test_series_from_a_workbook_keeps_its_date_cells(tmp_path):
    path = tmp_path / "sensor.xlsx"
    pd.DataFrame(
        {
            "timestamp": pd.to_datetime(["2024-05-01 08:00", "2024-05-01 08:05"]),
            "glucose": [100, 110],
        }
    ).to_excel(path, index=False)
    series = read_series(path)
    assert [str(t) for t in series.times] == [
        "2024-05-01T08:00:00.000000000",
        "2024-05-01T08:05:00.000000000",
    ]
    assert series.glucose.tolist() == [100, 110] and series.lines.tolist() == [2, 3]


def test_pair_command_writes_a_file_the_meter_report_reads(tmp_path):
    (tmp_path / "s.csv").write_text(SENSOR)
    (tmp_path / "r.csv").write_text(REFERENCE)
    out = tmp_path / "pairs.csv"
    result = runner.invoke(
        app,
        ["pair", str(tmp_path / "s.csv"), str(tmp_path / "r.csv"), "-o", str(out), "--window", "5"],
    )
    assert result.exit_code == 0, result.output
    written = pd.read_csv(out)
    assert tuple(written.columns) == PAIRED_COLUMNS and len(written) == 3
    pairs = read_pairs(out)
    assert pairs.bgm.tolist() == [100, 110, 150] and pairs.ref.tolist() == [98, 105, 140]
    report = runner.invoke(app, ["meter-report", str(out)])
    assert report.exit_code == 0, report.output
    bad = runner.invoke(
        app,
        ["pair", str(tmp_path / "s.csv"), str(tmp_path / "r.csv"), "-o", str(out), "--window", "0"],
    )
    assert bad.exit_code == 1 and "window" in bad.output and "Traceback" not in bad.output


@pytest.mark.parametrize("offset", ["", "+02:00"])
def test_paired_series_carry_their_times_to_the_rate_of_change_criteria(tmp_path, offset):
    # reference falling 3 mg/dL/min every 5 min; the sensor, 1 min later, rises 2 mg/dL/min once
    minutes = np.arange(0, 60, 5)
    ref = 200 - 3 * minutes
    bgm = ref.copy()
    bgm[4] = bgm[3] + 10

    def text(at: np.ndarray, values: np.ndarray) -> str:
        return "timestamp,glucose\n" + "".join(
            f"2024-05-01T08:{m:02d}:00{offset},{v}\n" for m, v in zip(at, values, strict=True)
        )

    (tmp_path / "s.csv").write_text(text(minutes + 1, bgm))
    (tmp_path / "r.csv").write_text(text(minutes, ref))
    pairing = pair_series(_series(text(minutes + 1, bgm)), _series(text(minutes, ref)))
    pairs = pairing.meter_pairs()
    assert set(pairs.extra) == {"reference_time", "sensor_time"}
    every_pair = JudgeSettings(("icgm",), measuring_range=None)
    table = meter_report(pairs, None, judge=every_pair).acceptance.set_index("id")
    # by hand: 11 intervals, each with the reference falling 3 mg/dL/min; one sensor rise
    assert table.loc["J", "n"] == 1 and table.loc["J", "count"] == 1
    assert table.loc["J", "reference_n"] == 11 and table.loc["J", "reference_count"] == 1
    assert table.loc["K", "reference_n"] == 0
    # the same criteria as for the file `riskgrid pair` writes
    out = tmp_path / "pairs.csv"
    assert (
        runner.invoke(
            app, ["pair", str(tmp_path / "s.csv"), str(tmp_path / "r.csv"), "-o", str(out)]
        ).exit_code
        == 0
    )
    written = meter_report(read_pairs(out), None, judge=every_pair).acceptance
    pd.testing.assert_frame_equal(written.set_index("id"), table)


def test_counts_agree_with_their_nouns():
    assert counted(1, "reference reading") == "1 reference reading"
    assert counted(0, "reference reading") == "0 reference readings"
    assert counted(2500, "time holds", "times hold") == "2,500 times hold"
    # one sensor time repeated with its value, one holding two values; one reference each way
    sensor = _series(
        "timestamp,glucose\n2024-05-01T08:00:00,100\n2024-05-01T08:00:00,100\n"
        "2024-05-01T09:00:00,150\n2024-05-01T09:00:00,160\n"
    )
    reference = _series("timestamp,glucose\n2024-05-01T09:01:00,140\n")
    text = "\n".join(pair_series(sensor, reference).messages)
    assert "0 of 1 reference reading paired" in text
    assert "1 reference reading refused" in text
    assert "1 repeats an earlier reading's time" in text
    assert "1 time holds different values" in text
    assert "s.csv: 1 row read, 0 refused" in text
    for wrong in ("1 reference readings", "1 repeat ", "1 times", "1 rows"):
        assert wrong not in text
