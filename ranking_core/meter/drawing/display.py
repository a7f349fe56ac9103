"""The meter report's tables as a reader sees them (terminal, page, PDF and HTML): human column
names with units, values rounded as the official SEG tool prints them (percentages to one
decimal), each 95 % interval in one column, verdicts in words, glucose in the input's unit with
mg/dL beside it.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ranking_core.inputs import MGDL_PER_MMOLL
from ranking_core.meter.standards.registry import profile_title

__all__ = [
    "ACCEPTANCE_SHOWN",
    "COLUMN_NAMES",
    "FAILS",
    "PASSES",
    "VERDICT",
    "acceptance_summary",
    "display_frame",
    "glucose_text",
    "value_text",
]

WIDE = 8  # tables with more columns are shown transposed (one column per row of the original)
PASSES, FAILS, MEETS, NO_PAIRS = "passes", "fails", "meets", "no pairs in range"
VERDICT = "Verdict"
CI = "95 % CI (%)"
# every field of the report's tables → its human name (tables may override, see _OVERRIDES)
COLUMN_NAMES = {
    "pair_type": "Pair type",
    "count": "Pairs",
    "percent": "Share (%)",
    "n": "Pairs (n)",
    "ref_zero_left_out": "Pairs with REF = 0 (left out)",
    "bias_percent": "Bias (%)",
    "mard_percent": "MARD (%)",
    "cv_percent": "CV (%)",
    "loa_lower_percent": "95 % limits of agreement, lower (%)",
    "loa_upper_percent": "95 % limits of agreement, upper (%)",
    "id": "No.",
    "grade": "Grade",
    "abs_risk_range": "Risk range",
    "category": "Risk category",
    "range": "Range",
    "compliant": "Pairs within ±15 mg/dL or ±15 %",
    "compliant_percent": "Within ±15 mg/dL or ±15 % (%)",
    "lower_bound": "Fewest pairs needed",
    "lower_bound_percent": "Fewest needed (%)",
    "meets": VERDICT,
    "passes": VERDICT,
    "zone": "Zone",
    "meaning": "Meaning",
    "profile": "Profile",
    "group": "Group",
    "criterion": "Criterion",
    "required_percent": "Required (%)",
    "rule": "Rule",
    "mard_ci": "MARD 95 % CI (%)",
    "bias_mg_dl": "Bias (mg/dL)",
    "bias_mmol_l": "Bias (mmol/L)",
    "within_15_count": "Within ±15/15 (pairs)",
    "within_15_percent": "Within ±15/15 (%)",
    "within_15_ci": "Within ±15/15, 95 % CI (%)",
    "within_20_count": "Within ±20/20 (pairs)",
    "within_20_percent": "Within ±20/20 (%)",
    "within_20_ci": "Within ±20/20, 95 % CI (%)",
    "ci": CI,
}
_OVERRIDES = {
    "acceptance": {
        "lower_bound_percent": "95 % lower bound (%)",
        "id": "Criterion",
        "criterion": "What is counted",
        "pairs": "Pairs counted / in range",
    },
    "binomial": {"n": "Pairs analysed"},
    "cg_ega": {
        "state": "Glycaemic state",
        "reference": "Reference (mg/dL)",
        "pairs": "Pairs",
        "accurate": "Accurate readings",
        "benign": "Benign errors",
        "error": "Erroneous readings",
    },
    "cg_ega_zones": {"grid": "Grid", "pairs": "Pairs", "percent": "Share of the pairs"},
    "trend_agreement": {"sensor_rate": "Sensor rate (mg/dL/min)", "total": "Pairs"},
    "trend_concurrence": {"measure": "Measure", "pairs": "Pairs", "value": "Value", "unit": "Unit"},
    "cg_diva": {
        "range": "Comparator range (mg/dL)",
        "unit": "Deviation unit",
        "pairs": "Pairs",
        "sensors": "Sensors",
        "median": "Median deviation",
        "di1_lower": "Inner interval, lower",
        "di1_upper": "Inner interval, upper",
        "di2_lower": "Outer interval, lower",
        "di2_upper": "Outer interval, upper",
        "between_sensor_min": "Sensor medians, smallest",
        "between_sensor_max": "Sensor medians, largest",
        "within_sensor_90": "Within-sensor 90 % range, median",
    },
}
# the acceptance table's columns shown to a reader, in order, those present (a table may carry
# more: they stay in the JSON and CSV files)
ACCEPTANCE_SHOWN = (
    "group",
    "profile",
    "id",
    "criterion",
    "pairs",
    "percent",
    "lower_bound_percent",
    "required_percent",
    "rule",
    "passes",
)
_MGDL = re.compile(r"(?<![\d.])(?:(\d+(?:\.\d+)?)–)?(\d+(?:\.\d+)?) mg/dL")


def glucose_text(text: str, unit: str) -> str:
    """Text naming glucose in mg/dL, with each value also in ``unit`` first when it is mmol/L:
    "< 70 mg/dL" → "< 3.9 mmol/L (70 mg/dL)"."""
    if unit != "mmol/L":
        return text

    def both(match: re.Match) -> str:
        low, high = match.groups()
        mmol = f"{float(high) / MGDL_PER_MMOLL:.1f}"
        if low is not None:
            return f"{float(low) / MGDL_PER_MMOLL:.1f}–{mmol} mmol/L ({low}–{high} mg/dL)"
        return f"{mmol} mmol/L ({high} mg/dL)"

    return _MGDL.sub(both, text)


def acceptance_summary(acceptance: pd.DataFrame) -> list[str]:
    """One sentence per judged profile (those in the table, in order): its title, its citation
    from the registry and how each of its criteria is judged, e.g. "FDA iCGM: 21 CFR 862.1355…
    Verdicts, by criterion: A, …, G: 95 % lower bound > required; H, I: no pair allowed."."""
    from ranking_core.meter.standards.acceptance import get_profile

    sentences = []
    for name, rows in acceptance.groupby("profile", sort=False):
        try:
            profile = get_profile(str(name))
            title, citation = str(profile.title), str(getattr(profile, "citation", ""))
            source = citation if citation.startswith(title) else f"{title}: {citation}"
        except ValueError:
            source = str(name)
        rules = [
            f"{', '.join(dict.fromkeys(map(str, same['id'])))}: {rule}"
            for rule, same in rows.groupby("rule", sort=False)
        ]
        sentences.append(f"{source}. Verdicts, by criterion: {'; '.join(rules)}.")
    return sentences


def value_text(value: object) -> str:
    """A provenance value as text: whole numbers with thousands separators, other numbers to 4
    significant digits, text as it is."""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return f"{int(value):,}"
    if isinstance(value, float | np.floating):
        return f"{float(value):.4g}"
    return str(value)


def _number(value: object) -> str:
    if (
        value is None
        or value is pd.NA
        or (isinstance(value, float | np.floating) and np.isnan(value))
    ):
        return "—"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return f"{int(value):,}"
    if isinstance(value, float | np.floating):
        text = f"{value:.1f}"
        # never show 99.98 % as 100.0 or 0.02 % as 0.0
        return f"{value:.2f}" if float(text) != value and float(text) in (0.0, 100.0) else text
    return str(value)


def _verdict(value: object, met: str) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return NO_PAIRS
    return met if bool(value) else FAILS


def _merge_intervals(frame: pd.DataFrame) -> pd.DataFrame:
    """Each pair of columns ``X_ci_lower_percent`` / ``X_ci_upper_percent`` (or
    ``X_ci_lower_percent``) as one text column "lower–upper" named ``X_ci`` in their place."""
    out: dict[str, list[str] | pd.Series] = {}
    for column in frame.columns:
        if column.endswith("ci_upper_percent"):
            continue
        if column.endswith("ci_lower_percent"):
            stem = column[: -len("_lower_percent")]
            upper = frame[f"{stem}_upper_percent"]
            out[stem] = [
                f"{_number(lo)}–{_number(hi)}" if not pd.isna(lo) else "—"
                for lo, hi in zip(frame[column], upper, strict=True)
            ]
        else:
            out[column] = frame[column]
    return pd.DataFrame(out, index=frame.index)


def display_frame(
    frame: pd.DataFrame, name: str | None = None, unit: str = "mg/dL"
) -> pd.DataFrame:
    """A report table as text for reading.

    Numbers rounded (percentages to one decimal, counts with thousands separators), NaN as "—",
    each 95 % interval as one "lower–upper" column, verdicts ("passes", "meets", "fails", "no
    pairs in range") in a "Verdict" column, human column names with units (:data:`COLUMN_NAMES`;
    ``name`` is the table's name in :meth:`MeterReport.tables` for table-specific names), glucose
    in mmol/L with mg/dL beside it when ``unit`` is mmol/L. One-row tables become Measure /
    Value; tables wider than 8 columns are transposed (one column per row of the original,
    named by its first cell).
    """
    frame = _merge_intervals(frame)
    if name == "acceptance":  # a list of criteria: one row each, counts in one column
        frame = frame.drop(columns=["count", "n"]).assign(
            pairs=[f"{c:,} / {n:,}" for c, n in zip(frame["count"], frame["n"], strict=True)]
        )
        frame = frame[[c for c in ACCEPTANCE_SHOWN if c in frame]]
    if unit == "mmol/L" and "bias_mg_dl" in frame:
        at = list(frame.columns).index("bias_mg_dl") + 1
        frame.insert(at, "bias_mmol_l", frame["bias_mg_dl"] / MGDL_PER_MMOLL)
    text = pd.DataFrame(index=frame.index)
    for column in frame.columns:
        values = frame[column]
        if column in ("passes", "meets"):
            text[column] = [_verdict(v, MEETS if column == "meets" else PASSES) for v in values]
        elif column == "profile":
            text[column] = [profile_title(v) for v in values]
        elif column == "bias_mmol_l":
            text[column] = [f"{v:.2f}" if np.isfinite(v) else "—" for v in values]
        elif values.dtype == object or isinstance(values.dtype, pd.CategoricalDtype):
            text[column] = [glucose_text(_number(v), unit) for v in values]
        else:
            text[column] = [_number(v) for v in values.tolist()]
    names = {**COLUMN_NAMES, **_OVERRIDES.get(name or "", {})}
    text.columns = [names.get(c, c.replace("_", " ")) for c in text.columns]
    text = text.reset_index(drop=True)
    if len(text) == 1:
        return pd.DataFrame({"Measure": text.columns, "Value": text.iloc[0].tolist()})
    if len(text.columns) > WIDE and name != "acceptance":
        first = text.columns[0]
        body = text.set_index(first).T
        body.columns = [str(c) for c in body.columns]
        return body.reset_index(names="Measure")
    return text
