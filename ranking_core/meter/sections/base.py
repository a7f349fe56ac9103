"""What a report section is and what it gives every rendering.

A :class:`Section` is one analysis of the meter / CGM report: it knows when it applies, computes
one result from a :class:`SectionInputs`, and turns that result into a :class:`SectionView`:
its JSON keys with JSON-ready values (numbers as numbers), its title, the paragraphs that say
what it is, its tables (numbers; :func:`~ranking_core.meter.drawing.display.display_frame`
gives the reader's text), its figures (matplotlib, drawn when a rendering asks) and a one-line
summary. The terminal, the JSON, the PDF and HTML documents, ``--out-dir`` and the Meter page
all iterate :data:`ranking_core.meter.sections.SECTIONS` and draw each view the same way.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.grids.seg import SEGTable
from ranking_core.inputs import MGDL_PER_MMOLL
from ranking_core.meter.cgm.cg_diva import CgDivaRange
from ranking_core.meter.cgm.trend import TrendAgreement
from ranking_core.meter.comparison.summary import ComparisonSettings
from ranking_core.meter.pairs.readings import MeterPairs
from ranking_core.meter.standards.acceptance import JudgeSettings, RateSummary

if TYPE_CHECKING:  # matplotlib is loaded when a figure is drawn, never on import
    from matplotlib.figure import Figure

__all__ = [
    "CoreReport",
    "ReportFigure",
    "ReportSetting",
    "ReportTable",
    "Section",
    "SectionInputs",
    "SectionView",
    "json_ready",
    "records",
]


@dataclass(frozen=True)
class ReportSetting:
    """One choice the report was made with: its JSON key, its label for readers, its value for
    JSON (numbers as numbers) and its text for readers."""

    key: str
    label: str
    value: Any
    text: str


class CoreReport(Protocol):
    """What sections read of the report (:class:`ranking_core.meter.report.MeterReport`, which
    runs the sections and so is not imported here): the shared computation's tables and the
    choices it was made with."""

    @property
    def pairs(self) -> pd.DataFrame: ...

    @property
    def pair_types(self) -> pd.DataFrame: ...

    @property
    def accuracy(self) -> pd.DataFrame: ...

    @property
    def iso_ranges(self) -> pd.DataFrame: ...

    @property
    def binomial(self) -> pd.DataFrame: ...

    @property
    def zones(self) -> dict[str, pd.DataFrame]: ...

    @property
    def zone_grids(self) -> dict[str, str]: ...

    @property
    def acceptance(self) -> pd.DataFrame: ...

    @property
    def ranges(self) -> pd.DataFrame: ...

    @property
    def risk_grades(self) -> pd.DataFrame | None: ...

    @property
    def risk_categories(self) -> pd.DataFrame | None: ...

    @property
    def learned_categories(self) -> pd.DataFrame | None: ...

    @property
    def parkes_type(self) -> int: ...

    @property
    def messages(self) -> tuple[str, ...]: ...

    @property
    def caveats(self) -> tuple[str, ...]: ...

    @property
    def glucose_unit(self) -> str: ...

    @property
    def acceptance_notes(self) -> tuple[str, ...]: ...

    @property
    def provenance(self) -> dict[str, Any]: ...

    @property
    def device(self) -> str: ...

    @property
    def standards(self) -> tuple[str, ...]: ...

    @property
    def group_column(self) -> str: ...

    @property
    def trend(self) -> TrendAgreement | None: ...

    @property
    def cg_diva(self) -> tuple[CgDivaRange, ...] | None: ...

    @property
    def settings(self) -> tuple[ReportSetting, ...]: ...

    @property
    def results(self) -> dict[str, Any]: ...

    def judged_profiles(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class SectionInputs:
    """What a section computes from.

    Attributes
    ----------
    report : the report's shared computation (pairs read, excluded, per-pair columns and the
        tables every section may read: :class:`~ranking_core.meter.report.MeterReport`).
    pairs : the pairs as read, with their extra columns (``sensor``, ``subject``,
        ``reference_time``, ``sensor_time``, ``group``) and values as measured.
    included : per pair of ``pairs``, in the analysis (not above 600 mg/dL nor below 0).
    judge : the judging settings (standards, measuring range, bound).
    rate_gap : minutes; consecutive pairs of a sensor further apart give no rate of change.
    rates : the rates of change of the included pairs (None without both times).
    seg_table, learned_risk : the SEG risk table and a learned (601, 601) surface, when given.
    comparison : the method comparison's choices (Deming error ratio, decision levels).
    """

    report: CoreReport
    pairs: MeterPairs
    included: NDArray[np.bool_]
    judge: JudgeSettings
    rate_gap: float
    rates: RateSummary | None = None
    seg_table: SEGTable | None = None
    learned_risk: NDArray[np.float64] | None = None
    comparison: ComparisonSettings = field(default_factory=ComparisonSettings)

    @property
    def unit(self) -> str:
        """The unit the file was read in ("mg/dL" or "mmol/L")."""
        return self.pairs.glucose_unit

    @property
    def measured_in_unit(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(reference, device) glucose of the included pairs as measured, in the file's unit."""
        ref, device = self.measured
        if self.unit == "mmol/L":
            return ref / MGDL_PER_MMOLL, device / MGDL_PER_MMOLL
        return ref, device

    @property
    def measured(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(reference, device) glucose of the included pairs in mg/dL, as measured."""
        ref, device = self.pairs.measured
        return ref[self.included], device[self.included]

    @property
    def columns(self) -> dict[str, NDArray]:
        """The pairs' extra columns, restricted to the included pairs."""
        return {k: v[self.included] for k, v in self.pairs.extra.items()}


@dataclass(frozen=True)
class ReportTable:
    """One table of a section.

    ``frame`` holds numbers (the ``--out-dir`` CSV and the reader's text come from it);
    ``name`` is its file stem and its table name for
    :func:`~ranking_core.meter.drawing.display.display_frame`; ``text``, when given, is the
    reader's text already (tables that display_frame does not format); ``caption`` follows it.
    ``data``: a table of the report's results (False: text for readers only, such as the
    settings, whose values are in the JSON in their own shape).
    """

    name: str
    title: str
    frame: pd.DataFrame
    caption: str = ""
    text: pd.DataFrame | None = None
    data: bool = True

    def reader(self, unit: str = "mg/dL") -> pd.DataFrame:
        """The table as the reader's text (human headers, units, rounding)."""
        from ranking_core.meter.drawing.display import display_frame

        return self.text if self.text is not None else display_frame(self.frame, self.name, unit)


@dataclass(frozen=True)
class ReportFigure:
    """One figure of a section: its file stem, its caption, how to draw it (matplotlib) and a
    short label for choosing it (default: its name)."""

    name: str
    caption: str
    draw: Callable[[], Figure]
    label: str = ""

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.name.replace("_", " "))


@dataclass(frozen=True)
class SectionView:
    """What a section gives every rendering, in reading order: title, paragraphs, tables,
    figures; the one-line summary; its JSON keys and values (numbers as numbers)."""

    key: str
    title: str
    summary: str
    json: dict[str, Any]
    about: tuple[str, ...] = ()
    tables: tuple[ReportTable, ...] = ()
    figures: tuple[ReportFigure, ...] = ()
    cautions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Section:
    """One analysis of the report.

    Attributes
    ----------
    key : its name in the report's results (and usually its JSON key).
    title : its heading in every rendering.
    compute : inputs → its result, or None when it does not apply to these pairs (no sensor
        column, no times, a standard not chosen ...).
    view : (result, report) → :class:`SectionView`.
    """

    key: str
    title: str
    compute: Callable[[SectionInputs], Any]
    view: Callable[[Any, CoreReport], SectionView]


def json_ready(value: Any) -> Any:
    """A value for JSON: numpy numbers as Python numbers, NaN and infinities as None, frames
    as lists of records, containers walked."""
    if isinstance(value, pd.DataFrame):
        return records(value)
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_ready(value.tolist())
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    return value


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A table as a list of records (NaN → null, numbers as numbers)."""
    return json.loads(frame.to_json(orient="records"))
