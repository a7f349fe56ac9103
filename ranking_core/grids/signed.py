"""Learning an absolute risk through a signed surface.

A clinical risk rating is an absolute risk: zero on the diagonal estimate = REF and rising on both
sides, so the surface has a V-shaped kink along the diagonal that a smooth (Gaussian) kernel can
only approximate with many centres. The side of the diagonal is known from the inputs, so the
ratings can be given the sign the SEG itself uses (RiskFactor: negative where the meter reads too
high, positive where it reads too low),

.. math:: y^{\\pm}_i = \\operatorname{sign}(\\mathrm{REF}_i - \\mathrm{est}_i)\\, y_i,

a surface that passes smoothly through zero on the diagonal. The ranker learns f from y^±
(Kriukova et al. 2014, eq. (4) unchanged) and the absolute risk is predicted as |f|. This is a
project extension, measured in ``docs/RESULTS.md``; the paper learns y directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.validation import check_inputs

__all__ = ["AbsoluteRisk", "side_of_diagonal", "signed_ratings"]


def side_of_diagonal(X: ArrayLike) -> NDArray[np.float64]:
    """sign(REF − estimate) per row of (n, 2) inputs in mg/dL: +1 below the diagonal (meter
    reads low), −1 above (meter reads high), 0 on it."""
    X = check_inputs(X, "side_of_diagonal", 2)
    return np.sign(X[:, 0] - X[:, 1])


def signed_ratings(X: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
    """y^± = sign(REF − estimate)·y, the SEG's sign convention for absolute ratings y."""
    return side_of_diagonal(X) * np.asarray(y, dtype=np.float64)


@dataclass(frozen=True)
class AbsoluteRisk:
    """A fitted model of the signed risk, predicting the absolute risk |f(x)|.

    ``learned_grid`` evaluates ``signed_model`` on the lattice (factorised when Gaussian or
    Laplacian) and takes the absolute value.
    """

    signed_model: Any

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """|f(x)| on the rating scale, shape (n,)."""
        return np.abs(self.signed_model.predict(X))
