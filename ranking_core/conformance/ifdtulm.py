"""The ``ifdtulm-ci`` vector: iCGM agreement rates and their one-sided 95 % lower bounds against
the IfDTUlm reference implementation (github IfDTUlm/CGM_Performance_Assessment, “Confidence
Intervals”; Stephan et al., Diabetes Technol Ther 2022, doi:10.1089/dia.2022.0331).

Their rule (the vector's README): ranges by the CGM value (< 70, 70–180, > 180 mg/dL, and
Total); ARxx is the share of pairs within ±xx mg/dL of the comparator when CGM < 70 and within
±xx % otherwise, Total using ±xx % for every pair; "within" is ≤. Seven of the twelve cells are
the FDA iCGM criteria A–G (21 CFR 862.1355(b)(1)(ii)): their pairs and hits come from the iCGM
acceptance profile ``riskgrid meter-report`` judges by, their rate and Clopper–Pearson bound
from its acceptance table; the other five cells follow the rule above.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.conformance.common import (
    Comparison,
    ConformanceDataError,
    check_file,
    read_pairs_table,
)
from ranking_core.meter.standards.acceptance import (
    AcceptanceData,
    JudgeSettings,
    acceptance_table,
    get_profile,
)
from ranking_core.meter.standards.bounds import lower_bound
from ranking_core.meter.standards.registry import PairsView

__all__ = [
    "CELL_CRITERIA",
    "KNOWN_FACTS",
    "LIMITS",
    "RANGES",
    "agreement_cells",
    "compare_ifdtulm",
    "read_test_data",
]

VECTOR = "ifdtulm-ci"
RANGES = ("<70", "70-180", ">180", "Total")
LIMITS = (15, 20, 40)
# (range, limit) → the iCGM criterion it is
CELL_CRITERIA = {
    ("<70", 15): "A",
    ("70-180", 15): "B",
    (">180", 15): "C",
    ("<70", 40): "D",
    ("70-180", 40): "E",
    (">180", 40): "F",
    ("Total", 20): "G",
}
# facts the vector's README states about this data (mg/dL; percentages)
KNOWN_FACTS = {
    "CGM readings below 40 mg/dL": (39, 0),
    "criterion A inside 40–400 mg/dL: pairs within ±15 mg/dL": (298, 0),
    "criterion A inside 40–400 mg/dL: pairs in range": (335, 0),
    "criterion A inside 40–400 mg/dL: share (%)": (88.96, 2),
    "criterion A inside 40–400 mg/dL: CP bound (%)": (85.73, 2),
    "criterion H: pairs with CGM < 70 and comparator > 180": (1, 0),
    "criterion H: pairs with CGM < 70": (374, 0),
}
MEASURING_RANGE = get_profile("icgm").measuring_range or (40.0, 400.0)  # mg/dL
_COLUMNS = ("SensorID", "Comp", "CGM")


def read_test_data(folder: Path) -> pd.DataFrame:
    """``Test_Data.csv``: SensorID, Comp and CGM (mg/dL) per pair; :class:`ConformanceDataError`
    when a column is missing, a value is not a finite number or there are too many rows."""
    path = folder / "Test_Data.csv"
    frame = read_pairs_table(path, _COLUMNS)
    for column in ("Comp", "CGM"):
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = np.flatnonzero(~np.isfinite(values.to_numpy(dtype=float)) | (values <= 0))
        if bad.size:
            raise ConformanceDataError(
                f"{path}, line {bad[0] + 2}: {column} must be a positive number (mg/dL)"
            )
        frame[column] = values.astype(float)
    return frame


def _results(folder: Path, name: str) -> dict[str, dict[str, float]]:
    """Their results file as {range: {column: number}} for the columns compared."""
    path = check_file(folder / name)
    frame = pd.read_csv(path, nrows=10)
    if "Range" not in frame.columns or list(frame["Range"]) != list(RANGES):
        raise ConformanceDataError(f"{path}: rows must be the ranges {', '.join(RANGES)}")
    columns = [
        f"{stem}{limit}"
        for stem in ("AR", "CP_CI", "WCC_CI", "WCC_ICC", "BCa_CI")
        for limit in LIMITS
    ]
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ConformanceDataError(f"{path}: no column {', '.join(missing)}")
    values = frame[columns].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    bad = np.argwhere(~np.isfinite(values))
    if bad.size:
        row, column = bad[0]
        raise ConformanceDataError(f"{path}, line {row + 2}: {columns[column]} must be a number")
    return {
        str(rng): dict(zip(columns, map(float, row), strict=True))
        for rng, row in zip(frame["Range"], values, strict=True)
    }


# the publishers judge every pair (no measuring range) with Clopper–Pearson bounds
EVERY_PAIR = JudgeSettings(("icgm",), measuring_range=None, bound="cp")


def agreement_cells(
    data: pd.DataFrame,
) -> dict[tuple[str, int], tuple[NDArray[np.bool_], NDArray[np.bool_]]]:
    """(scope, hit) of every (range, limit) cell: criteria A–G from the iCGM acceptance profile,
    the other cells by the reference's rule."""
    comp, cgm = data["Comp"].to_numpy(float), data["CGM"].to_numpy(float)
    acceptance = PairsView(comp, cgm)
    criteria = {c.id: c for c in get_profile("icgm").criteria}
    scopes = {
        "<70": cgm < 70,
        "70-180": (cgm >= 70) & (cgm <= 180),
        ">180": cgm > 180,
        "Total": np.ones(cgm.size, dtype=bool),
    }
    gap = np.abs(cgm - comp)
    cells = {}
    for name in RANGES:
        for limit in LIMITS:
            if (name, limit) in CELL_CRITERIA:
                scope, hit = criteria[CELL_CRITERIA[name, limit]].select(acceptance)
            else:
                scope = scopes[name]
                relative = 100.0 * gap <= limit * comp
                hit = np.where((cgm < 70) & (name != "Total"), gap <= limit, relative)
            cells[name, limit] = (np.asarray(scope), np.asarray(hit))
    return cells


def compare_ifdtulm(folder: Path) -> list[Comparison]:
    """Every cell's agreement rate, Clopper–Pearson, clustered Wilson (with its intra-class
    correlation) and BCa bounds against the published ones, then the README's facts."""
    data = read_test_data(folder)
    python, r_results = (
        _results(folder, "CI_Results_Python.csv"),
        _results(folder, "CI_Results_R.csv"),
    )
    sensor = data["SensorID"].astype(str).to_numpy()
    comp, cgm = data["Comp"].to_numpy(float), data["CGM"].to_numpy(float)
    table, _ = acceptance_table(AcceptanceData(comp, cgm), EVERY_PAIR)
    judged = table.set_index("id")
    rows: list[Comparison] = []
    py_source, r_source = "their Python (CI_Results_Python.csv)", "their R (CI_Results_R.csv)"

    def add(
        source: str,
        statistic: str,
        expected: float,
        ours: float | None,
        tol: float,
        dec: int,
        why: str = "",
    ) -> None:
        rows.append(Comparison(VECTOR, source, statistic, float(expected), ours, tol, dec, why))

    for (name, limit), (scope, hit) in agreement_cells(data).items():
        criterion = CELL_CRITERIA.get((name, limit))
        cell = f"{name} AR{limit}" + (f" (iCGM {criterion})" if criterion else "")
        if criterion:
            row = judged.loc[criterion]
            share, cp = float(row["percent"]), float(row["lower_bound_percent"])
        else:
            share = 100.0 * float(hit[scope].mean())
            cp = lower_bound("cp", hit[scope]).lower_percent
        wcc = lower_bound("wilson-cc", hit[scope], sensor[scope])
        bca = lower_bound(
            "bootstrap",
            hit[scope],
            sensor[scope],
            resamples=10_000,
            seed=1,
            study_clusters=len(set(sensor)),  # every sensor resampled, as the reference does
        )
        add(py_source, f"{cell}: agreement rate (%)", python[name][f"AR{limit}"], share, 1e-6, 4)
        add(
            py_source,
            f"{cell}: Clopper–Pearson bound (%)",
            python[name][f"CP_CI{limit}"],
            cp,
            1e-4,
            4,
        )
        add(
            py_source,
            f"{cell}: clustered Wilson bound (%)",
            python[name][f"WCC_CI{limit}"],
            wcc.lower_percent,
            1e-4,
            4,
        )
        add(
            py_source,
            f"{cell}: intra-class correlation",
            python[name][f"WCC_ICC{limit}"],
            wcc.icc,
            1e-6,
            6,
        )
        for source, frame in ((py_source, python), (r_source, r_results)):
            expected = frame[name][f"BCa_CI{limit}"]
            add(source, f"{cell}: BCa bootstrap bound (%)", expected, bca.lower_percent, 0.75, 4)
    rows.extend(_known_facts(data))
    return rows


def _known_facts(data: pd.DataFrame) -> list[Comparison]:
    """The README's facts: readings below the measuring range, criterion A inside it, H."""
    comp, cgm = data["Comp"].to_numpy(float), data["CGM"].to_numpy(float)
    low = MEASURING_RANGE[0]
    inside_range, _ = acceptance_table(
        AcceptanceData(comp, cgm), JudgeSettings(("icgm",), bound="cp")
    )
    a = inside_range.set_index("id").loc["A"]
    table, _ = acceptance_table(AcceptanceData(comp, cgm), EVERY_PAIR)
    h = table.set_index("id").loc["H"]
    ours = {
        "CGM readings below 40 mg/dL": float(np.count_nonzero(cgm < low)),
        "criterion A inside 40–400 mg/dL: pairs within ±15 mg/dL": float(a["count"]),
        "criterion A inside 40–400 mg/dL: pairs in range": float(a["n"]),
        "criterion A inside 40–400 mg/dL: share (%)": float(a["percent"]),
        "criterion A inside 40–400 mg/dL: CP bound (%)": float(a["lower_bound_percent"]),
        "criterion H: pairs with CGM < 70 and comparator > 180": float(h["count"]),
        "criterion H: pairs with CGM < 70": float(h["n"]),
    }
    return [
        Comparison(
            VECTOR,
            "the vector's README",
            statistic,
            float(expected),
            ours[statistic],
            0.5 * 10.0**-decimals if decimals else 0.0,
            decimals,
        )
        for statistic, (expected, decimals) in KNOWN_FACTS.items()
    ]
