"""What a fit gives back: :class:`LearnedGrid` (the grid, the fitted model, the exact settings,
λ, the training set and a checksum of the ratings), the advice on its settings, and
:class:`PanelFit` (a grid learned from a panel with what the learner made of each rating).

The grid is 601 × 601, rows = reference 0..600 mg/dL, columns = measured 0..600 mg/dL, risk on
the SEG scale 0..4. Files of a learned grid are written by
:func:`ranking_core.grids.files.write_grid_files`, its band's by
:func:`ranking_core.panels.uncertainty.write_band_files`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sklearn.base import clone

from ranking_core.grids.learned import learned_grid
from ranking_core.grids.monotone import MonotoneRisk
from ranking_core.grids.signed import AbsoluteRisk
from ranking_core.learn.plan import METHOD_LABELS, ROBUST_LATTICE_LABEL
from ranking_core.learn.settings import KERNEL_LABELS, KERNELS, LearnSettings
from ranking_core.learn.training import rating_positions
from ranking_core.learners.direct import DirectRanker
from ranking_core.learners.lowrank import LowRankRanker
from ranking_core.learners.robust import MAD_TO_SD, OUTLIER_Z, RobustRanker, rating_step
from ranking_core.learners.spectral import SpectralRanker
from ranking_core.ratings import RatingSet
from ranking_core.selection import AprioriRule
from ranking_core.validation import positive_float

__all__ = [
    "NO_RATER",
    "SEARCHING_RULES",
    "LearnedGrid",
    "PanelFit",
    "lambda_at_edge",
    "panel_fit",
    "settings_advice",
]


@dataclass(frozen=True)
class LearnedGrid:
    """A learned grid with everything needed to show, re-solve, store and export it.

    Attributes
    ----------
    settings : the exact :class:`LearnSettings` it was learned with.
    model : the fitted ranker at ``lam`` (on signed targets when ``settings.signed``): a
        :class:`~ranking_core.SpectralRanker` holding its spectral decomposition, a
        :class:`~ranking_core.learners.direct.DirectRanker` (large rating sets), a
        :class:`~ranking_core.learners.lowrank.LowRankRanker` (a smooth kernel's factor) or a
        :class:`~ranking_core.learners.robust.RobustRanker` around either.
    lam : λ of this grid; ``lam_chosen`` : λ the rule chose.
    lams : (L,) candidate λ; ``curve`` : (L,) the rule's criterion (None for the a-priori and
        manual rules).
    apriori : the fitted a-priori rule (``rule == "apriori"``), else None.
    X, y : the training set: ratings plus anchors (mg/dL; with ``settings.robust`` a third
        column holds rater codes, −1 for none), targets signed if asked.
    n_ratings : ratings in the rating set (without anchors).
    checksum : :func:`~ranking_core.learn.training.ratings_checksum` of the rating set.
    n_raters : raters the rating set names (0 without a rater column).
    answer_step : the step of the rating scale (:func:`~ranking_core.panels.rating_step`:
        1 or 0.5 for coarse answers, 0 for continuous ones).
    method : how the rule was computed (:class:`~ranking_core.learn.plan.FitPlan`).
    """

    settings: LearnSettings
    model: SpectralRanker | DirectRanker | RobustRanker | LowRankRanker
    lam: float
    lam_chosen: float
    lams: NDArray[np.float64]
    curve: NDArray[np.float64] | None
    apriori: AprioriRule | None
    X: NDArray[np.float64]
    y: NDArray[np.float64]
    n_ratings: int
    checksum: str
    n_raters: int = 0
    answer_step: float = 0.0
    method: str = "exact"

    @property
    def points_fitted(self) -> int:
        """Training points the model was fitted on (half of them for the paper's hold-out)."""
        if isinstance(self.model, LowRankRanker):
            return self.model.n_fit_  # its X_fit_ holds the factor's pivots only
        fitted = self.model.X_fit_
        assert fitted is not None, "a glucose kernel's fit keeps its training inputs"
        return len(fitted)

    @property
    def computed_by(self) -> str:
        """How λ and the grid were computed, in words (:data:`METHOD_LABELS`)."""
        if self.method == "lattice" and self.settings.robust is not None:
            return ROBUST_LATTICE_LABEL
        low_rank = self.low_rank
        if low_rank is not None:
            return (
                f"every λ from one rank-{low_rank['rank']} factor of the kernel (pivoted "
                f"Cholesky; discarded kernel mass {low_rank['residual_trace']:.1e} of its "
                f"trace, tolerance {low_rank['tolerance']:g})"
            )
        return METHOD_LABELS[self.method]

    @property
    def low_rank(self) -> dict | None:
        """The kernel's factor of a low-rank fit, for the grid's provenance: ``rank`` r,
        ``tolerance`` ε asked for and ``residual_trace`` reached (trace(K − ΦΦᵀ)/trace(K),
        :class:`~ranking_core.learners.lowrank.KernelFactor`); None for any other fit."""
        if not isinstance(self.model, LowRankRanker):
            return None
        factor = self.model.factor_
        return {
            "rank": factor.rank,
            "tolerance": factor.tolerance,
            "residual_trace": factor.residual,
        }

    @property
    def from_a_panel(self) -> bool:
        """The ratings name their raters or come on a coarse scale: a real panel's, for which
        robust learning (:func:`~ranking_core.learn.settings.robust_settings`) is made."""
        return self.n_raters > 1 or self.answer_step > 0

    @property
    def curve_in_words(self) -> tuple[str, NDArray[np.float64]] | None:
        """(axis label, values) of the rule's curve as shown: the validation misranking in %,
        the mean absolute validation error in risk units, or the quasi-optimality rule's change
        of the grid ‖f_λⱼ − f_λⱼ₊₁‖_H; None without a curve."""
        if self.curve is None:
            return None
        if self.settings.rule == "quasi-optimality":
            return "change of the grid, ‖Δf‖ in the kernel space", self.curve
        if self.settings.criterion == "misranking":
            return "misranking of left-out ratings (%)", 100 * self.curve
        return "mean absolute error (risk units)", self.curve

    @property
    def n_flagged(self) -> int | None:
        """Ratings flagged as outlying by robust learning (standardised residual above
        :data:`~ranking_core.learners.robust.OUTLIER_Z`) among those fitted (the first half for
        the paper's hold-out); None for a least-squares fit."""
        flagged = self.flagged_points
        return None if flagged is None else int(flagged.sum())

    @property
    def flagged_points(self) -> NDArray[np.bool_] | None:
        """For each training point (row of X): flagged as outlying by robust learning (never an
        anchor, nor a point the hold-out left unfitted); None for a least-squares fit."""
        if not isinstance(self.model, RobustRanker):
            return None
        flagged = np.zeros(len(self.X), dtype=bool)
        flagged[: self.model.outlier_.size] = self.model.outlier_
        return flagged

    @cached_property
    def risk_model(self) -> SpectralRanker | AbsoluteRisk | MonotoneRisk:
        """The model that predicts risk (|signed model| when ``settings.signed``; projected onto
        the grids rising away from the diagonal when ``settings.monotone``)."""
        model = AbsoluteRisk(self.model) if self.settings.signed else self.model
        return MonotoneRisk.fit(model) if self.settings.monotone else model

    @property
    def rating_points(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(reference, measured, risk) of the training points, risk on 0..4 (for drawing)."""
        return self.X[:, 0], self.X[:, 1], np.abs(self.y)

    @cached_property
    def grid(self) -> NDArray[np.float64]:
        """(601, 601) predicted risk indexed [reference, measured] in mg/dL, step 1 (not
        clipped: a learned surface may leave 0..4 slightly)."""
        return learned_grid(self.risk_model)

    def at(self, lam: float) -> LearnedGrid:
        """The same fit solved at another λ: from the cached decomposition, O(m·r), or, for a
        model solved at one λ (a direct solve, large rating sets), refitted at λ."""
        lam = positive_float(lam, "lam", "LearnedGrid.at")
        model = self.model
        direct = isinstance(model, DirectRanker) or isinstance(
            getattr(model, "plain_", None), DirectRanker
        )
        solved = (
            clone(model).set_params(lam=lam).fit(self.X, self.y) if direct else model.resolve(lam)
        )
        return dataclasses.replace(self, model=solved, lam=lam)


# the rules that search the candidate grid of λ (the a-priori and manual rules do not)
SEARCHING_RULES = ("kfold", "holdout", "quasi-optimality")


def lambda_at_edge(result: LearnedGrid) -> str | None:
    """One sentence when the rule chose the smallest or the largest candidate λ of its grid
    (λ₀·q^j, j < n_lams; Kriukova et al. 2014, §4.1): the criterion's minimum may then lie
    beyond the grid, and the grid fits the ratings too closely (smallest) or is smoothed as far
    as the grid allows (largest). None inside the grid, for rules that do not search it, and for
    a grid of fewer than 3 candidates."""
    lams = np.asarray(result.lams, dtype=np.float64)
    if result.settings.rule not in SEARCHING_RULES or lams.size < 3:
        return None
    low, high = float(lams.min()), float(lams.max())
    chosen = float(result.lam_chosen)
    span = f"the grid runs from {low:.3g} to {high:.3g}"
    if np.isclose(chosen, low, rtol=1e-9, atol=0.0):
        return (
            f"λ = {chosen:.3g} is the smallest candidate ({span}): the rule found no minimum "
            "inside the grid, so the grid may follow the ratings' noise; add ratings, or choose "
            "λ with the a-priori rule or by hand (rule manual) and compare the grids."
        )
    if np.isclose(chosen, high, rtol=1e-9, atol=0.0):
        return (
            f"λ = {chosen:.3g} is the largest candidate ({span}): the rule found no minimum "
            "inside the grid, so the grid may be smoothed too far (nearly flat); check that the "
            "ratings vary with the pairs, add ratings, or choose λ by hand (rule manual)."
        )
    return None


def settings_advice(result: LearnedGrid) -> list[str]:
    """Short warnings about choices that are likely to give a poor grid (plain sentences)."""
    settings, advice = result.settings, []
    suited = KERNELS[settings.kernel].suited_widths  # set for every kernel of KERNELS
    gamma = settings.gamma  # set by LearnSettings (the kernel's own width when not given)
    if suited is not None and gamma is not None and not suited[0] <= gamma <= suited[1]:
        low, high = suited
        unit = KERNELS[settings.kernel].width_unit
        advice.append(
            f"The kernel width {gamma:,.0f} {unit} is outside the range that suits the "
            f"{KERNEL_LABELS[settings.kernel].split(',')[0]} kernel ({low:,.0f}–{high:,.0f} "
            f"{unit}); the grid is likely too rough or too flat."
        )
    if result.apriori is not None:
        beta = result.apriori.beta
        if beta >= 1.0 - 1e-6 or beta <= 1e-6:
            advice.append(
                f"The a-priori rule's exponent β = {beta:.3g} sits at the bound of its range "
                "(0, 1]: the subsets did not determine it, so λ(m) is an extrapolation. Prefer "
                "k-fold validation."
            )
    edge = lambda_at_edge(result)
    if edge is not None:
        advice.append(edge)
    if settings.rule == "holdout" and not settings.refit_all:
        advice.append(
            f"Hold-out fits the grid on half of the ratings ({result.points_fitted} of "
            f"{len(result.y)} points); refitting on all of them at the chosen λ uses the rest."
        )
    if settings.robust is None and result.from_a_panel:
        panel = " and ".join(
            ([f"{result.n_raters} raters"] if result.n_raters > 1 else [])
            + ([f"answers in steps of {result.answer_step:g}"] if result.answer_step else [])
        )
        advice.append(
            f"These ratings come from a panel ({panel}) and are fitted by plain least squares. "
            "Robust learning weighs outlying ratings down, models each rater's offset and scale "
            "and reads coarse answers as intervals: on simulated panels it misranks a fifth to a "
            "third fewer pairs."
        )
    return advice


NO_RATER = "(none)"


@dataclass(frozen=True)
class PanelFit:
    """A grid learned from a panel, with what the learner made of each rating.

    Attributes
    ----------
    learned : the :class:`LearnedGrid` (settings, λ, grid, model).
    ratings : one row per rating: reference, estimate (mg/dL), rating, rater, consensus (the
        learned risk there), residual (standardised, after the rater correction), weight (0..1)
        and flagged (|residual| > 3).
    """

    learned: LearnedGrid
    ratings: pd.DataFrame = field(repr=False)

    @property
    def model(self) -> object:
        """The fitted model predicting the absolute risk."""
        return self.learned.risk_model

    @property
    def robust(self) -> RobustRanker | None:
        """The :class:`~ranking_core.panels.RobustRanker` (None for plain least squares)."""
        return self.learned.model if isinstance(self.learned.model, RobustRanker) else None

    @property
    def step(self) -> float:
        """The answer scale's step (0 = continuous)."""
        return self.robust.step_ if self.robust is not None else rating_step(self.ratings["rating"])


def panel_fit(learned: LearnedGrid, data: RatingSet) -> PanelFit:
    """The :class:`PanelFit` of ``learned``, the grid learned from ``data``: each rating with its
    consensus risk, its residual standardised by the noise (robust learning's, after the rater
    correction; otherwise the residuals' MAD·1.4826), its weight and its flag (|residual| >
    :data:`~ranking_core.learners.robust.OUTLIER_Z`)."""
    settings = learned.settings
    frame = data.frame
    X, y = data.X, data.y
    out = pd.DataFrame(
        {
            "reference": X[:, 0],
            "estimate": X[:, 1],
            "rating": y,
            "rater": frame["rater"].astype(str).to_numpy() if "rater" in frame else NO_RATER,
        },
        index=frame.index,
    )
    out["consensus"] = learned.risk_model.predict(X)
    model = learned.model
    if isinstance(model, RobustRanker):
        rows = rating_positions(int(settings.anchors), len(y))
        # the paper's hold-out fits the first half only: the other points have no residual
        fitted = model.residuals_.size
        residual, weight = np.full(len(learned.y), np.nan), np.full(len(learned.y), np.nan)
        residual[:fitted], weight[:fitted] = model.residuals_, model.weights_
        out["residual"] = residual[rows]
        out["weight"] = weight[rows]
    else:
        residual = y - out["consensus"].to_numpy()
        scale = MAD_TO_SD * np.median(np.abs(residual - np.median(residual)))
        out["residual"] = residual / max(scale, 1e-12)
        out["weight"] = 1.0
    out["flagged"] = np.abs(out["residual"]) > OUTLIER_Z
    return PanelFit(learned, out)
