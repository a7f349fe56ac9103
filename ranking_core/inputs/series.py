"""Glucose series with timestamps: a generic CSV, Dexcom Clarity and LibreView exports.

=========  ===============================================================================
generic    columns ``timestamp`` (e.g. 2024-05-01T08:30:00, an optional UTC offset) and
           ``glucose``; aliases: time, datetime, date time, date/time, sensor time,
           reference time / value, glucose value, sensor glucose, reference glucose, sensor,
           reference, cgm, bg
dexcom     Dexcom Clarity CSV export: ``Timestamp (YYYY-MM-DDThh:mm:ss)``, ``Event Type``,
           ``Glucose Value (mg/dL)`` or ``(mmol/L)``, ``Source Device ID`` (optional); only
           Event Type ``EGV`` rows are glucose readings (the patient, device and alert rows are
           skipped); readings marked "Low" / "High" (beyond the sensor's reporting range)
           carry no value: they are kept apart (:attr:`GlucoseSeries.beyond_times`) so that
           the pairing leaves the reference readings nearest to them unpaired
libre      LibreView CSV export: a title line above the header, then ``Device Timestamp``
           (MM-DD-YYYY HH:MM, DD-MM-YYYY, YYYY-MM-DD; ``/`` ``.`` separators, AM/PM),
           ``Record Type`` (0 = historic reading, 1 = scan; other records skipped),
           ``Historic Glucose mg/dL`` and ``Scan Glucose mg/dL`` (or mmol/L); "LO" / "HI"
           readings are kept apart as Dexcom's "Low" / "High"
=========  ===============================================================================

Times: a date (year first, or day and month first), a time of day to the minute or finer, an
optional AM/PM and an optional UTC offset (−12:00..+14:00; each time converted to UTC with its
own offset, so a file whose offset changes at daylight saving reads exactly; a file has offsets on
every time or on none). The day/month order of dates written with the year last is decided from
the whole file (a number above 12 can only be a day) or given (``dayfirst``); a file where nothing
decides it is refused. Partial dates (2024, 2024-05), dates without a time of day and years
outside 1900..2200 are refused with their lines. Glucose is converted to mg/dL and refused
outside 0..3000 mg/dL. A text file that ends inside its last line (a copy cut short) has that
line refused by the text reader (:func:`~ranking_core.inputs.decoding.cut_last_line`).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import IO

import numpy as np
from numpy.typing import NDArray

from ranking_core.inputs.schema import (
    Field,
    HeaderNotFound,
    InputError,
    Limits,
    Role,
    Schema,
    TableRead,
    name_lines,
)
from ranking_core.inputs.table import read_table
from ranking_core.inputs.units import PHYSICAL_MAX_MGDL

__all__ = [
    "BEYOND_RANGE",
    "SERIES_FORMATS",
    "GlucoseSeries",
    "read_series",
]

SERIES_FORMATS = ("auto", "generic", "dexcom", "libre")
_RANGE = f"glucose is outside 0..{PHYSICAL_MAX_MGDL:g} mg/dL (the physical range)"
_GLUCOSE = Field("glucose", glucose=True, low=0.0, high=PHYSICAL_MAX_MGDL, range_rule=_RANGE)
_ANY_ORDER = ("ymd", "mdy", "dmy")
# readings a sensor export marks instead of a value: below or above its reporting range
BEYOND_RANGE = {"low": "Low", "high": "High", "lo": "Low", "hi": "High"}
_BEYOND = Field("beyond", kind="text")


def _kept_apart(glucose: NDArray[np.object_]) -> tuple[NDArray[np.object_], NDArray[np.object_]]:
    """Glucose cells with Low/High readings set to a placeholder 0 (their rows are kept apart
    by :func:`read_series`, never read as values) and the marks ("Low", "High" or "")."""
    cells = np.asarray(glucose, dtype=object)
    marks = np.array([BEYOND_RANGE.get(str(c).strip().lower(), "") for c in cells], dtype=object)
    return np.where(marks != "", "0", cells), marks


def _dexcom(cells: dict) -> tuple[NDArray[np.bool_], dict]:
    egv = np.array([str(e).strip().upper() == "EGV" for e in cells["event type"]], dtype=bool)
    glucose, marks = _kept_apart(cells["glucose value"])
    return egv, {
        "timestamp": cells["timestamp"],
        "glucose": glucose,
        "device": cells["source device id"],
        "beyond": marks,
    }


def _libre(cells: dict) -> tuple[NDArray[np.bool_], dict]:
    kind = np.array([str(k).strip() for k in cells["record type"]], dtype=object)
    glucose, marks = _kept_apart(
        np.where(kind == "0", cells["historic glucose"], cells["scan glucose"])
    )
    return np.isin(kind, ["0", "1"]), {
        "timestamp": cells["device timestamp"],
        "glucose": glucose,
        "beyond": marks,
    }


SCHEMAS = {
    "dexcom": Schema(
        "Dexcom Clarity export",
        (
            Role("timestamp", kind="text", aliases=("timestamp (yyyy-mm-ddthh:mm:ss)",)),
            Role("event type", kind="text"),
            Role("glucose value", kind="text", glucose=True),
            Role("source device id", kind="text", required=False),
        ),
        fields=(
            Field("timestamp", kind="time"),
            _GLUCOSE,
            Field("device", kind="text"),
            _BEYOND,
        ),
        prepare=_dexcom,
        skip_note="not glucose readings (Event Type other than EGV)",
    ),
    "libre": Schema(
        "LibreView export",
        (
            Role("device timestamp", kind="text"),
            Role("record type", kind="text"),
            Role("historic glucose", kind="text", glucose=True),
            Role("scan glucose", kind="text", glucose=True, required=False),
        ),
        fields=(Field("timestamp", kind="time", date_orders=_ANY_ORDER), _GLUCOSE, _BEYOND),
        prepare=_libre,
        skip_note="not glucose readings (Record Type other than 0 historic, 1 scan)",
    ),
    "generic": Schema(
        "glucose series",
        (
            Role(
                "timestamp",
                kind="time",
                date_orders=_ANY_ORDER,
                aliases=(
                    "time",
                    "datetime",
                    "date time",
                    "date/time",
                    "sensor time",
                    "reference time",
                ),
            ),
            Role(
                "glucose",
                glucose=True,
                low=0.0,
                high=PHYSICAL_MAX_MGDL,
                range_rule=_RANGE,
                aliases=(
                    "value",
                    "glucose value",
                    "sensor glucose",
                    "reference glucose",
                    "sensor",
                    "reference",
                    "cgm",
                    "bg",
                ),
            ),
        ),
    ),
}


@dataclass(frozen=True)
class GlucoseSeries:
    """Glucose readings with times.

    Attributes
    ----------
    times : (n,) datetime64[ns], in UTC when the file gave offsets (see ``table.time_offset``).
    glucose : (n,) mg/dL.
    lines : (n,) the file line (or sheet row) of each reading.
    devices : (n,) the sensor each reading came from (Dexcom ``Source Device ID``), or None
        when the file names none.
    format : "generic", "dexcom" or "libre".
    table : the input layer's result (refused rows, notes, summary).
    beyond_times, beyond_lines, beyond_devices : the readings marked Low or High (no value:
        beyond the sensor's reporting range), kept apart from the readings above.
    """

    times: NDArray[np.datetime64] = field(repr=False)
    glucose: NDArray[np.float64] = field(repr=False)
    lines: NDArray[np.int64] = field(repr=False)
    devices: NDArray[np.object_] | None = field(default=None, repr=False)
    format: str = "generic"
    table: TableRead | None = field(default=None, repr=False, compare=False)
    beyond_times: NDArray[np.datetime64] = field(
        default_factory=lambda: np.array([], dtype="datetime64[ns]"), repr=False
    )
    beyond_lines: NDArray[np.int64] = field(
        default_factory=lambda: np.array([], dtype=np.int64), repr=False
    )
    beyond_devices: NDArray[np.object_] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.times)

    @property
    def aware(self) -> bool:
        """True when the file's times carried a UTC offset (the times are then UTC)."""
        return bool(self.table is not None and self.table.time_offset)


def read_series(
    source: str | os.PathLike | IO[bytes] | bytes,
    format: str = "auto",
    *,
    unit: str | None = None,
    name: str | None = None,
    sheet: str | None = None,
    limits: Limits | None = None,
    unit_option: str = "--unit",
    dayfirst: bool | None = None,
    order_option: str = "--dayfirst or --monthfirst",
) -> GlucoseSeries:
    """Read a glucose series in one of :data:`SERIES_FORMATS` ("auto" tries Dexcom, LibreView,
    then generic, by their headers). ``unit``, ``dayfirst``: as in
    :func:`~ranking_core.inputs.read_table`.

    Raises :class:`~ranking_core.inputs.InputError` when no reading can be kept.
    """
    if format not in SERIES_FORMATS:
        raise InputError(f"format must be one of {', '.join(SERIES_FORMATS)}; got {format!r}")
    if hasattr(source, "read"):  # an upload is read once, for every format tried
        if name is None:
            name = getattr(source, "name", None)
        source = source.read((limits or Limits()).max_bytes + 1)
    tried = ("dexcom", "libre", "generic") if format == "auto" else (format,)
    for kind in tried:
        try:
            table = read_table(
                source,
                SCHEMAS[kind],
                unit=unit,
                name=name,
                sheet=sheet,
                limits=limits,
                unit_option=unit_option,
                dayfirst=dayfirst,
                order_option=order_option,
            )
        except HeaderNotFound as exc:
            if kind != tried[-1]:
                continue
            other = " (nor a Dexcom Clarity or LibreView export)" if format == "auto" else ""
            raise HeaderNotFound(f"{exc}{other}") from exc
        break
    marks = table.values.get("beyond")
    marked = np.zeros(len(table), dtype=bool) if marks is None else marks != ""
    if marked.any():
        table = dataclasses.replace(
            table,
            notes=(
                *table.notes,
                f"{table.source}: {int(marked.sum()):,} reading(s) marked Low or High "
                f"(beyond the sensor's reporting range) in {name_lines(table.lines[marked])}: "
                "no value, never paired; a reference reading nearest to one is left unpaired",
            ),
        )
    devices = table.values.get("device")
    if devices is not None and not any(devices):
        devices = None
    keep = ~marked
    return GlucoseSeries(
        table.values["timestamp"][keep],
        table.values["glucose"][keep],
        table.lines[keep],
        None if devices is None else devices[keep],
        kind,
        table,
        beyond_times=table.values["timestamp"][marked],
        beyond_lines=table.lines[marked],
        beyond_devices=None if devices is None else devices[marked],
    )
