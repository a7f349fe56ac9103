"""From SEG-method answers to the glucose plane: pure numerics, no files.

The Surveillance Error Grid (Klonoff DC et al., J Diabetes Sci Technol 2014;8(4):658-672) was
elicited from clinicians in patient scenarios. Per scenario each clinician gives the glucose
ranges in which they take each of five actions (:data:`ACTIONS`: A emergency treatment of a
low, B oral glucose, C no action, D insulin or "exercise and eat less", E emergency treatment
of a high) as the highest glucose of actions A–D, ``max`` (whole mg/dL; E runs to 600), and
scores the risk of every combination "the meter says the range of action i (measured), the
truth is the range of action j (actual)" on 1 (none) … 9. A clinician's answers map to the
plane through their own ranges, with ``action(g)`` the action whose range holds ``g``:

.. math::

    \\mathrm{action}(g) = \\#\\{k : \\max_k < g\\}, \\qquad
    \\mathrm{risk}(\\mathrm{REF}, \\mathrm{BGM}) =
    \\frac{S[\\mathrm{action}(\\mathrm{BGM}), \\mathrm{action}(\\mathrm{REF})] - 1}{2},

i.e. A covers 0..max_A, B max_A + 1..max_B, …, E max_D + 1..600 mg/dL, and the score matrix
``S[measured, actual]`` goes from 1..9 to the SEG's risk scale 0..4. The grid of a scenario is
the mean of its raters' maps; the pooled grid is the mean of the scenario grids (each scenario
weighs the same, whatever its number of raters). The spread is the standard deviation over
all rater maps (every rater × scenario) with ``ddof = 0`` (the panel's own spread, defined for a
single map), the count the number of those maps.

Grids are (601, 601) float64 indexed ``[REF, BGM]`` in mg/dL, the layout of ``riskgrid learn``'s
``grid.npy`` (:mod:`ranking_core.grids.files`). A map is a fancy-index of the 5 × 5 matrix by the
action indices of the two axes (a ``searchsorted``), O(601²) per map; no loop over cells.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids.lattice import GLUCOSE_MAX

__all__ = [
    "ACTIONS",
    "ACTION_LABELS",
    "SCORE_MAX",
    "SCORE_MIN",
    "SIZE",
    "ElicitedGrids",
    "RaterMap",
    "action_index",
    "elicited_grids",
    "rater_map",
    "score_to_risk",
]

ACTIONS = ("A", "B", "C", "D", "E")
ACTION_LABELS = {
    "A": "emergency treatment of a low",
    "B": "oral glucose",
    "C": "no action",
    "D": "insulin, or exercise and eat less",
    "E": "emergency treatment of a high",
}
THRESHOLD_ACTIONS = ACTIONS[:-1]  # E has no threshold: it runs to 600 mg/dL
SCORE_MIN, SCORE_MAX = 1, 9
SIZE = GLUCOSE_MAX + 1
Progress = Callable[[int, int], None]


def score_to_risk(scores: ArrayLike) -> NDArray[np.float64]:
    """Scores 1..9 on the SEG's risk scale 0..4: (score − 1) / 2."""
    return (np.asarray(scores, dtype=np.float64) - SCORE_MIN) / 2.0


def action_index(maxima: ArrayLike, glucose: ArrayLike) -> NDArray[np.intp]:
    """The action (0 = A … 4 = E) whose range holds each ``glucose`` (mg/dL), given the four
    highest glucose values ``maxima`` of actions A–D (strictly increasing): the number of maxima
    below the glucose value (``searchsorted`` on the left)."""
    return np.searchsorted(np.asarray(maxima, dtype=np.float64), glucose, side="left")


def rater_map(maxima: ArrayLike, scores: ArrayLike) -> NDArray[np.float64]:
    """One rater's answers in one scenario on the (601, 601) plane ``[REF, BGM]``.

    ``maxima``: (4,) max of actions A–D in mg/dL; ``scores``: (5, 5) ``S[measured, actual]``
    on 1..9. risk[REF, BGM] = (S[action(BGM), action(REF)] − 1) / 2 (module notes)."""
    axis = action_index(maxima, np.arange(SIZE))
    risk = score_to_risk(scores)
    return risk.T[axis[:, None], axis[None, :]]


@dataclass(frozen=True)
class RaterMap:
    """One valid rater × scenario: ``maxima`` (4,) mg/dL of actions A–D, ``scores`` (5, 5)
    ``S[measured, actual]`` on 1..9."""

    rater: str
    scenario: str
    maxima: NDArray[np.float64] = field(repr=False)
    scores: NDArray[np.float64] = field(repr=False)

    def grid(self) -> NDArray[np.float64]:
        """:func:`rater_map` of these answers."""
        return rater_map(self.maxima, self.scores)


@dataclass(frozen=True)
class ElicitedGrids:
    """The grids of a panel's answers (module notes).

    Attributes
    ----------
    pooled : (601, 601) mean of the scenario grids, risk 0..4.
    scenarios : scenario name → (601, 601) mean of its raters' maps, in order of appearance.
    raters : scenario name → the raters averaged there.
    spread : (601, 601) standard deviation (ddof 0) over every rater map.
    count : (601, 601) the number of rater maps behind each cell (int64).
    """

    pooled: NDArray[np.float64] = field(repr=False)
    scenarios: dict[str, NDArray[np.float64]] = field(repr=False)
    raters: dict[str, tuple[str, ...]]
    spread: NDArray[np.float64] = field(repr=False)
    count: NDArray[np.int64] = field(repr=False)

    @property
    def n_maps(self) -> int:
        return sum(len(r) for r in self.raters.values())


def elicited_grids(maps: Sequence[RaterMap], progress: Progress | None = None) -> ElicitedGrids:
    """Average the rater maps per scenario and over scenarios (module notes); the spread is
    computed in two passes (the mean first), so no stack of maps is held in memory.
    ``progress(done, total)`` is called once per map of each pass. ``ValueError`` without maps."""
    if not maps:
        raise ValueError("no valid rater × scenario answers to map")
    by_scenario: dict[str, list[RaterMap]] = {}
    for item in maps:
        by_scenario.setdefault(item.scenario, []).append(item)
    total, done = 2 * len(maps), 0
    sums = np.zeros((SIZE, SIZE))
    scenarios: dict[str, NDArray[np.float64]] = {}
    for name, items in by_scenario.items():
        scenario_sum = np.zeros((SIZE, SIZE))
        for item in items:
            scenario_sum += item.grid()
            done += 1
            if progress is not None:
                progress(done, total)
        sums += scenario_sum
        scenarios[name] = scenario_sum / len(items)
    pooled = np.mean(np.stack(list(scenarios.values())), axis=0)
    overall = sums / len(maps)
    squares = np.zeros((SIZE, SIZE))
    for item in maps:
        squares += (item.grid() - overall) ** 2
        done += 1
        if progress is not None:
            progress(done, total)
    return ElicitedGrids(
        pooled=pooled,
        scenarios=scenarios,
        raters={name: tuple(i.rater for i in items) for name, items in by_scenario.items()},
        spread=np.sqrt(squares / len(maps)),
        count=np.full((SIZE, SIZE), len(maps), dtype=np.int64),
    )
