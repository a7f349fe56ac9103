"""Continuous glucose-error grid analysis (CG-EGA) of a CGM against frequent reference readings.

Kovatchev BP, Gonder-Frederick LA, Cox DJ, Clarke WL. Evaluating the accuracy of continuous
glucose-monitoring sensors: continuous glucose-error grid analysis illustrated by TheraSense
Freestyle Navigator data. Diabetes Care 2004;27:1922–1928; applied by glycaemic state in Clarke
WL, Anderson S, Farhy L, et al., Diabetes Care 2005;28:2412–2417. The borders below are taken
from the description and figures of the method in *Glucose Monitoring Devices* (Fabris C,
Kovatchev B, eds., Academic Press 2020), chapter 8 "Accuracy of CGM systems", pp. 160–165
(Figs. 8.2–8.5), and from the open reference implementation github dotXem/CG-EGA (commit
d4a8898, ``cg_ega/p_ega.py``, ``cg_ega/r_ega.py``, ``cg_ega/tools/filters.py``); where the two
differ, the published description is followed and the difference is named where it is used.

Three parts, each pair (reference, sensor) with both rates of change:

* **P-EGA** (point accuracy): the Clarke error grid (:func:`ranking_core.grids.clarke.clarke_zone`,
  which the P-EGA equals while the reference rate is within ±1 mg/dL/min, p. 160) with borders
  moved for a fast-changing reference (p. 161, Fig. 8.3): falling at −2 ≤ r < −1 mg/dL/min the
  upper borders of zones A and B are raised by 10 mg/dL; falling faster (r < −2) the upper borders
  of A, B and D by 20 mg/dL; rising at 1 < r ≤ 2 the lower borders of A, B and D are lowered by
  10 mg/dL; rising faster (r > 2) by 20 mg/dL (the rate intervals as Fig. 8.3 labels them, the
  same as the 5 × 5 trend table's, :func:`ranking_core.meter.cgm.trend.rate_category`). dotXem's
  code differs in four ways, none of which moves a pair of its documented example: it moves the
  upper and the lower borders together (and C's and E's with them) whichever way the reference
  moves, at −2 < r ≤ −1 / 1 ≤ r < 2 (10) and r ≤ −2 / r ≥ 2 (20); it draws the upper B/C border
  from (70, 180) with slope 22/17 instead of Clarke's REF + 110; and it takes REF ≤ 70 where
  Clarke's zones A and D have REF < 70.
* **R-EGA** (rate accuracy, Fig. 8.4; the inequalities of dotXem's ``r_ega.py``), with r the
  reference and s the sensor rate (mg/dL/min), d = s − r:
  A if |d| ≤ 1 or s lies between r/2 and 2r (A widens to ±2 at ±4 mg/dL/min); else B if
  |d| ≤ 2 or both rates ≤ −1 or both ≥ 1; else uC if −1 ≤ r < 1 and d > 2, lC if −1 < r ≤ 1 and
  d < −2 (overcorrection); uD / lD if −1 ≤ s ≤ 1 with d > 2 / d < −2 (a fast fall / rise not
  detected); uE / lE if s > 1 with r < −1 / s < −1 with r > 1 (the opposite direction).
  These eight zones partition the plane.
* **The error matrix** by glycaemic state of the reference (Fig. 8.5: hypoglycaemia ≤ 70 mg/dL,
  euglycaemia > 70 to ≤ 180, hyperglycaemia > 180; the software's ranges): a pair is an
  *accurate reading* when its P-zone and R-zone are both A or B, a *benign error* when its
  P-zone is A or B and its R-zone is C, D or E except, as erroneous readings, uD and uE in
  hypoglycaemia, uE and lE in euglycaemia, lD, uE and lE in hyperglycaemia (p. 164: "only failure
  to detect a rapid rise in BG (lower zone D error) or … E zone … would lead to a clinically
  negative situation"; dotXem's filters count lD in hyperglycaemia as benign), and an
  *erroneous reading* whenever the P-zone is C, D or E. The matrix has no B column in
  hypoglycaemia; a P-zone B there (only at a reference of exactly 70 mg/dL, where Clarke's C and
  D borders are strict) is read as A, as the matrix reads A and B alike in the other states.

Rates: CG-EGA's rate is the change between consecutive readings over the time between them
(mg/dL/min; 15-min reference intervals in 2004, 5-min in 2005) — the project's rate
(:func:`ranking_core.meter.standards.acceptance.rates_of_change`: consecutive pairs of one sensor
within ``--rate-gap``, the reference's and the sensor's each over their own times), so no other rate
is computed here; pairs without both rates are counted, not classified.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "CG_EGA_ABOUT",
    "CLASSES",
    "POINT_ZONES",
    "RATE_ZONES",
    "STATES",
    "CgEga",
    "border_shifts",
    "cg_ega",
    "error_class",
    "glycaemic_state",
    "point_zone",
    "rate_zone",
]

POINT_ZONES = ("A", "B", "C", "D", "E")
RATE_ZONES = ("A", "B", "uC", "lC", "uD", "lD", "uE", "lE")
STATES = ("hypoglycaemia", "euglycaemia", "hyperglycaemia")
STATE_RANGES = ("≤ 70", "> 70 to ≤ 180", "> 180")  # reference, mg/dL (Fig. 8.5)
CLASSES = ("accurate", "benign", "error")
# R-zones that make a P-zone A or B pair an erroneous reading, by state (Fig. 8.5, p. 164)
ERRONEOUS_RATE_ZONES = {
    "hypoglycaemia": ("uD", "uE"),
    "euglycaemia": ("uE", "lE"),
    "hyperglycaemia": ("lD", "uE", "lE"),
}
CG_EGA_ABOUT = (
    "Continuous glucose-error grid analysis (Kovatchev et al., Diabetes Care 2004;27:1922–1928): "
    "each pair with both rates of change is placed on the point error grid (Clarke's zones, "
    "borders widened by 10 or 20 mg/dL when the reference moves faster than 1 or 2 mg/dL/min) "
    "and on the rate error grid (sensor rate against reference rate), and the two zones make it "
    "an accurate reading, a benign error or an erroneous reading, by the reference's glycaemic "
    "state (hypoglycaemia ≤ 70, euglycaemia > 70 to ≤ 180, hyperglycaemia > 180 mg/dL)."
)


def _rates(values: ArrayLike) -> NDArray[np.float64]:
    return np.asarray(values, dtype=np.float64)


def border_shifts(
    reference_rate: ArrayLike,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """How far the P-EGA borders move at each reference rate (mg/dL/min), in mg/dL:
    (upper A and B, upper D, lower A, B and D), from p. 161 / Fig. 8.3 (module docstring).
    A NaN rate moves nothing."""
    r = _rates(reference_rate)
    upper_ab = np.select([r < -2, r < -1], [20.0, 10.0], default=0.0)
    upper_d = np.where(r < -2, 20.0, 0.0)
    lower = np.select([r > 2, r > 1], [20.0, 10.0], default=0.0)
    return upper_ab, upper_d, lower


def point_zone(
    reference: ArrayLike, sensor: ArrayLike, reference_rate: ArrayLike
) -> NDArray[np.str_]:
    """P-EGA zone 'A'..'E' of each (reference, sensor) pair in mg/dL at its reference rate
    (mg/dL/min): Clarke's rules (:func:`ranking_core.grids.clarke.clarke_zone`, same order and
    inequalities) with the borders of :func:`border_shifts`. O(n), broadcast shapes."""
    x, y, rate = np.broadcast_arrays(_rates(reference), _rates(sensor), _rates(reference_rate))
    up, up_d, low = border_shifts(rate)
    zone = np.full(x.shape, "B", dtype="<U1")
    zone[((x <= 70) & (y >= 180 + up_d)) | ((x >= 180) & (y <= 70 - low))] = "E"
    zone[
        ((x < 70) & (y >= 70) & (y < 180 + up_d)) | ((x > 240) & (y >= 70 - low) & (y < 180 - low))
    ] = "D"
    zone[
        ((x >= 130) & (x <= 180) & (y < 1.4 * (x - 130) - low))
        | ((x > 70) & (y > 180 + up) & (y > x + 110 + up))
    ] = "C"
    zone[((y - x <= 0.2 * x + up) & (x - y <= 0.2 * x + low)) | ((x < 70) & (y < 70 + up))] = "A"
    return zone


def rate_zone(reference_rate: ArrayLike, sensor_rate: ArrayLike) -> NDArray[np.str_]:
    """R-EGA zone (:data:`RATE_ZONES`) of each (reference rate, sensor rate) in mg/dL/min (module
    docstring, Fig. 8.4); '' where either rate is NaN. O(n), broadcast shapes."""
    r, s = np.broadcast_arrays(_rates(reference_rate), _rates(sensor_rate))
    d = s - r
    zone_a = (np.abs(d) <= 1) | ((s >= 2 * r) & (s <= r / 2)) | ((s >= r / 2) & (s <= 2 * r))
    zone_b = (np.abs(d) <= 2) | ((r <= -1) & (s <= -1)) | ((r >= 1) & (s >= 1))
    flat_s = (s >= -1) & (s <= 1)
    conditions = [
        zone_a,
        zone_b,
        (r >= -1) & (r < 1) & (d > 2),
        (r > -1) & (r <= 1) & (d < -2),
        flat_s & (d > 2),
        flat_s & (d < -2),
        (s > 1) & (r < -1),
        (s < -1) & (r > 1),
    ]
    zone = np.select(conditions, list(RATE_ZONES), default="")
    zone[~(np.isfinite(r) & np.isfinite(s))] = ""
    return zone.astype("<U2")


def glycaemic_state(reference: ArrayLike) -> NDArray[np.intp]:
    """Index into :data:`STATES` of each reference (mg/dL): ≤ 70, > 70 to ≤ 180, > 180."""
    x = _rates(reference)
    return np.select([x <= 70, x <= 180], [0, 1], default=2).astype(np.intp)


def error_class(
    state: NDArray[np.intp], p_zone: NDArray[np.str_], r_zone: NDArray[np.str_]
) -> NDArray[np.intp]:
    """Index into :data:`CLASSES` (accurate, benign, error) of each pair from its glycaemic state
    (:func:`glycaemic_state`), P-zone and R-zone (the error matrix, module docstring)."""
    point_ok = np.isin(p_zone, ("A", "B"))
    rate_ok = np.isin(r_zone, ("A", "B"))
    wrong_rate = np.zeros(np.shape(state), dtype=bool)
    for index, name in enumerate(STATES):
        wrong_rate |= (state == index) & np.isin(r_zone, ERRONEOUS_RATE_ZONES[name])
    return np.select([point_ok & rate_ok, point_ok & ~wrong_rate], [0, 1], default=2).astype(
        np.intp
    )


def _percent(count: int, total: int) -> float | None:
    return 100.0 * count / total if total else None


@dataclass(frozen=True)
class CgEga:
    """CG-EGA of a set of pairs: ``point`` and ``rate`` zone counts (:data:`POINT_ZONES`,
    :data:`RATE_ZONES`), ``matrix[state][class]`` pairs (:data:`STATES` × :data:`CLASSES`),
    ``without_rate`` the pairs left out for want of both rates."""

    point: dict[str, int]
    rate: dict[str, int]
    matrix: NDArray[np.int64]
    without_rate: int

    @property
    def n(self) -> int:
        return int(self.matrix.sum())

    def states(self) -> list[dict]:
        """Per glycaemic state and overall: state, reference range, n, the pairs of each class
        and their percentages of the state's pairs (None when it has none)."""
        rows = [*self.matrix, self.matrix.sum(axis=0)]
        names = [*STATES, "all"]
        ranges = [*STATE_RANGES, "all"]
        out = []
        for name, span, counts in zip(names, ranges, rows, strict=True):
            n = int(counts.sum())
            row: dict = {"state": name, "reference_mg_dl": span, "n": n}
            row.update({c: int(k) for c, k in zip(CLASSES, counts, strict=True)})
            row.update(
                {f"{c}_percent": _percent(int(k), n) for c, k in zip(CLASSES, counts, strict=True)}
            )
            out.append(row)
        return out

    def frame(self) -> pd.DataFrame:
        """The per-state table as printed: pairs and share (%, one decimal) of each class."""
        rows = []
        for row in self.states():
            shown = {"state": row["state"], "reference": row["reference_mg_dl"]}
            shown["pairs"] = f"{row['n']:,}"
            for c in CLASSES:
                p = row[f"{c}_percent"]
                shown[c] = f"{row[c]:,} ({p:.1f} %)" if p is not None else f"{row[c]:,}"
            rows.append(shown)
        return pd.DataFrame(rows)

    def zone_frame(self) -> pd.DataFrame:
        """P-EGA and R-EGA zone counts with their share (%, one decimal) of the classified pairs."""
        total = self.n
        rows = [("P-EGA", z, c) for z, c in self.point.items()]
        rows += [("R-EGA", z, c) for z, c in self.rate.items()]
        return pd.DataFrame(
            {
                "grid": [g for g, _, _ in rows],
                "zone": [z for _, z, _ in rows],
                "pairs": [f"{c:,}" for _, _, c in rows],
                "percent": [f"{100.0 * c / total:.1f} %" if total else "—" for _, _, c in rows],
            }
        )

    def to_dict(self) -> dict:
        total = self.n
        return {
            "method": "Continuous glucose-error grid analysis (Kovatchev et al. 2004)",
            "unit": "mg/dL; rates mg/dL/min",
            "pairs": total,
            "pairs_without_rate": self.without_rate,
            "point_zones": self.point,
            "point_zone_percent": {z: _percent(c, total) for z, c in self.point.items()},
            "rate_zones": self.rate,
            "rate_zone_percent": {z: _percent(c, total) for z, c in self.rate.items()},
            "states": self.states(),
        }


def cg_ega(
    reference: ArrayLike,
    sensor: ArrayLike,
    reference_rate: ArrayLike,
    sensor_rate: ArrayLike,
) -> CgEga:
    """CG-EGA of pairs (reference, sensor in mg/dL) with the rates at each pair (mg/dL/min, NaN
    where a pair has none): the pairs with both rates and finite values are classified, the
    others counted in ``without_rate``. O(n)."""
    x, y, r, s = np.broadcast_arrays(
        _rates(reference), _rates(sensor), _rates(reference_rate), _rates(sensor_rate)
    )
    keep = np.isfinite(x) & np.isfinite(y) & np.isfinite(r) & np.isfinite(s)
    x, y, r, s = x[keep], y[keep], r[keep], s[keep]
    p_zone, r_zone = point_zone(x, y, r), rate_zone(r, s)
    state = glycaemic_state(x)
    klass = error_class(state, p_zone, r_zone)
    matrix = np.zeros((len(STATES), len(CLASSES)), dtype=np.int64)
    np.add.at(matrix, (state, klass), 1)
    return CgEga(
        point={z: int(np.count_nonzero(p_zone == z)) for z in POINT_ZONES},
        rate={z: int(np.count_nonzero(r_zone == z)) for z in RATE_ZONES},
        matrix=matrix,
        without_rate=int(np.count_nonzero(~keep)),
    )
