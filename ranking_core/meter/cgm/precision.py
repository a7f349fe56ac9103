"""Sensor-to-sensor precision: two sensors worn by one subject, read at one time, compared with
each other (the precision measures of the IFCC WG-CGM guideline, Pleus et al., Clin Chim Acta
2025).

For a reading pair (a, b) of the two sensors (mg/dL or the file's unit):

* PAD = |a − b| (absolute difference, the unit);
* PARD = 100 · |a − b| / ((a + b)/2) (%);
* CV = 100 · SD(a, b) / mean(a, b) = PARD / √2 (%), SD with n − 1 = 1 degree of freedom.

Summaries: the mean PAD, the mean PARD and the CV of the study as the root mean square of the
pairs' CVs (the pooled within-pair CV). Intervals: percentile 95 % intervals of a seeded
bootstrap over subjects (whole subjects resampled with replacement, each resample's pairs
pooled; 2,000 resamples, NumPy's default generator with seed 1).

:func:`paired_sensor_readings` finds the pairs in a table of readings: per subject, the two
sensors with the most readings, each reading of the first matched to the second sensor's
reading nearest in time within ``max_gap`` (default 0: the same time).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ranking_core.meter.comparison.common import json_number

__all__ = ["RESAMPLES", "SEED", "SensorPrecision", "paired_sensor_readings", "sensor_precision"]

RESAMPLES, SEED = 2000, 1
CONFIDENCE = 0.95
MAX_PAIRS = 5_000_000
MAX_RESAMPLES = 100_000
_STATISTICS = ("pard", "pad", "cv")


@dataclass(frozen=True)
class SensorPrecision:
    """Mean PARD (%), mean PAD (unit) and CV (%) with their bootstrap intervals over subjects."""

    pairs: int
    subjects: int
    unit: str
    pard: float
    pard_lower: float
    pard_upper: float
    pad: float
    pad_lower: float
    pad_upper: float
    cv: float
    cv_lower: float
    cv_upper: float
    resamples: int
    seed: int

    def to_dict(self) -> dict[str, object]:
        """The JSON of ``precision``."""
        out: dict[str, object] = {
            key: value if isinstance(value, str) else json_number(value)
            for key, value in vars(self).items()
        }
        out["interval_method"] = "percentile bootstrap over subjects"
        return out

    def tables(self) -> dict[str, pd.DataFrame]:
        """One row per measure with its interval."""
        frame = pd.DataFrame(
            {
                "measure": ["mean PARD (%)", f"mean PAD ({self.unit})", "CV (%)"],
                "estimate": [round(self.pard, 2), round(self.pad, 2), round(self.cv, 2)],
                "95 % lower": [
                    round(self.pard_lower, 2),
                    round(self.pad_lower, 2),
                    round(self.cv_lower, 2),
                ],
                "95 % upper": [
                    round(self.pard_upper, 2),
                    round(self.pad_upper, 2),
                    round(self.cv_upper, 2),
                ],
                "pairs": [self.pairs] * 3,
                "subjects": [self.subjects] * 3,
            }
        )
        return {"Sensor-to-sensor precision": frame}


def _per_pair(a: NDArray, b: NDArray) -> dict[str, NDArray]:
    diff = np.abs(a - b)
    mean = 0.5 * (a + b)
    pard = 100.0 * diff / mean
    return {"pard": pard, "pad": diff, "cv2": (pard / math.sqrt(2.0)) ** 2}


def sensor_precision(
    subject: ArrayLike,
    first: ArrayLike,
    second: ArrayLike,
    *,
    unit: str = "mg/dL",
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> SensorPrecision:
    """Precision of the pairs (``first``, ``second``) of two sensors of ``subject`` at one time
    (module docstring). Values must be positive and finite; ValueError names the first bad pair."""
    subjects = np.asarray(subject).ravel()
    a = np.asarray(first, dtype=np.float64).ravel()
    b = np.asarray(second, dtype=np.float64).ravel()
    if not (subjects.size == a.size == b.size):
        raise ValueError("subjects, first and second sensor readings differ in length")
    if not 1 <= a.size <= MAX_PAIRS:
        raise ValueError(f"{a.size:,} sensor pairs: the analysis needs 1 to {MAX_PAIRS:,}")
    if not 1 <= resamples <= MAX_RESAMPLES:
        raise ValueError(f"resamples {resamples}: must be 1 to {MAX_RESAMPLES:,}")
    bad = ~(np.isfinite(a) & np.isfinite(b) & (a > 0) & (b > 0))
    if bad.any():
        raise ValueError(f"sensor pair {int(np.flatnonzero(bad)[0]) + 1}: readings must be > 0")
    codes, index = np.unique(subjects, return_inverse=True)
    per = _per_pair(a, b)
    sums = np.stack([np.bincount(index, weights=per[k], minlength=codes.size) for k in per])
    counts = np.bincount(index, minlength=codes.size).astype(np.float64)
    weights = np.random.default_rng(seed).multinomial(
        codes.size, np.full(codes.size, 1.0 / codes.size), size=resamples
    )
    drawn = (weights @ sums.T) / (weights @ counts)[:, None]  # resamples × (pard, pad, cv²)
    estimate = sums.sum(axis=1) / counts.sum()
    drawn[:, 2], estimate[2] = np.sqrt(drawn[:, 2]), math.sqrt(estimate[2])
    lower, upper = np.quantile(drawn, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2], axis=0)
    return SensorPrecision(
        pairs=int(a.size),
        subjects=int(codes.size),
        unit=unit,
        pard=float(estimate[0]),
        pard_lower=float(lower[0]),
        pard_upper=float(upper[0]),
        pad=float(estimate[1]),
        pad_lower=float(lower[1]),
        pad_upper=float(upper[1]),
        cv=float(estimate[2]),
        cv_lower=float(lower[2]),
        cv_upper=float(upper[2]),
        resamples=resamples,
        seed=seed,
    )


def paired_sensor_readings(
    subject: ArrayLike,
    sensor: ArrayLike,
    time: ArrayLike,
    value: ArrayLike,
    max_gap: pd.Timedelta | None = None,
) -> pd.DataFrame:
    """Pairs of readings of two sensors of one subject at one time: columns subject, time,
    first, second (module docstring); empty when no subject has two sensors."""
    frame = pd.DataFrame(
        {
            "subject": np.asarray(subject),
            "sensor": np.asarray(sensor),
            "time": pd.to_datetime(np.asarray(time)),
            "value": np.asarray(value, dtype=np.float64),
        }
    ).dropna()
    gap = pd.Timedelta(0) if max_gap is None else max_gap
    out = []
    for name, group in frame.groupby("subject", sort=True):
        sizes = group["sensor"].value_counts()
        if sizes.size < 2:
            continue
        first_id, second_id = sorted(sizes.index[:2].tolist(), key=str)
        left = group[group["sensor"] == first_id].sort_values("time")
        right = group[group["sensor"] == second_id].sort_values("time")
        merged = pd.merge_asof(
            left[["time", "value"]],
            right[["time", "value"]].rename(columns={"value": "second"}),
            on="time",
            direction="nearest",
            tolerance=gap,
        ).dropna()
        merged.insert(0, "subject", name)
        out.append(merged.rename(columns={"value": "first"}))
    if not out:
        return pd.DataFrame(columns=["subject", "time", "first", "second"])
    return pd.concat(out, ignore_index=True)
