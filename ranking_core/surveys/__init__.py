"""Rating surveys in the browser: a clinician panel rates pairs through personal links, the grid
is learned as the answers arrive and the next pairs are planned from them.

:mod:`~ranking_core.surveys.design` holds the pure logic (answer scale, check pairs, queues with
overlap, repeats, tokens); :mod:`~ranking_core.surveys.results` what is computed from the answers
(progress per rater, test-retest, checks, export, the next batch);
:mod:`~ranking_core.surveys.storage` keeps surveys in the records database. A survey asked by
the Surveillance Error Grid's method (scenarios, action thresholds, 5 × 5 risk matrices) has its
logic in :mod:`~ranking_core.surveys.seg_method` and its storage in
:mod:`~ranking_core.surveys.seg_storage`.
"""

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

__all__ = [
    "RISK_OPTIONS",
    "InviteInterrupted",
    "SurveyError",
    "SurveySettings",
    "SurveyStore",
    "check_pairs",
    "new_token",
    "risk_label",
    "token_hash",
    "tokens_match",
]
