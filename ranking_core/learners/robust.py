"""Learning a risk grid from a real panel: outlying answers, raters who use the scale differently,
answers on a coarse scale.

Model. Rater k answers scenario x_i with a rounded, clipped reading of the consensus risk f,

    a_i = round_h(clip(b_k + s_k·f(x_i) + ε_i, 0, 4)),   ε_i ~ N(0, σ_k²·t(f(x_i))²),

and a few answers are unrelated to the scenario. The noise trend t(f) = 1 + κ·|f| lets the noise
grow with the risk (raters agree more on harmless pairs than on dangerous ones); κ ≥ 0 is measured
from the residuals (:func:`noise_trend`; κ = 0 is the homoscedastic model). The learner minimises
the weighted magnitude-preserving least-squares loss (Kriukova et al. 2014 eq. (4) with a weight
per rating)

    Σ_i w_i (ã_i − f(x_i) − b)² + mλ‖f‖²_H

over f and the constant b, where ã_i = (E[latent_i] − b_k)/s_k is the answer corrected for its
rater (the expectation of the unrounded, unclipped answer over its rounding interval given the
current fit: an EM step for interval-censored answers) and w_i = v_i·ψ(u_i)/u_i is a Huber or
Tukey weight of the standardised residual u_i = (ã_i − f(x_i))/(σ̃_k·t_i) times a precision
weight v_i ∝ 1/(σ̃_k·t_i)² (σ̃_k = σ_k/s_k, the rater's noise on the consensus scale,
t_i = t(f(x_i))). Rater offsets and scales are estimated jointly with f by alternating with the
fit, shrunk towards (0, 1) by a prior worth ``rater_prior`` ratings, with mean scale 1; the
noise levels are shrunk towards the pooled σ by a prior worth ``noise_prior`` ratings. With exact
zero-risk rows (the recipes' diagonal anchors) the consensus is the risk scale they fix (f = 0
where there is no risk) and each rater's offset is its own answer at risk 0; without them the
offsets have mean 0 (the consensus is the average rater).

The prior on a rater's reading is weak (one rating's worth): one of 30 ratings read a rater
answering 1 + 0.5·risk with scale 0.89 instead of 0.60 (docs/RESULTS.md, panels).

Solver. A weighted least-squares fit with weights w ≤ 1 is the fixed point of *unweighted* fits to
the pseudo-ratings y* = f + w ⊙ (ã − f) (Huber's H-algorithm: at the fixed point W(ã − f − b) = mλc
and Σ w(ã − f − b) = 0, the weighted normal equations). Every unweighted fit reuses the plain
ranker's eigendecomposition, K̃ = U diag(σ) Uᵀ: the fitted values are f = m·U(σ·g_λ(σ)·Uᵀ C y*/m)
+ mean(y*), O(m·r) per iteration and λ, and all λ of a path are iterated at once, so choosing λ by
validation costs one decomposition per fold, as for the plain learner. ``benchmarks/panels.py``
measures this against a direct weighted solve per iteration.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.utils.validation import check_is_fitted

from ranking_core.learners.base import RegularizationPath, store_params
from ranking_core.learners.choices import ROBUST_LOSSES
from ranking_core.learners.direct import DirectRanker
from ranking_core.learners.panel_answers import (
    RATING_MAX,
    PanelAnswers,
    rating_step,
    split_rater_column,
    truncated_mean,
)
from ranking_core.learners.robust_paths import RobustPath
from ranking_core.learners.spectral import SpectralRanker
from ranking_core.selection import Choice, kfold_curves, near_minimum
from ranking_core.spectral import kernel_spectrum
from ranking_core.validation import check_training_data, one_of, positive_float

__all__ = [
    "HUBER_C",
    "LOSSES",
    "OUTLIER_Z",
    "TUKEY_C",
    "RobustRanker",
    "kfold_robust",
    "noise_trend",
    "rating_step",
]

LOSSES = ROBUST_LOSSES
COARSE = ("interval", "midpoint")
HUBER_C = 1.345  # Huber's constant: 95 % efficiency under Gaussian noise
TUKEY_C = 4.685  # Tukey's biweight constant: 95 % efficiency under Gaussian noise
TUKEY_AFTER = 10  # Tukey's weights redescend: the first iterations use Huber's to find the bulk
OUTLIER_Z = 3.0  # a rating is flagged when its standardised residual exceeds this
MAD_TO_SD = 1.4826  # sd of a normal distribution per median absolute deviation
SCALE_LIMITS = (0.5, 2.0)  # a rater's scale is kept in this range (a flat answerer is noisy)
TREND_BINS = 4  # the noise trend is measured on this many equal-count bins of the fitted risk
TREND_MAX = 2.0  # κ is kept in 0..2: at risk 4 the noise sd is at most 9 times that at risk 0


@dataclass(frozen=True)
class _State:
    """The robust fit at each λ of a path (leading axis L)."""

    targets: NDArray[np.float64]  # (L, m) pseudo-ratings y*
    corrected: NDArray[np.float64]  # (L, m) rater-corrected answers ã (signed like y)
    fitted: NDArray[np.float64]  # (L, m) f at the training inputs (signed scale)
    weights: NDArray[np.float64]  # (L, m)
    z: NDArray[np.float64]  # (L, m) standardised residuals
    bias: NDArray[np.float64]  # (L, R)
    scale: NDArray[np.float64]  # (L, R)
    sd: NDArray[np.float64]  # (L, R) noise sd on the consensus scale
    pooled: NDArray[np.float64]  # (L,) pooled noise sd
    unit_sd: NDArray[np.float64]  # (L,) noise sd of a rating of weight 1
    trend: NDArray[np.float64]  # (L,) κ of the noise trend t(f) = 1 + κ·|f|
    n_iter: int


def _fitted_values(ranker: SpectralRanker, lams: NDArray, targets: NDArray) -> NDArray:
    """Training predictions of the ranker's unweighted fit to each row of ``targets`` (L, m):
    f = m·U(σ·g_λ(σ)·Uᵀ C y/m) + mean(y), O(L·m·r) from the cached decomposition."""
    spectrum = ranker.spectrum_
    m = targets.shape[1]
    mean = targets.mean(axis=1, keepdims=True)
    projection = (targets - mean) @ spectrum.vectors / m
    gain = spectrum.values * spectrum.factors(ranker.filter_, lams)
    return m * (gain * projection) @ spectrum.vectors.T + mean


def _group_median(values: NDArray, groups: NDArray[np.intp], n_groups: int) -> NDArray:
    """Median of |values| per group along the last axis, (L, n_groups); NaN for empty groups."""
    out = np.full((values.shape[0], n_groups), np.nan)
    for k in range(n_groups):
        members = groups == k
        if members.any():
            out[:, k] = np.median(np.abs(values[:, members]), axis=1)
    return out


def noise_trend(
    residual: NDArray, rounding: NDArray, risk: NDArray, free: NDArray, floor: float
) -> NDArray[np.float64]:
    """κ ≥ 0 of the noise trend σ(f) = σ₀·(1 + κ·f), per row of ``residual`` (L, m).

    The free rows are split into :data:`TREND_BINS` equal-count bins of the fitted risk ``risk``
    (clipped at 0); in each bin the noise sd is the MAD of the residuals less the bin's mean
    rounding variance ``rounding`` (Sheppard's correction), floored at ``floor``; the line
    σ = c₀ + c₁·f fitted to the bins' (median risk, sd) by least squares gives
    κ = c₁/c₀, kept in 0..:data:`TREND_MAX` (0: the noise does not grow with the risk)."""
    f = np.maximum(risk[:, free], 0.0)
    r, v = np.abs(residual[:, free]), rounding[:, free]
    order = np.argsort(f, axis=1)
    bins = [chunk for chunk in np.array_split(np.arange(f.shape[1]), TREND_BINS) if chunk.size]
    if len(bins) < 2:
        return np.zeros(f.shape[0])
    centre, sd = [], []
    for chunk in bins:
        rows = order[:, chunk]
        centre.append(np.median(np.take_along_axis(f, rows, axis=1), axis=1))
        mad = MAD_TO_SD * np.median(np.take_along_axis(r, rows, axis=1), axis=1)
        variance = mad**2 - np.take_along_axis(v, rows, axis=1).mean(axis=1)
        sd.append(np.sqrt(np.maximum(variance, floor**2)))
    t, s = np.stack(centre, axis=1), np.stack(sd, axis=1)
    t_mean, s_mean = t.mean(axis=1), s.mean(axis=1)
    spread = ((t - t_mean[:, None]) ** 2).sum(axis=1)
    slope = ((t - t_mean[:, None]) * (s - s_mean[:, None])).sum(axis=1) / np.maximum(spread, 1e-12)
    intercept = np.maximum(s_mean - slope * t_mean, floor)
    return np.where(spread > 1e-12, np.clip(slope / intercept, 0.0, TREND_MAX), 0.0)


class RobustRanker(RegressorMixin, BaseEstimator):
    """Regularized ranking robust to outlying ratings, with a rater model and coarse answers.

    Parameters
    ----------
    ranker : the (unfitted) :class:`~ranking_core.SpectralRanker` whose kernel, filter and λ are
        used (dense or low-rank solver; default ``SpectralRanker()``), or a
        :class:`~ranking_core.learners.direct.DirectRanker` (Lavrentiev at one λ, Cholesky or
        the glucose lattice: one factorisation reused by every iteration; no λ path, so λ is
        chosen before, for large rating sets).
    lam : λ (default: the ranker's).
    loss : ``"huber"`` (weights min(1, c/|u|), c = 1.345), ``"tukey"`` (biweight (1 − (u/c)²)²,
        c = 4.685, after Huber iterations) or ``"squared"`` (weight 1: only the rater model and
        the coarse-scale treatment).
    raters : estimate a per-rater offset, scale and noise level when the inputs carry rater codes.
    coarse : ``"interval"``: an answer on a scale of step h stands for the interval
        [a − h/2, a + h/2] (and 0 / 4 for everything below / above), replaced by its expectation
        under the current fit; ``"midpoint"``: answers are taken as given.
    step : the answer scale's step (0 = continuous); None detects it (:func:`rating_step`).
    signed : the targets are signed ratings sign(REF − estimate)·a
        (:mod:`ranking_core.grids.signed`); answers, intervals and raters are then handled on the
        absolute scale.
    max_iter, tol : iterations of the alternating fit and the largest change of the fitted values
        (risk units) at which it stops.
    path_iter : iterations per λ of a :meth:`path` (the λ choice); 0 gives the plain fits' path
        (λ chosen as for the plain ranker, the robust fit made at that λ only).
    rater_prior : each rater's offset and scale are shrunk towards (0, 1) by a prior worth this
        many ratings.
    noise_prior : each rater's noise level is shrunk towards the pooled one by a prior worth
        this many ratings (a median of a few dozen residuals is noisy: with 10, good raters of
        15 answers weighed less than 0.25; a careless rater still stands out with 60).
    trend : let the noise grow with the risk, σ_i = σ̃_k·(1 + κ·|f(x_i)|) with κ measured
        (:func:`noise_trend`); False: κ = 0.
    anchored_offsets : with exact zero-risk rows (diagonal anchors), the consensus is the risk
        scale those rows fix (f = 0 where the risk is 0) and each rater's offset b_k is its own
        answer at risk 0 (True, the default); otherwise, and always without such rows, the
        offsets have mean 0 and the consensus takes the raters' mean offset, which the anchors
        then contradict wherever that mean is not 0.
    min_scale : floor of the noise sd (risk units), so that clean ratings fitted almost exactly do
        not make every small approximation error an outlier.

    Inputs X are (m, 2) (reference, estimate in mg/dL) or (m, 3) with a rater code (whole number
    ≥ 0, −1 = unknown) in the third column; the rater column is ignored when predicting. Rows on
    the diagonal rated 0 (exact readings, e.g. the recipes' diagonal anchors) keep weight 1.

    Attributes
    ----------
    plain_ : the plain ranker fitted to the ratings as given (its decomposition is reused).
    model_ : the fitted :class:`~ranking_core.SpectralRanker` on the final pseudo-ratings.
    coef_, intercept_, X_fit_, kernel_ : those of ``model_`` (so that learned grids factorise).
    weights_ : (m,) final weight of each rating (0..1; rater weight × robust weight).
    targets_ : (m,) the ratings corrected for their rater and scale step (ã; signed like y): the
        fit is the weighted least-squares fit of these with ``weights_``.
    residuals_ : (m,) standardised residual of each rating after the rater correction.
    outlier_ : (m,) True where |residual| > :data:`OUTLIER_Z`.
    raters_ : rater codes in the order of the rater arrays.
    rater_bias_, rater_scale_, rater_sd_ : per rater offset b_k, scale s_k and noise sd on the
        consensus scale σ̃_k (at risk 0, where the noise trend is 1).
    noise_trend_ : κ of the noise trend (0 without ``trend``).
    scale_ : pooled noise sd (risk units).
    noise_sd_ : noise sd of a rating of weight 1 (a rating of weight w has sd noise_sd_/√w).
    step_ : the answer step used.
    n_iter_ : iterations run.
    """

    def __init__(
        self,
        ranker: SpectralRanker | None = None,
        loss: str = "huber",
        *,
        lam: float | None = None,
        raters: bool = True,
        coarse: str = "interval",
        step: float | None = None,
        signed: bool = False,
        max_iter: int = 200,
        path_iter: int = 30,
        tol: float = 1e-4,
        min_scale: float = 0.05,
        rater_prior: float = 1.0,
        noise_prior: float = 60.0,
        trend: bool = False,
        anchored_offsets: bool = True,
    ) -> None:
        store_params(self, locals())

    # -- fitting ---------------------------------------------------------------------------
    def fit(self, X: ArrayLike, y: ArrayLike) -> RobustRanker:
        """Decompose once (the plain ranker's fit), then alternate rater model, weights and
        re-solves at the ranker's λ. X: (m, 2) or (m, 3) with rater codes; y: (m,) ratings."""
        owner = type(self).__name__
        one_of(self.loss, "loss", LOSSES, owner)
        one_of(self.coarse, "coarse", COARSE, owner)
        positive_float(self.tol, "tol", owner)
        positive_float(self.min_scale, "min_scale", owner)
        positive_float(self.rater_prior, "rater_prior", owner)
        positive_float(self.noise_prior, "noise_prior", owner)
        if int(self.max_iter) != self.max_iter or self.max_iter < 1:
            raise ValueError(f"{owner}: max_iter must be a positive integer; got {self.max_iter!r}")
        if self.step is not None and not 0 <= self.step <= RATING_MAX:
            raise ValueError(f"{owner}: step must lie in 0..4 or be None; got {self.step!r}")
        X, y = check_training_data(X, y, owner)
        points, codes = split_rater_column(X, owner)
        if not self.raters:
            codes = np.full(len(y), -1, dtype=np.intp)
        base = clone(SpectralRanker() if self.ranker is None else self.ranker)
        if self.lam is not None:
            base.set_params(lam=positive_float(self.lam, "lam", owner))
        if isinstance(base, DirectRanker):
            base.set_params(keep_factor=True)
        self.plain_ = base.fit(points, y)
        if not self._direct and self.plain_.spectrum_.method == "primal":
            raise ValueError(f"{owner}: needs a kernel solver (dense or low-rank), not 'primal'")
        self.n_features_in_ = X.shape[1]
        self.panel_ = PanelAnswers.build(points, y, codes, self.signed, self.coarse, self.step)
        self.step_ = (
            rating_step(self.panel_.answer[~self.panel_.fixed])
            if self.step is None
            else float(self.step)
        )
        self._codes = np.unique(codes[codes >= 0])
        self._settle(float(self.plain_.lam))
        if self._direct:  # solved at its one λ: the factorisation's memory is no longer needed
            self.plain_.release_factor()
            self.model_.release_factor()
        return self

    @property
    def _direct(self) -> bool:
        """The base solves at one λ (a :class:`~ranking_core.learners.direct.DirectRanker`:
        one factorisation reused by every iteration, no λ path)."""
        return isinstance(self.plain_, DirectRanker)

    def _fitted(self, lams: NDArray, targets: NDArray) -> NDArray:
        """Training predictions of the base's unweighted fit to each row of ``targets``."""
        if self._direct:
            return np.vstack(
                [self.plain_.solve_targets(row).training_predictions(row) for row in targets]
            )
        return _fitted_values(self.plain_, lams, targets)

    def _needs_path(self) -> None:
        if self._direct:
            raise ValueError(
                f"{type(self).__name__}: a DirectRanker base solves at one λ; a λ "
                "path needs a SpectralRanker base"
            )

    def _iterate(self, lams: NDArray[np.float64], max_iter: int) -> _State:
        """The alternating fit at every λ of ``lams`` at once."""
        panel = self.panel_
        n_lams, m, R = len(lams), len(panel.y), panel.n_raters
        free = ~panel.fixed
        rated = free & (panel.codes < R)
        onehot = np.zeros((m, R + 1))
        onehot[np.arange(m), panel.codes] = 1.0
        onehot = onehot[:, :R]
        share = self._rater_share()
        targets = np.broadcast_to(panel.y, (n_lams, m)).copy()
        fitted = self._fitted(lams, targets)
        bias, scale = np.zeros((n_lams, R + 1)), np.ones((n_lams, R + 1))
        latent = np.broadcast_to(panel.answer, (n_lams, m)).copy()
        robust = np.ones((n_lams, m))
        exact_or_rounded = np.isfinite(panel.width)  # not clipped at 0 or 4
        rounding = panel.rounding_variance
        n_iter = 0
        for n_iter in range(1, max_iter + 1):
            consensus = fitted * panel.side  # the absolute scale
            if self.raters and R:
                bias[:, :R], scale[:, :R] = self._rater_fit(
                    latent, consensus, robust, onehot, share, rated
                )
            b, s = bias[:, panel.codes], scale[:, panel.codes]
            # the noise is measured on the answers as given where they stand for a rounding
            # interval (Sheppard's correction removes the rounding's variance h²/12), on the
            # expected latent answers where they were clipped at 0 or 4
            measured = np.where(exact_or_rounded, panel.answer, latent)
            residual = (measured - b) / s - consensus
            kappa = (
                noise_trend(residual, rounding / s**2, consensus, free, self.min_scale)
                if self.trend
                else np.zeros(n_lams)
            )
            trend = 1.0 + kappa[:, None] * np.maximum(consensus, 0.0)
            sd = self._noise_sd(residual / trend, rounding / (s * trend) ** 2, panel, free)
            row_sd = sd[:, panel.codes] * trend  # each rating's noise sd, consensus scale
            if self.coarse == "interval":
                latent = truncated_mean(panel.low, panel.high, b + s * consensus, row_sd * s)
            corrected = (latent - b) / s
            z = np.where(free, (corrected - consensus) / row_sd, 0.0)
            robust = self._robust_weights(z, n_iter)
            unit_sd = sd.min(axis=1, keepdims=True)  # ≤ every row_sd (the trend is ≥ 1)
            weights = np.where(free, robust * (unit_sd / row_sd) ** 2, 1.0)
            pseudo = consensus + weights * (corrected - consensus)
            targets = np.where(free, pseudo * panel.side, panel.y)
            new = self._fitted(lams, targets)
            change = np.abs(new - fitted).max()
            fitted = new
            if change < self.tol:
                break
        corrected = np.where(free, corrected * panel.side, panel.y)
        return _State(
            targets,
            corrected,
            fitted,
            weights,
            z,
            bias[:, :R],
            scale[:, :R],
            sd[:, :R],
            sd[:, R],
            unit_sd[:, 0],
            kappa,
            n_iter,
        )

    def _rater_fit(self, answers, consensus, weights, onehot, share, rated):
        """Per rater and λ: weighted least squares a ≈ b_k + s_k·f with a ridge prior towards
        (0, 1) worth ``rater_prior`` ratings, then mean scale 1 and, unless the offsets are
        anchored (``anchored_offsets`` and exact zero-risk rows), mean offset 0."""
        w = np.where(rated, weights, 0.0)
        spread = np.var(consensus[:, rated], axis=1, keepdims=True) + 1e-12
        s_w = w @ onehot + self.rater_prior
        s_f = (w * consensus) @ onehot
        s_ff = (w * consensus**2) @ onehot + self.rater_prior * spread
        s_a = (w * answers) @ onehot
        s_fa = (w * consensus * answers) @ onehot + self.rater_prior * spread
        det = s_w * s_ff - s_f**2
        bias = (s_ff * s_a - s_f * s_fa) / det
        scale = np.clip((s_w * s_fa - s_f * s_a) / det, *SCALE_LIMITS)
        if not (self.anchored_offsets and self.panel_.fixed.any()):
            bias -= bias @ share[:, None]
        scale /= scale @ share[:, None]
        return bias, scale

    def _noise_sd(
        self, residual: NDArray, rounding: NDArray, panel: PanelAnswers, free: NDArray
    ) -> NDArray:
        """(L, R + 1) robust noise sd per rater on the consensus scale: the MAD of the residuals
        less the mean rounding variance ``rounding`` of the group's answers (Sheppard's
        correction, Sheppard 1898), shrunk to the pooled value by ``noise_prior`` ratings,
        floored at ``min_scale``; the last column is the pooled value (raterless rows)."""

        def corrected(mad: NDArray, rounding_mean: NDArray) -> NDArray:
            return np.sqrt(np.maximum((MAD_TO_SD * mad) ** 2 - rounding_mean, self.min_scale**2))

        pooled = corrected(
            np.median(np.abs(residual[:, free]), axis=1), rounding[:, free].mean(axis=1)
        )
        R = panel.n_raters
        sd = np.repeat(pooled[:, None], R + 1, axis=1)
        if self.raters and R:
            groups = np.where(free, panel.codes, R)
            members = groups[:, None] == np.arange(R)
            n = members.sum(axis=0)
            per_rater = corrected(
                np.nan_to_num(_group_median(residual, groups, R)),
                rounding @ members / np.maximum(n, 1),
            )
            variance = n * per_rater**2 + self.noise_prior * pooled[:, None] ** 2
            sd[:, :R] = np.sqrt(variance / (n + self.noise_prior))
        return np.maximum(sd, self.min_scale)

    def _robust_weights(self, z: NDArray, n_iter: int) -> NDArray:
        size = np.abs(z)
        if self.loss == "squared":
            return np.ones_like(z)
        if self.loss == "tukey" and n_iter > TUKEY_AFTER:
            return np.where(size < TUKEY_C, (1 - (size / TUKEY_C) ** 2) ** 2, 0.0)
        return np.minimum(1.0, HUBER_C / np.maximum(size, 1e-12))

    def _settle(self, lam: float) -> None:
        """Run the alternating fit at λ and expose its results."""
        state = self._iterate(np.array([lam]), int(self.max_iter))
        self.model_ = self._solved(state.targets[0], lam)
        self.coef_, self.intercept_ = self.model_.coef_, self.model_.intercept_
        self.X_fit_, self.kernel_ = self.model_.X_fit_, self.model_.kernel_
        self.weights_ = state.weights[0]
        self.targets_ = state.corrected[0]
        self.residuals_ = state.z[0]
        self.outlier_ = np.abs(self.residuals_) > OUTLIER_Z
        self.raters_ = self._codes
        self.rater_bias_ = state.bias[0]
        self.rater_scale_ = state.scale[0]
        self.rater_sd_ = state.sd[0]
        self.scale_ = float(state.pooled[0])
        self.noise_sd_ = float(state.unit_sd[0])
        self.noise_trend_ = float(state.trend[0])
        self.n_iter_ = state.n_iter

    def _solved(self, targets: NDArray, lam: float) -> SpectralRanker:
        """A copy of the decomposed ranker solved for ``targets`` at λ (no refactorising)."""
        if self._direct:
            return self.plain_.solve_targets(targets)
        model = copy.copy(self.plain_)
        spectrum = model.spectrum_
        mean = float(targets.mean())
        model.spectrum_ = kernel_spectrum(
            spectrum.vectors,
            spectrum.values,
            (targets - mean) / len(targets),
            spectrum.feature_mean,
            spectrum.method,
        )
        model.y_mean_ = mean
        return model.resolve(lam)

    # -- λ paths (for the validation rules of ranking_core.selection) -------------------------
    def path(self, lams: ArrayLike) -> RobustPath:
        """The robust fits for every λ in ``lams`` from the one decomposition,
        O(iterations·L·m·r)."""
        check_is_fitted(self, "model_")
        self._needs_path()
        lams = np.atleast_1d(np.asarray(lams, dtype=np.float64))
        if not self.path_iter:
            return self.plain_path(lams)
        state = self._iterate(lams, int(self.path_iter))
        spectrum, filter_ = self.plain_.spectrum_, self.plain_.filter_
        m = state.targets.shape[1]
        mean = state.targets.mean(axis=1)
        b = (state.targets - mean[:, None]) / m
        projection = b @ spectrum.vectors
        with_zero = filter_.factors(np.append(spectrum.values, 0.0)[None, :], lams[:, None])
        coef = (with_zero[:, :-1] * projection) @ spectrum.vectors.T
        coef += with_zero[:, -1:] * (b - projection @ spectrum.vectors.T)
        intercept = mean - coef @ spectrum.feature_mean
        return RobustPath(
            RegularizationPath(lams, coef, intercept, with_zero[:, :-1], self.plain_),
            with_zero[:, :-1] * projection,
            state.bias @ self._rater_share(),
            self.signed,
        )

    def _rater_share(self) -> NDArray[np.float64]:
        """Each rater's share of the rated answers, in the order of the rater arrays."""
        panel = self.panel_
        counts = np.bincount(panel.codes[~panel.fixed], minlength=panel.n_raters + 1)
        counts = counts[: panel.n_raters].astype(np.float64)
        return counts / max(counts.sum(), 1.0)

    def plain_path(self, lams: ArrayLike) -> RobustPath:
        """The least-squares fits of the ratings as given (no weights, rater model or intervals)
        for every λ in ``lams``: the plain ranker's path on the same decomposition."""
        check_is_fitted(self, "model_")
        self._needs_path()
        path = self.plain_.path(np.atleast_1d(np.asarray(lams, dtype=np.float64)))
        return RobustPath(path, path.factors * self.plain_.spectrum_.projection)

    def resolve(self, lam: float) -> RobustRanker:
        """A copy fitted at another λ from the same decomposition."""
        check_is_fitted(self, "model_")
        self._needs_path()
        other = copy.copy(self)
        other._settle(positive_float(lam, "lam", type(self).__name__))
        return other

    @property
    def lam_(self) -> float:
        """The λ the model is solved at."""
        return float(self.model_.lam)

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """The consensus risk f(x) (signed when ``signed``), shape (n,); a rater column is
        ignored."""
        check_is_fitted(self, "model_")
        points, _ = split_rater_column(X, type(self).__name__)
        return self.model_.predict(points)


def kfold_robust(
    robust: RobustRanker,
    X: ArrayLike,
    y: ArrayLike,
    lams: ArrayLike,
    *,
    n_splits: int = 5,
    random_state: int | None = 0,
    progress: Callable[[int, int], None] | None = None,
    criterion: str = "misranking",
    folds: int | None = None,
    refit_with: BaseEstimator | None = None,
    max_train: int | None = None,
) -> Choice:
    """k-fold validation criterion over λ of the robust fits and, on the same folds, of the
    least-squares fits (``robust`` with loss ``"squared"``, no rater model, answers as given).
    The robust fits' λ is the minimum of their consensus against the answers as given; whether
    they or the least-squares fits are learned is decided by the lower minimum of the answers
    each predicts, the panel's mean rater reading the consensus (:class:`MeanRaterPath`: with
    offsets anchored at zero risk the consensus itself sits the raters' mean offset below
    their answers, which would hand a panel with a careless rater to least squares). The
    winner is refitted on all ratings at its λ. A clean panel thus keeps the plain learner's
    accuracy; its ratings still get residuals and flags (weights 1). ``criterion``:
    ``"misranking"`` or ``"absolute-error"`` (:func:`~ranking_core.selection.validation_scores`;
    the mean absolute error of the validation ratings, the better choice on noisy panels,
    docs/RESULTS.md).

    The curves come from one decomposition per fold (the least-squares path is the robust
    fit's :meth:`~RobustRanker.plain_path`), so the choice costs k + 1 decompositions; the folds
    are those of ``choose(rule="kfold")``. ``folds``: validate on the first ``folds`` of them
    only (None: all; :func:`ranking_core.learn.plan_fit` uses one beyond
    :data:`~ranking_core.learners.direct.EXACT_UP_TO` ratings). ``refit_with``: the plain
    ranker of the final fit on all ratings (default: ``robust``'s own; a
    :class:`~ranking_core.learners.direct.DirectRanker` refits without a decomposition).
    ``max_train``: fit each fold on at most that many of its training points
    (:func:`~ranking_core.selection.kfold_curves`).
    """
    X, y = check_training_data(X, y, "kfold_robust")
    lams = np.atleast_1d(np.asarray(lams, dtype=np.float64))
    n_steps = (n_splits if folds is None else min(folds, n_splits)) + 1
    steps = iter(range(1, n_steps))
    curve, answers_curve, plain_curve = kfold_curves(
        robust,
        X,
        y,
        lams,
        n_splits=n_splits,
        random_state=random_state,
        n_folds=folds,
        criterion=criterion,
        max_train=max_train,
        views=lambda fold, grid: (
            (path := fold.path(grid)),
            path.mean_rater(),
            fold.plain_path(grid),
        ),
        step=None if progress is None else (lambda: progress(next(steps), n_steps)),
    )
    learner = robust
    if np.nanmin(plain_curve) < np.nanmin(answers_curve):
        curve, learner = (
            plain_curve,
            clone(robust).set_params(loss="squared", raters=False, coarse="midpoint", path_iter=0),
        )
    lam = lams[near_minimum(curve, owner="kfold_robust")].item()
    if refit_with is not None:
        learner = clone(learner).set_params(ranker=refit_with)
    model = clone(learner).set_params(lam=lam).fit(X, y)
    if progress is not None:
        progress(n_steps, n_steps)
    return Choice(lam, "lam", None, lams, None, curve, model, "kfold", True)
