"""Grids from SEG-method answers (Klonoff et al. 2014): each rater's action ranges and 5 × 5
risk scores per scenario, mapped to the 601 × 601 mg/dL plane and averaged.

=================  ==============================================================================
``mapping.py``     the actions, a rater's map (``searchsorted`` + fancy index), the scenario and
                   pooled means, spread and count (pure)
``answers.py``     the two answer tables (thresholds, matrix) through the input layer: row
                   refusals, excluded raters × scenarios with reasons and lines, bounds
``hybrid.py``      mapped answers as a rating set to learn from; pairs where raters disagree most
``files.py``       the output files: grids, spread, count, ``RiskPairData.csv``, ``grid.json``
``simulation.py``  a simulated panel's answers, for tests and demonstrations
=================  ==============================================================================
"""

from ranking_core.elicit.answers import Answers, Exclusion, read_answers
from ranking_core.elicit.files import ELICITED_KIND, elicited_files, scenario_files, seg_table_csv
from ranking_core.elicit.hybrid import RATING_RANGE, mapped_ratings, propose_pairs
from ranking_core.elicit.mapping import (
    ACTION_LABELS,
    ACTIONS,
    ElicitedGrids,
    RaterMap,
    action_index,
    elicited_grids,
    rater_map,
)
from ranking_core.elicit.simulation import simulate_answers

__all__ = [
    "ACTIONS",
    "ACTION_LABELS",
    "ELICITED_KIND",
    "RATING_RANGE",
    "Answers",
    "ElicitedGrids",
    "Exclusion",
    "RaterMap",
    "action_index",
    "elicited_files",
    "elicited_grids",
    "mapped_ratings",
    "propose_pairs",
    "rater_map",
    "read_answers",
    "scenario_files",
    "seg_table_csv",
    "simulate_answers",
]
