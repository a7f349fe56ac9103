"""CGM and meter readings from one device-platform export, paired the way Nightscout users asked
for a sensor quality report (nightscout/cgm-remote-monitor issue 7064): each meter reading with
the latest CGM reading at most ``before`` minutes (default 5) before it, pairs with a value below
40 or above 600 mg/dL left out and counted; ``BGM`` is the CGM value and ``REF`` the meter's.

Formats, read through the one input layer (:func:`ranking_core.inputs.read_table`, JSON records or
CSV with a header):

* **Nightscout** entries (``entries.json``, or a CSV of the same fields): ``type`` ``sgv`` (CGM,
  ``sgv`` in mg/dL) or ``mbg`` (meter, ``mbg`` in mg/dL), ``date`` in epoch milliseconds (UTC).
* **Tidepool** data model: ``type`` ``cbg`` (CGM) or ``smbg`` (meter), ``value`` in ``units``
  (``mmol/L``, converted with 18.016 mg/dL per mmol/L, or ``mg/dL``), ``time`` in ISO 8601 UTC.

Other record types are skipped and counted; a record with a missing or malformed value is
refused by its record number.
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
    Field,
    InputError,
    Limits,
    Role,
    Schema,
    TableRead,
    read_table,
)
from ranking_core.meter.pairs.pairing import iso_times

__all__ = ["EXPORT_FORMATS", "DevicePairs", "pair_export", "read_export"]

REPORTABLE = (40.0, 600.0)  # mg/dL: pairs with a value outside are left out (issue 7064's rule)
BEFORE_MINUTES = 5.0


def _nightscout(cells: dict) -> tuple[NDArray[np.bool_], dict]:
    kind = np.array([str(k).strip().lower() for k in cells["type"]], dtype=object)
    sgv = cells.get("sgv", np.full(kind.size, "", dtype=object))
    mbg = cells.get("mbg", np.full(kind.size, "", dtype=object))
    return np.isin(kind, ["sgv", "mbg"]), {
        "time": cells["date"],
        "kind": np.where(kind == "sgv", "cgm", "meter"),
        "glucose": np.where(kind == "sgv", sgv, mbg),
        "units": np.full(kind.size, "mg/dL", dtype=object),
    }


def _tidepool(cells: dict) -> tuple[NDArray[np.bool_], dict]:
    kind = np.array([str(k).strip().lower() for k in cells["type"]], dtype=object)
    return np.isin(kind, ["cbg", "smbg"]), {
        "time": cells["time"],
        "kind": np.where(kind == "cbg", "cgm", "meter"),
        "glucose": cells["value"],
        "units": cells["units"],
    }


_VALUE = Field(
    "glucose",
    low=0.0,
    high=PHYSICAL_MAX_MGDL * 1.0,
    range_rule=f"value is outside 0..{PHYSICAL_MAX_MGDL:g}",
)
EXPORT_FORMATS = {
    "nightscout": Schema(
        "Nightscout entries",
        (
            Role("type", kind="text"),
            Role("date", kind="text", aliases=("mills",)),
            Role("sgv", kind="text", required=False),
            Role("mbg", kind="text", required=False),
        ),
        fields=(
            Field("time", low=0.0),
            Field("kind", kind="text"),
            _VALUE,
            Field("units", kind="text"),
        ),
        prepare=_nightscout,
        skip_note="neither CGM (sgv) nor meter (mbg) entries",
    ),
    "tidepool": Schema(
        "Tidepool data export",
        (
            Role("type", kind="text"),
            Role("time", kind="text"),
            Role("value", kind="text"),
            Role("units", kind="text"),
        ),
        fields=(
            Field("time", kind="time"),
            Field("kind", kind="text"),
            _VALUE,
            Field("units", kind="text"),
        ),
        prepare=_tidepool,
        skip_note="neither CGM (cbg) nor meter (smbg) records",
    ),
}


@dataclass(frozen=True)
class DevicePairs:
    """The pairs (``frame``: BGM, REF, reference_time, sensor_time, delta_seconds, record) and
    what happened: ``messages`` in the order to print them."""

    frame: pd.DataFrame
    messages: tuple[str, ...]


def read_export(
    source: str | os.PathLike | IO[bytes], name: str | None = None, limits: Limits | None = None
) -> tuple[str, TableRead]:
    """The export's format ("nightscout" or "tidepool", tried in that order) and its readings."""
    errors = []
    for format_name, schema in EXPORT_FORMATS.items():
        try:
            if hasattr(source, "seek"):
                source.seek(0)
            return format_name, read_table(source, schema, unit="mg/dL", name=name, limits=limits)
        except InputError as exc:
            errors.append(str(exc))
    raise InputError("not a Nightscout or Tidepool export: " + " / ".join(errors[:2]))


def _times(format_name: str, table: TableRead) -> NDArray[np.datetime64]:
    if format_name == "nightscout":  # epoch milliseconds, UTC
        return np.round(table.values["time"]).astype(np.int64).astype("datetime64[ms]")
    return table.values["time"].astype("datetime64[ms]")


def _mgdl(table: TableRead) -> NDArray[np.float64]:
    units = np.array([str(u).strip().lower() for u in table.values["units"]], dtype=object)
    factor = np.where(np.char.startswith(units.astype(str), "mmol"), MGDL_PER_MMOLL, 1.0)
    return table.values["glucose"] * factor


def pair_export(
    source: str | os.PathLike | IO[bytes],
    before_minutes: float = BEFORE_MINUTES,
    name: str | None = None,
    limits: Limits | None = None,
) -> DevicePairs:
    """Read an export and pair each meter reading with the latest CGM reading at most
    ``before_minutes`` before it (0 < before ≤ 60 min)."""
    if not 0 < before_minutes <= 60:
        raise InputError(f"--before: more than 0 and at most 60 minutes; got {before_minutes:g}")
    format_name, table = read_export(source, name, limits)
    times, glucose = _times(format_name, table), _mgdl(table)
    record = table.lines
    kind = np.asarray(table.values["kind"], dtype=object)
    cgm, meter = kind == "cgm", kind == "meter"
    messages = [
        f"{table.source}: read as a {EXPORT_FORMATS[format_name].name} export",
        *table.messages(),
    ]
    if not cgm.any() or not meter.any():
        raise InputError(
            f"{table.source}: needs both CGM and meter readings; found "
            f"{int(cgm.sum())} CGM and {int(meter.sum())} meter readings"
        )
    order = np.argsort(times[cgm], kind="stable")
    c_time, c_value = times[cgm][order], glucose[cgm][order]
    m_time, m_value, m_record = times[meter], glucose[meter], record[meter]
    at = np.searchsorted(c_time, m_time, side="right") - 1
    found = at >= 0
    gap = np.full(m_time.size, np.inf)
    gap[found] = (m_time[found] - c_time[at[found]]) / np.timedelta64(1, "s") / 60
    paired = found & (gap <= before_minutes)
    sensor = np.where(paired, c_value[np.maximum(at, 0)], np.nan)
    low, high = REPORTABLE
    outside = paired & ((sensor < low) | (sensor > high) | (m_value < low) | (m_value > high))
    keep = paired & ~outside
    messages.append(
        f"{int(meter.sum()):,} meter readings, {int(cgm.sum()):,} CGM readings: "
        f"{int(keep.sum()):,} paired with the latest CGM reading at most {before_minutes:g} min "
        f"before; {int((~paired).sum()):,} without one; {int(outside.sum()):,} left out with a "
        f"value below {low:g} or above {high:g} mg/dL"
    )
    s_time = c_time[np.maximum(at, 0)]
    frame = pd.DataFrame(
        {
            "BGM": sensor[keep],
            "REF": m_value[keep],
            "reference_time": iso_times(m_time[keep], utc=True),
            "sensor_time": iso_times(s_time[keep], utc=True),
            "delta_seconds": ((s_time[keep] - m_time[keep]) / np.timedelta64(1, "s")).astype(float),
            "record": m_record[keep],
        }
    )
    return DevicePairs(frame, tuple(messages))
