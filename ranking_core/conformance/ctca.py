"""The ``ctca`` vector: the Clinical Trend Concurrence Analysis (Eichenlaub M, Pleus S, Freckmann
G, "A proposal for the clinical characterization of CGM trend arrow accuracy", J Diabetes Sci
Technol) against the IfDTUlm reference implementation (github IfDTUlm/CGM_Performance_Assessment,
folder "Clinical Trend Concurrence Analysis", MIT).

The folder ``ctca/`` holds their ``Test_Data.csv`` unchanged: 2,634 pairs with columns BG, CGM,
Comp_ROC (the comparator's rate, mg/dL/min), Comp_ROC_Cat and CGM_ROC_Cat (categories −3 … 3).
They publish their results only as the figure ``Python/CTCA.png`` (commit 1627801c); its numbers
are written out below (:data:`PUBLISHED`): each comparator column's pairs, each cell's share of
its column and the zone shares to one decimal, MARoC to two.

Compared: our categories of Comp_ROC (:func:`ranking_core.meter.cgm.trend.ctca_category`) against
their Comp_ROC_Cat, pair by pair (the boundary rule); then, from their categories as the
reference code takes them, our counts, shares, zones
(:func:`ranking_core.meter.cgm.trend.trend_concurrence`) and MARoC against the figure's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ranking_core.conformance.common import Comparison, ConformanceDataError, read_pairs_table
from ranking_core.meter.cgm.trend import CTCA_CATEGORIES, ctca_category, trend_concurrence

__all__ = ["PUBLISHED", "compare_ctca", "read_ctca_data"]

VECTOR = "ctca"
SOURCE = "their figure (Python/CTCA.png)"
_COLUMNS = ("Comp_ROC", "Comp_ROC_Cat", "CGM_ROC_Cat")
# their figure: rows sensor category < −3 … > +3, columns comparator category (% of the column;
# "-" in the figure is 0)
PUBLISHED_COLUMN_PERCENT = (
    (15.4, 3.6, 1.5, 0.0, 0.0, 0.0, 0.0),
    (28.2, 28.1, 10.6, 1.0, 0.0, 1.0, 0.0),
    (34.6, 45.5, 50.4, 15.0, 3.5, 3.1, 2.5),
    (19.2, 19.2, 35.4, 71.6, 54.5, 48.5, 25.7),
    (1.3, 2.2, 1.7, 7.1, 17.3, 18.0, 21.3),
    (1.3, 0.9, 0.4, 3.9, 13.9, 10.8, 20.3),
    (0.0, 0.4, 0.0, 1.4, 10.8, 18.6, 30.2),
)
PUBLISHED_COLUMN_PAIRS = (78, 224, 536, 1169, 231, 194, 202)
PUBLISHED = {
    "pairs": (2634, 0),
    "zone A (%)": (62.1, 1),
    "zone B (%)": (25.7, 1),
    "zone C (%)": (10.6, 1),
    "zone D (%)": (1.5, 1),
    "MARoC (mg/dL/min)": (1.46, 2),
}


def read_ctca_data(folder: Path) -> pd.DataFrame:
    """``Test_Data.csv`` with its three columns as numbers; :class:`ConformanceDataError` naming
    the line when a value is not a number or a category not a whole number from −3 to 3."""
    path = folder / "Test_Data.csv"
    frame = read_pairs_table(path, _COLUMNS)
    for column in _COLUMNS:
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(values)
        if column != "Comp_ROC":
            bad |= (values != np.round(values)) | (np.abs(values) > 3)
        if bad.any():
            rule = "a number" if column == "Comp_ROC" else "a whole number from -3 to 3"
            raise ConformanceDataError(
                f"{path}, line {int(np.flatnonzero(bad)[0]) + 2}: {column} must be {rule}"
            )
        frame[column] = values
    return frame


def compare_ctca(folder: Path) -> list[Comparison]:
    """The boundary rule pair by pair, then every number of their figure beside ours."""
    data = read_ctca_data(folder)
    theirs = data["Comp_ROC_Cat"].to_numpy(int) + 3
    ours_cat = ctca_category(data["Comp_ROC"].to_numpy(float))
    result = trend_concurrence(
        data["CGM_ROC_Cat"].to_numpy(int) + 3, theirs, data["Comp_ROC"].to_numpy(float)
    )
    rows = [
        Comparison(
            VECTOR,
            "their Test_Data.csv (Comp_ROC_Cat)",
            "pairs whose comparator category differs from ours of Comp_ROC",
            0.0,
            float(np.count_nonzero(ours_cat != theirs)),
            0.0,
            0,
        )
    ]
    columns = result.counts.sum(axis=0)
    percent = result.column_percent
    for j, name in enumerate(CTCA_CATEGORIES):
        rows.append(
            Comparison(
                VECTOR,
                SOURCE,
                f"comparator {name}: pairs",
                float(PUBLISHED_COLUMN_PAIRS[j]),
                float(columns[j]),
                0.0,
                0,
            )
        )
        for i, sensor in enumerate(CTCA_CATEGORIES):
            rows.append(
                Comparison(
                    VECTOR,
                    SOURCE,
                    f"comparator {name}, sensor {sensor}: share of the column (%)",
                    PUBLISHED_COLUMN_PERCENT[i][j],
                    float(percent[i, j]),
                    0.05,
                    1,
                )
            )
    zones = result.zone_percent
    ours = {
        "pairs": float(result.counts.sum()),
        **{f"zone {z} (%)": zones[z] for z in "ABCD"},
        "MARoC (mg/dL/min)": result.maroc,
    }
    for statistic, (expected, decimals) in PUBLISHED.items():
        tolerance = 0.5 * 10.0**-decimals if decimals else 0.0
        rows.append(
            Comparison(
                VECTOR, SOURCE, statistic, float(expected), ours[statistic], tolerance, decimals
            )
        )
    return rows
