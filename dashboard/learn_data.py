"""The Learn page's data and fit, shared by the page and by the server's warm-up
(:mod:`dashboard.server`): the reference grid, the simulated panel and the fit cached across
sessions under the key (data, settings) it was computed from, so a warm result is only ever
served for exactly the data and settings it was learned with.

Every fit is the library's checked fit (:func:`ranking_core.learn.pipeline.fit_checked`, the one
``riskgrid learn`` runs): a grid that is no usable risk grid is refused with its sentence, one
that leaves the risk scale is flagged. A fit of more than :data:`BACKGROUND_FROM` ratings runs
as a job of the server's runner (:func:`fit_job`, :mod:`dashboard.jobs`), in a worker process,
never in the server process that serves every session: the page polls it, shows its progress and
a Cancel button, and the other sessions keep the server's interpreter to themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from dashboard.common import SEGStatus, shared_result
from dashboard.jobs import start_job
from ranking_core.blas_threads import fit_threads
from ranking_core.grids.seg import SEGTable
from ranking_core.learn import PRESETS, LearnedGrid, LearnSettings, default_recipe
from ranking_core.learn.pipeline import LearnOutcome, fit_checked
from ranking_core.panels import DESIGNS, SEG_OUTLIER_FRACTION, parkes_surface, simulate_panel
from ranking_core.ratings import RatingSet, read_rating_set

BUILT_IN_REFERENCE = "built-in surface (smoothed Parkes type 1 zones)"


@dataclass(frozen=True)
class PanelChoice:
    """The simulated panel's choices (the Learn page's widgets ``learn_<field>``; the defaults
    are what a fresh session shows)."""

    m: int = 300  # ratings (the paper uses 100..400)
    design: str = DESIGNS[0]
    noise: float = 0.25  # rater noise, risk units
    outliers: float = SEG_OUTLIER_FRACTION
    raters: int = 10
    draw: int = 0


@dataclass(frozen=True)
class Reference:
    """The grid learned grids are compared with: the SEG if a table is loaded, else the
    built-in surface. ``key`` names it in cache keys."""

    name: str
    key: str
    surface: NDArray[np.float64]
    table: SEGTable | None


def learn_reference(seg: SEGStatus) -> Reference:
    """The reference of the Learn page for the SEG table status ``seg``."""
    if seg.table is not None:
        return Reference("SEG", f"SEG {seg.table.fingerprint}", seg.table.absolute, seg.table)
    return Reference(BUILT_IN_REFERENCE, BUILT_IN_REFERENCE, parkes_surface(), None)


@st.cache_data(show_spinner="Simulating the panel…", max_entries=8)
def _simulated(choice: PanelChoice, reference_key: str, _table: SEGTable | None) -> RatingSet:
    frame = simulate_panel(
        choice.m,
        design=choice.design,
        reference=_table,
        n_raters=choice.raters,
        noise=choice.noise,
        outlier_fraction=choice.outliers,
        random_state=choice.draw,
    )
    return read_rating_set(frame, name=f"simulated panel ({reference_key})")


def simulated_panel(choice: PanelChoice, reference: Reference) -> tuple[Hashable, RatingSet]:
    """The data key and the ratings of a panel simulated around ``reference``."""
    return ("simulated", choice, reference.key), _simulated(choice, reference.key, reference.table)


def fitted(
    data_key: Hashable,
    ratings: RatingSet,
    settings: LearnSettings,
    progress: Callable[[int, int], None] | None = None,
) -> LearnOutcome:
    """The checked fit of ``ratings`` with ``settings`` (``fit_checked``), computed once per
    (data key, settings) for every session (``progress`` is only called when it is computed
    here); ValueError (one sentence) when it is refused."""

    def fit() -> LearnOutcome:
        with fit_threads(len(ratings.frame)):
            return fit_checked(ratings, settings, progress=progress)

    return shared_result("learn-fit", (data_key, settings), fit)


BACKGROUND_FROM = 2000  # ratings; smaller fits take a few seconds and run in the page itself


def _fit_in_worker(
    ratings: RatingSet, settings: LearnSettings, *, progress: Callable[[int, int], None]
) -> LearnOutcome:
    """Runs in a worker process: the checked fit with its progress (its grid evaluated by the
    check, so the page does not compute it)."""
    with fit_threads(len(ratings.frame)):
        return fit_checked(ratings, settings, progress=progress)


def fit_job(
    data_key: Hashable, ratings: RatingSet, settings: LearnSettings, *, again: bool = False
) -> Hashable | None:
    """The fit of ``ratings`` with ``settings`` as a job of the server's runner
    (:mod:`dashboard.jobs`), computed once for every session: its key, or None when refused
    (the reason shown). ``again`` restarts a fit that was cancelled."""
    return start_job(
        ("learn-fit", data_key, settings), _fit_in_worker, ratings, settings, again=again
    )


def at_lambda(result_key: Hashable, result: LearnedGrid, lam: float) -> LearnedGrid:
    """``result`` re-solved at ``lam`` (its grid evaluated on first use), kept for every session
    under (the key of the result, λ): stepping back to a λ seen before costs nothing."""
    if lam == result.lam:
        return result
    return shared_result("learn-at", (result_key, lam), lambda: result.at(lam), max_entries=12)


def warm_opening_result(seg: SEGStatus) -> LearnedGrid:
    """Compute what a fresh session of the Learn page opens with (the default panel and the
    default settings) into the shared cache, its 601 × 601 grid included."""
    data_key, ratings = simulated_panel(PanelChoice(), learn_reference(seg))
    return fitted(data_key, ratings, PRESETS[default_recipe(ratings)[0]]).learned
