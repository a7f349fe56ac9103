"""Rating surveys in the browser: a clinician panel rates pairs through personal links, the grid
is learned as the answers arrive and the next pairs are planned from them.

:mod:`~ranking_core.surveys.design` holds the pure logic (answer scale, check pairs, queues with
overlap, repeats, tokens); :mod:`~ranking_core.surveys.results` what is computed from the answers
(progress per rater, test-retest, checks, export, the next batch);
:mod:`~ranking_core.surveys.storage` keeps surveys in the records database. A survey asked by
the Surveillance Error Grid's method (scenarios, action thresholds, 5 × 5 risk matrices) has its
logic in :mod:`~ranking_core.surveys.seg_method` and its storage in
:mod:`~ranking_core.surveys.seg_storage`.

The names are imported on first use (PEP 562): a survey's settings, store and state
(:mod:`~ranking_core.surveys.design`, :mod:`~ranking_core.surveys.storage`,
:mod:`~ranking_core.surveys.progress`) load with SQLAlchemy alone, without NumPy or pandas.
"""

# ruff: noqa: F401 (the imports for type checkers re-export the names of _HOMES)

from __future__ import annotations

from typing import TYPE_CHECKING

from ranking_core.lazy import checked_homes, lazy_exports

if TYPE_CHECKING:  # the same names, for type checkers (exported at run time by _HOMES)
    from ranking_core.surveys.design import (
        RISK_OPTIONS,
        SurveySettings,
        check_pairs,
        new_token,
        risk_label,
        token_hash,
        tokens_match,
    )
    from ranking_core.surveys.storage import InviteInterrupted, SurveyError, SurveyStore

# public name → the module that defines it
_HOMES = checked_homes(__name__)  # name → its module, from the TYPE_CHECKING imports
__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
