"""A simulated panel's SEG-method answers, in the two long tables ``riskgrid elicit`` reads.

Each simulated clinician answers every scenario: the action thresholds are a scenario's
typical values (mg/dL; :data:`SCENARIO_THRESHOLDS`, loosely after the SEG's ranges: emergency
treatment of a low up to about 50, oral glucose up to about 70, no action up to about 180,
insulin up to about 250) plus the rater's normal jitter (sd ``threshold_sd``), rounded to whole
mg/dL and kept increasing; the risk score of "measured action i, actual action j" rises with
|i − j|, more steeply when the meter reads high (i > j: a low treated as a high is the worst
error), plus the rater's normal noise (sd ``score_sd``), rounded and clipped to 1..9. For tests
and demonstrations; it makes no claim about how real clinicians answer.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ranking_core.elicit.mapping import ACTIONS, SCORE_MAX, SCORE_MIN, THRESHOLD_ACTIONS

__all__ = ["SCENARIO_THRESHOLDS", "simulate_answers"]

SCENARIO_THRESHOLDS = {
    "type 1, insulin": (50, 70, 180, 250),
    "type 2, insulin": (50, 70, 180, 260),
    "type 2, oral agents": (45, 65, 190, 280),
    "type 2, diet only": (45, 65, 200, 300),
}


def simulate_answers(
    n_raters: int,
    scenarios: tuple[str, ...] | None = None,
    seed: int = 0,
    threshold_sd: float = 8.0,
    score_sd: float = 0.8,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(thresholds, matrix) frames with the columns of the elicited answer files (module notes)
    for ``n_raters`` raters ``r01``, ``r02``, … in every scenario (default: the four of
    :data:`SCENARIO_THRESHOLDS`)."""
    names = tuple(scenarios or SCENARIO_THRESHOLDS)
    rng = np.random.default_rng(seed)
    size = len(ACTIONS)
    i, j = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    base = SCORE_MIN + np.where(i > j, 2.2, 1.6) * np.abs(i - j)
    t_rows, m_rows = [], []
    for r in range(n_raters):
        rater = f"r{r + 1:02d}"
        for k, scenario in enumerate(names):
            typical = np.asarray(
                SCENARIO_THRESHOLDS.get(scenario, list(SCENARIO_THRESHOLDS.values())[k % 4]),
                dtype=np.float64,
            )
            maxima = np.clip(np.rint(typical + rng.normal(0, threshold_sd, 4)), 0, 596)
            for n in range(1, 4):  # strictly increasing
                maxima[n] = max(maxima[n], maxima[n - 1] + 1)
            t_rows += [
                (rater, scenario, a, int(v)) for a, v in zip(THRESHOLD_ACTIONS, maxima, strict=True)
            ]
            scores = np.clip(np.rint(base + rng.normal(0, score_sd, (size, size))), 1, SCORE_MAX)
            np.fill_diagonal(scores, SCORE_MIN)
            m_rows += [
                (rater, scenario, ACTIONS[a], ACTIONS[b], int(scores[a, b]))
                for a in range(size)
                for b in range(size)
            ]
    thresholds = pd.DataFrame(t_rows, columns=["rater", "scenario", "action", "max"])
    matrix = pd.DataFrame(m_rows, columns=["rater", "scenario", "measured", "actual", "score"])
    return thresholds, matrix
