"""A hostile corpus through the command line: times that could be misread, line ends, text that
could act on a terminal or a spreadsheet, counts beyond what the machine can do.

Every file is generated here; every expectation is computed independently of the reader (UTC
instants by hand, line numbers by ``awk`` or by splitting the text, character classes by
``unicodedata``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import unicodedata
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.inputs.text import UNSAFE, safe_csv
from ranking_core.meter import read_pairs

runner = CliRunner()
DEXCOM_HEADER = (
    "Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type,Event Subtype,Patient Info,"
    "Device Info,Source Device ID,Glucose Value (mg/dL),Insulin Value (u),"
    "Carb Value (grams),Duration (hh:mm:ss),Glucose Rate of Change (mg/dL/min),"
    "Transmitter Time (Long Integer),Transmitter ID\n"
)
FALL_BACK_UTC = datetime(2024, 11, 3, 6, 0)  # US Eastern: 02:00 EDT becomes 01:00 EST
START_UTC = datetime(2024, 11, 3, 4, 0)  # 00:00 EDT


def run(*args: str):
    result = runner.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result


def pair(tmp_path: Path, sensor: str, reference: str, *options: str):
    (tmp_path / "s.csv").write_text(sensor, encoding="utf-8", newline="")
    (tmp_path / "r.csv").write_text(reference, encoding="utf-8", newline="")
    out = tmp_path / "pairs.csv"
    out.unlink(missing_ok=True)
    result = run("pair", str(tmp_path / "s.csv"), str(tmp_path / "r.csv"), "-o", str(out), *options)
    return result, (pd.read_csv(out) if out.exists() else None)


def eastern(utc: datetime) -> tuple[datetime, int]:
    """Local US Eastern wall-clock time and its UTC offset (hours) around the fall-back."""
    offset = -4 if utc < FALL_BACK_UTC else -5
    return utc + timedelta(hours=offset), offset


def sensor_value(utc: datetime) -> int:
    """The generated sensor's glucose: 100 + 3 per 5 minutes since 04:00 UTC."""
    return 100 + 3 * int((utc - START_UTC).total_seconds() // 300)


def readings_utc() -> list[datetime]:
    return [START_UTC + timedelta(minutes=5 * k) for k in range(48)]


# -- time ------------------------------------------------------------------------------------------


def test_offset_that_changes_at_daylight_saving_pairs_in_utc(tmp_path):
    rows = ["timestamp,glucose"]
    for u in readings_utc():
        local, offset = eastern(u)
        rows.append(f"{local:%Y-%m-%dT%H:%M:%S}{offset:+03d}:00,{sensor_value(u)}")
    refs = [datetime(2024, 11, 3, 5, 30), datetime(2024, 11, 3, 6, 30)]  # both 01:30 local
    reference = "timestamp,glucose\n" + "".join(f"{r:%Y-%m-%dT%H:%M:%S}Z,150\n" for r in refs)
    result, pairs = pair(tmp_path, "\n".join(rows) + "\n", reference)
    assert result.exit_code == 0, result.output
    assert pairs["BGM"].tolist() == [sensor_value(r) for r in refs]
    assert "-05:00, -04:00" in result.output


@pytest.mark.parametrize("newest_first", [False, True])
def test_dexcom_export_across_the_fall_back_refuses_the_repeated_hour(tmp_path, newest_first):
    rows = [
        f"{i},{eastern(u)[0]:%Y-%m-%dT%H:%M:%S},EGV,,,,G6,{sensor_value(u)},,,,,,X\n"
        for i, u in enumerate(readings_utc(), 1)
    ]
    rows = [DEXCOM_HEADER, *(rows[::-1] if newest_first else rows)]
    reference = (
        "timestamp,glucose\n2024-11-03T00:30:00,118\n2024-11-03T01:30:00,160\n"
        "2024-11-03T02:30:00,190\n"
    )
    result, pairs = pair(tmp_path, "".join(rows), reference)
    assert result.exit_code == 0, result.output
    # 00:30 EDT = 04:30 UTC; 02:30 EST = 07:30 UTC; 01:30 happened twice: refused, line 3
    assert pairs["BGM"].tolist() == [
        sensor_value(datetime(2024, 11, 3, 4, 30)),
        sensor_value(datetime(2024, 11, 3, 7, 30)),
    ]
    assert "refused as ambiguous" in result.output and "in line 3" in result.output
    assert "clock goes back" in result.output


@pytest.mark.parametrize(
    ("cell", "rule"),
    [
        ("2024-05-01T08:00:00+99:99", "UTC offset outside -12:00..+14:00"),
        ("2024-05-01T08:00:00+14:30", "UTC offset outside -12:00..+14:00"),
        ("2024-05-01T08:00:00-12:01", "UTC offset outside -12:00..+14:00"),
        ("2024", "partial date"),
        ("2024-05", "partial date"),
        ("2024-05-01", "without a time of day"),
        ("2262-04-11T23:40:00Z", "outside the years 1900..2200"),
        ("2024-02-30T08:00:00Z", "not a valid date"),
        ("2024-05-01T24:00:00Z", "no valid time of day"),
        ("05-01-2024 13:00 PM", "no valid time of day"),
    ],
)
def test_times_that_cannot_be_an_exact_instant_are_refused_with_their_line(tmp_path, cell, rule):
    sensor = f"timestamp,glucose\n2024-05-01T08:00:00Z,100\n{cell},200\n2024-05-01T08:10:00Z,120\n"
    result, pairs = pair(tmp_path, sensor, "timestamp,glucose\n2024-05-01T08:09:00Z,119\n")
    assert result.exit_code == 0, result.output
    assert rule in result.output and "line 3" in result.output
    assert pairs["BGM"].tolist() == [120]


def libre(times: list[str]) -> str:
    rows = [
        "Glucose Data,Generated on,01-06-2024 10:00 AM,Generated by,Ann",
        "Device,Serial Number,Device Timestamp,Record Type,Historic Glucose mg/dL,"
        "Scan Glucose mg/dL",
    ]
    rows += [f"FreeStyle,ABC,{t},0,{100 + i}," for i, t in enumerate(times)]
    return "\n".join(rows) + "\n"


DAYS = [datetime(2024, 5, d, 20, 0) for d in range(1, 13)]
REFERENCE_MAY = "timestamp,glucose\n" + "".join(f"{d:%Y-%m-%dT%H:%M:%S},90\n" for d in DAYS)


@pytest.mark.parametrize("fmt", ["%d-%m-%Y %I:%M %p", "%d/%m/%Y %H:%M", "%d.%m.%Y %H:%M"])
def test_day_first_libreview_is_refused_as_ambiguous_then_read_as_given(tmp_path, fmt):
    sensor = libre([d.strftime(fmt) for d in DAYS])
    result, _ = pair(tmp_path, sensor, REFERENCE_MAY)
    assert result.exit_code == 1 and "--dayfirst or --monthfirst" in result.output
    result, pairs = pair(tmp_path, sensor, REFERENCE_MAY, "--dayfirst")
    assert result.exit_code == 0 and pairs["BGM"].tolist() == list(range(100, 112))
    # a day above 12 anywhere in the file decides the order for all of it
    decided = libre([d.strftime(fmt) for d in DAYS] + [datetime(2024, 5, 13, 8).strftime(fmt)])
    result, pairs = pair(tmp_path, decided, REFERENCE_MAY)
    assert result.exit_code == 0 and pairs["BGM"].tolist() == list(range(100, 112))
    assert "day first" in result.output and "line 15" in result.output


def test_month_first_and_day_first_in_one_file_are_refused_naming_both_lines(tmp_path):
    sensor = libre(["05-13-2024 08:00", "13-05-2024 08:05", "05-01-2024 08:10"])
    result, _ = pair(tmp_path, sensor, REFERENCE_MAY)
    assert result.exit_code == 1
    assert "line 4" in result.output and "line 3" in result.output
    result, pairs = pair(
        tmp_path, sensor, "timestamp,glucose\n2024-05-13T08:00:00,90\n", "--monthfirst"
    )
    assert result.exit_code == 0 and pairs["BGM"].tolist() == [100]
    assert "does not fit the file's day/month order" in result.output


def test_duplicate_sensor_times_are_never_decided_by_row_order(tmp_path):
    sensor = (
        "timestamp,glucose\n2024-05-01T08:00:00,100\n2024-05-01T08:05:00,118\n"
        "2024-05-01T08:05:00,206\n2024-05-01T08:10:00,120\n2024-05-01T08:10:00,120\n"
    )
    reference = "timestamp,glucose\n2024-05-01T08:05:30,150\n2024-05-01T08:10:00,121\n"
    result, pairs = pair(tmp_path, sensor, reference)
    assert result.exit_code == 0
    assert pairs["REF"].tolist() == [121]  # the exact repeat counts once
    assert "118 and 206 mg/dL at lines 3, 4" in result.output
    assert "refused" in result.output and "in line 2" in result.output


def test_overlapping_devices_are_refused_naming_the_column_or_paired_one_by_one(tmp_path):
    rows = [DEXCOM_HEADER]
    for k in range(12):
        rows.append(f"{2 * k + 1},2024-05-01T08:{5 * k:02d}:00,EGV,,,,devA,{100 + k},,,,,,X\n")
        rows.append(f"{2 * k + 2},2024-05-01T08:{5 * k:02d}:30,EGV,,,,devB,{150 + k},,,,,,Y\n")
    reference = "timestamp,glucose\n2024-05-01T08:20:10,105\n"
    result, _ = pair(tmp_path, "".join(rows), reference)
    assert result.exit_code == 1 and "Source Device ID" in result.output
    assert "--device" in result.output
    for device, value in (("devA", 104), ("devB", 154)):
        result, pairs = pair(tmp_path, "".join(rows), reference, "--device", device)
        assert result.exit_code == 0 and pairs["BGM"].tolist() == [value]


@pytest.mark.parametrize(
    "option",
    [
        ("--lag", "1.3e8"),
        ("--lag", "1e12"),
        ("--lag", "-1441"),
        ("--lag", "inf"),
        ("--window", "1e300"),
        ("--window", "0"),
        ("--window", "nan"),
        ("--window", "1441"),
    ],
)
def test_lag_and_window_are_bounded_before_any_arithmetic(tmp_path, option):
    sensor = "timestamp,glucose\n2024-05-01T08:00:00,100\n"
    result, pairs = pair(tmp_path, sensor, sensor, *option)
    assert result.exit_code == 1 and pairs is None
    assert option[0] in result.output and "1,440" in result.output


def test_a_day_of_lag_pairs_exactly(tmp_path):
    sensor = "timestamp,glucose\n2024-04-30T08:00:00,100\n2024-04-30T08:10:00,130\n"
    result, pairs = pair(
        tmp_path,
        sensor,
        "timestamp,glucose\n2024-05-01T08:09:00,90\n",
        "--lag",
        "1440",
        "--window",
        "1440",
    )
    assert result.exit_code == 0 and pairs["BGM"].tolist() == [130]


def test_many_references_at_one_instant_are_noted(tmp_path):
    sensor = "timestamp,glucose\n" + "".join(
        f"2024-05-01T08:{m:02d}:00,{100 + m}\n" for m in range(0, 60, 5)
    )
    reference = "timestamp,glucose\n" + "".join(
        f"2024-05-01T08:05:00,{100 + i}\n" for i in range(50)
    )
    result, pairs = pair(tmp_path, sensor, reference)
    assert result.exit_code == 0 and (pairs["BGM"] == 105).all() and len(pairs) == 50
    assert "50 readings at 2024-05-01 08:05" in result.output


# -- line ends -------------------------------------------------------------------------------------


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r\r\n", "\r"])
def test_line_numbers_are_the_editors_and_awks(tmp_path, end):
    rows = (
        ["BGM,REF"]
        + [("abc,100" if i % 7 == 3 else f"{100 + i},{90 + i}") for i in range(300)]
        + ["", '"7",x']
    )
    path = tmp_path / "pairs.csv"
    path.write_bytes((end.join(rows) + end).encode())
    refused = sorted(
        int(n)
        for m in read_pairs(path).messages[1:]
        for n in m.split(" in line")[1]
        .replace("s", "")
        .split(";")[0]
        .replace("and", ",")
        .split(",")
        if n.strip().isdigit()
    )
    awk = shutil.which("awk")
    if end != "\r" and awk is not None:  # awk counts lines ending in LF
        out = subprocess.run(
            [awk, "/abc|x$|x\r/ {print NR}", str(path)], capture_output=True, text=True, check=True
        ).stdout.split()
        expected = [int(n) for n in out]
    else:  # a CR alone ends a line
        expected = [
            i
            for i, line in enumerate(path.read_bytes().decode().split("\r"), 1)
            if "abc" in line or line.endswith("x")
        ]
    assert refused[:10] == expected[:10] and len(expected) > 10
    result = run("meter-report", str(path))
    assert "lines 5, 12, 19" in result.output


# -- text ------------------------------------------------------------------------------------------


def test_unsafe_class_is_unicodes_control_and_format_characters():
    for code in [*range(0x30000), *range(0xE0000, 0xE0080)]:
        char = chr(code)
        category = unicodedata.category(char)
        if category in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            assert UNSAFE.fullmatch(char), hex(code)
        elif category != "Cn":  # code points unassigned in this Python's Unicode may be matched
            assert not UNSAFE.fullmatch(char), hex(code)


HOSTILE = {
    "esc": "Ann\x1b[31mRED\x1b[0m",
    "osc8": "\x1b]8;;https://x.example\x1b\\Bob\x1b]8;;\x1b\\",
    "bidi": "Eve\u202etxt.exe",
    "nul": "A\x07B",
    "isolate": "\u2066Zed\u2069",
}


def test_rater_names_with_controls_or_bidi_are_refused_and_never_printed_raw(tmp_path):
    rng = np.random.default_rng(0)
    reference = rng.integers(40, 400, 40)
    estimate = (reference * rng.uniform(0.6, 1.4, 40)).astype(int)
    raters = ["ann", "bob", *HOSTILE.values(), "", ""] * 5
    frame = pd.DataFrame(
        {
            "reference": reference,
            "estimate": estimate,
            "rating": np.clip(abs(estimate - reference) / reference * 8, 0, 4).round(1),
            "rater": raters[:40],
        }
    )
    path = tmp_path / "ratings.csv"
    frame.to_csv(path, index=False)
    result = run("plan-panel", str(path), "--next", "5", "-o", str(tmp_path / "next.csv"))
    assert result.exit_code == 0, result.output
    hostile_lines = [i + 2 for i, r in enumerate(raters[:40]) if r in HOSTILE.values()]
    output = " ".join(result.output.split())
    assert UNSAFE.search(output) is None
    assert (
        f"rater contains a control character, an invisible format character or a bidi "
        f"override (rule: text cells hold printable text only) in lines "
        f"{', '.join(map(str, hostile_lines[:10]))} and {len(hostile_lines) - 10} more"
    ) in output
    blank = [i + 2 for i, r in enumerate(raters[:40]) if r == ""]
    assert (
        f"rater is blank in lines {', '.join(map(str, blank[:3]))}" in output
        and "'unknown'" in output
    )


@pytest.mark.parametrize(
    "cell", ["＝1+1", "＋1", "－1", "＠SUM(A1)", "﹦1", "−1", " =1", "=1", "@x", "\t=1"]
)
def test_look_alike_formula_prefixes_are_neutralised(cell):
    text = safe_csv(pd.DataFrame({"rater": [cell, "Ann\x1b[31m"], "n": [1, 2]}))
    rows = pd.read_csv(pd.io.common.StringIO(text), dtype=str, keep_default_na=False)
    assert rows["rater"][0] == "'" + cell
    assert rows["rater"][1] == "Ann\\x1b[31m" and "\x1b" not in text


# -- counts ------------------------------------------------------------------------------------


def test_plan_panel_next_is_bounded_at_once(tmp_path):
    for n in ("1000000000", "0", "-5", "200001"):
        result = run("plan-panel", "--next", n, "-o", str(tmp_path / "n.csv"))
        assert result.exit_code == 1 and "1 to 200,000" in result.output
        assert not (tmp_path / "n.csv").exists()


@pytest.mark.slow  # learns a grid first (about 10 s)
def test_planner_with_fewer_pairs_says_how_many_it_gives(tmp_path):
    rng = np.random.default_rng(1)
    reference = rng.integers(40, 400, 30)
    estimate = (reference * rng.uniform(0.6, 1.4, 30)).astype(int)
    pd.DataFrame(
        {
            "reference": reference,
            "estimate": estimate,
            "rating": np.clip(abs(estimate - reference) / reference * 8, 0, 4).round(1),
        }
    ).to_csv(tmp_path / "r.csv", index=False)
    out = tmp_path / "n.csv"
    result = run("plan-panel", str(tmp_path / "r.csv"), "--next", "5000", "-o", str(out))
    assert result.exit_code == 0, result.output
    given = len(pd.read_csv(out))
    assert given < 5000 and "asked for 5,000 pairs" in result.output
    assert f"the plan has {given:,}" in result.output


def test_cli_runs_as_a_user_runs_it(tmp_path):
    """One case through a real process: the refusal reaches the terminal without a traceback."""
    sensor = tmp_path / "s.csv"
    sensor.write_text("timestamp,glucose\n2024-05-01T08:00:00,100\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ranking_core.cli",
            "pair",
            str(sensor),
            str(sensor),
            "-o",
            str(tmp_path / "p.csv"),
            "--lag",
            "1e12",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr + done.stdout
    assert "--lag must be between" in done.stderr and not done.stdout


@pytest.mark.parametrize("seed", range(3))
def test_times_in_many_layouts_are_the_instants_python_computes(seed):
    """Random instants written with random offsets in several layouts (most rows in the first
    row's layout, the fast path; some in others, the regular expression) read back exactly."""
    from ranking_core.inputs.series import read_series

    rng = np.random.default_rng(seed)
    base = datetime(2024, 1, 1)
    rows, expected = ["timestamp,glucose"], []
    for i in range(400):
        utc = base + timedelta(
            seconds=int(rng.integers(0, 3 * 10**7)), microseconds=int(rng.integers(0, 10**6))
        )
        minutes = int(rng.integers(-12 * 60, 14 * 60 + 1))
        local = utc + timedelta(minutes=minutes)
        sign = "-" if minutes < 0 else "+"
        offset = f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
        layout = i % 10
        if layout < 7:
            text = f"{local:%Y-%m-%dT%H:%M:%S.%f}{offset}"
        elif layout == 7:
            text = f"{local:%Y-%m-%d} {local.hour}:{local:%M:%S.%f}{offset.replace(':', '')}"
        elif layout == 8:
            text = f"{local:%Y/%m/%d %I:%M:%S.%f %p} {offset}"
        else:
            text = f"{local:%Y-%m-%dT%H:%M:%S.%f}" + ("Z" if minutes == 0 else offset)
        rows.append(f"{text},{100 + i % 50}")
        expected.append(np.datetime64(utc, "ns"))
    series = read_series(("\n".join(rows) + "\n").encode(), name="s.csv")
    assert len(series) == 400 and series.aware
    np.testing.assert_array_equal(series.times, np.array(expected, dtype="datetime64[ns]"))


@pytest.mark.parametrize(
    "args",
    [
        ("learners", "compare", "--m", "1000000000"),
        ("learners", "compare", "--reps", "0"),
        ("learners", "compare", "--test-size", "2000000000"),
        ("reproduce", "seg-table3", "--m", "1000000000"),
        ("reproduce", "academic", "--m", "2"),
        ("reproduce", "apriori", "--draws", "0"),
    ],
)
def test_experiment_counts_are_bounded_before_anything_runs(args):
    result = run(*args)
    assert result.exit_code == 2 and args[2] in result.output
    assert "less than or equal to" in result.output or "greater than or equal to" in result.output
