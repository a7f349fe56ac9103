"""Sensor-to-reference pairing: each reference reading with the sensor reading nearest in time.

Rule (as in CGM accuracy studies): shift the sensor times by ``lag`` minutes; pair each reference
reading with the sensor reading nearest to it in time within ±``window`` minutes (inclusive); on a
tie the earlier sensor reading wins; a reference reading with no sensor reading in the window is
left out and counted. A sensor reading may be paired with several reference readings.
O((n + m) log n) with ``np.searchsorted``. Bounds: 0 < window ≤ 24 h, |lag| ≤ 24 h (checked
before any arithmetic).

Nothing is decided by row order:

* sensor readings repeating a time with the same value count once; a time holding two values
  cannot be paired, and a reference whose nearest sensor time is one of them is refused;
* readings of several sensor devices (Dexcom ``Source Device ID``) that overlap in time are
  refused unless one device is chosen; devices in sequence are pooled;
* without UTC offsets, a clock that goes back (the end of daylight saving) shows some wall-clock
  times twice: a reference reading in those times (or within the window of them) is refused as
  ambiguous; with offsets every time is an instant and nothing is ambiguous;
* reference readings sharing one time are noted;
* a sensor reading marked Low or High (beyond the sensor's reporting range, no value) still
  takes part in the nearest-in-time rule: a reference reading whose nearest sensor reading is
  one of them is left unpaired and counted, never paired with a reading further away; a
  reference reading marked Low or High has no value and is counted as left out.

The pairing's messages state each of these in one line.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.inputs import InputError, name_lines, quote
from ranking_core.inputs.series import GlucoseSeries
from ranking_core.meter.pairs.readings import MeterPairs, pairs_from_frame
from ranking_core.validation import counted

__all__ = [
    "MAX_MINUTES",
    "PAIRED_COLUMNS",
    "Pairing",
    "RepeatedTimes",
    "check_window_lag",
    "nearest_in_window",
    "pair_series",
    "repeated_times",
]

PAIRED_COLUMNS = ("BGM", "REF", "reference_time", "sensor_time", "delta_seconds")
_NS_PER_MINUTE = 60 * 10**9


def nearest_in_window(
    sensor_ns: NDArray[np.int64], reference_ns: NDArray[np.int64], window_ns: int
) -> NDArray[np.intp]:
    """For each reference time, the index of the nearest sensor time within ±``window_ns``
    (ties → the earlier sensor time, then the lower index), or −1.

    ``sensor_ns`` and ``reference_ns`` are integer times (e.g. nanoseconds), any order.
    """
    sensor_ns = np.asarray(sensor_ns, dtype=np.int64)
    reference_ns = np.asarray(reference_ns, dtype=np.int64)
    out = np.full(len(reference_ns), -1, dtype=np.intp)
    if len(sensor_ns) == 0 or len(reference_ns) == 0:
        return out
    order = np.argsort(sensor_ns, kind="stable")
    times = sensor_ns[order]
    right = np.searchsorted(times, reference_ns, side="left")  # first sensor time ≥ reference
    left = right - 1  # last sensor time < reference
    has_right = right < len(times)
    has_left = left >= 0
    d_right = np.where(
        has_right, times[np.minimum(right, len(times) - 1)] - reference_ns, np.iinfo(np.int64).max
    )
    d_left = np.where(has_left, reference_ns - times[np.maximum(left, 0)], np.iinfo(np.int64).max)
    # the earliest of equal sensor times: searchsorted on the left candidate's own time
    left_first = np.searchsorted(times, times[np.maximum(left, 0)], side="left")
    use_left = has_left & (d_left <= d_right)
    chosen = np.where(use_left, left_first, right)
    distance = np.where(use_left, d_left, d_right)
    ok = (has_left | has_right) & (distance <= window_ns)
    out[ok] = order[chosen[ok]]
    return out


MAX_MINUTES = 24 * 60  # |lag| and window: at most a day
_BACK = 15 * _NS_PER_MINUTE  # a clock that goes back by 15 min to 3 h: a daylight-saving change
_BACK_MAX = 180 * _NS_PER_MINUTE


def check_window_lag(
    window: float, lag: float, names: tuple[str, str] = ("window", "lag")
) -> tuple[float, float]:
    """``window`` in (0, 1440] and ``lag`` in [−1440, 1440] minutes (a day), as floats;
    ValueError naming the bound (and the option, ``names``) otherwise. Checked before any time
    arithmetic."""
    try:
        window, lag = float(window), float(lag)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(
            f"window and lag must be numbers of minutes; got {window!r}, {lag!r}"
        ) from exc
    if not 0 < window <= MAX_MINUTES:
        raise ValueError(
            f"{names[0]} must be more than 0 and at most {MAX_MINUTES:,} minutes "
            f"(24 h); got {window:g}"
        )
    if not -MAX_MINUTES <= lag <= MAX_MINUTES:
        raise ValueError(
            f"{names[1]} must be between -{MAX_MINUTES:,} and +{MAX_MINUTES:,} "
            f"minutes (±24 h); got {lag:g}"
        )
    return window, lag


@dataclass(frozen=True)
class RepeatedTimes:
    """Wall-clock times a series shows twice: its clock goes back (the end of daylight saving)
    after ``line``, from ``high`` to ``low`` (nanoseconds, naive times)."""

    low: int
    high: int
    line: int


def repeated_times(
    times_ns: NDArray[np.int64], lines: NDArray[np.int64]
) -> tuple[list[RepeatedTimes], bool]:
    """The spans of repeated wall-clock times of a series in file order (oldest or newest
    first), and whether the file is in time order (at most 1 % of steps go against it; only
    then can a clock that goes back be told from disorder).

    A reading more than 15 min behind the latest time before it (in the file's direction),
    where the latest time is at most 3 h ahead, is in a repeated span; each span runs from the
    earliest such reading to the latest time before the clock went back.
    """
    if len(times_ns) < 3:
        return [], True
    steps = np.diff(times_ns)
    forward = (steps > 0).sum() >= (steps < 0).sum()
    t = times_ns if forward else times_ns[::-1]
    at = lines if forward else lines[::-1]
    ordered = (np.diff(t) < 0).sum() <= 0.01 * (len(t) - 1) + 2
    latest = np.maximum.accumulate(t)
    behind = (t < latest - _BACK) & (t >= latest - _BACK_MAX)
    if not ordered or not behind.any():
        return [], ordered
    spans = (
        pd.DataFrame(
            {"latest": latest[behind], "t": t[behind], "line": at[np.flatnonzero(behind) - 1]}
        )
        .groupby("latest", sort=True)
        .agg(low=("t", "min"), line=("line", "first"))
    )
    return [
        RepeatedTimes(int(low), int(high), int(line))
        for high, low, line in zip(
            spans.index.to_numpy(), spans["low"].to_numpy(), spans["line"].to_numpy(), strict=True
        )
    ], ordered


def _clock_text(ns: int) -> str:
    return str(np.datetime64(ns, "ns").astype("datetime64[m]")).replace("T", " ")


def iso_times(times: NDArray[np.datetime64], utc: bool) -> NDArray[np.str_]:
    """ISO 8601 text to the second, or to the finest sub-second digit the times need."""
    ns = times.astype("datetime64[ns]").astype(np.int64)
    steps: tuple[tuple[Literal["s", "ms", "us"], int], ...] = (
        ("s", 10**9),
        ("ms", 10**6),
        ("us", 10**3),
    )
    unit: Literal["s", "ms", "us", "ns"] = next(
        (u for u, step in steps if not np.any(ns % step)), "ns"
    )
    text = np.datetime_as_string(times.astype("datetime64[ns]"), unit=unit)
    return np.char.add(text, "+00:00") if utc else text


@dataclass(frozen=True)
class Pairing:
    """The paired readings and how many were paired.

    Attributes
    ----------
    pairs : columns BGM (the sensor value, mg/dL), REF (mg/dL), reference_time, sensor_time
        (ISO 8601; UTC with "+00:00" when the files gave offsets), delta_seconds (sensor time
        + lag − reference time, the distance the rule minimises), in reference-time order.
    n_sensor, n_reference : readings kept from each file.
    n_unpaired : reference readings with no sensor reading in the window (left out).
    n_ambiguous : reference readings refused because the sensor reading they would pair with
        cannot be told (a repeated wall-clock time, or one sensor time with two values).
    n_beyond : reference readings left unpaired because their nearest sensor reading is marked
        Low or High (beyond the sensor's range), or because they are so marked themselves.
    window, lag : minutes.
    messages : the summary lines, then each file's refusals and notes.
    """

    pairs: pd.DataFrame = field(repr=False)
    n_sensor: int
    n_reference: int
    n_unpaired: int
    window: float
    lag: float
    messages: tuple[str, ...] = ()
    n_ambiguous: int = 0
    n_beyond: int = 0

    def meter_pairs(self) -> MeterPairs:
        """The pairs for :func:`~ranking_core.meter.meter_report` (rows numbered from 1), with
        their reference and sensor times, as a file written by ``riskgrid pair`` gives them: the
        acceptance profiles then judge rate-of-change agreement (iCGM J/K)."""
        return pairs_from_frame(
            self.pairs[["BGM", "REF", "reference_time", "sensor_time"]],
            "paired readings",
            first_row=1,
        )


def pair_series(
    sensor: GlucoseSeries,
    reference: GlucoseSeries,
    window: float = 5.0,
    lag: float = 0.0,
    device: str | None = None,
    device_option: str = "--device",
) -> Pairing:
    """Pair ``reference`` readings with ``sensor`` readings by the rule in the module notes.

    ``window`` (minutes, 0 < window ≤ 1440) and ``lag`` (minutes, |lag| ≤ 1440, added to the
    sensor times). ``device``: pair only this sensor device's readings (Dexcom Source Device
    ID). Raises :class:`~ranking_core.inputs.InputError` when one file's times carry a UTC offset
    and the other's do not, or when several sensor devices' readings overlap in time and no
    ``device`` is chosen (named by ``device_option``). Reference readings that cannot be placed
    are refused and named (see :class:`Pairing`).
    """
    window, lag = check_window_lag(window, lag)
    if sensor.aware != reference.aware:
        with_offset, without = ("sensor", "reference") if sensor.aware else ("reference", "sensor")
        raise InputError(
            f"the {with_offset} times carry a UTC offset and the {without} times "
            "do not; they cannot be compared (give both files offsets, or neither)"
        )
    notes: list[str] = []
    keep = _device_rows(sensor, device, device_option, notes)
    lag_ns = round(lag * _NS_PER_MINUTE)  # |lag| ≤ 1 day, times within 1900..2200: no overflow
    window_ns = round(window * _NS_PER_MINUTE)
    sensor_rows = np.flatnonzero(keep)
    sensor_ns = sensor.times[sensor_rows].astype("datetime64[ns]").astype(np.int64) + lag_ns
    sensor_glucose = sensor.glucose[sensor_rows]
    sensor_lines = sensor.lines[sensor_rows]
    sensor_rows, conflicting = _repeated_sensor_times(
        sensor_ns, sensor_glucose, sensor_lines, sensor_rows, notes
    )
    sensor_ns = sensor.times[sensor_rows].astype("datetime64[ns]").astype(np.int64) + lag_ns
    reference_order = np.argsort(reference.times, kind="stable")
    reference_ns = reference.times[reference_order].astype("datetime64[ns]").astype(np.int64)
    ref_lines = reference.lines[reference_order]
    ambiguous = np.zeros(len(reference_ns), dtype=bool)
    if sensor.aware:
        notes.insert(0, "times: compared in UTC (the files give UTC offsets)")
    else:
        notes.insert(0, "times: local wall-clock times (no UTC offsets)")
        ambiguous = _in_repeated_times(
            sensor, keep, lag_ns, reference, reference_ns, window_ns, notes
        )
    match = nearest_in_window(sensor_ns, reference_ns, window_ns)
    beyond = _nearest_is_beyond(sensor, device, sensor_ns, lag_ns, reference_ns, window_ns)
    if beyond.any():
        notes.append(
            f"{counted(int(beyond.sum()), 'reference reading')} left unpaired: the sensor "
            "reading nearest in time is marked Low or High (beyond the sensor's range; rule: "
            f"never paired with a reading further away) in {name_lines(np.sort(ref_lines[beyond]))}"
        )
        match[beyond] = -1
    clash = (match >= 0) & ~ambiguous & np.isin(sensor_ns[np.maximum(match, 0)], conflicting)
    if clash.any():
        notes.append(
            f"{counted(int(clash.sum()), 'reference reading')} refused: their "
            "nearest sensor time holds two different values (rule: which one holds is "
            "not known) in "
            f"{name_lines(np.sort(ref_lines[clash]))}"
        )
    ambiguous |= clash
    _shared_instants(reference_ns, ref_lines, notes)
    paired = (match >= 0) & ~ambiguous
    ref_index = reference_order[paired]
    sen_index = sensor_rows[match[paired]]
    utc = sensor.aware
    pairs = pd.DataFrame(
        {
            "BGM": sensor.glucose[sen_index],
            "REF": reference.glucose[ref_index],
            "reference_time": iso_times(reference.times[ref_index], utc),
            "sensor_time": iso_times(sensor.times[sen_index], utc),
            "delta_seconds": (sensor_ns[match[paired]] - reference_ns[paired]) / 1e9,
        }
    )
    n_ambiguous = int(ambiguous.sum())
    n_beyond = int((beyond & ~ambiguous).sum()) + len(reference.beyond_times)
    n_unpaired = int(((match < 0) & ~ambiguous & ~beyond).sum())
    total = len(reference) + len(reference.beyond_times)
    messages = [
        f"{len(pairs):,} of {counted(total, 'reference reading')} paired with a "
        f"sensor reading within ±{window:g} min (sensor times shifted by {lag:+g} min); "
        f"{n_unpaired:,} left out (no sensor reading in the window)"
        + (
            f"; {n_beyond:,} left unpaired (Low or High: beyond the sensor's range)"
            if n_beyond
            else ""
        )
        + (f"; {n_ambiguous:,} refused as ambiguous (below)" if n_ambiguous else ""),
        *notes,
    ]
    for series in (sensor, reference):
        if series.table is not None:
            messages.extend(series.table.messages())
    return Pairing(
        pairs,
        len(sensor_rows),
        len(reference),
        n_unpaired,
        window,
        lag,
        tuple(messages),
        n_ambiguous,
        n_beyond,
    )


def _nearest_is_beyond(
    sensor: GlucoseSeries,
    device: str | None,
    sensor_ns: NDArray[np.int64],
    lag_ns: int,
    reference_ns: NDArray[np.int64],
    window_ns: int,
) -> NDArray[np.bool_]:
    """For each reference time, whether the sensor reading nearest to it (the same rule as
    :func:`nearest_in_window`, over the readings and the Low/High marks together) is a Low or
    High mark."""
    marks = sensor.beyond_times
    if device is not None and sensor.beyond_devices is not None:
        marks = marks[sensor.beyond_devices.astype(str) == device]
    if not len(marks) or not len(reference_ns):
        return np.zeros(len(reference_ns), dtype=bool)
    marks_ns = marks.astype("datetime64[ns]").astype(np.int64) + lag_ns
    both = nearest_in_window(np.concatenate([sensor_ns, marks_ns]), reference_ns, window_ns)
    return both >= len(sensor_ns)


def _device_rows(
    sensor: GlucoseSeries, device: str | None, option: str, notes: list[str]
) -> NDArray[np.bool_]:
    """The sensor rows to pair: one device's, or every device's when they do not overlap."""
    keep = np.ones(len(sensor), dtype=bool)
    if sensor.devices is None:
        if device is not None:
            raise InputError(
                f"the sensor file names no device (no Source Device ID column); "
                f"{option} does not apply"
            )
        return keep
    names, codes = np.unique(sensor.devices.astype(str), return_inverse=True)
    if device is not None:
        if device not in names:
            raise InputError(
                f"the sensor file has no device {quote(device)} (Source Device "
                f"ID: {', '.join(map(quote, names))})"
            )
        notes.append(
            f"sensor devices: only {quote(device)} paired ({option}), "
            f"{counted(int((codes != list(names).index(device)).sum()), 'reading')} "
            "of other devices left out"
        )
        return codes == list(names).index(device)
    if len(names) == 1:
        notes.append(f"sensor devices: one ({quote(names[0])})")
        return keep
    ns = sensor.times.astype("datetime64[ns]").astype(np.int64)
    spans = sorted(
        (int(ns[codes == k].min()), int(ns[codes == k].max()), k) for k in range(len(names))
    )
    for (_, end, a), (start, _, b) in itertools.pairwise(spans):
        if start <= end:
            first_b = sensor.lines[(codes == b) & (ns == start)][0]
            last_a = sensor.lines[(codes == a) & (ns == end)][0]
            raise InputError(
                f"the sensor file's readings from devices {quote(names[a])} (until line "
                f"{last_a}) and {quote(names[b])} (from line {first_b}), column Source Device "
                f"ID, overlap in time from {_clock_text(start)} to {_clock_text(end)} (rule: "
                f"one sensor reading per time; row order does not decide); choose one device "
                f"with {option}"
            )
    notes.append(
        f"sensor devices: {len(names)} in sequence, not overlapping "
        f"({', '.join(map(quote, names))})"
    )
    return keep


def _repeated_sensor_times(
    ns: NDArray[np.int64],
    glucose: NDArray[np.float64],
    lines: NDArray[np.int64],
    rows: NDArray[np.intp],
    notes: list[str],
) -> tuple[NDArray[np.intp], NDArray[np.int64]]:
    """Sensor rows without exact repeats (same time, same value: the first kept), and the
    times that hold two different values."""
    order = np.argsort(ns, kind="stable")
    t, g = ns[order], glucose[order]
    start = np.r_[True, t[1:] != t[:-1]]
    if start.all():
        notes.append("sensor times: each time once")
        return rows, np.empty(0, dtype=np.int64)
    first = np.flatnonzero(start)
    group = np.cumsum(start) - 1
    low, high = np.minimum.reduceat(g, first), np.maximum.reduceat(g, first)
    differs = (high > low)[group]
    repeat = ~start & ~differs
    conflicting = np.unique(t[differs])
    parts = []
    if repeat.any():
        parts.append(
            f"{counted(int(repeat.sum()), 'repeats', 'repeat')} an earlier "
            "reading's time and value (counted once: "
            f"{name_lines(np.sort(lines[order][repeat]))})"
        )
    if differs.any():
        shown = differs & (t == conflicting[0])
        parts.append(
            f"{counted(len(conflicting), 'time holds', 'times hold')} different "
            f"values (e.g. {' and '.join(f'{v:g}' for v in g[shown][:2])} mg/dL at "
            f"{name_lines(lines[order][shown])}); a reference whose nearest sensor "
            "time is one of them is refused"
        )
    notes.append("sensor times: " + "; ".join(parts))
    return np.sort(rows[order][~repeat]), conflicting


def _in_repeated_times(
    sensor: GlucoseSeries,
    keep: NDArray[np.bool_],
    lag_ns: int,
    reference: GlucoseSeries,
    reference_ns: NDArray[np.int64],
    window_ns: int,
    notes: list[str],
) -> NDArray[np.bool_]:
    """Reference readings (in time order) whose time, or whose window of sensor times, falls in
    wall-clock times a file shows twice; the spans and these readings are noted."""
    ambiguous = np.zeros(len(reference_ns), dtype=bool)
    found = []
    for name, series, rows, shift, margin in (
        ("sensor", sensor, keep, lag_ns, window_ns),
        ("reference", reference, np.ones(len(reference), bool), 0, 0),
    ):
        ns = series.times[rows].astype("datetime64[ns]").astype(np.int64)
        spans, ordered = repeated_times(ns, series.lines[rows])
        if not ordered:
            found.append(
                f"the {name} file is not in time order, so a clock going back "
                "(daylight saving) cannot be seen; give times with UTC offsets to be "
                "sure"
            )
        for span in spans:
            ambiguous |= (reference_ns >= span.low + shift - margin) & (
                reference_ns <= span.high + shift + margin
            )
            found.append(
                f"the {name} clock goes back from {_clock_text(span.high)} to "
                f"{_clock_text(span.low)} after line {span.line} (daylight saving?)"
            )
    if not found:
        notes.append("repeated wall-clock times: none (no clock goes back)")
        return ambiguous
    lines = np.sort(reference.lines[np.argsort(reference.times, kind="stable")][ambiguous])
    refused = (
        f"; {counted(int(ambiguous.sum()), 'reference reading')} in or near those "
        "times refused as ambiguous (rule: a time the clock shows twice cannot be "
        f"placed; give times with UTC offsets) in {name_lines(lines)}"
        if ambiguous.any()
        else ""
    )
    notes.append("repeated wall-clock times: " + "; ".join(found) + refused)
    return ambiguous


def _shared_instants(
    reference_ns: NDArray[np.int64], lines: NDArray[np.int64], notes: list[str]
) -> None:
    """Note reference readings that share their time with another (sorted times)."""
    start = np.r_[True, reference_ns[1:] != reference_ns[:-1]] if len(reference_ns) else []
    if len(reference_ns) == 0 or np.all(start):
        return
    first = np.flatnonzero(start)
    sizes = np.diff(np.r_[first, len(reference_ns)])
    big = int(np.argmax(sizes))
    shared = int(sizes[sizes > 1].sum())
    at = lines[first[big] : first[big] + sizes[big]]
    notes.append(
        f"reference times: {shared:,} readings share their time with another "
        f"({counted(int((sizes > 1).sum()), 'time')}; the most, {int(sizes[big]):,} "
        f"readings at {_clock_text(int(reference_ns[first[big]]))} in "
        f"{name_lines(np.sort(at))}), "
        "each paired with the same sensor reading"
    )
