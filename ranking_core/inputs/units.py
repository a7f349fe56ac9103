"""Glucose units: one conversion factor, and the check that refuses mmol/L read as mg/dL.

Everything inside the library is in mg/dL. A file in mmol/L is converted with
:data:`MGDL_PER_MMOLL` = 18.016 mg/dL per mmol/L: the molar mass of glucose, 180.16 g/mol, divided
by 10 (1 mmol/L = 180.16 mg/L = 18.016 mg/dL).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "LOOKS_LIKE_MMOLL",
    "MGDL_PER_MMOLL",
    "PHYSICAL_MAX_MGDL",
    "UNITS",
    "UnitError",
    "check_unit",
    "from_mgdl",
    "resolve_unit",
    "to_mgdl",
]

MGDL_PER_MMOLL = 18.016
UNITS = ("mg/dL", "mmol/L")
# mg/dL values whose median is below this would mean most readings are life-threatening
# hypoglycaemia; as mmol/L they are ordinary (35 mmol/L ≈ 630 mg/dL, the top of every grid)
LOOKS_LIKE_MMOLL = 35.0
# above the highest blood glucose reported in a living patient (2,656 mg/dL): not a measurement
PHYSICAL_MAX_MGDL = 3000.0


class UnitError(ValueError):
    """The glucose unit is unknown, contradicts the file, or must be stated."""


def check_unit(unit: str | None) -> str | None:
    """``None`` (not stated) or one of :data:`UNITS`, matched case-insensitively."""
    if unit is None:
        return None
    for known in UNITS:
        if str(unit).strip().lower() == known.lower():
            return known
    raise UnitError(f"unit must be one of {', '.join(UNITS)}; got {unit!r}")


def to_mgdl(values: NDArray[np.float64], unit: str) -> NDArray[np.float64]:
    """Glucose in ``unit`` → mg/dL (× 18.016 for mmol/L)."""
    return values * MGDL_PER_MMOLL if check_unit(unit) == "mmol/L" else values


def from_mgdl(values: NDArray[np.float64], unit: str) -> NDArray[np.float64]:
    """Glucose in mg/dL → ``unit`` (÷ 18.016 for mmol/L)."""
    return values / MGDL_PER_MMOLL if check_unit(unit) == "mmol/L" else values


def resolve_unit(
    values: NDArray[np.float64] | Sequence[NDArray[np.float64]],
    stated: str | None,
    in_header: str | None,
    label: str,
    option: str = "--unit",
) -> str:
    """The unit to read ``values`` (the file's glucose numbers: one array, or one per column) in.

    ``stated`` is the user's unit (``None``: not given), ``in_header`` a unit named in the column
    headers (e.g. "Glucose Value (mmol/L)"). A stated unit that contradicts the header is refused;
    with neither, values whose median is below :data:`LOOKS_LIKE_MMOLL` are refused with a message
    naming mmol/L and ``option``; otherwise they are mg/dL. The other way round, mmol/L stated
    for values whose median is above :data:`LOOKS_LIKE_MMOLL` (mg/dL values) is refused too.
    """
    import numpy as np  # on use: the unit names and factor load without it (command-line help)

    stated = check_unit(stated)
    if in_header is not None:
        if stated is not None and stated != in_header:
            raise UnitError(
                f"{label}: the column headers say {in_header} but {option} "
                f"{stated} was given; give {option} {in_header} or leave it out"
            )
        return in_header
    columns = [values] if isinstance(values, np.ndarray) else list(values)
    finite = [c if np.isfinite(c).all() else c[np.isfinite(c)] for c in columns]
    size = sum(c.size for c in finite)
    if stated == "mmol/L" and size:
        median = float(np.median(np.concatenate(finite)))
        if median > LOOKS_LIKE_MMOLL:  # 35 mmol/L ≈ 630 mg/dL: above every grid
            raise UnitError(
                f"{label}: {option} mmol/L was given but the glucose values look like mg/dL "
                f"(median {median:.3g}, above {LOOKS_LIKE_MMOLL:g}, i.e. above "
                f"{LOOKS_LIKE_MMOLL * MGDL_PER_MMOLL:.0f} mg/dL once converted); "
                f"{option} mg/dL reads them as they are"
            )
    if stated is not None:
        return stated
    # fewer than half the values below the limit: the median is not below it (no joined copy)
    below = sum(int(np.count_nonzero(c < LOOKS_LIKE_MMOLL)) for c in finite)
    if not size or 2 * below < size - 1:
        return "mg/dL"
    median = float(np.median(np.concatenate(finite)))
    if median < LOOKS_LIKE_MMOLL:
        raise UnitError(
            f"{label}: the glucose values look like mmol/L (median {median:.3g}, "
            f"below {LOOKS_LIKE_MMOLL:g}); state the unit: {option} mmol/L converts them with "
            f"{MGDL_PER_MMOLL} mg/dL per mmol/L, {option} mg/dL reads them as they are"
        )
    return "mg/dL"
