"""How sure a learned grid is: a band for the risk at every lattice point.

The (weighted) Lavrentiev ranker is the posterior mean of a Gaussian process with an unknown
constant mean (universal kriging): minimising Σ_i w_i (y_i − f(x_i) − b)² + mλ‖f‖²_H gives
W(y − b − Kc) = mλc and Σ_i w_i (y_i − b − (Kc)_i) = 0, which are the kriging equations with prior
covariance a²K, noise variance σ²/w_i and a flat prior on b, when a² = σ²/(mλ). Its posterior
variance at x is

    v(x) = a²·[K(x, x) − kᵀA⁻¹k + (1 − 1ᵀA⁻¹k)²/(1ᵀA⁻¹1)],   A = K + mλW⁻¹, k = K(X, x)

(Rasmussen & Williams 2006, §2.7), with σ the learner's noise sd of a rating of weight 1. The band
is f ± z·√v; for a signed model (risk = |f|) it is the absolute value of the signed band, with 0 as
lower end where the signed band straddles 0. v is computed on a coarser lattice (``step`` mg/dL)
and interpolated linearly to every point of the 601 × 601 grid.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.linalg
from numpy.typing import ArrayLike, NDArray
from scipy.interpolate import RegularGridInterpolator
from scipy.stats import norm

from ranking_core.filters import Lavrentiev
from ranking_core.grids.compare import risk_category
from ranking_core.grids.files import SIZE, grid_npy
from ranking_core.grids.learned import GLUCOSE_AXIS, lattice_points, learned_grid
from ranking_core.grids.monotone import MonotoneRisk
from ranking_core.grids.raster import grid_image, png_bytes
from ranking_core.grids.risk_scale import RISK_MAX
from ranking_core.grids.seg import GLUCOSE_MAX
from ranking_core.grids.signed import AbsoluteRisk
from ranking_core.learners.robust import RobustRanker
from ranking_core.learners.spectral import SpectralRanker

__all__ = [
    "BAND_FILES",
    "RiskBand",
    "band_csv",
    "band_files",
    "posterior_covariance",
    "posterior_sd",
    "risk_band",
    "training_inputs",
    "write_band_files",
]

BAND_STEP = 5  # mg/dL between the lattice points where the variance is computed
BAND_FILES = ("band.csv", "band_lower.npy", "band_upper.npy", "band.png")


@dataclass(frozen=True)
class RiskBand:
    """A band for a learned risk grid (all (601, 601), indexed [REF, estimate], risk units).

    Attributes
    ----------
    risk : the learned risk.
    lower, upper : the band's ends at ``level``.
    sd : posterior sd of the (signed) learned function.
    uncertain : True where ``lower`` and ``upper`` fall in different SEG risk categories.
    level : the band's coverage (0.95).
    """

    risk: NDArray[np.float64] = field(repr=False)
    lower: NDArray[np.float64] = field(repr=False)
    upper: NDArray[np.float64] = field(repr=False)
    sd: NDArray[np.float64] = field(repr=False)
    uncertain: NDArray[np.bool_] = field(repr=False)
    level: float = 0.95

    @property
    def uncertain_share(self) -> float:
        """Share of the grid whose risk category the band leaves open."""
        return float(self.uncertain.mean())

    @property
    def width(self) -> NDArray[np.float64]:
        return self.upper - self.lower


def training_inputs(ranker: SpectralRanker) -> NDArray[np.float64]:
    """The ranker's training inputs X_fit_; the posterior needs the kernel form (the primal form
    of a linear kernel keeps none)."""
    if ranker.X_fit_ is None:
        raise ValueError(
            "the posterior variance needs a ranker solved in kernel form; this one was solved "
            "in the primal form (solver='primal') and keeps no training inputs"
        )
    return ranker.X_fit_


def _kriging_system(ranker: SpectralRanker, weights: NDArray) -> tuple[tuple, NDArray]:
    """Cholesky factor of A = K + mλW⁻¹ and A⁻¹1."""
    X = training_inputs(ranker)
    m = len(X)
    A = ranker.kernel_(X, X) + m * ranker.lam * np.diag(1.0 / np.maximum(weights, 1e-6))
    factor = scipy.linalg.cho_factor(A, lower=True)
    return factor, scipy.linalg.cho_solve(factor, np.ones(m))


def posterior_covariance(
    ranker: SpectralRanker, weights: NDArray, points: NDArray
) -> NDArray[np.float64]:
    """v(x, x') / a² at ``points`` (n, 2): the posterior covariance of the module docstring per
    unit prior amplitude, (n, n); O(m³ + n·m² + n²·m)."""
    factor, ones = _kriging_system(ranker, weights)
    k = ranker.kernel_(training_inputs(ranker), points)
    solved = scipy.linalg.cho_solve(factor, k)
    trend = 1.0 - ones @ k
    return ranker.kernel_(points, points) - k.T @ solved + np.outer(trend, trend) / ones.sum()


def posterior_sd(
    ranker: SpectralRanker, weights: NDArray, noise_sd: float, points: NDArray
) -> NDArray[np.float64]:
    """√v(x) at ``points`` (n, 2) for a Lavrentiev ranker solved at λ with rating weights
    (see the module docstring); O(m³ + n·m²)."""
    factor, ones = _kriging_system(ranker, weights)
    X = training_inputs(ranker)
    variance = np.empty(len(points))
    step = max(1, (1 << 22) // len(X))
    for start in range(0, len(points), step):
        block = points[start : start + step]
        k = ranker.kernel_(X, block)
        solved = scipy.linalg.cho_solve(factor, k)
        variance[start : start + step] = (
            ranker.kernel_.diagonal(block)
            - np.sum(k * solved, axis=0)
            + (1.0 - ones @ k) ** 2 / ones.sum()
        )
    amplitude = noise_sd**2 / (len(X) * ranker.lam)
    return np.sqrt(np.maximum(amplitude * variance, 0.0))


def risk_band(
    model, level: float = 0.95, step: int = BAND_STEP, noise_sd: float | None = None
) -> RiskBand:
    """The band of a fitted grid model at ``level`` on the 601 × 601 mg/dL grid.

    ``model``: a :class:`~ranking_core.panels.RobustRanker` (its weights and noise sd are used),
    or a Lavrentiev :class:`~ranking_core.SpectralRanker` with ``noise_sd`` given (weights 1), or
    an :class:`~ranking_core.grids.signed.AbsoluteRisk` around either; for a
    :class:`~ranking_core.grids.monotone.MonotoneRisk`, the band of the model it projects.
    """
    if not 0 < level < 1:
        raise ValueError(f"risk_band: level must lie in (0, 1); got {level!r}")
    if isinstance(model, MonotoneRisk):
        model = model.model
    signed = isinstance(model, AbsoluteRisk)
    inner = model.signed_model if signed else model
    if isinstance(inner, RobustRanker):
        ranker, weights = inner.model_, inner.weights_
        noise = inner.noise_sd_ if noise_sd is None else noise_sd
    elif isinstance(inner, SpectralRanker) and noise_sd is not None:
        ranker, weights, noise = inner, np.ones(len(training_inputs(inner))), noise_sd
    else:
        raise TypeError(
            "risk_band: needs a fitted RobustRanker, or a SpectralRanker with "
            f"noise_sd (or an AbsoluteRisk around one); got {type(inner).__name__}"
        )
    if not isinstance(ranker.filter_, Lavrentiev):
        raise ValueError(
            "risk_band: the Gaussian-process band holds for the Lavrentiev filter "
            f"only; got {ranker.filter_!r}"
        )
    coarse = np.unique(np.r_[np.arange(0, GLUCOSE_MAX + 1, step), GLUCOSE_MAX]).astype(float)
    sd_coarse = posterior_sd(ranker, weights, noise, lattice_points(coarse))
    interpolate = RegularGridInterpolator(
        (coarse, coarse), sd_coarse.reshape(coarse.size, coarse.size)
    )
    sd = interpolate(lattice_points(GLUCOSE_AXIS)).reshape(GLUCOSE_AXIS.size, GLUCOSE_AXIS.size)
    f = learned_grid(ranker)
    z = float(norm.ppf(0.5 + level / 2))
    low, high = f - z * sd, f + z * sd
    if signed:
        risk = np.abs(f)
        lower = np.where(low * high > 0, np.minimum(np.abs(low), np.abs(high)), 0.0)
        upper = np.maximum(np.abs(low), np.abs(high))
    else:
        risk, lower, upper = f, low, high
    uncertain = risk_category(lower) != risk_category(upper)
    return RiskBand(risk, lower, upper, sd, uncertain, level)


def band_files(band: RiskBand, grid: ArrayLike) -> dict[str, bytes]:
    """The band as files other tools read (:data:`BAND_FILES`), beside a learned grid's files:

    * ``band.csv``: columns REF, BGM (mg/dL), lower, upper (risk clipped to 0..4, 4 decimals)
      and uncertain (1 where the band's ends fall in different SEG risk categories), REF varying
      slowest, as ``grid.csv``;
    * ``band_lower.npy``, ``band_upper.npy``: the ends as (601, 601) float64 arrays laid out as
      ``grid.npy`` (no pickle), clipped to the risk scale 0..4;
    * ``band.png``: ``grid`` (the learned grid as written) in the SEG colours, pale where the
      band leaves the risk category open.
    """
    title = f"Pale: risk category left open by the {band.level:.0%} band"
    picture = grid_image(grid, title, pale=band.uncertain)
    contents = (band_csv(band), grid_npy(band.lower), grid_npy(band.upper), png_bytes(picture))
    return dict(zip(BAND_FILES, contents, strict=True))


def write_band_files(band: RiskBand, grid: ArrayLike, out_dir: str | os.PathLike) -> list[Path]:
    """Write the band's files (:func:`band_files`, ``grid`` the learned grid as written) and
    ``band.json`` (its level, the share of the grid whose risk category it leaves open, how it is
    computed) into ``out_dir`` (created if needed); returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = band_files(band, grid)
    files["band.json"] = json.dumps(
        {
            "level": band.level,
            "uncertain_share": band.uncertain_share,
            "method": "posterior sd of the equivalent Gaussian process (weighted Lavrentiev "
            f"ranker), interpolated from a {BAND_STEP} mg/dL lattice",
            "layout": "as grid.npy / grid.csv: rows = reference, columns = measured, 0..600 mg/dL",
        },
        indent=2,
    ).encode()
    for name, content in files.items():
        (out / name).write_bytes(content)
    return [out / name for name in files]


def band_csv(band: RiskBand) -> bytes:
    """``band.csv`` bytes: REF, BGM (mg/dL), lower, upper (risk clipped to 0..4, 4 decimals),
    uncertain (0/1), REF varying slowest (:func:`band_files`)."""
    axis = np.arange(SIZE)
    lower, upper = (np.clip(end, 0.0, RISK_MAX).ravel() for end in (band.lower, band.upper))
    frame = pd.DataFrame(
        {
            "REF": np.repeat(axis, SIZE),
            "BGM": np.tile(axis, SIZE),
            "lower": lower,
            "upper": upper,
            "uncertain": band.uncertain.ravel().astype(np.int8),
        }
    )
    return frame.to_csv(index=False, float_format="%.4f", lineterminator="\n").encode()
