"""Spectral regularization filters g_λ(σ) (Kriukova et al. 2014, §3): the entries of the registry
:data:`ranking_core.filters.FILTERS`, which names each one and its label.

A ranking function is f_z^λ = g_λ(S*DS/m²)·S*Dy/m² (Kriukova et al. 2014, the display before eq.
(13)); each filter below is one family {g_λ}. They act on the eigenvalues σ ≥ 0 of K̃ = CKC/m and
are written so that they stay finite and accurate both for σ → 0 and for σ ≫ λ (``expm1``/``log1p``
forms, no 1 − (1 − ε) cancellation).

Every filter has one method, ``factors(sigma, lam)``, which broadcasts: pass ``sigma[None, :]`` and
``lam[:, None]`` to get the factors of a whole λ-path at once. Its ``qualification`` is the
largest p with sup_t t^p |1 − t g_λ(t)| ≤ γ_p λ^p (Kriukova et al. 2014, §3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.filters import FILTERS, MAX_ORDER

__all__ = [
    "Filter",
    "IteratedLavrentiev",
    "Landweber",
    "Lavrentiev",
    "NuMethod",
    "Showalter",
    "SpectralCutoff",
    "make_filter",
]


def _iteration_step(sigma: NDArray, step: float | None, owner: str) -> float:
    """The step μ of a gradient iteration on eigenvalues ``sigma``: ``step``, or 1/max σ when
    None (1 for σ = 0); the iteration converges only for 0 < μ·max σ ≤ 1 (ValueError else)."""
    top = float(sigma.max(initial=0.0))
    mu = step if step is not None else (1.0 / top if top > 0 else 1.0)
    if mu <= 0 or mu * top > 1.0 + 1e-12:
        raise ValueError(f"{owner} step must satisfy 0 < step*max(sigma) <= 1, got {mu!r}")
    return mu


def _as_arrays(sigma: ArrayLike, lam: ArrayLike) -> tuple[NDArray, NDArray]:
    sigma = np.maximum(np.asarray(sigma, dtype=np.float64), 0.0)  # clip round-off negatives
    lam = np.asarray(lam, dtype=np.float64)
    if np.any(lam <= 0) or not np.all(np.isfinite(lam)):
        raise ValueError(f"lam must be positive and finite, got {lam!r}")
    sigma_b, lam_b = np.broadcast_arrays(sigma, lam)
    return sigma_b, lam_b


def _one_minus_power_over_t(t: NDArray, k: NDArray | float, sign: float) -> NDArray:
    """h(t) = (1 − (1 + sign·t)^(−sign·k)) / t, computed without cancellation; h(0) = k.

    sign = +1 gives (1 − (1 + t)^(−k))/t (iterated Lavrentiev);
    sign = −1 gives (1 − (1 − t)^k)/t (Landweber, 0 ≤ t ≤ 1).
    """
    k = np.broadcast_to(np.asarray(k, dtype=np.float64), t.shape)
    out = k.copy()  # the limit at t = 0
    pos = t > 0  # log1p and expm1 keep full relative accuracy for every t > 0
    with np.errstate(divide="ignore"):
        out[pos] = -np.expm1(-sign * k[pos] * np.log1p(sign * t[pos])) / t[pos]
    return out


class Filter:
    """A regularization family g_λ(σ) with its qualification (Kriukova et al. 2014, §3)."""

    qualification: ClassVar[float] = math.inf

    def factors(self, sigma: ArrayLike, lam: ArrayLike) -> NDArray[np.float64]:
        """g_λ(σ), broadcast over ``sigma`` and ``lam``."""
        raise NotImplementedError


@dataclass(frozen=True)
class Lavrentiev(Filter):
    """Lavrentiev (simplified Tikhonov) regularization, Kriukova et al. 2014, eq. (4).

    .. math:: g_\\lambda(\\sigma) = \\frac{1}{\\sigma + \\lambda}

    Qualification 1. Equals MPRank (Cortes et al. 2007, eq. 13, C' = 1/(mλ)) and RankRLS with the
    magnitude-preserving cost (Pahikkala et al. 2009, eqs. 17, 21, λ_RankRLS = m²λ).
    """

    qualification: ClassVar[float] = 1.0

    def factors(self, sigma: ArrayLike, lam: ArrayLike) -> NDArray[np.float64]:
        sigma, lam = _as_arrays(sigma, lam)
        return 1.0 / (sigma + lam)


@dataclass(frozen=True)
class IteratedLavrentiev(Filter):
    """k-times iterated Lavrentiev regularization; k = 2 is Kriukova et al. 2014, eq. (13).

    .. math:: g_\\lambda(\\sigma) = \\frac{1 - (\\lambda/(\\sigma+\\lambda))^k}{\\sigma}
              \\quad (k = 2:\\ \\frac{\\sigma + 2\\lambda}{(\\sigma+\\lambda)^2})

    Evaluated as (1/λ)·(1 − (1 + t)^(−k))/t with t = σ/λ through ``expm1``/``log1p``;
    g_λ(0) = k/λ: the closed form of k successive solves (A + λI)c_j = b + λc_{j−1}, c_0 = 0
    (Kriukova et al. 2014, eq. (13)), at the cost of one filter whatever k. Qualification k;
    1 ≤ k ≤ :data:`MAX_ORDER`.
    """

    k: int = 2

    def __post_init__(self) -> None:
        if int(self.k) != self.k or not 1 <= self.k <= MAX_ORDER:
            raise ValueError(
                f"IteratedLavrentiev.k (the order) must be an integer 1..{MAX_ORDER}, "
                f"got {self.k!r}"
            )

    @property
    def qualification(self) -> float:  # type: ignore[override]
        return float(self.k)

    def factors(self, sigma: ArrayLike, lam: ArrayLike) -> NDArray[np.float64]:
        sigma, lam = _as_arrays(sigma, lam)
        return _one_minus_power_over_t(sigma / lam, self.k, +1.0) / lam


@dataclass(frozen=True)
class SpectralCutoff(Filter):
    """Spectral cut-off (truncated eigenfunction expansion), Kriukova et al. 2014, §3 and its ref.
    [7].

    .. math:: g_\\lambda(\\sigma) = 1/\\sigma \\text{ if } \\sigma \\ge \\lambda, \\text{ else } 0

    Qualification ∞.
    """

    def factors(self, sigma: ArrayLike, lam: ArrayLike) -> NDArray[np.float64]:
        sigma, lam = _as_arrays(sigma, lam)
        keep = sigma >= lam
        return np.divide(1.0, sigma, out=np.zeros_like(sigma), where=keep)


@dataclass(frozen=True)
class Landweber(Filter):
    """Landweber iteration with n = ⌈1/λ⌉ steps of size μ, in closed form.

    .. math:: g_\\lambda(\\sigma) = \\frac{1 - (1 - \\mu\\sigma)^n}{\\sigma}

    ``step`` is μ; by default μ = 1/max(σ) over the spectrum passed in, so that μσ ≤ 1 as the
    theory requires. g_λ(0) = nμ. Qualification ∞.
    """

    step: float | None = None

    def factors(self, sigma: ArrayLike, lam: ArrayLike) -> NDArray[np.float64]:
        sigma, lam = _as_arrays(sigma, lam)
        mu = _iteration_step(sigma, self.step, "Landweber")
        steps = np.ceil(1.0 / lam)
        t = np.minimum(mu * sigma, 1.0)
        return mu * _one_minus_power_over_t(t, steps, -1.0)


@dataclass(frozen=True)
class Showalter(Filter):
    """Showalter's method (asymptotic regularization).

    .. math:: g_\\lambda(\\sigma) = \\frac{1 - e^{-\\sigma/\\lambda}}{\\sigma}

    Evaluated as −expm1(−σ/λ)/σ; g_λ(0) = 1/λ. Qualification ∞.
    """

    def factors(self, sigma: ArrayLike, lam: ArrayLike) -> NDArray[np.float64]:
        sigma, lam = _as_arrays(sigma, lam)
        out = 1.0 / lam  # the limit at σ = 0
        pos = sigma > 0
        out[pos] = -np.expm1(-sigma[pos] / lam[pos]) / sigma[pos]
        return out


@dataclass(frozen=True)
class NuMethod(Filter):
    r"""Brakhage's ν-method: k = ⌈λ^(−1/2)⌉ steps of a semi-iterative method, in closed form.

    With t = μσ (step μ, so that 0 ≤ t ≤ 1) the filter is g_λ(σ) = μ·h_k(t), where h_0 = 0 and

    .. math:: h_j = h_{j-1} + \mu_j (h_{j-1} - h_{j-2}) + \omega_j (1 - t\,h_{j-1}),

    μ_1 = 0, ω_1 = (4ν + 2)/(4ν + 1) and, for j > 1,
    μ_j = (j − 1)(2j − 3)(2j + 2ν − 1) / ((j + 2ν − 1)(2j + 4ν − 1)(2j + 2ν − 3)),
    ω_j = 4(2j + 2ν − 1)(j + ν − 1) / ((j + 2ν − 1)(2j + 4ν − 1)) (Engl, Hanke & Neubauer 1996,
    §6.3; one of the regularization families of Bauer, Pereverzev & Rosasco 2007 that
    Kriukova et al. 2014, §3 covers). The residual 1 − t·h_k(t) stays in [−1, 1] and
    t^ν|1 − t·h_k(t)| = O(k^(−2ν)), so k ~ λ^(−1/2) steps give qualification ν — as Landweber
    with ~λ^(−1) steps, at the square root of the cost. ``step`` is μ; by default
    μ = 1/max(σ) over the spectrum passed in. k = 1 (λ ≥ 1) gives g_λ = μ·ω_1 for every σ.
    """

    nu: float = 1.0
    step: float | None = None

    def __post_init__(self) -> None:
        if not np.isfinite(self.nu) or self.nu <= 0:
            raise ValueError(f"NuMethod.nu must be a positive number, got {self.nu!r}")

    @property
    def qualification(self) -> float:  # type: ignore[override]
        return float(self.nu)

    def factors(self, sigma: ArrayLike, lam: ArrayLike) -> NDArray[np.float64]:
        sigma, lam = _as_arrays(sigma, lam)
        mu = _iteration_step(sigma, self.step, "NuMethod")
        t = np.minimum(mu * sigma, 1.0)
        steps = np.ceil(lam**-0.5)
        nu, out = float(self.nu), np.zeros_like(t)
        before, current = np.zeros_like(t), np.zeros_like(t)
        for j in range(1, int(steps.max(initial=0.0)) + 1):
            if j == 1:
                momentum, weight = 0.0, (4 * nu + 2) / (4 * nu + 1)
            else:
                momentum = (
                    (j - 1)
                    * (2 * j - 3)
                    * (2 * j + 2 * nu - 1)
                    / ((j + 2 * nu - 1) * (2 * j + 4 * nu - 1) * (2 * j + 2 * nu - 3))
                )
                weight = (
                    4
                    * (2 * j + 2 * nu - 1)
                    * (j + nu - 1)
                    / ((j + 2 * nu - 1) * (2 * j + 4 * nu - 1))
                )
            before, current = (
                current,
                (current + momentum * (current - before) + weight * (1.0 - t * current)),
            )
            out = np.where(steps == j, current, out)
        return mu * out


def make_filter(filter: str | Filter) -> Filter:
    """Resolve a filter name (a key of :data:`FILTERS`: ``"lavrentiev"``,
    ``"iterated-lavrentiev"``, ``"spectral-cutoff"``, ``"landweber"``, ``"showalter"``,
    ``"nu-method"``) or pass a :class:`Filter` through."""
    if isinstance(filter, Filter):
        return filter
    if filter not in FILTERS:
        raise ValueError(f"unknown filter {filter!r}; expected one of {sorted(FILTERS)}")
    filter_class: type[Filter] = FILTERS[filter].load()
    return filter_class()
