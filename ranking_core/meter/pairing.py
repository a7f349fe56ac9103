"""Sensor-to-reference pairing: each reference reading with the sensor reading nearest in time.

Rule (as in CGM accuracy studies): shift the sensor times by ``lag`` minutes; pair each reference
reading with the sensor reading nearest to it in time within ±``window`` minutes (inclusive); on a
tie the earlier sensor reading wins (among readings at the same time, the first in the file); a
reference reading with no sensor reading in the window is left out and counted. A sensor reading
may be paired with several reference readings. O((n + m) log n) with ``np.searchsorted``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.inputs import InputError
from ranking_core.inputs.series import GlucoseSeries
from ranking_core.meter.pairs import MeterPairs, pairs_from_frame
from ranking_core.validation import positive_float

__all__ = ["PAIRED_COLUMNS", "Pairing", "nearest_in_window", "pair_series"]

PAIRED_COLUMNS = ("BGM", "REF", "reference_time", "sensor_time", "delta_seconds")
_NS_PER_MINUTE = 60 * 10**9


def nearest_in_window(sensor_ns: NDArray[np.int64], reference_ns: NDArray[np.int64],
                      window_ns: int) -> NDArray[np.intp]:
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
    d_right = np.where(has_right, times[np.minimum(right, len(times) - 1)] - reference_ns,
                       np.iinfo(np.int64).max)
    d_left = np.where(has_left, reference_ns - times[np.maximum(left, 0)],
                      np.iinfo(np.int64).max)
    # the earliest of equal sensor times: searchsorted on the left candidate's own time
    left_first = np.searchsorted(times, times[np.maximum(left, 0)], side="left")
    use_left = has_left & (d_left <= d_right)
    chosen = np.where(use_left, left_first, right)
    distance = np.where(use_left, d_left, d_right)
    ok = (has_left | has_right) & (distance <= window_ns)
    out[ok] = order[chosen[ok]]
    return out


def _iso(times: NDArray[np.datetime64], utc: bool) -> NDArray[np.str_]:
    """ISO 8601 text to the second, or to the finest sub-second digit the times need."""
    ns = times.astype("datetime64[ns]").astype(np.int64)
    unit = next((u for u, step in (("s", 10**9), ("ms", 10**6), ("us", 10**3))
                 if not np.any(ns % step)), "ns")
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

    def meter_pairs(self) -> MeterPairs:
        """The pairs for :func:`~ranking_core.meter.meter_report` (rows = reference lines)."""
        return pairs_from_frame(self.pairs[["BGM", "REF"]], "paired readings", first_row=1)


def pair_series(sensor: GlucoseSeries, reference: GlucoseSeries, window: float = 5.0,
                lag: float = 0.0) -> Pairing:
    """Pair ``reference`` readings with ``sensor`` readings by the rule in the module notes.

    ``window`` (minutes, > 0) and ``lag`` (minutes, added to the sensor times). Raises
    :class:`~ranking_core.inputs.InputError` when one file's times carry a UTC offset and the
    other's do not (they cannot be compared).
    """
    window = positive_float(window, "window", "pair_series")
    lag = float(lag)
    if not np.isfinite(lag):
        raise ValueError(f"pair_series: lag must be a finite number of minutes; got {lag!r}")
    if sensor.aware != reference.aware:
        with_offset, without = ("sensor", "reference") if sensor.aware else ("reference",
                                                                                "sensor")
        raise InputError(f"the {with_offset} times carry a UTC offset and the {without} times "
                         "do not; they cannot be compared (give both files offsets, or neither)")
    lag_ns = round(lag * _NS_PER_MINUTE)
    sensor_ns = sensor.times.astype("datetime64[ns]").astype(np.int64) + lag_ns
    reference_order = np.argsort(reference.times, kind="stable")
    reference_ns = reference.times[reference_order].astype("datetime64[ns]").astype(np.int64)
    match = nearest_in_window(sensor_ns, reference_ns, round(window * _NS_PER_MINUTE))
    paired = match >= 0
    ref_index = reference_order[paired]
    sen_index = match[paired]
    utc = sensor.aware
    pairs = pd.DataFrame({
        "BGM": sensor.glucose[sen_index],
        "REF": reference.glucose[ref_index],
        "reference_time": _iso(reference.times[ref_index], utc),
        "sensor_time": _iso(sensor.times[sen_index], utc),
        "delta_seconds": (sensor_ns[sen_index] - reference_ns[paired]) / 1e9,
    })
    n_unpaired = int((~paired).sum())
    messages = [
        f"{len(pairs):,} of {len(reference):,} reference readings paired with a sensor reading "
        f"within ±{window:g} min (sensor times shifted by {lag:+g} min); {n_unpaired:,} left "
        "out (no sensor reading in the window)",
    ]
    for series in (sensor, reference):
        if series.table is not None:
            messages.extend(series.table.messages())
    return Pairing(pairs, len(sensor), len(reference), n_unpaired, window, lag,
                   tuple(messages))
