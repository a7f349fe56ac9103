"""The method comparison a laboratory files beside the error grids (CLSI EP09): Passing–Bablok
and Deming regression of the device (y) on the reference (x) with their 95 % intervals, the
CUSUM linearity test, the bias at the decision levels, and the Bland–Altman limits of agreement
with their 95 % intervals (absolute below 100 mg/dL, relative from it on), the report's one
Bland–Altman plot. Every included pair, values as measured, in the file's unit
(:mod:`ranking_core.meter.comparison`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.meter.comparison.bland_altman import BlandAltmanLimits, bland_altman_limits
from ranking_core.meter.comparison.common import MAX_PAIRS
from ranking_core.meter.comparison.summary import MethodComparison, method_comparison
from ranking_core.meter.sections.base import (
    CoreReport,
    ReportFigure,
    ReportTable,
    Section,
    SectionInputs,
    SectionView,
    json_ready,
)
from ranking_core.meter.standards.registry import profile_title
from ranking_core.meter.statistics import AgreementLimit

if TYPE_CHECKING:  # matplotlib is loaded when a figure is drawn
    from matplotlib.figure import Figure

__all__ = ["AGREEMENT_LIMITS", "METHOD_COMPARISON", "ComparisonResult", "reader_text"]

_INTERVAL = re.compile(r"-?[\d.]+ to -?[\d.]+")  # "lower to upper" as the library writes it
MIN_REGRESSION_PAIRS = 3  # Passing–Bablok and Deming's jackknife need at least three pairs

# each standard's accuracy limits drawn on the Bland–Altman plot, from its criteria in
# ranking_core.meter.standards.registry (mg/dL below the cut, % from the cut on)
AGREEMENT_LIMITS = {
    "iso15197": (AgreementLimit(15, 15, 100),),
    "fda-otc": (AgreementLimit(0, 15, 0), AgreementLimit(0, 20, 0)),
    "fda-poc": (AgreementLimit(12, 12, 75), AgreementLimit(15, 15, 75)),
    "clsi-poct12": (AgreementLimit(12, 12.5, 100), AgreementLimit(15, 20, 75)),
    "icgm": (AgreementLimit(15, 15, 70), AgreementLimit(40, 40, 70)),
}

# the tables of MethodComparison.tables() by title → their file stems in --out-dir
TABLE_NAMES = {
    "Passing–Bablok regression": "passing_bablok",
    "Passing–Bablok linearity": "passing_bablok_linearity",
    "Deming regression": "deming",
    "Bias at the decision levels": "bias_at_decision_levels",
    "Bland–Altman limits of agreement": "bland_altman_limits",
}


@dataclass(frozen=True)
class ComparisonResult:
    """The section's result: the pairs compared (file's unit), the regressions (None, with the
    reason in ``left_out``, when they cannot be computed) and the Bland–Altman limits."""

    reference: NDArray[np.float64]
    device: NDArray[np.float64]
    unit: str
    levels: tuple[float, ...]
    error_ratio: float
    comparison: MethodComparison | None
    bland_altman: BlandAltmanLimits
    left_out: str = ""

    def to_dict(self) -> dict[str, object]:
        """``method_comparison``: the library's JSON (:meth:`MethodComparison.to_dict`), or the
        Bland–Altman part and why the regressions were left out."""
        if self.comparison is not None:
            out = self.comparison.to_dict()
        else:
            out = {
                "unit": self.unit,
                "y": "device",
                "x": "reference",
                "passing_bablok": None,
                "deming": None,
                "bland_altman": self.bland_altman.to_dict(),
                "left_out": self.left_out,
            }
        return {**out, "decision_levels": list(self.levels), "error_ratio": self.error_ratio}


def _compute(inputs: SectionInputs) -> ComparisonResult | None:
    reference, device = inputs.measured_in_unit
    if reference.size == 0:
        return None
    settings = inputs.comparison
    levels = settings.levels_in(inputs.unit)
    args = (reference, device, inputs.unit, levels, settings.error_ratio)
    n = reference.size
    if n < MIN_REGRESSION_PAIRS or n > MAX_PAIRS:
        reason = (
            f"{n:,} pairs: the regressions need at least {MIN_REGRESSION_PAIRS}"
            if n < MIN_REGRESSION_PAIRS
            else f"{n:,} pairs: Passing–Bablok reads n(n − 1)/2 slopes and is computed for at "
            f"most {MAX_PAIRS:,} pairs"
        )
        limits = bland_altman_limits(reference, device, unit=inputs.unit)
        return ComparisonResult(*args, None, limits, f"regressions left out: {reason}")
    try:
        # a line through pairs that leave one vertical gives infinite leave-one-out estimates:
        # their standard errors are not numbers, reported as such, not warned about
        with np.errstate(invalid="ignore", divide="ignore"):
            found = method_comparison(
                reference, device, unit=inputs.unit, error_ratio=settings.error_ratio, levels=levels
            )
    except ValueError as exc:  # no two pairs differ: no slope
        limits = bland_altman_limits(reference, device, unit=inputs.unit)
        return ComparisonResult(*args, None, limits, f"regressions left out: {exc}")
    return ComparisonResult(*args, found, found.bland_altman)


def reader_text(frame: pd.DataFrame) -> pd.DataFrame:
    """A table of rounded numbers as the reader's text: NaN as "—", numbers as written."""

    def cell(value: object) -> str:
        if isinstance(value, str) and _INTERVAL.fullmatch(value):
            return value.replace("-", "−")
        if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
            return str(value)
        if not np.isfinite(value):
            return "—"
        if isinstance(value, int | np.integer):
            return f"{value:,}"
        return np.format_float_positional(float(value), trim="-").replace("-", "−")

    return frame.map(cell)


def _limits_of(report: CoreReport) -> tuple[tuple[AgreementLimit, ...], str]:
    judged = [n for n in report.standards if n in AGREEMENT_LIMITS]
    return (AGREEMENT_LIMITS[judged[0]], profile_title(judged[0])) if judged else ((), "")


def _bland_altman_caption(result: ComparisonResult, device: str, report: CoreReport) -> str:
    limits, standard = _limits_of(report)
    parts = "; ".join(
        f"{p.part}: {p.n:,} pairs, bias {p.bias:.2f} {p.unit}, limits of agreement "
        f"{p.lower_limit:.2f} and {p.upper_limit:.2f} {p.unit}"
        for p in result.bland_altman.parts
    )
    drawn = (
        f"; dotted lines: {standard} limits, " + " and ".join(x.text() for x in limits)
        if limits
        else ""
    )
    return (
        f"Bland–Altman plot: {device} − REF against REF, in {result.unit} below "
        f"{result.bland_altman.cut:g} {result.unit} and in % from it on ({parts}); solid line: "
        "bias, dashed lines: 95 % limits of agreement (bias ∓ 1.96 SD), each with its 95 % "
        f"interval shaded (Bland & Altman 1999){drawn}."
    )


def _bland_altman_plot(
    result: ComparisonResult, device: str, limits: tuple[AgreementLimit, ...]
) -> Figure:
    from ranking_core.meter.comparison.plots import bland_altman_limits_plot

    return bland_altman_limits_plot(result.bland_altman, device_name=device, limits=limits)


def _regression_plot(result: ComparisonResult, found: MethodComparison, device: str) -> Figure:
    from ranking_core.meter.comparison.plots import regression_plot

    return regression_plot(result.reference, result.device, found, device_name=device)


def _figures(result: ComparisonResult, report: CoreReport) -> tuple[ReportFigure, ...]:
    """The Bland–Altman plot and, with the regressions, the regression plot (matplotlib loaded
    when one is drawn, never for the terminal or the JSON)."""
    device = report.device.upper()
    limits, _ = _limits_of(report)
    figures = [
        ReportFigure(
            "bland_altman",
            _bland_altman_caption(result, device, report),
            lambda: _bland_altman_plot(result, device, limits),
            "Bland–Altman plot",
        )
    ]
    found = result.comparison
    if found is not None:
        figures.append(
            ReportFigure(
                "regression",
                f"Method comparison: {device} against REF ({result.unit}), the identity line "
                "(dotted), the Passing–Bablok line (solid) and the Deming line (dashed).",
                lambda: _regression_plot(result, found, device),
                "regression plot",
            )
        )
    return tuple(figures)


def _summary(result: ComparisonResult) -> str:
    found = result.comparison
    if found is None:
        return result.left_out
    pb, dem = found.passing_bablok, found.deming
    linear = "linear" if pb.linearity.linear else "not linear"
    return (
        f"Passing–Bablok slope {pb.slope:.4f} ({pb.slope_lower:.4f} to {pb.slope_upper:.4f}), "
        f"intercept {pb.intercept:.2f} {result.unit} ({linear} by the CUSUM test); Deming "
        f"(λ = {dem.error_ratio:g}) slope {dem.slope:.4f} ({dem.slope_lower:.4f} to "
        f"{dem.slope_upper:.4f}); {pb.n:,} pairs, 95 % intervals"
    )


def _view(result: ComparisonResult, report: CoreReport) -> SectionView:
    found = result.comparison
    frames = found.tables() if found is not None else result.bland_altman.tables()
    tables = tuple(
        ReportTable(TABLE_NAMES[title], title, frame, text=reader_text(frame))
        for title, frame in frames.items()
    )
    levels = ", ".join(f"{v:g}" for v in result.levels)
    return SectionView(
        key="method_comparison",
        title="Method comparison: Passing–Bablok, Deming and Bland–Altman",
        summary=_summary(result),
        json={"method_comparison": json_ready(result.to_dict())},
        about=(
            f"The device (y) against the reference (x), every analysed pair as measured, in "
            f"{result.unit}. Passing–Bablok (Passing & Bablok 1983: the shifted median of the "
            "pairwise slopes, its rank limits, the CUSUM test for linearity) and Deming "
            f"(closed form, error ratio λ = σ²(reference)/σ²(device) = {result.error_ratio:g}, "
            "jackknife intervals as R mcr's default); the bias of each line at the decision "
            f"levels {levels} {result.unit} (CLSI EP09) with its 95 % interval; the "
            "Bland–Altman limits of agreement with the 95 % intervals of the bias and of each "
            "limit (Bland & Altman 1999).",
        ),
        tables=tables,
        figures=_figures(result, report),
        cautions=(result.left_out,) if result.left_out else (),
    )


METHOD_COMPARISON = Section("method_comparison", "Method comparison", _compute, _view)
