"""The glucose lattice every grid lives on: integer (REF, BGM) pairs in 0..600 mg/dL (the SEG's);
the glucose coordinates a kernel may see them in (:data:`SCALES`,
:class:`~ranking_core.grids.coordinates.GlucoseTransform`) and a glucose range inside the lattice
(:func:`check_range`). Plain Python: settings and the command line's help read it without NumPy.
"""

from __future__ import annotations

__all__ = ["GLUCOSE_MAX", "SCALES", "check_range"]

GLUCOSE_MAX = 600  # mg/dL, the edge of the lattice
SCALES = ("linear", "log")  # mg/dL as measured, or the log-like warp of grids/coordinates.py


def check_range(glucose_range: tuple[float, float]) -> tuple[float, float]:
    """(LO, HI) in mg/dL as floats; ValueError unless 0 ≤ LO < HI ≤ 600."""
    low, high = (float(v) for v in glucose_range)
    if not 0 <= low < high <= GLUCOSE_MAX:
        raise ValueError(
            f"the glucose range must satisfy 0 ≤ LO < HI ≤ {GLUCOSE_MAX} mg/dL; "
            f"got {low:g}-{high:g}"
        )
    return low, high
