"""How a grid is learned from a rating set, from the choices to the grid that is written and
saved: one pipeline for ``riskgrid learn`` and the Learn page's fit (in the page or in its
background job), so that both check and clip the same way.

1. :func:`choose_settings`: the recipe named, or the one the ratings call for
   (:func:`~ranking_core.learn.training.default_recipe`), changed by the options; robust
   learning when a panel report or a band is asked for; the band's needs; the size refused
   beyond the memory budget and too few ratings refused, all before any fit.
2. :func:`fit_checked`: the fit (with the per-rating panel table when asked), then the one
   check of the learned grid (:func:`~ranking_core.grids.risk_scale.check_learned_grid`): a
   grid of non-finite values or a flat grid is refused (:class:`GridOffScale`, one sentence),
   a grid leaving the risk scale is flagged.
3. :func:`on_scale`: the grid as it is written and saved, clipped to the risk scale 0..4 (the
   files and the database hold the same grid).

Every refusal is a ``ValueError`` whose message is one sentence; the front ends say it their
way (the command line on standard error, the page as an error box).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ranking_core.grids.risk_scale import RISK_MAX, GridOffScale, check_learned_grid
from ranking_core.inputs.text import named
from ranking_core.learn.result import LearnedGrid, PanelFit, settings_advice
from ranking_core.learn.settings import PRESET_LABELS, PRESETS, LearnSettings, with_robust
from ranking_core.learn.training import check_rating_count, default_recipe
from ranking_core.ratings import RatingSet

__all__ = [
    "GridOffScale",
    "LearnChoice",
    "LearnOutcome",
    "OnScale",
    "check_grid",
    "choose_settings",
    "fit_checked",
    "on_scale",
    "settings_from_options",
]

Progress = Callable[[int, int], None]


def settings_from_options(recipe: str, **options: object) -> LearnSettings:
    """The preset ``recipe`` changed by ``options`` (one per :class:`LearnSettings` field; None
    = the preset's value); a new kernel without ``gamma`` takes that kernel's own width."""
    base = PRESETS[recipe]
    # options of several types, one per settings field: LearnSettings checks each value
    given: dict[str, Any] = {k: v for k, v in options.items() if v is not None}
    if "kernel" in given and "gamma" not in given:
        given["gamma"] = None
    return dataclasses.replace(base, **given)


@dataclass(frozen=True)
class LearnChoice:
    """The settings a fit runs with and how they were reached: the ``recipe`` (a preset name),
    ``why`` it was taken, and whether the options ``changed`` it."""

    settings: LearnSettings
    recipe: str
    why: str
    changed: bool

    @property
    def line(self) -> str:
        """One line saying the recipe, e.g. ``recipe: robust, rater panels: …``."""
        changed = " (changed by the options)" if self.changed else ""
        return f"recipe: {self.recipe}{changed}, {PRESET_LABELS[self.recipe]}: {self.why}"


def choose_settings(
    data: RatingSet,
    recipe: str | None = None,
    *,
    robust: str | None = None,
    monotone: bool | None = None,
    panel_report: bool = False,
    band: bool = False,
    **options: object,
) -> LearnChoice:
    """The settings for learning from ``data``, every check that needs no fit done.

    ``recipe``: a preset name, or None for the one the ratings call for. ``robust``: huber,
    tukey, squared or none (None: the recipe's; huber when ``panel_report`` or ``band`` asks
    for the noise robust learning measures and the recipe has none). ``monotone`` and
    ``options`` change the preset's fields. ValueError (one sentence) for an unknown recipe, a
    band the settings cannot give, a size beyond the memory budget or too few ratings."""
    from ranking_core.learn.plan import fit_method

    if recipe is None:
        recipe, why = default_recipe(data)
    elif recipe not in PRESETS:
        names = list(PRESETS)
        raise ValueError(
            f"--recipe must be one of {', '.join(names[:-1])} or {names[-1]}; got {named(recipe)}"
        )
    else:
        why = "named by --recipe"
    if robust is None and (panel_report or band) and PRESETS[recipe].robust is None:
        robust = "huber"
    settings = settings_from_options(recipe, monotone=monotone, **options)
    if robust is not None:  # the one policy: robust learning makes the grid monotone
        settings = with_robust(settings, None if robust == "none" else robust, monotone)
    if band and not settings.has_band:
        raise ValueError(
            "--band needs the Lavrentiev filter and robust learning (the band is the posterior "
            "of the Gaussian process that filter's fit is the mean of, with the noise robust "
            f"learning measures); got --filter {settings.filter}, --robust "
            f"{settings.robust or 'none'}"
        )
    fit_method(settings, len(data.frame))  # a size beyond the budget refused at once
    check_rating_count(data.y)
    return LearnChoice(settings, recipe, why, settings != PRESETS[recipe])


class OnScale:
    """A learned grid as written and saved: :attr:`grid` clipped to the risk scale 0..4 (as the
    grid files hold it), every other attribute the fit's. Made in the process that writes or
    saves (never pickled)."""

    def __init__(self, result: LearnedGrid) -> None:
        self._result = result
        self.grid = np.clip(result.grid, 0.0, RISK_MAX)

    @property
    def fitted(self) -> LearnedGrid:
        """The fit itself (its grid as learned, not clipped)."""
        return self._result

    def __getattr__(self, name: str) -> Any:
        if name == "_result":  # not yet set (copying, unpickling): no endless lookup
            raise AttributeError(name)
        return getattr(self._result, name)


def on_scale(result: LearnedGrid) -> OnScale:
    """``result`` as written and saved: its grid clipped to the risk scale (:class:`OnScale`)."""
    return OnScale(result)


def check_grid(result: LearnedGrid, rating_spread: float) -> list[str]:
    """The one check of a learned grid (at its λ) before it is written or saved: GridOffScale
    (a ValueError, one sentence) for non-finite values or a flat grid, else the flags (notes,
    one sentence each) of a grid leaving the risk scale. ``rating_spread``: the span of the
    ratings it was learned from (risk units)."""
    return check_learned_grid(result.grid, rating_spread=rating_spread)


@dataclass(frozen=True)
class LearnOutcome:
    """A checked fit: the ``learned`` grid as fitted, the ``flags`` of the one check (notes,
    one sentence each), the settings ``advice``, and the ``panel`` fit (a rating per row with
    its consensus, weight and flag) when it was asked for."""

    learned: LearnedGrid
    flags: list[str] = field(default_factory=list)
    advice: list[str] = field(default_factory=list)
    panel: PanelFit | None = None

    @property
    def shown(self) -> OnScale:
        """The grid as written and saved (clipped to the risk scale)."""
        return on_scale(self.learned)


def fit_checked(
    data: RatingSet,
    settings: LearnSettings,
    *,
    panel: bool = False,
    progress: Progress | None = None,
) -> LearnOutcome:
    """Fit ``data`` with ``settings`` (``panel``: with the per-rating table of
    :func:`~ranking_core.learn.fit.learn_panel`) and check the grid at the chosen λ before
    anything is written or saved. ValueError (one sentence): the fit refused the data, or the
    grid is not a usable risk grid (:class:`GridOffScale`)."""
    from ranking_core.learn.fit import learn_grid, learn_panel

    fit: PanelFit | None = None
    if panel:
        fit = learn_panel(data, settings, progress=progress)
        learned = fit.learned
    else:
        learned = learn_grid(data, settings, progress=progress)
    flags = check_grid(learned, float(np.ptp(data.y)))
    return LearnOutcome(learned, flags, list(settings_advice(learned)), fit)
