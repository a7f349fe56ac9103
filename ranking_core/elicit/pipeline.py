"""From SEG-method answers to every file of an elicited grid: the one pipeline that
``riskgrid elicit`` and the organiser's page both call.

Steps, in order (:func:`run_elicit`): the sizes checked (maps, learned points; the limit named);
the rater maps averaged (:func:`~ranking_core.elicit.mapping.elicited_grids`) into the files of
:mod:`ranking_core.elicit.files`; with ``propose`` the pairs of largest disagreement
(``proposed-pairs.csv``); with ``learn`` the grid learned from points of each rater map (plus the
rated pairs given) with its 95 % band, its files under ``learned/``.

Answers come from the two exported tables (:func:`answers_from_files`) or straight from a stored
SEG-method survey (:func:`ranking_core.surveys.seg_grid.answers_from_survey`: the very bytes
``riskgrid survey export`` writes, read through the same reader, with the answers of its linked
rated-pair survey to learn with).

**Points learned from.** Each rater map gives ``per_map`` points; by default the number is sized
from the answers: :data:`LEARN_POINTS` points in all, spread over the maps (between 1 and
:data:`MAX_PER_MAP` per map), and with more maps than :data:`MAX_LEARNED_RATINGS` one point from
each of that many maps drawn at random. The learned grid's 95 % band says how much the answers
fix: when it leaves the risk category open on more than :data:`OPEN_WARNING` of the grid a
warning says so and what would narrow it (more raters; pair ratings where the maps disagree).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ranking_core.elicit.answers import Answers, read_answers
from ranking_core.elicit.files import elicited_files
from ranking_core.elicit.hybrid import mapped_ratings, propose_pairs
from ranking_core.elicit.mapping import ElicitedGrids, RaterMap, elicited_grids
from ranking_core.inputs.text import named, safe_csv

__all__ = [
    "DEFAULT_PAIRS_FILE",
    "LEARN_POINTS",
    "MAX_LEARNED_RATINGS",
    "MAX_PER_MAP",
    "MAX_PROPOSED",
    "OPEN_WARNING",
    "ElicitInput",
    "ElicitSettings",
    "Elicited",
    "LearnedPart",
    "answers_from_files",
    "points_per_map",
    "run_elicit",
    "with_ratings",
]

MAX_PER_MAP = 200  # points drawn per rater map
MAX_LEARNED_RATINGS = 6_000  # mapped points plus rated pairs: the lattice solver's range
LEARN_POINTS = 1_200  # points learned from by default, spread over the maps
MAX_PROPOSED = 2_000
OPEN_WARNING = 0.5  # share of the grid whose risk category the band leaves open
DEFAULT_PAIRS_FILE = "proposed-pairs.csv"
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ElicitInput:
    """Answers read, with what produced them: ``contents`` maps each role (thresholds, matrix)
    to its file name and bytes (their checksums go into grid.json); ``ratings`` rated pairs to
    learn with (reference, estimate, rating, rater), ``label`` the source in words."""

    answers: Answers
    contents: dict[str, tuple[str, bytes]]
    label: str
    ratings: pd.DataFrame | None = None
    ratings_label: str = ""


@dataclass(frozen=True)
class ElicitSettings:
    """What to compute: ``scenario`` (learn and propose from this one only), ``learn``,
    ``per_map`` (None: sized from the answers, module notes), ``seed`` of the points drawn,
    ``propose`` (pairs where the maps disagree most, None: none)."""

    scenario: str | None = None
    learn: bool = True
    per_map: int | None = None
    seed: int = 0
    propose: int | None = None


@dataclass(frozen=True)
class LearnedPart:
    """The learned grid (on the risk scale 0..4), its band's open share, its files (by name
    under ``learned/``), the points learned from and how they were chosen, and the warning."""

    grid: np.ndarray = field(repr=False)
    lam: float
    open_share: float
    files: dict[str, bytes] = field(repr=False)
    ratings: int
    recipe: str
    why: str
    source: str
    metadata: dict[str, Any] = field(repr=False)
    warning: str | None = None


@dataclass(frozen=True)
class Elicited:
    """Everything :func:`run_elicit` made: the answers, grids, every file by name (``learned/…``
    and the proposed pairs included), the proposed pairs, the learned part."""

    answers: Answers
    grids: ElicitedGrids
    files: dict[str, bytes] = field(repr=False)
    pairs: pd.DataFrame | None = None
    learned: LearnedPart | None = None
    notes: tuple[str, ...] = ()


def answers_from_files(thresholds: Path, matrix: Path) -> ElicitInput:
    """The two answer files read and checked (InputError or OSError: one sentence)."""
    answers = read_answers(thresholds, matrix)
    contents = {
        role: (str(path), Path(path).read_bytes())
        for role, path in (("thresholds", thresholds), ("matrix", matrix))
    }
    return ElicitInput(answers, contents, f"{Path(thresholds).name} and {Path(matrix).name}")


def with_ratings(given: ElicitInput, ratings: Path | None) -> ElicitInput:
    """``given`` with the rating set ``ratings`` (reference, estimate, rating 0-4, optional
    rater; RatingSetError: one sentence) added to the rated pairs it learns with."""
    if ratings is None:
        return given
    from ranking_core.ratings import read_rating_set

    added = read_rating_set(ratings).frame.reset_index(drop=True)
    if "rater" not in added:
        added["rater"] = "unknown"
    frame = added[["reference", "estimate", "rating", "rater"]]
    if given.ratings is not None:
        frame = pd.concat([given.ratings, frame], ignore_index=True)
    label = " and ".join(x for x in (given.ratings_label, Path(ratings).name) if x)
    return ElicitInput(given.answers, given.contents, given.label, frame, label)


def points_per_map(n_maps: int, per_map: int | None) -> int:
    """Points drawn from each map (module notes): ``per_map`` when given, else
    :data:`LEARN_POINTS` spread over ``n_maps`` maps, 1..:data:`MAX_PER_MAP`."""
    if per_map is not None:
        return int(per_map)
    return int(np.clip(LEARN_POINTS // max(n_maps, 1), 1, MAX_PER_MAP))


def _chosen(answers: Answers, settings: ElicitSettings) -> list[RaterMap]:
    if settings.scenario is not None and settings.scenario not in answers.scenarios:
        raise ValueError(
            f"--scenario {named(settings.scenario)} is none of the scenarios with valid "
            "answers: " + ", ".join(named(s) for s in answers.scenarios)
        )
    return [m for m in answers.maps if settings.scenario in (None, m.scenario)]


def _learned_maps(
    chosen: list[RaterMap], settings: ElicitSettings, extra: int
) -> tuple[list[RaterMap], int, str]:
    """The maps points are drawn from, points per map, and how they were chosen; ValueError
    naming the limit when explicit settings pass it."""
    per_map = points_per_map(len(chosen), settings.per_map)
    maps, how = chosen, f"{per_map} per map"
    if settings.per_map is None:
        how += ", sized from the answers"
        room = MAX_LEARNED_RATINGS - extra
        if len(chosen) > room:
            pick = np.random.default_rng(settings.seed).choice(len(chosen), room, replace=False)
            maps = [chosen[k] for k in np.sort(pick)]
            how = f"1 from each of {room:,} of the {len(chosen):,} maps drawn at random"
    total = len(maps) * per_map + extra
    if total > MAX_LEARNED_RATINGS:
        raise ValueError(
            f"{len(maps):,} rater maps × {per_map} points and {extra:,} rated pairs are "
            f"{total:,} ratings; at most {MAX_LEARNED_RATINGS:,} are learned from (the limit; "
            "lower --ratings-per-rater)"
        )
    return maps, per_map, how


def run_elicit(
    given: ElicitInput, settings: ElicitSettings, progress: Progress | None = None
) -> Elicited:
    """The pipeline (module notes). ``ValueError`` (one sentence) when nothing can be used, a
    scenario is unknown, or a size passes its limit, each before the work it would start;
    ``progress(done, total)`` for the mapping, then for the fit."""
    answers = given.answers
    if not answers.maps:
        raise ValueError(
            f"no rater × scenario can be used: all {len(answers.exclusions)} are excluded"
        )
    chosen = _chosen(answers, settings)
    extra = 0 if given.ratings is None else len(given.ratings)
    learning = _learned_maps(chosen, settings, extra) if settings.learn else None
    grids = elicited_grids(answers.maps, progress=progress)
    files = elicited_files(answers, grids, given.contents)
    notes: list[str] = []
    pairs = None
    if settings.propose is not None:
        spread = grids.spread if settings.scenario is None else elicited_grids(chosen).spread
        pairs = propose_pairs(spread, settings.propose)
        files[DEFAULT_PAIRS_FILE] = safe_csv(pairs).encode()
        at = spread[pairs["reference"].to_numpy(), pairs["estimate"].to_numpy()]
        notes.append(
            f"proposed {len(pairs):,} pairs where the raters disagree most (largest spread "
            f"{float(at.max()) if len(pairs) else 0.0:.3g})"
        )
        if len(pairs) < settings.propose:
            notes.append(f"only {len(pairs):,} pairs have any spread between the raters")
    learned = None
    if learning is not None:
        maps, per_map, how = learning
        frame = mapped_ratings(maps, per_map, settings.seed)
        source = f"mapped answers of {given.label} ({how}, seed {settings.seed})"
        if given.ratings is not None:
            frame = pd.concat([frame, given.ratings], ignore_index=True)
            source += f" and {given.ratings_label}"
        learned = learn_mapped(frame, source, len(answers.raters), progress)
        files.update({f"learned/{k}": v for k, v in learned.files.items()})
    return Elicited(answers, grids, files, pairs, learned, tuple(notes))


def open_warning(open_share: float, raters: int) -> str | None:
    """The warning when the band leaves the risk category open on more than
    :data:`OPEN_WARNING` of the grid, with what would narrow it; None otherwise."""
    if open_share <= OPEN_WARNING:
        return None
    return (
        f"the 95 % band leaves the risk category open on {open_share:.0%} of the grid: the "
        f"answers of {raters:,} rater(s) do not fix the learned grid there; more raters, or "
        "pair ratings where the raters' maps disagree (propose pairs and ask them in a "
        "rated-pair survey, learned together with these answers), would narrow it"
    )


def learn_mapped(
    frame: pd.DataFrame, source: str, raters: int, progress: Progress | None = None
) -> LearnedPart:
    """Learn the grid of the rating set ``frame`` with the default recipe for a rater panel
    (made robust when it has no band, so that the band exists), its band and files."""
    from ranking_core.blas_threads import fit_threads
    from ranking_core.grids.files import grid_file_contents
    from ranking_core.grids.risk_scale import RISK_MAX, check_learned_grid
    from ranking_core.learn import (
        PRESETS,
        default_recipe,
        fit_method,
        grid_metadata,
        learn_grid,
        with_robust,
        write_band_files,
    )
    from ranking_core.panels import risk_band
    from ranking_core.ratings import read_rating_set

    data = read_rating_set(frame.reset_index(drop=True), name=source)
    recipe, why = default_recipe(data)
    settings = PRESETS[recipe]
    if not settings.has_band:
        settings = with_robust(settings, "huber", None)
    fit_method(settings, len(data.frame))
    with fit_threads(len(data.frame)):
        result = learn_grid(data, settings, progress=progress)
    check_learned_grid(result.grid, rating_spread=float(data.y.max() - data.y.min()))
    shown = _OnScale(result, np.clip(result.grid, 0.0, RISK_MAX))
    metadata = grid_metadata(shown, source=source)
    files = grid_file_contents(shown.grid, metadata)
    band = risk_band(result.risk_model)
    with tempfile.TemporaryDirectory() as scratch:
        made = write_band_files(band, shown.grid, scratch)
        files.update({path.name: path.read_bytes() for path in made})
    share = float(band.uncertain_share)
    return LearnedPart(
        grid=shown.grid,
        lam=float(result.lam),
        open_share=share,
        files=files,
        ratings=len(data.frame),
        recipe=recipe,
        why=why,
        source=source,
        metadata=metadata,
        warning=open_warning(share, raters),
    )


class _OnScale:
    """A learned grid as written and saved: ``grid`` clipped to 0..4, the rest the fit's."""

    def __init__(self, result: Any, grid: np.ndarray) -> None:
        self._result = result
        self.grid = grid

    def __getattr__(self, name: str) -> Any:
        return getattr(self._result, name)
