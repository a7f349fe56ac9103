"""What a CGM study's data covers and how two sensors agree: the comparator data coverage by
Dynamic Glucose Region for pairs whose reference has a rate of change
(:mod:`ranking_core.meter.cgm.dgr`, the IfDTUlm reference code's rules), and the sensor-to-sensor
precision (PARD, PAD, CV) for files holding two sensors of one subject at one time
(:mod:`ranking_core.meter.cgm.precision`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ranking_core.meter.cgm.dgr import DGR_REGIONS, REQUIREMENT_PERCENT, DgrResult, dgr
from ranking_core.meter.cgm.precision import (
    RESAMPLES,
    SEED,
    SensorPrecision,
    paired_sensor_readings,
    sensor_precision,
)
from ranking_core.meter.sections.base import (
    CoreReport,
    ReportFigure,
    ReportTable,
    Section,
    SectionInputs,
    SectionView,
    json_ready,
)
from ranking_core.meter.sections.comparison import reader_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["DGR", "PRECISION"]


def _dgr(inputs: SectionInputs) -> DgrResult | None:
    """DGR of the comparator readings that have a rate: the included pairs' reference glucose
    (mg/dL, as measured) and reference rate (mg/dL/min), the rates the trend table reads; one
    entry per pair, as the trend table counts them. None without times or without a rate."""
    rates = inputs.rates
    if rates is None or not np.isfinite(rates.ref_rate).any():
        return None
    reference, _ = inputs.measured
    return dgr(reference, rates.ref_rate)


def _dgr_plot(result: DgrResult) -> Figure:
    from ranking_core.meter.cgm.dgr import dgr_plot

    return dgr_plot(result)


def _dgr_view(result: DgrResult, report: CoreReport) -> SectionView:
    counts = result.counts
    share = counts.percent()
    short = [r.replace("_", " ") for r in DGR_REGIONS if share[r] < REQUIREMENT_PERCENT]
    verdict = (
        f"every region holds at least {REQUIREMENT_PERCENT} %"
        if counts.meets()
        else "below 7.5 %: " + ", ".join(short)
    )
    ellipse = {
        "fulfilled": "",
        "excluded": f"; the exclusion ellipse removes {int(result.excluded.sum()):,} readings",
        "cannot be fulfilled": "; the exclusion ellipse cannot fulfil the requirement",
    }[result.status]
    frame = next(iter(result.tables().values()))
    return SectionView(
        key="dgr",
        title="Comparator data coverage (Dynamic Glucose Regions)",
        summary=f"{counts.total:,} comparator readings with a rate: {verdict}{ellipse}",
        json={"dgr": json_ready(result.to_dict())},
        about=(
            "Eichenlaub et al., Diabetes Technol Ther 2024, regions as the IFCC WG-CGM guideline "
            "(Clin Chim Acta 2025) defines them, ported from the IfDTUlm reference code: each "
            "comparator reading with a rate of change (the reference rates of the trend table, "
            "one per pair) in the low, high, alert-low, alert-high and stable regions; every "
            f"region should hold at least {REQUIREMENT_PERCENT} % of the readings, else the "
            "exclusion ellipse says how many readings near its centre would have to go.",
        ),
        tables=(
            ReportTable(
                "dgr",
                "Comparator readings per Dynamic Glucose Region",
                frame,
                text=reader_text(frame),
            ),
        ),
        figures=(
            ReportFigure(
                "dgr",
                "Dynamic Glucose Region plot: each comparator reading's rate of change against "
                "its glucose over the regions (critical orange and red, stable green), and each "
                f"region's share with the {REQUIREMENT_PERCENT} % requirement (dashed).",
                lambda: _dgr_plot(result),
                "DGR plot",
            ),
        ),
    )


def _precision(inputs: SectionInputs) -> SensorPrecision | None:
    """Precision of the device readings of two sensors of one subject at one reference time
    (else sensor time), in the file's unit; None without such readings."""
    columns = inputs.columns
    time = columns.get("reference_time", columns.get("sensor_time"))
    if "subject" not in columns or "sensor" not in columns or time is None:
        return None
    _, device = inputs.measured_in_unit
    found = paired_sensor_readings(columns["subject"], columns["sensor"], time, device)
    found = found[(found["first"] > 0) & (found["second"] > 0)]
    if found.empty:
        return None
    return sensor_precision(
        found["subject"].to_numpy(),
        found["first"].to_numpy(),
        found["second"].to_numpy(),
        unit=inputs.unit,
    )


def _precision_view(result: SensorPrecision, report: CoreReport) -> SectionView:
    frame = next(iter(result.tables().values()))
    return SectionView(
        key="precision",
        title="Sensor-to-sensor precision",
        summary=f"mean PARD {result.pard:.1f} % ({result.pard_lower:.1f} to "
        f"{result.pard_upper:.1f}), CV {result.cv:.1f} % over {result.pairs:,} pairs of "
        f"readings of {result.subjects:,} subjects",
        json={"precision": json_ready(result.to_dict())},
        about=(
            "Two sensors worn by one subject, read at one time (the same reference time, else "
            "sensor time): PARD = 100·|a − b|/((a + b)/2), PAD = |a − b|, CV = PARD/√2 pooled "
            "as a root mean square (the IFCC WG-CGM guideline's precision measures); 95 % "
            f"percentile intervals of {RESAMPLES:,} bootstrap resamples of whole subjects "
            f"(seed {SEED}). Per subject, the two sensors with the most readings.",
        ),
        tables=(
            ReportTable("precision", "Sensor-to-sensor precision", frame, text=reader_text(frame)),
        ),
    )


DGR = Section("dgr", "Comparator data coverage", _dgr, _dgr_view)
PRECISION = Section("precision", "Sensor-to-sensor precision", _precision, _precision_view)
