"""Sensor-to-sensor precision against its definitions written out per pair, and the bootstrap
over subjects against an explicit loop over the same resamples."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ranking_core.meter.cgm.precision import paired_sensor_readings, sensor_precision


def study(seed=3, subjects=12, per=30):
    rng = np.random.default_rng(seed)
    subject = np.repeat(np.arange(subjects), per)
    true = rng.uniform(60, 300, subject.size)
    return subject, true * rng.normal(1, 0.05, true.size), true * rng.normal(1, 0.05, true.size)


def test_estimates_are_the_definitions():
    subject, a, b = study()
    result = sensor_precision(subject, a, b)
    pard = [100 * abs(p - q) / ((p + q) / 2) for p, q in zip(a, b, strict=True)]
    cv = [100 * np.std([p, q], ddof=1) / np.mean([p, q]) for p, q in zip(a, b, strict=True)]
    assert result.pard == pytest.approx(np.mean(pard))
    assert result.pad == pytest.approx(np.mean(np.abs(a - b)))
    assert result.cv == pytest.approx(math.sqrt(np.mean(np.square(cv))))
    assert result.pairs == a.size and result.subjects == 12


def test_bootstrap_resamples_whole_subjects():
    subject, a, b = study(subjects=6, per=5)
    result = sensor_precision(subject, a, b, resamples=200, seed=7)
    rng = np.random.default_rng(7)
    weights = rng.multinomial(6, np.full(6, 1 / 6), size=200)
    pards = []
    for w in weights:  # the resampled subjects' pairs, pooled
        chosen = np.concatenate([np.tile(np.flatnonzero(subject == s), k) for s, k in enumerate(w)])
        pards.append(np.mean(100 * np.abs(a[chosen] - b[chosen]) / ((a[chosen] + b[chosen]) / 2)))
    assert (result.pard_lower, result.pard_upper) == pytest.approx(
        tuple(np.quantile(pards, [0.025, 0.975]))
    )


def test_bad_readings_are_refused_with_the_pair_named():
    with pytest.raises(ValueError, match="sensor pair 2"):
        sensor_precision([1, 1], [100.0, 0.0], [100.0, 90.0])


def test_pairs_are_found_at_the_same_time_per_subject():
    times = pd.to_datetime(["2024-01-01 00:00", "2024-01-01 00:05", "2024-01-01 00:10"])
    frame = paired_sensor_readings(
        subject=["s1"] * 5 + ["s2"],
        sensor=["A", "A", "A", "B", "B", "A"],
        time=[*times, times[0], times[2], times[0]],
        value=[100, 110, 120, 104, 118, 90],
    )
    assert frame["first"].tolist() == [100.0, 120.0]
    assert frame["second"].tolist() == [104.0, 118.0]
    assert set(frame["subject"]) == {"s1"}
