"""Device exports that cannot be misread: ``riskgrid pair EXPORT`` against the pairing rule applied
record by record (brute force) whatever the record order, and against hostile exports, each
refusal one sentence naming the record and the rule."""

from __future__ import annotations

import io
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.inputs import InputError
from ranking_core.meter.pairs.device_exports import UNNAMED_DEVICE, pair_export

T0 = 1_700_000_000_000  # epoch ms (2023-11-14)
MINUTE = 60_000


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def said(result) -> str:
    """Everything the command printed (standard output and error), on one line (rich wraps
    long lines)."""
    return " ".join(result.output.split())


def write(tmp_path, records, name="entries.json"):
    path = tmp_path / name
    path.write_text(json.dumps(records))
    return path


# -- the rule, record by record -------------------------------------------------------------------


def brute_force(records: list[dict], before_ms: int) -> list[tuple]:
    """The pairing rule applied record by record: every distinct reading once; for each meter
    reading and each CGM device of its subject, the device's readings at or before it; the
    latest time, if within ``before_ms``, gives the pair unless it holds two values; values
    outside 40..600 mg/dL left out."""
    readings = {
        (r["type"], r.get("subject") or "", r.get("device") or UNNAMED_DEVICE, r["date"], v)
        for r in records
        for v in [r.get("sgv", r.get("mbg"))]
    }
    cgm = [x for x in readings if x[0] == "sgv"]
    pairs = []
    for kind, subject, _, time, ref in readings:
        if kind != "mbg":
            continue
        for device in sorted({d for _, s, d, _, _ in cgm if s == subject}):
            earlier = [(t, v) for _, s, d, t, v in cgm if (s, d) == (subject, device) and t <= time]
            if not earlier:
                continue
            latest = max(t for t, _ in earlier)
            values = {v for t, v in earlier if t == latest}
            if time - latest > before_ms or len(values) > 1:
                continue
            (value,) = values
            if 40 <= value <= 600 and 40 <= ref <= 600:
                pairs.append((float(value), float(ref), device, subject, time, latest))
    return sorted(pairs)


def paired(frame: pd.DataFrame) -> list[tuple]:
    """The pairs written, in the brute force's terms (times back to epoch ms)."""

    def ms(column: str) -> list[int]:
        times = pd.to_datetime(frame[column], utc=True)
        return (times.astype("int64") // 1_000_000).tolist()

    subject = (
        frame["subject"].replace("unnamed subject", "") if "subject" in frame else [""] * len(frame)
    )
    return sorted(
        zip(
            frame["BGM"].astype(float),
            frame["REF"].astype(float),
            frame["sensor"].str.split("/").str[-1],
            subject,
            ms("reference_time"),
            ms("sensor_time"),
            strict=True,
        )
    )


record = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["sgv", "mbg"]),
        "value": st.sampled_from([39, 100, 150, 300, 601]),
        "date": st.integers(0, 20).map(lambda m: T0 + m * MINUTE),
    },
    optional={
        "device": st.sampled_from(["A", "B", None]),
        "subject": st.sampled_from(["p1", "p2"]),
    },
).map(lambda r: {("sgv" if r["type"] == "sgv" else "mbg"): r.pop("value"), **r})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(record, min_size=1, max_size=30), st.sampled_from([1, 5]), st.randoms())
def test_pairs_are_the_rule_applied_record_by_record_in_any_order(records, before, rnd):
    shuffled = list(records)
    rnd.shuffle(shuffled)
    expected = brute_force(records, before * MINUTE)
    results = []
    for order in (records, shuffled):
        source = io.BytesIO(json.dumps(order).encode())
        try:
            result = pair_export(source, before, name="entries.json")
        except InputError as exc:  # needs both kinds of reading
            kinds = {r["type"] for r in records}
            assert kinds != {"sgv", "mbg"} and "needs both CGM and meter" in str(exc)
            return
        got = paired(result.frame)
        assert got == expected
        for number, ref, time in zip(
            result.frame["record"], result.frame["REF"], result.frame["reference_time"], strict=True
        ):  # the record named is a meter reading with that value and time
            named = order[number - 1]
            assert named["type"] == "mbg" and named["mbg"] == ref
            assert pd.Timestamp(named["date"], unit="ms", tz="UTC") == pd.Timestamp(time)
        results.append(got)
    assert results[0] == results[1]


# -- hostile exports, one per way a reading could be misread ------------------------------------


def test_a_cgm_time_holding_two_values_leaves_the_meter_reading_unpaired_in_either_order(
    tmp_path,
):
    cgm = [{"type": "sgv", "sgv": 100, "date": T0}, {"type": "sgv", "sgv": 300, "date": T0}]
    meter = [{"type": "mbg", "mbg": 120, "date": T0 + MINUTE}]
    for order in (cgm + meter, cgm[::-1] + meter):
        result = run("pair", write(tmp_path, order), "-o", tmp_path / "p.csv")
        text = said(result)
        assert result.exit_code == 1 and not (tmp_path / "p.csv").exists()
        assert "100 and 300 mg/dL in records 1, 2" in text and "record order does not" in text
        assert "1 left unpaired (that CGM time holds two values)" in text


def test_epoch_seconds_are_read_as_seconds_with_a_warning_naming_the_records(tmp_path):
    records = [
        {"type": "sgv", "sgv": 100, "date": T0 // 1000},
        {"type": "sgv", "sgv": 200, "date": T0 // 1000 + 24 * 3600},  # a day later
        {"type": "mbg", "mbg": 110, "date": T0 // 1000 + 24 * 3600 + 600},  # 10 min after it
    ]
    out = tmp_path / "p.csv"
    result = run("pair", write(tmp_path, records), "-o", out, "--before", "15")
    text = said(result)
    assert result.exit_code == 0, text
    assert "looks like epoch seconds" in text and "records 1, 2, 3" in text
    pairs = pd.read_csv(out)
    # read as milliseconds the readings would be 86 s apart and the meter would pair with 100
    assert pairs["BGM"].tolist() == [200.0] and pairs["delta_seconds"].tolist() == [-600.0]
    assert pairs["reference_time"].tolist() == ["2023-11-15T22:23:20+00:00"]


def test_dates_outside_the_years_are_refused_by_record_without_a_crash_or_warning(tmp_path):
    records = [
        {"type": "sgv", "sgv": 100, "date": -5_000_000_000_000},  # 1811
        {"type": "sgv", "sgv": 100, "date": 1e300},
        {"type": "sgv", "sgv": 1e300, "date": T0},
        {"type": "sgv", "sgv": 100, "date": -86_400_000 * 365},  # 1969: kept
        {"type": "sgv", "sgv": 100, "date": T0 - MINUTE},
        {"type": "mbg", "mbg": 120, "date": T0 + MINUTE},
    ]
    out = tmp_path / "p.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy warning leaks
        result = run("pair", write(tmp_path, records), "-o", out)
    text = said(result)
    assert result.exit_code == 0, text
    assert "date is outside the years 1900..2200 (epoch milliseconds)" in text
    assert "records 1, 2; refused" in text and "glucose is outside 0..3000" in text
    assert "record 3; refused" in text
    assert pd.read_csv(out)["BGM"].tolist() == [100.0]


def test_nesting_is_bounded_before_parsing(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 1_000_000 + "]" * 1_000_000)  # 2 MB of nested brackets
    result = run("pair", path, "-o", tmp_path / "p.csv")
    text = said(result)
    assert result.exit_code == 1 and "Traceback" not in text and "RecursionError" not in text
    assert "line 1 nests brackets more than 64 deep (the limit for JSON" in text
    assert " ".join(result.stderr.split()).count("nests brackets") == 1  # said once


def test_a_json_pairs_file_is_read_by_the_same_reader(tmp_path):
    path = tmp_path / "pairs.json"
    path.write_text('[{"BGM": 100, "REF": 110},\n' + "[" * 100 + "]" * 100 + "]")
    result = run("meter-report", path)
    assert result.exit_code == 1 and "Traceback" not in said(result)
    assert "line 2 nests brackets more than 64 deep" in said(result)


@pytest.mark.parametrize("unit", ["", "g/L", "mg/dl/x"])
def test_units_other_than_mg_dl_or_mmol_l_are_refused_by_record(tmp_path, unit):
    records = [
        {"type": "cbg", "value": 6.0, "units": "mmol/L", "time": "2024-05-01T08:00:00Z"},
        {"type": "smbg", "value": 1.2, "units": unit, "time": "2024-05-01T08:01:00Z"},
        {"type": "smbg", "value": 110, "units": "MG/DL", "time": "2024-05-01T08:02:00Z"},
    ]
    out = tmp_path / "p.csv"
    result = run("pair", write(tmp_path, records, "tidepool.json"), "-o", out)
    text = said(result)
    assert result.exit_code == 0, text
    assert "units is not one of mg/dL, mmol/L" in text and "record 2; refused" in text
    pairs = pd.read_csv(out)
    assert pairs["REF"].tolist() == [110.0]  # the g/L reading is never read as 1.2 mg/dL
    assert pairs["BGM"].tolist() == pytest.approx([6.0 * 18.016])


def test_a_key_named_twice_refuses_its_record(tmp_path):
    path = tmp_path / "entries.json"
    path.write_text(
        f'[{{"type": "sgv", "sgv": 100, "date": {T0}, "sgv": 300}},'
        f'{{"type": "sgv", "sgv": 90, "date": {T0}, "x": {{"a": 1, "a": 2}}}},'
        f'{{"type": "sgv", "sgv": 140, "date": {T0 - MINUTE}}},'
        f'{{"type": "mbg", "mbg": 150, "date": {T0 + MINUTE}}}]'
    )
    out = tmp_path / "p.csv"
    result = run("pair", path, "-o", out)
    text = said(result)
    assert result.exit_code == 0, text
    assert "the record names a key twice (rule: a key holds one value)" in text
    assert "records 1, 2; refused" in text
    assert pd.read_csv(out)["BGM"].tolist() == [140.0]


def test_an_export_merged_twice_gives_each_pair_once_and_says_so(tmp_path):
    records = [
        {"type": "sgv", "sgv": 100 + i, "date": T0 + i * 5 * MINUTE, "device": "G6"}
        for i in range(10)
    ] + [{"type": "mbg", "mbg": 120, "date": T0 + i * 5 * MINUTE + MINUTE} for i in range(10)]
    once, twice = tmp_path / "once.csv", tmp_path / "twice.csv"
    assert run("pair", write(tmp_path, records, "a.json"), "-o", once).exit_code == 0
    result = run("pair", write(tmp_path, records + records, "b.json"), "-o", twice)
    text = said(result)
    assert result.exit_code == 0, text
    assert "20 records repeat an earlier record's reading" in text
    assert "records 21, 22, 23" in text and "counted once" in text
    pd.testing.assert_frame_equal(pd.read_csv(once), pd.read_csv(twice))


def test_each_cgm_device_gives_its_own_pair_and_meter_report_clusters_by_it(tmp_path):
    rng = np.random.default_rng(3)
    records = []
    for device, offset in (("G6-1", 0), ("G6-2", 20_000), ("Libre", 40_000)):
        records += [
            {"type": "sgv", "sgv": int(v), "date": T0 + i * 5 * MINUTE + offset, "device": device}
            for i, v in enumerate(rng.integers(60, 300, 60))
        ]
    records += [
        {"type": "mbg", "mbg": int(v), "date": T0 + i * 5 * MINUTE + 2 * MINUTE, "device": "meter"}
        for i, v in enumerate(rng.integers(60, 300, 60))
    ]
    records += [  # another person's reading at the same times: paired with their CGM only
        {"type": "sgv", "sgv": 500, "date": T0 + MINUTE, "device": "G6-1", "subject": "p2"},
        {"type": "mbg", "mbg": 77, "date": T0 + 2 * MINUTE, "subject": "p2"},
    ]
    rng.shuffle(records)
    out = tmp_path / "pairs.csv"
    result = run("pair", write(tmp_path, records), "-o", out)
    text = said(result)
    assert result.exit_code == 0, text
    assert "each meter reading is paired with each device's reading separately" in text
    pairs = pd.read_csv(out, keep_default_na=False)
    assert pairs["sensor"].value_counts().to_dict() == {
        "unnamed subject/G6-1": 60,
        "unnamed subject/G6-2": 60,
        "unnamed subject/Libre": 60,
        "p2/G6-1": 1,  # the same device name, another person: another sensor
    }
    other = pairs[pairs["subject"] == "p2"]
    assert other[["BGM", "REF"]].values.tolist() == [[500.0, 77.0]]
    assert (pairs.loc[pairs["subject"] == "unnamed subject", "BGM"] != 500).all()
    report = tmp_path / "r.json"
    assert run("meter-report", out, "--json", report).exit_code == 0
    data = json.loads(report.read_text())
    assert data["device"] == "cgm"
    assert any("clusters: sensor" in note for note in data["acceptance_notes"])
    assert sum(row["pairs"] for row in data["cg_diva"] if row["range"] != "total") == len(pairs)
    assert max(row["sensors"] for row in data["cg_diva"]) == 4


def test_too_many_pairings_are_refused_before_any_is_tried(tmp_path, monkeypatch):
    from ranking_core.meter.pairs import device_exports

    monkeypatch.setattr(device_exports, "MAX_TRIALS", 10)
    records = [{"type": "sgv", "sgv": 100, "date": T0, "device": f"d{i}"} for i in range(4)]
    records += [{"type": "mbg", "mbg": 100, "date": T0 + i} for i in range(3)]
    result = run("pair", write(tmp_path, records), "-o", tmp_path / "p.csv")
    assert result.exit_code == 1
    assert "make 12 pairings to try, more than the limit of 10" in said(result)
