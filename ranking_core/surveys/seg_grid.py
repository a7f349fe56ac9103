"""A stored SEG-method survey's answers for ``riskgrid elicit --survey NAME``
(:func:`answers_from_survey`: written as the very bytes ``riskgrid survey export`` writes and read
by the files' reader, so the outputs and their checksums are those of the export; the survey
opened by its owner's rules: its owner, or the operator; the answers of its linked rated-pair
survey, :mod:`ranking_core.surveys.seg_linked`, learned with them), and its grid so far as the
organiser's page shows it: a job of the
server's runner (:mod:`ranking_core.jobs`) that opens the survey by its owner's rules, runs the
one pipeline (:func:`~ranking_core.elicit.pipeline.run_elicit`) on the stored answers, and adds
the raters whose maps stand apart and the difference from the SEG (when its table is configured,
``$SEG_TABLE``) and DTS grids (:mod:`ranking_core.elicit.comparison`). The files are those
``riskgrid elicit --survey NAME`` writes, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ranking_core.elicit.answers import read_answers
from ranking_core.elicit.comparison import GridDifference, grid_differences, raters_apart
from ranking_core.elicit.pipeline import Elicited, ElicitInput, ElicitSettings, run_elicit
from ranking_core.inputs.text import named, safe_csv

__all__ = [
    "LINK_SUFFIX",
    "SurveyGrid",
    "answers_from_survey",
    "linked_pairs_name",
    "linked_ratings",
    "save_learned_grid",
    "survey_grid",
]

LINK_SUFFIX = " (pairs)"


def linked_pairs_name(name: str) -> str:
    """The name of the rated-pair survey linked to the SEG-method survey ``name``."""
    return f"{name.strip()}{LINK_SUFFIX}"


def _linked_survey(surveys: Any, name: str) -> Any | None:
    from ranking_core.storage import StorageError

    seg = surveys.get(name)
    try:
        pairs = surveys.get(linked_pairs_name(name))
    except StorageError:
        return None
    if pairs.method != "pairs" or pairs.owner != seg.owner:
        return None
    return pairs


def linked_ratings(surveys: Any, name: str) -> tuple[pd.DataFrame | None, str]:
    """The answers of the survey's linked rated-pair survey (reference, estimate, rating 0..4,
    rater) and its label; (None, "") when there is none or it has no answers yet."""
    from ranking_core.surveys.results import ratings_so_far

    pairs = _linked_survey(surveys, name)
    if pairs is None:
        return None, ""
    frame = ratings_so_far(surveys.answers(pairs.name))
    if frame.empty:
        return None, ""
    frame = frame.assign(rater=frame["rater"].astype(str))
    return frame.reset_index(drop=True), f"{len(frame):,} rated pairs of survey {named(pairs.name)}"


def answers_from_survey(surveys: Any, name: str) -> ElicitInput:
    """The stored answers of the SEG-method survey ``name`` (StorageError unless the store's
    user owns it, or is the operator), as ``riskgrid survey export`` writes them, read by the
    files' reader; with the answers of its linked rated-pair survey when there is one."""
    from ranking_core.surveys.seg_storage import seg_export

    thresholds, matrix = seg_export(surveys, name)
    data = (safe_csv(thresholds).encode("utf-8"), safe_csv(matrix).encode("utf-8"))
    answers = read_answers(data[0], data[1], file_names=("thresholds.csv", "matrix.csv"))
    contents = {"thresholds": ("thresholds.csv", data[0]), "matrix": ("matrix.csv", data[1])}
    linked, label = linked_ratings(surveys, name)
    return ElicitInput(answers, contents, f"survey {named(name)}", linked, label)


@dataclass(frozen=True)
class SurveyGrid:
    """What the page shows: the pipeline's result, the raters apart, the differences, and why
    the SEG is missing (None when it is there)."""

    elicited: Elicited = field(repr=False)
    apart: pd.DataFrame = field(repr=False)
    differences: list[GridDifference] = field(repr=False)
    seg_note: str | None = None


def survey_grid(
    url: str,
    name: str,
    by: str | None,
    learn: bool = False,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> SurveyGrid:
    """The grid so far of survey ``name`` in the database ``url``, read as the user ``by``
    (None: the operator); with ``learn`` the learned grid and its band too. ValueError (one
    sentence) when the survey cannot be opened or no answer is complete yet."""
    from ranking_core.grids.seg import SEGTableMissing, find_seg_table
    from ranking_core.surveys import SurveyStore

    given = answers_from_survey(SurveyStore(url, by=by), name)
    if not given.answers.maps:
        raise ValueError("no rater has completed a scenario yet (thresholds and matrix)")
    elicited = run_elicit(given, ElicitSettings(learn=learn), progress=progress)
    seg, note = None, None
    try:
        seg = find_seg_table().absolute
    except SEGTableMissing as exc:
        note = str(exc)
    return SurveyGrid(
        elicited, raters_apart(elicited.grids), grid_differences(elicited.grids.pooled, seg), note
    )


def save_learned_grid(url: str, by: str | None, name: str, done: SurveyGrid) -> str:
    """Save the learned grid of ``done`` under ``name`` in the grid library of the database
    ``url`` (saved by ``by``); a taken name is refused (StorageError). Returns the name."""
    from ranking_core.storage import Store

    learned = done.elicited.learned
    if learned is None:
        raise ValueError("learn the grid first: only a learned grid is saved")
    info = Store(url).save_learned_grid(name, learned.grid, learned.metadata, saved_by=by)
    return str(info.name)
