"""The hybrid in one step: a SEG-method survey's linked rated-pair survey, asking the pairs where
the raters' maps disagree most, whose answers are learned together with the mapped answers.

The link is the name: the rated-pair survey of the SEG-method survey ``NAME`` is
``NAME (pairs)`` (:func:`linked_pairs_name`), owned by the SEG-method survey's owner. It is made
by :func:`create_linked_survey` (the pairs of :func:`~ranking_core.elicit.hybrid.propose_pairs`
on the spread of the answers so far, the SEG-method survey's unit and links' address, no check
pairs; its raters invited again under their names when asked) and read by
:func:`linked_ratings` whenever the SEG-method survey's grid is computed
(:func:`~ranking_core.surveys.seg_grid.answers_from_survey`). A survey of that name with another
owner or asking by the SEG's method is not linked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from ranking_core.inputs.text import named
from ranking_core.surveys.seg_grid import LINK_SUFFIX, linked_pairs_name, linked_ratings

__all__ = [
    "LINK_SUFFIX",
    "LinkedSurvey",
    "create_linked_survey",
    "linked_pairs_name",
    "linked_ratings",
]


@dataclass(frozen=True)
class LinkedSurvey:
    """The linked survey made: its record, the organiser's token (shown once), its pairs and
    the raters' new links (rater, link) when they were invited again."""

    survey: Any
    token: str
    pairs: pd.DataFrame
    links: list[tuple[str, str]]


def create_linked_survey(
    surveys: Any, name: str, n_pairs: int, invite_again: bool = False
) -> LinkedSurvey:
    """Propose ``n_pairs`` pairs where the raters of the SEG-method survey ``name`` disagree
    most and store them as its linked rated-pair survey, owned by the same owner; with
    ``invite_again`` each of its raters whose link is not revoked is invited under the same
    name. ValueError (one sentence) when the answers so far show no disagreement, the linked
    survey exists, or a store rule refuses."""
    from ranking_core.elicit.hybrid import propose_pairs
    from ranking_core.elicit.mapping import elicited_grids
    from ranking_core.elicit.pipeline import MAX_PROPOSED
    from ranking_core.surveys.design import SurveySettings
    from ranking_core.surveys.seg_grid import answers_from_survey

    if not 1 <= int(n_pairs) <= MAX_PROPOSED:
        raise ValueError(f"propose 1..{MAX_PROPOSED:,} pairs; got {n_pairs}")
    seg = surveys.get(name)
    given = answers_from_survey(surveys, name)
    if len(given.answers.maps) < 2:
        raise ValueError(
            f"survey {named(name)} has {len(given.answers.maps)} complete answer(s); pairs "
            "where raters disagree need at least two"
        )
    pairs = propose_pairs(elicited_grids(given.answers.maps).spread, int(n_pairs))
    if pairs.empty:
        raise ValueError(f"the raters of survey {named(name)} agree everywhere: no pair to ask")
    settings = SurveySettings(
        unit=seg.settings.unit, checks=0, repeats=0.0, base_url=seg.settings.base_url
    )
    owner = surveys.acting_for(seg.owner)
    survey, token = owner.create(linked_pairs_name(name), pairs.astype(float), settings)
    links: list[tuple[str, str]] = []
    if invite_again:
        raters = surveys.raters(name)
        active = [str(r) for r in raters.loc[~raters["revoked"], "rater"]]
        if active:
            links = owner.invite(survey.name, active)
    return LinkedSurvey(survey, token, pairs, links)
