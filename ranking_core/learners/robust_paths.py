"""The λ paths of :class:`~ranking_core.learners.robust.RobustRanker`: its robust fits for every λ
of a grid, and the answers the panel's mean rater gives on them (what the validation of
:func:`~ranking_core.learners.robust.kfold_robust` compares with the answers given)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.learners.base import RegularizationPath
from ranking_core.learners.panel_answers import RATING_MAX, split_rater_column

__all__ = ["MeanRaterPath", "RobustPath"]


@dataclass(frozen=True)
class RobustPath:
    """A :class:`~ranking_core.learners.base.RegularizationPath` of robust fits that accepts
    inputs with a rater column. ``amplitudes`` (L, r): g_λ(σ_k)·(Uᵀb_λ)_k, the fit at each λ in
    the eigenbasis (each λ has its own pseudo-ratings b_λ)."""

    path: RegularizationPath
    amplitudes: NDArray[np.float64]
    offset: NDArray[np.float64] | None = None  # (L,) the raters' mean offset (None: 0)
    signed: bool = False

    @property
    def lams(self) -> NDArray[np.float64]:
        return self.path.lams

    def mean_rater(self) -> MeanRaterPath:
        """This path predicting the answers of the panel's mean rater (what the validation of
        :func:`kfold_robust` compares with the answers given)."""
        return MeanRaterPath(self)

    def rkhs_norm_differences(self) -> NDArray[np.float64]:
        """‖f_{λ_j} − f_{λ_{j+1}}‖_H for consecutive λ, shape (L − 1,) (quasi-optimality), with
        ‖f‖²_H = Σ_k m·σ_k·amplitude_k² as for the plain path."""
        spectrum = self.path.estimator.spectrum_
        weights = spectrum.vectors.shape[0] * spectrum.values
        return np.sqrt(np.maximum(np.diff(self.amplitudes, axis=0) ** 2 @ weights, 0.0))

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        points, _ = split_rater_column(X, "RobustPath")
        return self.path.predict(points)


@dataclass(frozen=True)
class MeanRaterPath:
    """The answers a :class:`RobustPath`'s panel answers on average: clip(b̄ + |f|, 0, 4),
    signed like f, with b̄ the raters' mean offset (mean scale 1). With offsets anchored at the
    diagonal's zero risk the consensus f is 0 where there is no risk while the raters answer
    b̄ there on average; compared with the answers as given, f itself would lose to a least-
    squares fit of those answers for its offset alone. The diagonal points (no rater) keep f."""

    robust: RobustPath

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        fitted = np.atleast_2d(self.robust.predict(X))
        if self.robust.offset is None:
            return fitted
        points, codes = split_rater_column(X, "MeanRaterPath")
        side = np.sign(points[:, 0] - points[:, 1]) if self.robust.signed else np.ones(len(codes))
        side = np.where(side == 0, 1.0, side)
        magnitude = np.clip(self.robust.offset[:, None] + fitted * side, 0.0, RATING_MAX)
        exact = (codes < 0) & (points[:, 0] == points[:, 1])  # the diagonal points
        return np.where(exact, fitted, side * magnitude)
