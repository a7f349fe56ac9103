"""CGM and meter readings from one device-platform export, paired the way Nightscout users asked
for a sensor quality report (nightscout/cgm-remote-monitor issue 7064): each meter reading with
the latest CGM reading at most ``before`` minutes (default 5) before it, pairs with a value below
40 or above 600 mg/dL left out and counted; ``BGM`` is the CGM value and ``REF`` the meter's.

Formats, read through the one input layer (:func:`ranking_core.inputs.read_table`, JSON records or
CSV with a header), one record a row numbered from 1:

* **Nightscout** entries (``entries.json``, or a CSV of the same fields): ``type`` ``sgv`` (CGM,
  ``sgv`` in mg/dL) or ``mbg`` (meter, ``mbg`` in mg/dL), ``date`` in epoch milliseconds (UTC),
  ``device`` the uploading device.
* **Tidepool** data model: ``type`` ``cbg`` (CGM) or ``smbg`` (meter), ``value`` in ``units``
  (``mmol/L``, converted with 18.016 mg/dL per mmol/L, or ``mg/dL``; any other unit is refused by
  record), ``time`` in ISO 8601 UTC, ``deviceId`` the device.

Both may carry a ``subject`` (also ``patient``, ``participant``, ``userId``) when exports of
several people are joined; records naming none are one subject of their own ("unnamed
subject" in the output), never paired with a named subject's readings. Every record is
accounted for: paired, skipped (another type), left out with its reason and count, or refused
by its record number with the rule it breaks.

The pairing rule, applied to each meter reading and each CGM device of the same subject (nothing
is decided by record order):

* records repeating an earlier record's reading (type, subject, device, time and value) count
  once, and are said;
* the CGM readings of one device are a sensor: a meter reading is paired with the latest reading
  of each CGM device of its subject at most ``before`` minutes before it, one pair per device,
  the device named in the ``sensor`` column (so the acceptance bounds cluster by it and CG-DIVA
  compares sensors; ``subject/device`` when the export names subjects, so that two people's
  devices of one name stay two sensors); a device without a reading in the window gives no
  pair for it;
* a device's time holding two different values cannot be paired (as in
  :mod:`~ranking_core.meter.pairs.pairing`): a meter reading whose latest reading of that device
  is at such a time is left unpaired for it and counted;
* Nightscout ``date`` is epoch milliseconds within the years 1900..2200; a value that is an epoch
  *seconds* count of those years (below 7,258,118,400, which read as milliseconds is
  January–March 1970) is read as seconds, with a warning naming the records.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import IO

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.inputs import (
    MGDL_PER_MMOLL,
    PHYSICAL_MAX_MGDL,
    UNITS,
    Field,
    HeaderNotFound,
    InputError,
    Limits,
    Role,
    Schema,
    TableRead,
    name_lines,
    quote,
    read_table,
)
from ranking_core.inputs.times import YEARS
from ranking_core.meter.pairs.pairing import iso_times
from ranking_core.validation import counted

__all__ = [
    "EXPORT_FORMATS",
    "MAX_TRIALS",
    "UNNAMED_DEVICE",
    "UNNAMED_SUBJECT",
    "DevicePairs",
    "pair_export",
    "read_export",
]

REPORTABLE = (40.0, 600.0)  # mg/dL: pairs with a value outside are left out (issue 7064's rule)
BEFORE_MINUTES = 5.0
UNNAMED_DEVICE = "unnamed device"  # the sensor column of CGM records naming no device
# the subject column of readings naming none, when others do (they are one subject of their own)
UNNAMED_SUBJECT = "unnamed subject"
# meter readings × CGM devices of their subject: the pairings tried, bounded before any is
MAX_TRIALS = 5_000_000
# epoch milliseconds of 1900-01-01 and 2200-12-31 (the years every time reader accepts)
_MS_RANGE = (
    float(np.datetime64(f"{YEARS[0]}-01-01", "ms").astype(np.int64)),
    float(np.datetime64(f"{YEARS[1] + 1}-01-01", "ms").astype(np.int64)) - 1,
)
_SECONDS_RANGE = (_MS_RANGE[0] / 1000, _MS_RANGE[1] / 1000)  # the same years in epoch seconds


def _nightscout(cells: dict) -> tuple[NDArray[np.bool_], dict]:
    kind = np.array([str(k).strip().lower() for k in cells["type"]], dtype=object)
    return np.isin(kind, ["sgv", "mbg"]), {
        "time": cells["date"],
        "kind": np.where(kind == "sgv", "cgm", "meter"),
        "glucose": np.where(kind == "sgv", cells["sgv"], cells["mbg"]),
        "units": np.full(kind.size, "mg/dL", dtype=object),
        "sensor": cells["device"],
        "subject": cells["subject"],
    }


def _tidepool(cells: dict) -> tuple[NDArray[np.bool_], dict]:
    kind = np.array([str(k).strip().lower() for k in cells["type"]], dtype=object)
    return np.isin(kind, ["cbg", "smbg"]), {
        "time": cells["time"],
        "kind": np.where(kind == "cbg", "cgm", "meter"),
        "glucose": cells["value"],
        "units": cells["units"],
        "sensor": cells["deviceId"],
        "subject": cells["subject"],
    }


_VALUE = Field(
    "glucose",
    low=0.0,
    high=PHYSICAL_MAX_MGDL * 1.0,
    range_rule=f"glucose is outside 0..{PHYSICAL_MAX_MGDL:g}",
)
_SUBJECT = Role(
    "subject", kind="text", required=False, aliases=("patient", "participant", "userid", "_userid")
)
_TEXT = (Field("kind", kind="text"), _VALUE, Field("units", kind="text", choices=UNITS))
_WHO = (Field("sensor", kind="text"), Field("subject", kind="text"))
EXPORT_FORMATS = {
    "nightscout": Schema(
        "Nightscout entries",
        (
            Role("type", kind="text"),
            Role("date", kind="text", aliases=("mills",)),
            Role("sgv", kind="text", required=False),
            Role("mbg", kind="text", required=False),
            Role("device", kind="text", required=False),
            _SUBJECT,
        ),
        fields=(
            Field(
                "time",
                low=_MS_RANGE[0],
                high=_MS_RANGE[1],
                range_rule=f"date is outside the years {YEARS[0]}..{YEARS[1]} (epoch milliseconds)",
            ),
            *_TEXT,
            *_WHO,
        ),
        prepare=_nightscout,
        skip_note="neither CGM (sgv) nor meter (mbg) entries",
    ),
    "tidepool": Schema(
        "Tidepool data",
        (
            Role("type", kind="text"),
            Role("time", kind="text"),
            Role("value", kind="text"),
            Role("units", kind="text"),
            Role("deviceId", kind="text", required=False, aliases=("device",)),
            _SUBJECT,
        ),
        fields=(Field("time", kind="time"), *_TEXT, *_WHO),
        prepare=_tidepool,
        skip_note="neither CGM (cbg) nor meter (smbg) records",
    ),
}


@dataclass(frozen=True)
class DevicePairs:
    """The pairs (``frame``: BGM, REF, reference_time, sensor_time, delta_seconds, sensor,
    subject when the export names subjects, record: the meter reading's record number) and what
    happened: ``messages`` in the order to print them."""

    frame: pd.DataFrame
    messages: tuple[str, ...]


def read_export(
    source: str | os.PathLike | IO[bytes], name: str | None = None, limits: Limits | None = None
) -> tuple[str, TableRead]:
    """The export's format ("nightscout" or "tidepool": the first whose fields the records
    name) and its readings. A file that cannot be read at all is refused once, in one sentence."""
    errors = []
    for format_name, schema in EXPORT_FORMATS.items():
        try:
            if hasattr(source, "seek"):
                source.seek(0)
            return format_name, read_table(source, schema, unit="mg/dL", name=name, limits=limits)
        except HeaderNotFound as exc:
            errors.append(str(exc))
        except InputError as exc:  # the file itself (size, JSON, encoding) or its records
            raise InputError(f"not a readable Nightscout or Tidepool export: {exc}") from None
    raise InputError("not a Nightscout or Tidepool export: " + " / ".join(errors[:2]))


@dataclass(frozen=True)
class _Readings:
    """The export's readings, one entry each: time (ns since 1970, UTC), glucose (mg/dL), CGM
    or meter, device, subject and record number."""

    ns: NDArray[np.int64]
    glucose: NDArray[np.float64]
    cgm: NDArray[np.bool_]
    device: NDArray[np.object_]
    subject: NDArray[np.object_]
    record: NDArray[np.int64]

    def take(self, keep: NDArray[np.bool_]) -> _Readings:
        return _Readings(
            self.ns[keep],
            self.glucose[keep],
            self.cgm[keep],
            self.device[keep],
            self.subject[keep],
            self.record[keep],
        )


def _readings(format_name: str, table: TableRead, messages: list[str]) -> _Readings:
    """The table's readings in ns and mg/dL; Nightscout dates that are epoch seconds read as
    seconds, with a warning."""
    values = table.values
    if format_name == "nightscout":
        ms = values["time"]
        seconds = (ms >= _SECONDS_RANGE[0]) & (ms <= _SECONDS_RANGE[1])
        if seconds.any():
            messages.append(
                f"warning: date looks like epoch seconds, not milliseconds, in "
                f"{name_lines(table.lines[seconds], 'record')} (e.g. {ms[seconds][0]:.0f}; rule: "
                f"a value of at most {_SECONDS_RANGE[1]:,.0f} is the years "
                f"{YEARS[0]}..{YEARS[1]} in seconds, January–March 1970 in milliseconds); "
                "read as seconds"
            )
        ms = np.where(seconds, ms * 1000, ms)
        ns = np.round(ms).astype(np.int64) * 1_000_000
    else:
        ns = values["time"].astype("datetime64[ns]").astype(np.int64)
    mmol = values["units"] == "mmol/L"
    sensor = np.array([d or UNNAMED_DEVICE for d in values["sensor"]], dtype=object)
    return _Readings(
        ns,
        np.where(mmol, values["glucose"] * MGDL_PER_MMOLL, values["glucose"]),
        np.asarray(values["kind"] == "cgm", dtype=bool),
        sensor,
        np.asarray(values["subject"], dtype=object),
        table.lines,
    )


def _once(readings: _Readings, messages: list[str]) -> _Readings:
    """The readings without those that repeat an earlier record's reading (type, subject,
    device, time and value), the repeats said."""
    frame = pd.DataFrame(
        {
            "cgm": readings.cgm,
            "subject": readings.subject,
            "device": readings.device,
            "ns": readings.ns,
            "glucose": readings.glucose,
        }
    )
    repeat = frame.duplicated().to_numpy()
    if not repeat.any():
        return readings
    messages.append(
        f"{counted(int(repeat.sum()), 'record repeats', 'records repeat')} an earlier record's "
        "reading (same type, subject, device, time and value; rule: one reading counts once) "
        f"in {name_lines(readings.record[repeat], 'record')}; counted once"
    )
    return readings.take(~repeat)


def _conflicts(cgm: _Readings, messages: list[str]) -> None:
    """Say the CGM times of one device that hold two different values."""
    frame = pd.DataFrame({"s": cgm.subject, "d": cgm.device, "t": cgm.ns})
    twice = frame.duplicated(keep=False).to_numpy()
    if not twice.any():
        return
    first = twice & (frame == frame[twice].iloc[0]).all(axis=1).to_numpy()
    times = int(frame[twice].drop_duplicates().shape[0])
    shown = " and ".join(f"{v:g}" for v in np.unique(cgm.glucose[first])[:2])
    messages.append(
        f"{counted(times, 'CGM time holds', 'CGM times hold')} two different values of one "
        f"device (e.g. {shown} mg/dL in {name_lines(np.sort(cgm.record[first]), 'record')}; "
        "rule: which one holds is not known, and record order does not decide); a meter "
        "reading whose latest reading of that device is at one of them is left unpaired"
    )


@dataclass(frozen=True)
class _Tried:
    """Each meter reading tried with each CGM device of its subject: the meter index, the
    device's code and, in the CGM readings sorted by (device, time), the latest reading at or
    before the meter reading (−1 if none), and whether its time holds two values."""

    meter: NDArray[np.intp]
    device: NDArray[np.intp]
    at: NDArray[np.intp]
    conflict: NDArray[np.bool_]


def _try_devices(cgm: _Readings, meter: _Readings, label: str) -> tuple[_Tried, NDArray[np.intp]]:
    """Every (meter reading, CGM device of its subject) with the device's latest reading at or
    before it, vectorised: O((n + t) log n) for n readings and t pairings tried (at most
    :data:`MAX_TRIALS`, checked first), and the CGM readings' order by (device, time)."""
    subjects, s_codes = np.unique(
        np.concatenate([cgm.subject, meter.subject]).astype(str), return_inverse=True
    )
    c_subject, m_subject = s_codes[: len(cgm.ns)], s_codes[len(cgm.ns) :]
    pairs = pd.DataFrame({"s": c_subject, "d": cgm.device})
    groups = pairs.drop_duplicates().sort_values(["s", "d"]).to_numpy()  # (subject, device)
    g_subject = groups[:, 0].astype(np.intp)
    per_subject = np.bincount(g_subject, minlength=len(subjects))
    first_group = np.r_[0, np.cumsum(per_subject)[:-1]]
    counts = per_subject[m_subject]
    tries = int(counts.sum())
    if tries > MAX_TRIALS:
        raise InputError(
            f"{label}: {len(meter.ns):,} meter readings × the CGM devices of their subject "
            f"({len(groups):,} devices) make {tries:,} pairings to try, more than the limit of "
            f"{MAX_TRIALS:,} (split the export by subject or device)"
        )
    key = pd.MultiIndex.from_arrays([g_subject, groups[:, 1]])
    c_group = key.get_indexer(pd.MultiIndex.from_arrays([c_subject, cgm.device]))
    ranks = np.unique(np.concatenate([cgm.ns, meter.ns]), return_inverse=True)[1]
    span = int(ranks.max()) + 1
    c_key = c_group.astype(np.int64) * span + ranks[: len(cgm.ns)]
    order = np.argsort(c_key, kind="stable")
    c_key = c_key[order]
    m_index = np.repeat(np.arange(len(meter.ns)), counts)
    start = np.repeat(first_group[m_subject] - np.r_[0, np.cumsum(counts)[:-1]], counts)
    device = start + np.arange(tries)
    query = device.astype(np.int64) * span + ranks[len(cgm.ns) :][m_index]
    at = np.searchsorted(c_key, query, side="right") - 1
    found = (at >= 0) & (c_key[np.maximum(at, 0)] // span == device)
    conflict = found & (at >= 1) & (c_key[np.maximum(at - 1, 0)] == c_key[np.maximum(at, 0)])
    return _Tried(m_index, device, np.where(found, at, -1), conflict), order


def pair_export(
    source: str | os.PathLike | IO[bytes],
    before_minutes: float = BEFORE_MINUTES,
    name: str | None = None,
    limits: Limits | None = None,
) -> DevicePairs:
    """Read an export and pair each meter reading with the latest reading of each CGM device of
    its subject at most ``before_minutes`` before it (0 < before ≤ 60 min), by the rule in the
    module notes."""
    if not 0 < before_minutes <= 60:
        raise InputError(f"--before: more than 0 and at most 60 minutes; got {before_minutes:g}")
    format_name, table = read_export(source, name, limits)
    messages = [
        f"{table.source}: read as a {EXPORT_FORMATS[format_name].name} export",
        *table.messages(),
    ]
    readings = _once(_readings(format_name, table, messages), messages)
    cgm, meter = readings.take(readings.cgm), readings.take(~readings.cgm)
    if not len(cgm.ns) or not len(meter.ns):
        raise InputError(
            f"{table.source}: needs both CGM and meter readings; found "
            f"{len(cgm.ns):,} CGM and {len(meter.ns):,} meter readings"
        )
    _conflicts(cgm, messages)
    tried, order = _try_devices(cgm, meter, table.source)
    c_ns, c_value = cgm.ns[order], cgm.glucose[order]
    c_device = cgm.device[order]
    at = np.maximum(tried.at, 0)
    gap = meter.ns[tried.meter] - c_ns[at]
    window = tried.at >= 0
    window &= gap <= round(before_minutes * 60e9)
    clear = window & ~tried.conflict
    low, high = REPORTABLE
    bgm, ref = c_value[at], meter.glucose[tried.meter]
    outside = clear & ((bgm < low) | (bgm > high) | (ref < low) | (ref > high))
    keep = clear & ~outside
    devices = np.unique(c_device)
    messages.append(_device_note(devices, cgm.subject))
    untried = len(meter.ns) - len(np.unique(tried.meter))
    messages.append(
        f"{counted(len(meter.ns), 'meter reading')}, {counted(len(cgm.ns), 'CGM reading')}, "
        f"{counted(len(tried.meter), 'meter reading–CGM device pairing')} tried (each "
        "meter reading with each CGM device of its subject): "
        f"{int(keep.sum()):,} paired with the device's latest reading at most "
        f"{before_minutes:g} min before; {int((~window).sum()):,} without one; "
        f"{int((window & tried.conflict).sum()):,} left unpaired (that CGM time holds two "
        f"values); {int(outside.sum()):,} left out with a value below {low:g} or above "
        f"{high:g} mg/dL"
        + (f"; {untried:,} meter readings of a subject with no CGM readings" if untried else "")
    )
    return DevicePairs(_frame(tried, keep, meter, c_ns, c_value, c_device), tuple(messages))


def _device_note(devices: NDArray[np.object_], subjects: NDArray[np.object_]) -> str:
    """How the CGM devices were paired, in one sentence."""
    named = ", ".join(quote(str(d)) for d in devices[:5]) + (
        f" and {len(devices) - 5:,} more" if len(devices) > 5 else ""
    )
    people = len(set(subjects.tolist()))
    who = f" of {people:,} subjects (a meter reading with its own subject's only)" * (people > 1)
    if len(devices) == 1:
        return f"CGM device: {named}{who}; named in the sensor column"
    return (
        f"CGM devices: {len(devices):,} ({named}){who}; each meter reading is paired with "
        "each device's reading separately (one pair per device, named in the sensor column)"
    )


def _frame(
    tried: _Tried,
    keep: NDArray[np.bool_],
    meter: _Readings,
    c_ns: NDArray[np.int64],
    c_value: NDArray[np.float64],
    c_device: NDArray[np.object_],
) -> pd.DataFrame:
    """The kept pairs in meter time order (then record, then sensor)."""
    m, at = tried.meter[keep], tried.at[keep]
    m_time = meter.ns[m].astype("datetime64[ns]")
    s_time = c_ns[at].astype("datetime64[ns]")
    frame = pd.DataFrame(
        {
            "BGM": c_value[at],
            "REF": meter.glucose[m],
            "reference_time": iso_times(m_time, utc=True),
            "sensor_time": iso_times(s_time, utc=True),
            "delta_seconds": (c_ns[at] - meter.ns[m]) / 1e9,
            "sensor": c_device[at],
            "subject": meter.subject[m],
            "record": meter.record[m],
        }
    )
    if (frame["subject"] != "").any():
        frame["subject"] = frame["subject"].replace("", UNNAMED_SUBJECT)
        # one person's sensor is never another's cluster, whatever the devices are called
        frame["sensor"] = frame["subject"] + "/" + frame["sensor"]
    else:
        frame = frame.drop(columns="subject")
    order = np.lexsort((frame["sensor"].astype(str), frame["record"], meter.ns[m]))
    return frame.iloc[order].reset_index(drop=True)
