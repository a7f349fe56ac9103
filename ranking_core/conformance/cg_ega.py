"""The ``cg-ega`` vector: CG-EGA (Kovatchev et al., Diabetes Care 2004;27:1922–1928) against the
documented example of the open Python implementation github dotXem/CG-EGA (De Bois M, "CG-EGA
Python Implementation", 2019, doi:10.5281/zenodo.3459485; commit d4a8898).

The folder ``cg-ega/`` holds their ``example.npy`` unchanged: a float32 array of shape
(2, 1, 246), reference (``y_true``) then estimate (``y_pred``) in mg/dL, one reading every 5 min
(``freq = 5`` in their ``main.py`` and README). Their README publishes the shares of accurate
readings, benign errors and erroneous readings over every glycaemic state:
``AP, BE, EP: (0.8367346938775511, 0.12653061224489795, 0.036734693877551024)``.

Ours: the readings given times 5 min apart, rates by
:func:`ranking_core.meter.standards.acceptance.rates_of_change` (as ``riskgrid meter-report``
computes them), then :func:`ranking_core.meter.cgm.cg_ega.cg_ega`. Every pair's P-zone and R-zone is
theirs; the shares differ by the pairs in hyperglycaemia with a P-zone A or B and the R-zone lD (a
rapid
rise not detected), erroneous readings by the published matrix and benign errors by their
``filters.py``: each is named in the explanation, and the shares are compared again with those
pairs as their filters count them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ranking_core.conformance.common import Comparison, ConformanceDataError, check_file
from ranking_core.meter.cgm.cg_ega import (
    CLASSES,
    STATES,
    cg_ega,
    error_class,
    glycaemic_state,
    point_zone,
    rate_zone,
)
from ranking_core.meter.standards.acceptance import rates_of_change

__all__ = ["EXAMPLE_FILE", "FOLDER", "PUBLISHED", "compare_cg_ega", "read_example"]

VECTOR = FOLDER = "cg-ega"
EXAMPLE_FILE = "example.npy"
MINUTES_BETWEEN_READINGS = 5.0
# their README, "How to use": AP, BE, EP over every state (fractions of the classified pairs)
PUBLISHED = {
    "accurate": 0.8367346938775511,
    "benign": 0.12653061224489795,
    "error": 0.036734693877551024,
}
_TITLES = {
    "accurate": "accurate readings",
    "benign": "benign errors",
    "error": "erroneous readings",
}
_SOURCE = "dotXem/CG-EGA README (example.npy)"
_TOLERANCE = 1e-9  # percentage points: the same ratio of whole counts


def read_example(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """Their ``example.npy`` as (reference, estimate) float64 arrays in mg/dL;
    :class:`ConformanceDataError` when it is not a finite numeric array of shape (2, 1, n) or
    (2, n) with n ≥ 2."""
    path = check_file(folder / EXAMPLE_FILE)
    try:
        array = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as error:
        raise ConformanceDataError(f"{path}: not a NumPy array file ({error})") from None
    if array.dtype.kind not in "fiu" or array.ndim not in (2, 3) or array.shape[0] != 2:
        raise ConformanceDataError(
            f"{path}: must be a numeric array of shape (2, 1, n) or (2, n); got {array.shape}"
        )
    values = array.reshape(2, -1).astype(np.float64)
    if values.shape[1] < 2 or not np.isfinite(values).all():
        raise ConformanceDataError(f"{path}: must hold at least 2 finite readings per series")
    return values[0], values[1]


def compare_cg_ega(folder: Path) -> list[Comparison]:
    """The published shares of accurate readings, benign errors and erroneous readings beside
    ours, then beside ours with the hyperglycaemic lD pairs counted as their filters count them."""
    reference, estimate = read_example(folder)
    times = np.datetime64("2020-01-01T00:00") + (
        np.arange(reference.size) * MINUTES_BETWEEN_READINGS
    ).astype("timedelta64[m]")
    rates = rates_of_change(reference, estimate, times, times, None, MINUTES_BETWEEN_READINGS)
    ours = cg_ega(reference, estimate, rates.ref_rate, rates.sensor_rate)
    keep = np.isfinite(rates.ref_rate) & np.isfinite(rates.sensor_rate)
    x, y = reference[keep], estimate[keep]
    r, s = rates.ref_rate[keep], rates.sensor_rate[keep]
    p_zone, r_zone = point_zone(x, y, r), rate_zone(r, s)
    state = glycaemic_state(x)
    klass = error_class(state, p_zone, r_zone)
    hyper_ld = (state == STATES.index("hyperglycaemia")) & np.isin(p_zone, ("A", "B"))
    hyper_ld &= r_zone == "lD"
    their_class = np.where(hyper_ld, CLASSES.index("benign"), klass)
    listed = ", ".join(f"({a:.1f}, {b:.1f})" for a, b in zip(x[hyper_ld], y[hyper_ld], strict=True))
    moved = int(np.count_nonzero(hyper_ld))
    explanation = (
        f"{moved} pair{'s' if moved != 1 else ''} (REF, sensor) = {listed} in hyperglycaemia with "
        "P-zone A or B and R-zone lD (a rapid rise not detected): an erroneous reading by the "
        "published error matrix (Glucose Monitoring Devices, ch. 8, p. 164), a benign error in "
        "dotXem's filters.py"
    )
    total = ours.n
    counts = ours.matrix.sum(axis=0)
    rows: list[Comparison] = []
    for index, name in enumerate(CLASSES):
        expected = 100.0 * PUBLISHED[name]
        mine = 100.0 * counts[index] / total if total else None
        differs = mine is not None and abs(mine - expected) > _TOLERANCE
        rows.append(
            Comparison(
                VECTOR,
                _SOURCE,
                f"{_TITLES[name]} (% of {total} pairs with both rates)",
                expected,
                mine,
                _TOLERANCE,
                4,
                explanation if differs and moved else "",
            )
        )
    for index, name in enumerate(CLASSES):
        mine = 100.0 * np.count_nonzero(their_class == index) / total if total else None
        rows.append(
            Comparison(
                VECTOR,
                _SOURCE,
                f"{_TITLES[name]} (%), the hyperglycaemic lD pairs as dotXem counts them",
                100.0 * PUBLISHED[name],
                mine,
                _TOLERANCE,
                4,
            )
        )
    return rows
