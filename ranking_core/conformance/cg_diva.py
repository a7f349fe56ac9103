"""The ``cg-diva`` vector: CG-DIVA (Eichenlaub et al., J Diabetes Sci Technol 2022,
doi:10.1177/19322968221134639) against the IfDTUlm reference implementation (github
IfDTUlm/CGM_Performance_Assessment, folder "CG-DIVA", v1.0, MIT).

The folder ``cg-diva/`` holds their files unchanged, renamed:

* ``Test_Data.csv`` (their ``CG-DIVA/Test_Data.csv``): SensorID, Comp, CGM (mg/dL), 3,600 pairs
  of 24 sensors;
* ``CG-DIVA_Python.csv`` and ``CG-DIVA_R.csv`` (their ``Python/CG-DIVA.csv`` and
  ``R/CG-DIVA.csv``): rows ``<70``, ``70-180``, ``>180``, ``Total`` (comparator ranges); columns
  Median, DI1_Lower, DI1_Upper, DI2_Lower, DI2_Upper (``-`` for Total), BSV_Min_Max (text
  ``[min - max]`` to two decimals), BSV_Range, WSV_90%Range; 10,000 resamples, seed 1.

Ours: :func:`ranking_core.meter.cgm.cg_diva.cg_diva` with the same resamples and seed. Their Python
draws its resamples from NumPy's legacy generator as ours does, so the bootstrap limits agree to
rounding; their R draws other random numbers, so its limits are compared with Monte Carlo
tolerances (1 for the inner interval, 4 for the outer: their R and Python results differ by up
to 1.6 there). Medians and variabilities are deterministic.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ranking_core.conformance.common import Comparison, ConformanceDataError, check_file
from ranking_core.conformance.ifdtulm import read_test_data
from ranking_core.meter.cgm.cg_diva import CG_DIVA_RANGES, RESAMPLES, SEED, CgDivaRange, cg_diva

__all__ = ["FOLDER", "RESULT_FILES", "compare_cg_diva", "published_results"]

VECTOR = FOLDER = "cg-diva"
RESULT_FILES = {"Python": "CG-DIVA_Python.csv", "R": "CG-DIVA_R.csv"}
_RANGES = ("<70", "70-180", ">180", "Total")
_LIMITS = ("DI1_Lower", "DI1_Upper", "DI2_Lower", "DI2_Upper")
_NUMBERS = ("Median", *_LIMITS, "BSV_Range", "WSV_90%Range")
_MIN_MAX = re.compile(r"^\[\s*(-?\d+(?:\.\d+)?)\s*-\s*(-?\d+(?:\.\d+)?)\s*\]$")
_DETERMINISTIC_TOLERANCE = 1e-6
_MONTE_CARLO_TOLERANCE = {"DI1": 1.0, "DI2": 4.0}
_SAME_NUMBERS_TOLERANCE = 1e-6


def _read_results(path: Path) -> pd.DataFrame:
    """The results file as text cells. Their R file's Total row has a stray quote
    (``"-,"[-7.57 - 12.39]"``), which a CSV reader takes for one cell: a row one cell short whose
    cell holds ``text,[min - max]`` is read as the two cells it was written as."""
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    rows = list(csv.reader(io.StringIO(text)))[:10]
    if not rows:
        raise ConformanceDataError(f"{path}: empty")
    header, body = rows[0], list[list[str]]()
    for row in rows[1:]:
        if len(row) == len(header) - 1:
            for i, cell in enumerate(row):
                split = re.match(r"^([^\[]*),(\[[^\]]*\])\"?$", cell)
                if split:
                    row = [*row[:i], split[1], split[2], *row[i + 1 :]]
                    break
        if len(row) != len(header):
            raise ConformanceDataError(
                f"{path}, line {len(body) + 2}: {len(row)} cells, the header has {len(header)}"
            )
        body.append(row)
    return pd.DataFrame(body, columns=header)


def published_results(path: Path) -> dict[str, dict[str, float]]:
    """Their results file as {range: {column: number}}; BSV_Min_Max split into BSV_Min and
    BSV_Max; the outer interval of Total (``-``) left out. :class:`ConformanceDataError` when
    the layout differs."""
    frame = _read_results(check_file(path))
    if "Range" not in frame.columns or list(frame["Range"]) != list(_RANGES):
        raise ConformanceDataError(f"{path}: rows must be the ranges {', '.join(_RANGES)}")
    missing = [c for c in (*_NUMBERS, "BSV_Min_Max") if c not in frame.columns]
    if missing:
        raise ConformanceDataError(f"{path}: no column {', '.join(missing)}")
    out: dict[str, dict[str, float]] = {}
    for line, (_, row) in enumerate(frame.iterrows(), start=2):
        name = str(row["Range"])
        values: dict[str, float] = {}
        for column in _NUMBERS:
            text = str(row[column]).strip()
            if name == "Total" and column.startswith("DI2") and text in ("-", "", "NA"):
                continue
            try:
                values[column] = float(text)
            except ValueError:
                raise ConformanceDataError(
                    f"{path}, line {line}: {column} must be a number; got {text[:40]!r}"
                ) from None
        match = _MIN_MAX.match(str(row["BSV_Min_Max"]).strip())
        if not match:
            raise ConformanceDataError(f"{path}, line {line}: BSV_Min_Max must read [min - max]")
        values["BSV_Min"], values["BSV_Max"] = float(match[1]), float(match[2])
        out[name] = values
    return out


def _ours(result: CgDivaRange) -> dict[str, float | None]:
    return {
        "Median": result.median,
        "DI1_Lower": result.di1_lower,
        "DI1_Upper": result.di1_upper,
        "DI2_Lower": result.di2_lower,
        "DI2_Upper": result.di2_upper,
        "BSV_Min": result.between_sensor_min,
        "BSV_Max": result.between_sensor_max,
        "BSV_Range": result.between_sensor_max - result.between_sensor_min,
        "WSV_90%Range": result.within_sensor_90,
    }


_TITLES = {
    "Median": "median deviation",
    "DI1_Lower": "inner deviation interval, lower limit",
    "DI1_Upper": "inner deviation interval, upper limit",
    "DI2_Lower": "outer deviation interval, lower limit",
    "DI2_Upper": "outer deviation interval, upper limit",
    "BSV_Min": "between-sensor variability, smallest sensor median",
    "BSV_Max": "between-sensor variability, largest sensor median",
    "BSV_Range": "between-sensor variability, range of sensor medians",
    "WSV_90%Range": "within-sensor variability, median 90 % range",
}


def compare_cg_diva(folder: Path) -> list[Comparison]:
    """Every published CG-DIVA number of their Python and R results beside ours."""
    data = read_test_data(folder)
    ours = cg_diva(
        data["Comp"].to_numpy(float),
        data["CGM"].to_numpy(float),
        data["SensorID"].astype(str).to_numpy(),
        resamples=RESAMPLES,
        seed=SEED,
    )
    by_range = dict(zip(_RANGES, ours, strict=True))
    rows: list[Comparison] = []
    for language, name in RESULT_FILES.items():
        published = published_results(folder / name)
        source = f"their {language} ({name})"
        for rng in _RANGES:
            mine = _ours(by_range[rng])
            unit = "mg/dL" if rng == "<70" else "%"
            for column, expected in published[rng].items():
                if column in ("BSV_Min", "BSV_Max"):
                    tolerance, decimals = 0.005, 2  # printed to two decimals
                elif column in _LIMITS and language == "R":
                    tolerance, decimals = _MONTE_CARLO_TOLERANCE[column[:3]], 4
                elif column in _LIMITS:
                    tolerance, decimals = _SAME_NUMBERS_TOLERANCE, 4
                else:
                    tolerance, decimals = _DETERMINISTIC_TOLERANCE, 4
                value = mine[column]
                rows.append(
                    Comparison(
                        VECTOR,
                        source,
                        f"{CG_DIVA_RANGES[_RANGES.index(rng)]}: {_TITLES[column]} ({unit})",
                        float(expected),
                        None if value is None or not np.isfinite(value) else float(value),
                        tolerance,
                        decimals,
                    )
                )
    return rows
