"""A panel's ratings learned robustly, and the report on the panel: raters, reliability, flags.

:func:`ranking_core.learn.learn_panel` learns a grid (default: the best recipe with Huber
weights) from a rating set and gives every rating its consensus risk, standardised residual,
weight and outlier flag; :func:`panel_report` summarises per rater (ratings, estimated offset
and scale, noise, agreement with the consensus, share flagged), the panel's reliability and the
flagged ratings.

Reliability is Krippendorff's α (interval level; Krippendorff 2011, computed by the
``krippendorff`` package) over the scenarios that at least two raters rated; a design where every
scenario is rated once has none, and α is then reported as not measurable.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import krippendorff
import numpy as np
import pandas as pd

__all__ = ["LOW_WEIGHT", "PanelReport", "panel_report"]

LOW_WEIGHT = 0.25  # a rater whose ratings weigh less than this on average is named in the report


@dataclass(frozen=True)
class PanelReport:
    """Per rater figures, the panel's reliability and the flagged ratings.

    Attributes
    ----------
    raters : one row per rater: rater, ratings, bias (offset b_k, risk units: the rater's
        answer where the consensus is 0, no risk, when diagonal points anchor it; otherwise
        relative to the raters' mean), scale (s_k, relative to the raters' mean), noise_sd
        (σ̃_k, risk units on the consensus scale), agreement (Pearson correlation of the
        rater's ratings with the consensus at the same scenarios), flagged_share, mean_weight.
    alpha : Krippendorff's α (interval) over scenarios rated by ≥ 2 raters; None when there are
        fewer than two such scenarios.
    shared_scenarios : how many scenarios α was computed on.
    consensus_r2 : share of the ratings' variance the consensus explains (weighted by the
        ratings' weights).
    flagged : the flagged ratings, largest residual first.
    n_ratings, step : ratings in the set; answer scale step (0 = continuous).
    """

    raters: pd.DataFrame = field(repr=False)
    alpha: float | None
    shared_scenarios: int
    consensus_r2: float
    flagged: pd.DataFrame = field(repr=False)
    n_ratings: int
    step: float

    @property
    def low_weight_raters(self) -> list[str]:
        """The raters whose ratings weigh less than :data:`LOW_WEIGHT` on average, lightest
        first: answers far from the consensus throughout (a careless rater is one), which the
        per-rating flags do not catch when the rater's own noise is estimated as large."""
        light = self.raters[self.raters["mean_weight"] < LOW_WEIGHT]
        return [str(r) for r in light.sort_values("mean_weight")["rater"]]


def _agreement(group: pd.DataFrame) -> float:
    if len(group) < 3 or group["rating"].std() == 0 or group["consensus"].std() == 0:
        return float("nan")
    return float(np.corrcoef(group["rating"], group["consensus"])[0, 1])


def _alpha(ratings: pd.DataFrame) -> tuple[float | None, int]:
    """Krippendorff's α over scenarios (rounded to 1 mg/dL) that at least two raters rated."""
    if ratings["rater"].nunique() < 2:
        return None, 0
    scenario = (
        ratings["reference"].round().astype(int).astype(str)
        + "/"
        + ratings["estimate"].round().astype(int).astype(str)
    )
    table = ratings.assign(scenario=scenario).pivot_table(
        index="rater", columns="scenario", values="rating", aggfunc="mean"
    )
    shared = table.columns[table.notna().sum(axis=0) >= 2]
    if len(shared) < 2:
        return None, len(shared)
    data = table[shared].to_numpy(dtype=np.float64)
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="interval")), len(
        shared
    )


def panel_report(fit) -> PanelReport:
    """The report on the panel behind ``fit``, a :class:`ranking_core.learn.PanelFit` (see
    :class:`PanelReport`)."""
    ratings = fit.ratings
    rows = []
    robust = fit.robust
    estimates = {}
    if robust is not None and len(robust.raters_):
        names = pd.factorize(ratings["rater"].to_numpy(dtype=object))[1]
        for position, code in enumerate(robust.raters_):
            estimates[str(names[code])] = (
                robust.rater_bias_[position],
                robust.rater_scale_[position],
                robust.rater_sd_[position],
            )
    for rater, group in ratings.groupby("rater", sort=True):
        bias, scale, sd = estimates.get(str(rater), (np.nan, np.nan, np.nan))
        rows.append(
            {
                "rater": rater,
                "ratings": len(group),
                "bias": float(bias),
                "scale": float(scale),
                "noise_sd": float(sd),
                "agreement": _agreement(group),
                "flagged_share": float(group["flagged"].mean()),
                "mean_weight": float(group["weight"].mean()),
            }
        )
    alpha, shared = _alpha(ratings)
    w = ratings["weight"].to_numpy()
    fitted = np.isfinite(w)  # the paper's hold-out leaves half of the ratings unfitted
    w = w[fitted]
    y, f = ratings["rating"].to_numpy()[fitted], ratings["consensus"].to_numpy()[fitted]
    mean = np.average(y, weights=w) if w.sum() > 0 else y.mean()
    total = np.sum(w * (y - mean) ** 2)
    r2 = 1.0 - np.sum(w * (y - f) ** 2) / total if total > 0 else float("nan")
    flagged = ratings[ratings["flagged"]].copy()
    flagged = flagged.reindex(flagged["residual"].abs().sort_values(ascending=False).index)
    return PanelReport(
        pd.DataFrame(rows),
        alpha,
        shared,
        float(r2),
        flagged.drop(columns="flagged"),
        len(ratings),
        fit.step,
    )
