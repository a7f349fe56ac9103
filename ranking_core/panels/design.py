"""Planning a survey: which (reference, estimate) pairs the panel should rate next.

Without ratings the start design is space-filling: a scrambled Halton sequence on [LO, HI]² mg/dL
(``scipy.stats.qmc``; the glucose range, default :data:`DEFAULT_RANGE`: no pairs at 1 mg/dL).
With ratings, given the grid learned from them (:func:`ranking_core.learn.learn_panel`), the next
pairs are chosen greedily from a Halton candidate set in the same range by the posterior of the
equivalent Gaussian process (:mod:`ranking_core.panels.uncertainty`), updating the posterior
after each pick as if the pair had been rated (its variance does not depend on the answer):

* ``"variance"``: the candidate of largest posterior variance (uncertainty sampling);
* ``"imse"``: the candidate that most reduces the summed posterior variance over all candidates
  (integrated mean squared error);
* ``"random"``: uniform on [LO, HI]², the reference design.

Which one wins is measured in ``benchmarks/panels.py`` (``design`` section; docs/RESULTS.md).
Pairs are whole mg/dL; a pair already rated or already proposed is not proposed again. The rating
form (:func:`write_rating_form`) is a CSV with an empty ``rating`` column and an HTML sheet to
print; the filled CSV reads back with :func:`~ranking_core.ratings.read_rating_set`.
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.stats import qmc

from ranking_core.grids.lattice import check_range
from ranking_core.grids.monotone import MonotoneRisk
from ranking_core.grids.signed import AbsoluteRisk
from ranking_core.learners.robust import RobustRanker
from ranking_core.learners.spectral import SpectralRanker
from ranking_core.panels.planning import (
    DEFAULT_PLAN_METHOD,
    DEFAULT_RANGE,
    PLAN_METHOD_LABELS,
    PLAN_METHODS,
)
from ranking_core.panels.uncertainty import posterior_covariance, training_inputs
from ranking_core.ratings import MAX_ROWS, RatingSet
from ranking_core.validation import one_of

__all__ = [
    "DEFAULT_PLAN_METHOD",
    "DEFAULT_RANGE",
    "FORM_COLUMNS",
    "MAX_NEXT",
    "PLAN_METHODS",
    "PLAN_METHOD_LABELS",
    "check_next",
    "check_range",
    "plan_pairs",
    "rating_form_csv",
    "rating_form_html",
    "start_design",
    "write_rating_form",
]

FORM_COLUMNS = ("pair", "reference", "estimate", "rating", "rater")
MIN_RATINGS = 10  # below this many ratings the next pairs come from the start design
N_CANDIDATES = 1024
MAX_NEXT = MAX_ROWS  # more pairs could not be read back as one rating set


def _halton(
    n: int, seed: int, glucose_range: tuple[float, float] = DEFAULT_RANGE
) -> NDArray[np.float64]:
    low, high = check_range(glucose_range)
    return np.rint(low + qmc.Halton(d=2, scramble=True, seed=seed).random(n) * (high - low))


def start_design(
    k: int, seed: int = 0, glucose_range: tuple[float, float] = DEFAULT_RANGE
) -> pd.DataFrame:
    """k space-filling pairs (scrambled Halton on [LO, HI]² mg/dL, whole mg/dL, no repeats)."""
    check_next(k)
    low, high = check_range(glucose_range)
    distinct = (np.floor(high) - np.ceil(low) + 1) ** 2
    if k > distinct:
        raise ValueError(
            f"the range {low:g}-{high:g} mg/dL holds {distinct:,.0f} distinct "
            f"whole-mg/dL pairs; {k:,} were asked for"
        )
    n = k + 16
    while True:  # more Halton points until k distinct whole-mg/dL pairs (the first n kept)
        points = pd.DataFrame(_halton(n, seed, glucose_range)).drop_duplicates().to_numpy()
        if len(points) >= k:
            return _pairs(points[:k])
        n *= 2


def check_next(k: object) -> int:
    """``k`` as the number of pairs to propose, 1..:data:`MAX_NEXT`; ValueError naming the
    bound otherwise (checked before anything is allocated)."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k <= MAX_NEXT:
        raise ValueError(
            f"the number of pairs to propose must be a whole number from 1 to "
            f"{MAX_NEXT:,} (a rating set holds at most {MAX_NEXT:,} rows); got "
            f"{k!r}"
        )
    return int(k)


def _pairs(points: NDArray) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "pair": np.arange(1, len(points) + 1),
            "reference": points[:, 0].astype(int),
            "estimate": points[:, 1].astype(int),
        }
    )


def _solved_parts(model) -> tuple[SpectralRanker, NDArray]:
    if isinstance(model, MonotoneRisk):
        model = model.model
    inner = model.signed_model if isinstance(model, AbsoluteRisk) else model
    if isinstance(inner, RobustRanker):
        return inner.model_, inner.weights_
    return inner, np.ones(len(training_inputs(inner)))


def greedy_design(model, candidates: NDArray, k: int, method: str) -> NDArray[np.intp]:
    """Indices of the k candidates picked greedily by ``method`` (``"variance"`` or
    ``"imse"``) from the fitted model's posterior; each pick updates the posterior covariance
    by the rank-one formula of a new rating of weight 1."""
    ranker, weights = _solved_parts(model)
    cov = posterior_covariance(ranker, weights, candidates)
    # a weight-1 rating's noise per unit amplitude
    noise = len(training_inputs(ranker)) * ranker.lam
    chosen: list[int] = []
    for _ in range(min(k, len(candidates))):
        variance = np.diag(cov)
        if method == "variance":
            score = variance.copy()
        else:
            score = np.sum(cov**2, axis=0) / (variance + noise)
        score[chosen] = -np.inf
        j = int(np.argmax(score))
        chosen.append(j)
        column = cov[:, j].copy()
        cov -= np.outer(column, column) / (column[j] + noise)
    return np.asarray(chosen, dtype=np.intp)


def plan_pairs(
    ratings: RatingSet | pd.DataFrame | None,
    k: int,
    seed: int = 0,
    method: str = "imse",
    model: object | None = None,
    glucose_range: tuple[float, float] = DEFAULT_RANGE,
) -> pd.DataFrame:
    """The next k pairs to rate (columns pair, reference, estimate in whole mg/dL).

    Parameters
    ----------
    ratings : the ratings so far (None or fewer than 10: the start design).
    k : how many pairs, 1..:data:`MAX_NEXT`. A planner that has fewer to give returns fewer,
        saying why in ``attrs["shortfall"]`` (the greedy methods choose among
        :data:`N_CANDIDATES` candidates).
    seed : seed of the candidate set (and of the random design).
    method : ``"imse"``, ``"variance"`` or ``"random"`` (see the module docstring).
    model : the model fitted to these ratings (:func:`ranking_core.learn.learn_panel`); needed
        unless the method is ``"random"`` or there are fewer than 10 ratings.
    glucose_range : (LO, HI) mg/dL; every proposed reference and estimate lies in it.
    """
    check_next(k)
    one_of(method, "method", PLAN_METHODS, "plan_pairs")
    frame = ratings.frame if isinstance(ratings, RatingSet) else ratings
    if frame is None or len(frame) < MIN_RATINGS:
        return start_design(k, seed, glucose_range)
    rated = {
        (round(r), round(e)) for r, e in zip(frame["reference"], frame["estimate"], strict=True)
    }
    low, high = check_range(glucose_range)
    if method == "random":
        pool = np.rint(np.random.default_rng(seed).uniform(low, high, size=(4 * k + 16, 2)))
    else:
        pool = _halton(N_CANDIDATES, seed, (low, high))
    pool = np.unique(pool, axis=0)
    pool = pool[[(int(r), int(e)) not in rated for r, e in pool]]
    if method == "random":
        picks = np.random.default_rng(seed).permutation(len(pool))[:k]
        return _short(
            _pairs(pool[np.sort(picks)]),
            k,
            f"the random draw gave {len(pool):,} distinct pairs not yet rated",
        )
    if model is None:
        raise ValueError(
            "plan_pairs: pass the model fitted to these ratings "
            "(ranking_core.learn.learn_panel(ratings).model)"
        )
    return _short(
        _pairs(pool[greedy_design(model, pool, k, method)]),
        k,
        f"'{method}' chooses among {N_CANDIDATES:,} candidate pairs, {len(pool):,} of "
        "them not yet rated",
    )


def _short(pairs: pd.DataFrame, k: int, why: str) -> pd.DataFrame:
    """``pairs``, with ``pairs.attrs["shortfall"]`` saying why when there are fewer than k."""
    if len(pairs) < k:
        pairs.attrs["shortfall"] = f"asked for {k:,} pairs; {why}, so the plan has {len(pairs):,}"
    return pairs


def rating_form_csv(pairs: pd.DataFrame) -> str:
    """The rating form as CSV text: pair, reference, estimate (mg/dL), rating and rater empty."""
    form = pairs[["pair", "reference", "estimate"]].copy()
    form["rating"] = ""
    form["rater"] = ""
    return form.to_csv(index=False)


def rating_form_html(pairs: pd.DataFrame, title: str = "Risk ratings") -> str:
    """The rating form as an HTML page to print: the pairs with a box for each rating."""
    rows = "\n".join(
        f"<tr><td>{int(p)}</td><td>{int(r)}</td><td>{int(e)}</td><td class=box></td></tr>"
        for p, r, e in pairs[["pair", "reference", "estimate"]].itertuples(index=False)
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; }}
td, th {{ border: 1px solid #444; padding: 0.35em 1em; text-align: right; }}
td.box {{ width: 6em; }}
@media print {{ body {{ margin: 1cm; }} }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p>Rater: ______________________</p>
<p>For each pair, a patient's reference (true) blood glucose and the glucose the meter showed,
both in mg/dL: how much clinical risk could acting on the meter's reading cause?
Write a number from 0 (no risk) to 4 (extreme risk); halves (e.g. 1.5) are allowed.</p>
<table><thead><tr><th>Pair</th><th>Reference glucose (mg/dL)</th>
<th>Meter glucose (mg/dL)</th><th>Risk 0–4</th></tr></thead>
<tbody>
{rows}
</tbody></table>
</body></html>
"""


def write_rating_form(
    pairs: pd.DataFrame,
    csv_path: str | Path,
    html_path: str | Path | None,
    title: str = "Risk ratings",
) -> None:
    """Write :func:`rating_form_csv` to ``csv_path`` and, if given, :func:`rating_form_html` to
    ``html_path``. The filled CSV reads back with :func:`~ranking_core.ratings.read_rating_set`."""
    Path(csv_path).parent.mkdir(parents=True, exist_ok=True)
    Path(csv_path).write_text(rating_form_csv(pairs), encoding="utf-8")
    if html_path is not None:
        Path(html_path).write_text(rating_form_html(pairs, title), encoding="utf-8")
