"""On-line / gradient MPRank (Cortes et al. 2007, §2.5, dual (16) and its update rule).

MPRank's dual (Cortes et al. 2007, eq. (16)) maximises

    −αᵀK̃α − (m/(2C))‖α‖² + 2αᵀỹ,   K̃ = CKC (centred Gram matrix), ỹ = y − ȳ,

whose maximiser α = (K̃ + (m/(2C))I)⁻¹ỹ is the batch solution (Cortes et al. 2007, eq. (13)). The
paper's algorithm sweeps the points and updates one coordinate at a time,

    α_i ← α_i + η[2(ỹ_i − Σ_j α_j K̃_ij) − (m/C)α_i],

keeping K̃α up to date in O(m) per update, so a pass costs O(m²) and T passes O(T·m²) instead of
an O(m³) inversion. In the scaling of Kriukova et al. 2014, C = 1/(2λ): the limit is the Lavrentiev
ranker c = (CKC/m + λI)⁻¹Cy/m with c = α.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, RegressorMixin

from ranking_core.kernels import Kernel
from ranking_core.learners.base import (
    CheckedInputsMixin,
    KernelMixin,
    RankingScoreMixin,
    store_params,
)
from ranking_core.validation import positive_float

__all__ = ["OnlineMPRank"]


class OnlineMPRank(
    KernelMixin, RankingScoreMixin, CheckedInputsMixin, RegressorMixin, BaseEstimator
):
    """MPRank trained by the coordinate-wise gradient sweeps of Cortes et al. 2007, §2.5.

    Parameters
    ----------
    kernel, gamma, degree, coef0 : as for :class:`~ranking_core.SpectralRanker`.
    lam : λ in the scaling of Kriukova et al. 2014 (MPRank's C = 1/(2λ), C' = 2C/m = 1/(mλ)).
    step : η of the update rule; ``None`` uses the exact coordinate step
        η_i = 1/(2K̃_ii + m/C) (Gauss–Seidel), which always converges. A constant η must satisfy
        0 < η < 2/(2K̃_ii + m/C) for every i.
    max_passes : T, the number of sweeps over the training points.
    tol : stop when a sweep changes no α_i by more than tol·max|α|.

    Attributes
    ----------
    coef_ : (m,) α (kernel coefficients, centred); intercept_ : b (mean prediction = mean y).
    n_passes_ : sweeps run. converged_ : whether ``tol`` was met.
    """

    def __init__(
        self,
        kernel: str | Kernel = "gaussian",
        gamma: float | ArrayLike | None = None,
        lam: float = 1e-3,
        *,
        step: float | None = None,
        max_passes: int = 500,
        tol: float = 1e-10,
        degree: int | None = None,
        coef0: float | None = None,
    ) -> None:
        store_params(self, locals())

    def fit(self, X: ArrayLike, y: ArrayLike) -> OnlineMPRank:
        """Sweep the training points until the dual (16) stops moving; O(m²) per sweep."""
        lam, _ = self._check_positive_params("lam", "tol")
        owner = type(self).__name__
        if self.step is not None:
            positive_float(self.step, "step", owner)
        if int(self.max_passes) != self.max_passes or self.max_passes < 1:
            raise ValueError(
                f"{owner}: parameter 'max_passes' must be a positive integer; "
                f"got {self.max_passes!r}"
            )
        self._resolve_kernel()
        X, y = self._check_training_data(X, y)
        m = len(y)
        K = self.kernel_(X, X)
        row_mean = K.mean(axis=0)
        centred = K - row_mean[:, None] - row_mean[None, :] + row_mean.mean()  # K̃ = CKC
        target = y - y.mean()
        ridge = m * lam  # m/(2C)
        steps = (
            np.full(m, self.step)
            if self.step is not None
            else 1.0 / (2.0 * np.diag(centred) + 2.0 * ridge)
        )
        alpha = np.zeros(m)
        product = np.zeros(m)  # K̃α
        self.converged_ = False
        for sweep in range(1, int(self.max_passes) + 1):
            largest = 0.0
            with np.errstate(over="ignore", invalid="ignore"):  # divergence is reported below
                for i in range(m):
                    change = steps[i] * (2.0 * (target[i] - product[i]) - 2.0 * ridge * alpha[i])
                    alpha[i] += change
                    product += change * centred[:, i]
                    largest = max(largest, abs(change))
            self.n_passes_ = sweep
            if not np.all(np.isfinite(alpha)):
                raise ValueError(
                    f"{owner}: the sweeps diverged; use a smaller 'step' "
                    f"(got {self.step!r}) or step=None"
                )
            if largest <= self.tol * max(np.abs(alpha).max(), 1e-300):
                self.converged_ = True
                break
        if not self.converged_:
            warnings.warn(f"{owner}: not converged after {self.max_passes} passes", stacklevel=2)
        self.coef_ = alpha - alpha.mean()
        self.X_fit_ = X
        self.intercept_ = float(y.mean() - K.mean(axis=0) @ self.coef_)
        return self
