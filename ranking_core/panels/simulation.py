"""A rating-panel simulator: clinicians rating (reference, estimate) glucose scenarios.

For demos and studies of how many ratings a learned grid needs. A panel of ``n_raters`` raters
rates ``m`` scenarios drawn by a design; each rater r has an own severity bias b_r, scale a_r and
noise level σ_r, so rating = clip(a_r·s(REF, est) + b_r + N(0, σ_r²), 0, 4) with s the reference
surface, optionally rounded to the answer scale's step; a fraction of the rows (default 6.6 %, the
share of its 8,420 ratings the SEG authors removed as outliers; Kriukova et al. 2014 §4.3) is
replaced by a rating drawn uniformly on 0..4, and "careless" raters answer every scenario that way.
:data:`PANEL_MODELS` names the panels the benchmarks use.

A second panel model, :func:`simulate_rater_effects_panel`, is unlike that one, so that the
learners can be checked on panels they were not tuned on: each rater an affine map of the risk
with one compressing rater, noise growing with the risk, answers rounded, reversed answers
(:data:`RATER_EFFECT_PANELS`).

The reference surface is the SEG table when one is given (abs_risk), any (601, 601) risk grid, or
otherwise the project's built-in surface :func:`parkes_surface` (see there), so that the simulator
works on a fresh machine without the SEG file.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.ndimage import gaussian_filter

from ranking_core.grids.seg import GLUCOSE_MAX, SEGTable
from ranking_core.grids.zone_codes import zone_grid
from ranking_core.validation import one_of

__all__ = [
    "DESIGNS",
    "PANEL_MODELS",
    "RATER_EFFECT_PANELS",
    "SEG_OUTLIER_FRACTION",
    "parkes_surface",
    "simulate_panel",
    "simulate_rater_effects_panel",
]

DESIGNS = ("uniform", "log-uniform", "near-diagonal")
SEG_OUTLIER_FRACTION = 0.066  # 543 of 8,420 SEG ratings were cleaned as outliers
LOG_UNIFORM_LOW = 20.0  # mg/dL, lower end of the log-uniform design
NEAR_DIAGONAL_SD = 0.25  # sd of log(estimate/reference) in the near-diagonal design
PARKES_SMOOTHING = 10.0  # mg/dL, sd of the Gaussian blur of the Parkes zone surface


def _draw_design(design: str, m: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """(m, 2) scenarios (REF, estimate) in mg/dL on the 0..600 grid."""
    if design == "uniform":
        return rng.uniform(0.0, GLUCOSE_MAX, size=(m, 2))
    low, high = np.log(LOG_UNIFORM_LOW), np.log(GLUCOSE_MAX)
    if design == "log-uniform":
        return np.exp(rng.uniform(low, high, size=(m, 2)))
    ref = np.exp(rng.uniform(low, high, size=m))
    estimate = np.clip(ref * np.exp(rng.normal(0.0, NEAR_DIAGONAL_SD, size=m)), 0, GLUCOSE_MAX)
    return np.column_stack([ref, estimate])


@lru_cache(maxsize=2)
def parkes_surface(smoothing: float = PARKES_SMOOTHING) -> NDArray[np.float64]:
    """The built-in reference surface: Parkes type-1 zones A..E → 0..4, Gaussian-smoothed.

    This is the project's own definition, not a published grid: each lattice point (REF, BGM) of
    0..600 mg/dL gets its Parkes (consensus) type-1 zone (Parkes 2000) coded A = 0, B = 1, …,
    E = 4, and the step surface is blurred with a Gaussian of sd ``smoothing`` mg/dL (edges
    reflected) so that the risk rises continuously across zone boundaries as a panel's mean
    rating would. Read-only (401 KB per cached copy) — copy before changing it.
    """
    surface = gaussian_filter(zone_grid("parkes-type1"), smoothing, mode="reflect")
    surface.setflags(write=False)
    return surface


def _surface(reference: SEGTable | ArrayLike | None) -> NDArray[np.float64]:
    if reference is None:
        return parkes_surface()
    surface = np.asarray(getattr(reference, "absolute", reference), dtype=np.float64)
    if surface.shape != (GLUCOSE_MAX + 1, GLUCOSE_MAX + 1):
        raise ValueError(
            f"simulate_panel: reference must be a SEGTable or a (601, 601) risk grid "
            f"indexed [REF, estimate]; got shape {surface.shape}"
        )
    return surface


def simulate_panel(
    m: int,
    design: str = "uniform",
    reference: SEGTable | ArrayLike | None = None,
    n_raters: int = 10,
    noise: float = 0.25,
    outlier_fraction: float = SEG_OUTLIER_FRACTION,
    random_state: int | np.random.Generator | None = 0,
    *,
    rater_scale: tuple[float, float] = (1.0, 1.0),
    rater_bias_sd: float | None = None,
    step: float = 0.0,
    careless_raters: int = 0,
) -> pd.DataFrame:
    """Simulate a panel's rating set.

    Parameters
    ----------
    m : number of ratings (rows).
    design : ``"uniform"`` (REF, estimate uniform on [0, 600]² mg/dL), ``"log-uniform"``
        (each coordinate log-uniform on [20, 600] mg/dL) or ``"near-diagonal"`` (REF log-uniform
        on [20, 600], estimate = REF·exp(N(0, 0.25²)) clipped to 0..600: typical meter errors).
    reference : a :class:`~ranking_core.grids.seg.SEGTable` (abs_risk is used), a (601, 601)
        risk grid indexed [REF, estimate], or None for :func:`parkes_surface`.
    n_raters : panel size; each row is rated by one rater drawn at random.
    noise : typical rating noise sd (risk units); rater r has σ_r = noise·U(0.5, 1.5) and a
        bias b_r ~ N(0, (noise/2)²).
    outlier_fraction : share of rows (rounded to a whole number) whose rating is replaced by
        U(0, 4).
    random_state : seed or generator.
    rater_scale : (low, high): rater r multiplies the reference risk by a_r ~ U(low, high)
        (default 1: every rater uses the scale alike).
    rater_bias_sd : sd of the rater biases b_r (default noise/2).
    step : answer scale step (0.5: answers 0, 0.5, …, 4); 0 keeps continuous answers.
    careless_raters : how many of the raters (the last ones) answer U(0, 4) whatever the
        scenario (rounded to ``step``).

    Returns
    -------
    DataFrame with the rating-set columns reference, estimate (mg/dL), rating (0..4), rater
    (``"R01"`` …), plus ``outlier`` (bool, the simulator's ground truth: a rating unrelated to the
    scenario, replaced or from a careless rater; ignored by
    :func:`~ranking_core.ratings.read_rating_set`).
    """
    one_of(design, "design", DESIGNS, "simulate_panel")
    if int(m) != m or m < 1:
        raise ValueError(f"simulate_panel: m must be a positive integer; got {m!r}")
    if int(n_raters) != n_raters or n_raters < 1:
        raise ValueError(f"simulate_panel: n_raters must be a positive integer; got {n_raters!r}")
    if not np.isfinite(noise) or noise < 0:
        raise ValueError(f"simulate_panel: noise must be a finite number ≥ 0; got {noise!r}")
    if not 0 <= outlier_fraction <= 1:
        raise ValueError(
            f"simulate_panel: outlier_fraction must lie in [0, 1]; got {outlier_fraction!r}"
        )
    low, high = rater_scale
    if not 0 < low <= high:
        raise ValueError(
            f"simulate_panel: rater_scale must be (low, high) with 0 < low ≤ high; "
            f"got {rater_scale!r}"
        )
    if rater_bias_sd is not None and not rater_bias_sd >= 0:
        raise ValueError(f"simulate_panel: rater_bias_sd must be ≥ 0; got {rater_bias_sd!r}")
    if not 0 <= step <= 4:
        raise ValueError(f"simulate_panel: step must lie in [0, 4]; got {step!r}")
    if int(careless_raters) != careless_raters or not 0 <= careless_raters <= n_raters:
        raise ValueError(
            f"simulate_panel: careless_raters must be an integer in 0..n_raters; "
            f"got {careless_raters!r}"
        )
    m, n_raters = int(m), int(n_raters)
    surface = _surface(reference)
    rng = np.random.default_rng(random_state)
    X = _draw_design(design, m, rng)
    truth = surface[np.rint(X[:, 0]).astype(np.intp), np.rint(X[:, 1]).astype(np.intp)]
    sd = noise * rng.uniform(0.5, 1.5, size=n_raters)
    bias = rng.normal(0.0, noise / 2.0, size=n_raters)
    rater = rng.integers(0, n_raters, size=m)
    rating = np.clip(truth + bias[rater] + sd[rater] * rng.standard_normal(m), 0.0, 4.0)
    outlier = np.zeros(m, dtype=bool)
    outlier[rng.choice(m, size=round(outlier_fraction * m), replace=False)] = True
    rating[outlier] = rng.uniform(0.0, 4.0, size=int(outlier.sum()))
    if (low, high) != (1.0, 1.0) or rater_bias_sd is not None or careless_raters:
        # drawn after the default panel, so that the default keeps its numbers
        scale = rng.uniform(low, high, size=n_raters)
        if rater_bias_sd is not None:
            bias = rng.normal(0.0, rater_bias_sd, size=n_raters)
        rated = np.clip(
            scale[rater] * truth + bias[rater] + sd[rater] * rng.standard_normal(m), 0.0, 4.0
        )
        careless = rater >= n_raters - int(careless_raters)
        rated[careless] = rng.uniform(0.0, 4.0, size=int(careless.sum()))
        rating = np.where(outlier, rating, rated)
        outlier |= careless
    if step:
        rating = np.clip(np.round(rating / step) * step, 0.0, 4.0)
    width = len(str(n_raters))
    return pd.DataFrame(
        {
            "reference": X[:, 0],
            "estimate": X[:, 1],
            "rating": rating,
            "rater": [f"R{r + 1:0{max(width, 2)}d}" for r in rater],
            "outlier": outlier,
        }
    )


# The panels the benchmarks learn from (keyword arguments of :func:`simulate_panel`): the noise
# models of the SEG survey's size (noise 0.25 with and without its 6.6 % outliers) and a harder one
# with raters that use the scale differently, a coarse answer scale and one careless rater.
PANEL_MODELS: dict[str, dict] = {
    "clean": {"noise": 0.0, "outlier_fraction": 0.0},
    "noise": {"noise": 0.25, "outlier_fraction": 0.0},
    "noise-outliers": {"noise": 0.25, "outlier_fraction": SEG_OUTLIER_FRACTION},
    "hard": {
        "noise": 0.3,
        "outlier_fraction": SEG_OUTLIER_FRACTION,
        "rater_scale": (0.8, 1.2),
        "rater_bias_sd": 0.2,
        "step": 0.5,
        "careless_raters": 1,
    },
}


def simulate_rater_effects_panel(
    m: int,
    reference: SEGTable | ArrayLike | None = None,
    random_state: int | np.random.Generator | None = 0,
    *,
    n_raters: int = 9,
    offset_sd: float = 0.3,
    scale_range: tuple[float, float] = (0.7, 1.3),
    noise: tuple[float, float] = (0.15, 0.1),
    step: float = 0.5,
    reversed_fraction: float = 0.05,
    rater_effects: bool = True,
) -> pd.DataFrame:
    """A rating set of a panel unlike :func:`simulate_panel`'s.

    Pairs (REF, estimate) uniform on 0..600 mg/dL with reference risk r (the surface of
    ``reference``, as for :func:`simulate_panel`); each row is answered by one of ``n_raters``
    raters drawn at random, rater k answering a_k + b_k·r + ε with offset a_k ~ N(0,
    ``offset_sd``²) and scale b_k ~ U(``scale_range``), the last rater compressing the scale
    towards its middle (2 + 0.5·(r − 2)); ε ~ N(0, (c₀ + c₁·r)²) with (c₀, c₁) = ``noise`` (risk
    units: the noise grows with the risk). Answers are clipped to 0..4 and rounded to ``step``
    (0: not rounded), then a share ``reversed_fraction`` of them (each row independently)
    reversed, a ↦ 4 − a.

    ``rater_effects=False`` keeps the noise alone: r + ε clipped to 0..4, continuous, nothing
    reversed, no rater column (what least squares reaches without the rater effects). Columns
    as :func:`simulate_panel`'s; ``outlier`` marks the reversed answers.
    """
    if int(m) != m or m < 1:
        raise ValueError(f"simulate_rater_effects_panel: m must be a positive integer; got {m!r}")
    if int(n_raters) != n_raters or n_raters < 1:
        raise ValueError(
            f"simulate_rater_effects_panel: n_raters must be a positive integer; got {n_raters!r}"
        )
    if not 0 <= step <= 4 or not 0 <= reversed_fraction <= 1:
        raise ValueError(
            "simulate_rater_effects_panel: step must lie in [0, 4] and reversed_fraction in "
            f"[0, 1]; got {step!r}, {reversed_fraction!r}"
        )
    m, n_raters = int(m), int(n_raters)
    surface = _surface(reference)
    rng = np.random.default_rng(random_state)
    X = rng.uniform(0.0, GLUCOSE_MAX, size=(m, 2))
    risk = surface[np.rint(X[:, 0]).astype(np.intp), np.rint(X[:, 1]).astype(np.intp)]
    rater = rng.integers(0, n_raters, size=m)
    offset = rng.normal(0.0, offset_sd, n_raters)
    scale = rng.uniform(*scale_range, n_raters)
    offset[-1], scale[-1] = 1.0, 0.5  # the compressing rater: 2 + 0.5·(r − 2)
    epsilon = rng.standard_normal(m) * (noise[0] + noise[1] * risk)
    reversed_ = rng.random(m) < reversed_fraction
    frame = pd.DataFrame({"reference": X[:, 0], "estimate": X[:, 1]})
    if not rater_effects:
        frame["rating"] = np.clip(risk + epsilon, 0.0, 4.0)
        frame["outlier"] = False
        return frame
    answer = np.clip(offset[rater] + scale[rater] * risk + epsilon, 0.0, 4.0)
    if step:
        answer = np.clip(np.round(answer / step) * step, 0.0, 4.0)
    answer[reversed_] = 4.0 - answer[reversed_]
    width = max(len(str(n_raters)), 2)
    frame["rating"] = answer
    frame["rater"] = [f"R{k + 1:0{width}d}" for k in rater]
    frame["outlier"] = reversed_
    return frame


# The panels of :func:`simulate_rater_effects_panel` the benchmarks use (its keyword arguments):
# the rater-effects panel and its noise alone.
RATER_EFFECT_PANELS: dict[str, dict] = {
    "rater-effects": {},
    "rater-effects-noise-only": {"rater_effects": False},
}
