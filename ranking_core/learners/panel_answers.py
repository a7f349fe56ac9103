"""The answers of a rating panel as robust learning reads them: the answer scale's step, the rater
column of the inputs, each answer's rounding interval and the expectation of an answer within
its interval.

A rater answers on a rounded, clipped scale (:mod:`ranking_core.learners.robust`, model): an
answer a on a scale of step h stands for the unrounded, unclipped reading in [a − h/2, a + h/2]
(unbounded below at 0 and above at 4), and the EM step of the robust fit replaces it by the
expectation of a normal reading within that interval (:func:`truncated_mean`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import log_ndtr

from ranking_core.validation import check_inputs

__all__ = [
    "RATING_MAX",
    "STEPS",
    "PanelAnswers",
    "rating_step",
    "split_rater_column",
    "truncated_mean",
]

RATING_MAX = 4.0
STEPS = (1.0, 0.5)  # answer scales recognised by rating_step


def rating_step(ratings: ArrayLike) -> float:
    """The answer scale's step: 1 when every rating is a whole number, 0.5 when every rating is a
    multiple of 0.5, otherwise 0 (continuous answers)."""
    values = np.asarray(ratings, dtype=np.float64)
    for step in STEPS:
        if values.size and np.allclose(values / step, np.round(values / step), atol=1e-9):
            return step
    return 0.0


def split_rater_column(X: ArrayLike, owner: str) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """(REF, estimate) in mg/dL and the rater codes (−1 = unknown) of (n, 2) or (n, 3) inputs."""
    X = check_inputs(X, owner)
    if X.shape[1] not in (2, 3):
        raise ValueError(
            f"{owner}: X must have the columns reference, estimate and optionally a "
            f"rater code; got {X.shape[1]} columns"
        )
    if X.shape[1] == 2:
        return X, np.full(len(X), -1, dtype=np.intp)
    codes = X[:, 2]
    if np.any(codes != np.round(codes)) or np.any(codes < -1):
        raise ValueError(
            f"{owner}: the rater codes (third column) must be whole numbers ≥ 0, or "
            "−1 for an unknown rater"
        )
    return X[:, :2], codes.astype(np.intp)


@dataclass(frozen=True)
class PanelAnswers:
    """The training answers on the absolute scale, with their intervals and raters."""

    y: NDArray[np.float64]  # targets as given (signed when the learner is signed)
    side: NDArray[np.float64]  # +1/−1 side of the diagonal when signed, else 1
    fixed: NDArray[np.bool_]  # exact prior points (on the diagonal, risk 0): weight 1, no rater
    answer: NDArray[np.float64]  # absolute answers a_i
    low: NDArray[np.float64]  # the interval of the unrounded, unclipped answer
    high: NDArray[np.float64]
    codes: NDArray[np.intp]  # rater index 0..R−1 per row, R for "no rater"
    n_raters: int

    @classmethod
    def build(
        cls,
        X: NDArray,
        y: NDArray,
        codes: NDArray[np.intp],
        signed: bool,
        coarse: str,
        step: float | None,
    ) -> PanelAnswers:
        on_diagonal = X[:, 0] == X[:, 1]
        side = np.sign(X[:, 0] - X[:, 1]) if signed else np.ones(len(y))
        fixed = on_diagonal & (y == 0)
        answer = np.where(fixed, 0.0, y * np.where(side == 0, 1.0, side))
        h = rating_step(answer[~fixed]) if step is None else float(step)
        half = h / 2 if coarse == "interval" else 0.0
        low = np.where(answer <= 0, -np.inf, answer - half)
        high = np.where(answer >= RATING_MAX, np.inf, answer + half)
        low[fixed], high[fixed] = 0.0, 0.0
        known = codes >= 0
        names, index = np.unique(codes[known], return_inverse=True)
        rater = np.full(len(y), names.size, dtype=np.intp)
        rater[known] = index
        rater[fixed] = names.size
        return cls(y, side, fixed, answer, low, high, rater, int(names.size))

    @property
    def width(self) -> NDArray[np.float64]:
        """Width of each answer's interval: h for a rounded answer, 0 for an exact one, ∞ for an
        answer clipped at 0 or 4."""
        return self.high - self.low

    @property
    def rounding_variance(self) -> NDArray[np.float64]:
        """Variance of each answer's rounding error, width²/12 (Sheppard; 0 where clipped)."""
        width = self.width
        return np.where(np.isfinite(width), width**2 / 12, 0.0)


def truncated_mean(low: NDArray, high: NDArray, mean: NDArray, sd: NDArray) -> NDArray:
    """E[Z | low ≤ Z ≤ high] for Z ~ N(mean, sd²), elementwise (the point itself where the
    interval is a point). With α, β the standardised ends, the mean is
    mean + sd·(φ(α) − φ(β))/(Φ(β) − Φ(α)); intervals above the mean are reflected below it and
    the ratio is formed in logarithms (``log_ndtr``), so that far tails stay finite."""
    a, b = (low - mean) / sd, (high - mean) / sd
    flip = a > 0
    a, b = np.where(flip, -b, a), np.where(flip, -a, b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_pa, log_pb = log_ndtr(a), log_ndtr(b)
        log_z = log_pb + np.log(-np.expm1(log_pa - log_pb))
        shift = (np.exp(-(a**2) / 2 - log_z) - np.exp(-(b**2) / 2 - log_z)) / np.sqrt(2 * np.pi)
    out = mean + sd * np.where(flip, -shift, shift)
    out = np.where(np.isfinite(out) & (high > low), out, mean)
    return np.clip(out, low, high)
