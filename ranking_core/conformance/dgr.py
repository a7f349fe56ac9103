"""The ``dgr`` vector: comparator data coverage by Dynamic Glucose Regions (Eichenlaub et al.,
Diabetes Technol Ther 2024; regions of the IFCC WG-CGM guideline, Pleus et al., Clin Chim Acta
2025) against the IfDTUlm reference implementation (github IfDTUlm/CGM_Performance_Assessment,
folder "Dynamic Glucose Region (DGR) Plot", MIT).

The folder ``dgr/`` holds their ``Test_Data.csv`` unchanged: 5,285 comparator readings with
columns BG (mg/dL) and ROC (mg/dL/min). They publish their result only as the figure
``Python/DGR_plot.png``, and at commit 1627801c (which updated the regions to the IFCC
guideline's) that figure was not drawn again: it shows n = 4,813, the earlier regions' result.
The expected numbers below (:data:`EXPECTED`) were therefore computed by their code itself:
``DGR_plot.py`` at commit 1627801c, run unchanged (pandas 2.3.3, NumPy 2.4.6) on
``Test_Data.csv`` — ``region_cnt`` on every reading, ``remove_data`` for the exclusion ellipse
(its message "72 (1.4%) RoC-BG pairs excluded" and D of the ellipse), then ``region_cnt`` on
what remains. Ours: :func:`ranking_core.meter.cgm.dgr.dgr`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ranking_core.conformance.common import Comparison, ConformanceDataError, read_pairs_table
from ranking_core.meter.cgm.dgr import DGR_REGIONS, dgr

__all__ = ["EXPECTED", "compare_dgr", "read_dgr_data"]

VECTOR = "dgr"
SOURCE = "their DGR_plot.py (commit 1627801c) run on Test_Data.csv"
_COLUMNS = ("BG", "ROC")
_KEYS = (*DGR_REGIONS, "total")
# region_cnt: [BG low, BG high, alert low, alert high, stable, total], before and after exclusion
EXPECTED_COUNTS: dict[str, dict[str, int]] = {
    "before": dict(zip(_KEYS, (434, 391, 458, 591, 1701, 5285), strict=True)),
    "after": dict(zip(_KEYS, (434, 391, 458, 591, 1660, 5213), strict=True)),
}
EXPECTED_EXCLUDED = 72  # their message: "72 (1.4%) RoC-BG pairs excluded"
EXPECTED_DISTANCE = 0.26197926816070854  # D_excl returned by their remove_data
EXPECTED = {"counts": EXPECTED_COUNTS, "excluded": EXPECTED_EXCLUDED, "distance": EXPECTED_DISTANCE}


def read_dgr_data(folder: Path) -> pd.DataFrame:
    """``Test_Data.csv`` with BG and ROC as numbers; :class:`ConformanceDataError` naming the line
    when a value is not a number."""
    path = folder / "Test_Data.csv"
    frame = read_pairs_table(path, _COLUMNS)
    for column in _COLUMNS:
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(values)
        if bad.any():
            line = int(np.flatnonzero(bad)[0]) + 2
            raise ConformanceDataError(f"{path}, line {line}: {column} must be a number")
        frame[column] = values
    return frame


def compare_dgr(folder: Path) -> list[Comparison]:
    """Every region's readings before and after the ellipse, the readings removed and the
    ellipse's D, beside their code's."""
    data = read_dgr_data(folder)
    result = dgr(data["BG"].to_numpy(float), data["ROC"].to_numpy(float))
    rows = []
    for stage, counts in (("as measured", result.counts), ("after the ellipse", result.after)):
        key = "before" if stage == "as measured" else "after"
        for name in _KEYS:
            rows.append(
                Comparison(
                    VECTOR,
                    SOURCE,
                    f"{name.replace('_', ' ')} readings, {stage}",
                    float(EXPECTED_COUNTS[key][name]),
                    float(getattr(counts, name)),
                    0.0,
                    0,
                )
            )
    rows.append(
        Comparison(
            VECTOR,
            SOURCE,
            "readings removed by the exclusion ellipse",
            float(EXPECTED_EXCLUDED),
            float(result.excluded.sum()),
            0.0,
            0,
        )
    )
    rows.append(
        Comparison(
            VECTOR,
            SOURCE,
            "D of the exclusion ellipse",
            EXPECTED_DISTANCE,
            result.exclusion_distance,
            1e-12,
            6,
        )
    )
    return rows
