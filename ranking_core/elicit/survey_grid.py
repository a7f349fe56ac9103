"""The grid so far of a stored SEG-method survey, as the organiser's page shows it: a job of the
server's runner (:mod:`ranking_core.jobs`) that opens the survey by its owner's rules, runs the
one pipeline (:func:`~ranking_core.elicit.pipeline.run_elicit`) on the stored answers, and adds
the raters whose maps stand apart and the difference from the SEG (when its table is configured,
``$SEG_TABLE``) and DTS grids (:mod:`ranking_core.elicit.comparison`). The files are those
``riskgrid elicit --survey NAME`` writes, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from ranking_core.elicit.comparison import GridDifference, grid_differences, raters_apart
from ranking_core.elicit.pipeline import (
    Elicited,
    ElicitSettings,
    answers_from_survey,
    run_elicit,
)

__all__ = ["SurveyGrid", "save_learned_grid", "survey_grid"]


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
