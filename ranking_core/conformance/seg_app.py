"""The ``seg-app`` vector: the official SEG app's reports of its two example files (segtools, the
R package of the Diabetes Technology Society's SEG app) against ``riskgrid meter-report``'s.

The app prints percentages to one decimal; ours are compared unrounded, within half that last
digit. :func:`report_numbers` reads the statistics from a report's JSON (``meter-report
--json``), so the command line's output and :func:`compare_seg_app` are read the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ranking_core.conformance.common import Comparison, check_file
from ranking_core.grids.seg import SEGTable
from ranking_core.meter.pairs.readings import read_pairs
from ranking_core.meter.report import meter_report

__all__ = ["PUBLISHED", "compare_seg_app", "report_numbers"]

VECTOR = "seg-app"
SOURCE = "SEG app (segtools)"
_COUNT = (0, 0.0)  # decimals, tolerance of a count
_ONE_DECIMAL = (2, 0.05)  # a percentage the app prints to one decimal
# file → statistic → (the app's number, decimals shown, tolerance)
PUBLISHED: dict[str, dict[str, tuple[float, int, float]]] = {
    "example_seg.csv": {
        "pairs": (49, *_COUNT),
        "pairs BGM < REF": (30, *_COUNT),
        "pairs BGM = REF": (1, *_COUNT),
        "pairs BGM > REF": (18, *_COUNT),
        "risk level 0": (47, *_COUNT),
        "risk level 1": (2, *_COUNT),
        "risk grade A": (47, *_COUNT),
        "risk grade B": (2, *_COUNT),
        **{f"ISO range {i}": (n, *_COUNT) for i, n in enumerate((24, 17, 6, 2, 0), 1)},
        "bias (%)": (-1.0, *_ONE_DECIMAL),
        "MARD (%)": (6.0, *_ONE_DECIMAL),
        "CV (%)": (7.3, *_ONE_DECIMAL),
        "lower limit of agreement (%)": (-15.4, *_ONE_DECIMAL),
        "upper limit of agreement (%)": (13.3, *_ONE_DECIMAL),
        "within ISO limits": (47, *_COUNT),
        "within ISO limits (%)": (95.9, *_ONE_DECIMAL),
        "binomial lower bound (pairs)": (44, *_COUNT),
        "meets the binomial test (1 yes, 0 no)": (1, *_COUNT),
    },
    "No_Interference_Dogs.csv": {
        "pairs": (188, *_COUNT),
        "pairs BGM < REF": (99, *_COUNT),
        "pairs BGM = REF": (1, *_COUNT),
        "pairs BGM > REF": (88, *_COUNT),
        "pairs excluded, REF > 600 mg/dL": (4, *_COUNT),
        "pairs included": (184, *_COUNT),
        **{f"risk level {i}": (n, *_COUNT) for i, n in enumerate((91, 47, 24, 14, 5))},
        "risk grade A": (91, *_COUNT),
        "risk grade B": (71, *_COUNT),
        "risk grade C": (19, *_COUNT),
        **{f"ISO range {i}": (n, *_COUNT) for i, n in enumerate((21, 15, 16, 22, 107), 1)},
        "bias (%)": (2.1, *_ONE_DECIMAL),
        "MARD (%)": (33.8, *_ONE_DECIMAL),
        "CV (%)": (43.2, *_ONE_DECIMAL),
        "within ISO limits": (52, *_COUNT),
        "binomial lower bound (pairs)": (167, *_COUNT),
        "meets the binomial test (1 yes, 0 no)": (0, *_COUNT),
    },
}


def report_numbers(payload: dict[str, Any]) -> dict[str, float]:
    """The statistics of :data:`PUBLISHED` from a meter report's JSON (``MeterReport.to_dict``),
    plus "pairs excluded, BGM > 600 mg/dL"."""
    types = {row["pair_type"]: row["count"] for row in payload["pair_types"]}
    accuracy = payload["accuracy"][0]
    binomial = payload["binomial"][0]
    out: dict[str, float] = {
        "pairs": types["Total"],
        "pairs BGM < REF": types["BGM < REF"],
        "pairs BGM = REF": types["BGM = REF"],
        "pairs BGM > REF": types["BGM > REF"],
        "pairs excluded, REF > 600 mg/dL": types["REF > 600: excluded from SEG analysis"],
        "pairs excluded, BGM > 600 mg/dL": types["BGM > 600: excluded"],
        "pairs included": types["Total included in SEG analysis"],
        "bias (%)": accuracy["bias_percent"],
        "MARD (%)": accuracy["mard_percent"],
        "CV (%)": accuracy["cv_percent"],
        "lower limit of agreement (%)": accuracy["loa_lower_percent"],
        "upper limit of agreement (%)": accuracy["loa_upper_percent"],
        "within ISO limits": binomial["compliant"],
        "within ISO limits (%)": binomial["compliant_percent"],
        "binomial lower bound (pairs)": binomial["lower_bound"],
        "meets the binomial test (1 yes, 0 no)": float(bool(binomial["meets"])),
    }
    out.update({f"risk level {row['id']}": row["count"] for row in payload["risk_categories"]})
    out.update({f"risk grade {row['grade']}": row["count"] for row in payload["risk_grades"]})
    out.update({f"ISO range {row['id']}": row["count"] for row in payload["iso_ranges"]})
    return {key: float(value) for key, value in out.items()}


def _included_explanation(
    published: dict[str, tuple[float, int, float]], ours: dict[str, float]
) -> str:
    """Why the app's "included" count can exceed ours, when its own tables confirm it: the app
    subtracts only REF > 600 there, while its risk tables also leave out BGM > 600."""
    levels = sum(v[0] for k, v in published.items() if k.startswith("risk level"))
    extra = ours["pairs excluded, BGM > 600 mg/dL"]
    if levels != ours["pairs included"] or published["pairs included"][0] - extra != levels:
        return ""
    return (
        f"the app's pair-type table subtracts only the pairs with REF > 600 mg/dL; its risk-level, "
        f"grade and ISO tables count {levels:.0f} pairs, also leaving out the {extra:.0f} with "
        "BGM > 600 mg/dL, as every table of ours does"
    )


def compare_seg_app(folder: Path, seg_table: SEGTable) -> list[Comparison]:
    """Each example file through the meter report (as ``riskgrid meter-report`` builds it),
    against the app's numbers."""
    rows = []
    for name, published in PUBLISHED.items():
        path = check_file(folder / name)
        report = meter_report(read_pairs(path), seg_table)
        ours = report_numbers(report.to_dict())
        for statistic, (expected, decimals, tolerance) in published.items():
            why = _included_explanation(published, ours) if statistic == "pairs included" else ""
            rows.append(
                Comparison(
                    VECTOR,
                    f"{SOURCE}, {name}",
                    statistic,
                    float(expected),
                    ours[statistic],
                    tolerance,
                    decimals,
                    why,
                )
            )
    return rows
