"""Input checks shared by every learner: one sentence shape per rule, naming the bad rows.

NumPy and scikit-learn are imported by the checks of arrays, on use: the checks of parameters
(:func:`one_of`, :func:`positive_float`) serve settings and registries that load without them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike, NDArray

# the largest random seed a command takes (NumPy's legacy seeds are 32-bit; one bound everywhere)
MAX_SEED = 2**32 - 1

__all__ = [
    "check_inputs",
    "check_training_data",
    "counted",
    "describe_rows",
    "one_of",
    "positive_float",
]


def describe_rows(rows: NDArray[np.intp], limit: int = 10) -> str:
    """'rows 3, 17 and 40' (0-based), abbreviated after ``limit`` rows."""
    import numpy as np

    rows = np.asarray(rows).ravel()
    shown = ", ".join(str(int(r)) for r in rows[:limit])
    more = f" and {len(rows) - limit} more" if len(rows) > limit else ""
    return f"row{'s' if len(rows) > 1 else ''} {shown}{more}"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """'1 reference reading', '2,000 reference readings': ``n`` with its noun in agreement
    (``plural`` when adding "s" is not the plural, e.g. counted(n, "time holds", "times hold"))."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def check_inputs(X: ArrayLike, owner: str, n_features: int | None = None) -> NDArray[np.float64]:
    """X as a finite 2-D float64 array; names the first non-finite rows."""
    import numpy as np
    from sklearn.utils.validation import check_array  # imported on use: the readers need none

    values: NDArray[np.float64] = check_array(
        X, dtype=np.float64, ensure_all_finite=False, ensure_2d=True, ensure_min_samples=1
    )
    bad = np.flatnonzero(~np.isfinite(values).all(axis=1))
    if bad.size:
        raise ValueError(
            f"{owner}: X has NaN or infinite values in {describe_rows(bad)} "
            "(rule: every input must be a finite number)"
        )
    if n_features is not None and values.shape[1] != n_features:
        raise ValueError(
            f"X has {values.shape[1]} features, but {owner} is expecting {n_features} features "
            "as input"
        )
    return values


def check_training_data(
    X: ArrayLike, y: ArrayLike | None, owner: str
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Validate a training set (X, y) for a ranking learner.

    Rules, each with its own message: y is given; X and y have the same length; at least 2 points;
    every value finite (the bad rows are named); y not constant (a ranking needs at least one pair
    y_i > y_j).
    """
    if y is None:
        raise ValueError(f"{owner} requires y to be passed, but the target y is None")
    import numpy as np
    from sklearn.utils.validation import check_array, column_or_1d

    values: NDArray[np.float64] = check_array(
        X, dtype=np.float64, ensure_all_finite=False, ensure_2d=True, ensure_min_samples=1
    )
    y_arr: NDArray[np.float64] = column_or_1d(
        check_array(y, dtype=np.float64, ensure_2d=False, ensure_all_finite=False), warn=True
    )
    if len(values) != len(y_arr):
        raise ValueError(f"{owner}: X has {len(values)} rows but y has {len(y_arr)} values")
    values = check_inputs(values, owner)
    if len(values) < 2:
        raise ValueError(f"{owner}: need at least 2 training points, got {len(values)} sample(s)")
    bad = np.flatnonzero(~np.isfinite(y_arr))
    if bad.size:
        raise ValueError(
            f"{owner}: y has NaN or infinite values in {describe_rows(bad)} "
            "(rule: every rating must be a finite number)"
        )
    if np.ptp(y_arr) == 0:
        raise ValueError(
            f"{owner}: y is constant ({y_arr[0]!r}); ranking needs at least two different ratings"
        )
    return values, y_arr


def positive_float(value: object, name: str, owner: str) -> float:
    """A parameter that must be a positive finite number (for example λ)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = float("nan")
    if not math.isfinite(number) or number <= 0:
        raise ValueError(
            f"{owner}: parameter {name!r} must be a positive finite number; got {value!r}"
        )
    return number


def one_of(value: object, name: str, allowed: tuple, owner: str) -> None:
    """A parameter that must be one of a fixed set of choices (a solver, a loss, a filter name)."""
    if value not in allowed:
        raise ValueError(f"{owner}: parameter {name!r} must be one of {allowed}; got {value!r}")
