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
``grid.npy`` (:mod:`ranking_core.grids.files`). One map is a fancy-index of the 5 × 5 matrix by
the action indices of the two axes (a ``searchsorted``), O(601²); the panel's sums paint each
map as its 25 constant rectangles, O(25) per map (:func:`elicited_grids`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.elicit.rules import (
    ACTION_LABELS,
    ACTIONS,
    CUT_ACTIONS,
    SCORE_MAX,
    SCORE_MIN,
)
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

THRESHOLD_ACTIONS = CUT_ACTIONS  # E has no threshold: it runs to 600 mg/dL
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
    distances : (rater, scenario) → the root-mean-square distance (risk units, over the
        601 × 601 cells) of that rater's map from its scenario's mean grid.
    """

    pooled: NDArray[np.float64] = field(repr=False)
    scenarios: dict[str, NDArray[np.float64]] = field(repr=False)
    raters: dict[str, tuple[str, ...]]
    spread: NDArray[np.float64] = field(repr=False)
    count: NDArray[np.int64] = field(repr=False)
    distances: dict[tuple[str, str], float] = field(default_factory=dict, repr=False)

    @property
    def n_maps(self) -> int:
        return sum(len(r) for r in self.raters.values())


CHUNK = 1_000  # maps summed at once (about 2.4 MB of rectangle indices and values)


@dataclass(frozen=True)
class Rectangles:
    """A stack of maps as their 25 constant rectangles each: rows ``[r0, r1)`` (REF, the
    actual action's range), columns ``[c0, c1)`` (BGM, the measured action's range) and the
    risk ``value``; every array (n, 5, 5) indexed [map, measured, actual]."""

    r0: NDArray[np.intp]
    r1: NDArray[np.intp]
    c0: NDArray[np.intp]
    c1: NDArray[np.intp]
    value: NDArray[np.float64]


def map_rectangles(maps: Sequence[RaterMap]) -> Rectangles:
    """The rectangles of each map (:class:`Rectangles`): action k's range on an axis is
    ``[b_k, b_{k+1})`` with ``b = (0, max_A + 1, max_B + 1, max_C + 1, max_D + 1, 601)``."""
    maxima = np.array([m.maxima for m in maps], dtype=np.float64).reshape(len(maps), 4)
    edges = np.empty((len(maps), 6), dtype=np.intp)
    edges[:, 0], edges[:, 5] = 0, SIZE
    edges[:, 1:5] = np.minimum(maxima.astype(np.intp) + 1, SIZE)
    low, high = edges[:, :5], edges[:, 1:]
    risk = score_to_risk(np.array([m.scores for m in maps]).reshape(len(maps), 5, 5))
    return Rectangles(
        r0=np.broadcast_to(low[:, None, :], risk.shape),
        r1=np.broadcast_to(high[:, None, :], risk.shape),
        c0=np.broadcast_to(low[:, :, None], risk.shape),
        c1=np.broadcast_to(high[:, :, None], risk.shape),
        value=risk,
    )


def _painted(rect: Rectangles, power: int) -> NDArray[np.float64]:
    """The sum over the maps of ``value ** power`` on their rectangles, (601, 601): each
    rectangle adds its value at four corners of a (602, 602) difference table, whose 2-D
    cumulative sum is the sum of the maps. Risks are multiples of 0.5, so every partial sum
    (and of squares, multiples of 0.25) is exact in float64: the same numbers as adding the
    maps cell by cell."""
    side = SIZE + 1
    v = rect.value**power
    corners = ((rect.r0, rect.c0), (rect.r1, rect.c1), (rect.r0, rect.c1), (rect.r1, rect.c0))
    index = np.concatenate([(r * side + c).ravel() for r, c in corners])
    weights = np.concatenate([v.ravel(), v.ravel(), -v.ravel(), -v.ravel()])
    table = np.bincount(index, weights, minlength=side * side).reshape(side, side)
    return table.cumsum(axis=0).cumsum(axis=1)[:SIZE, :SIZE]


def _distances(rect: Rectangles, mean: NDArray[np.float64]) -> NDArray[np.float64]:
    """Root-mean-square distance of each map from ``mean`` over the 601 × 601 cells, from the
    rectangles and the integral images of ``mean`` and ``mean²`` (no map is built):
    Σ_rect (v − M)² = area·v² − 2v·Σ_rect M + Σ_rect M²."""

    def integral(values: NDArray[np.float64]) -> NDArray[np.float64]:
        table = np.zeros((SIZE + 1, SIZE + 1))
        table[1:, 1:] = values.cumsum(axis=0).cumsum(axis=1)
        return table

    def box(table: NDArray[np.float64]) -> NDArray[np.float64]:
        r0, r1, c0, c1 = rect.r0, rect.r1, rect.c0, rect.c1
        return table[r1, c1] - table[r0, c1] - table[r1, c0] + table[r0, c0]

    area = (rect.r1 - rect.r0) * (rect.c1 - rect.c0)
    v = rect.value
    total = area * v**2 - 2 * v * box(integral(mean)) + box(integral(mean**2))
    return np.sqrt(np.maximum(total.sum(axis=(1, 2)), 0.0) / SIZE**2)


def elicited_grids(maps: Sequence[RaterMap], progress: Progress | None = None) -> ElicitedGrids:
    """Average the rater maps per scenario and over scenarios (module notes), with the spread,
    count and each map's distance from its scenario's mean.

    Each map is 25 constant rectangles, so the sums of the maps and of their squares are painted
    rectangle by rectangle (:func:`_painted`: O(25) per map plus O(601²) per chunk of
    :data:`CHUNK` maps) and equal, exactly, the cell-by-cell sums; the variance is
    (N·Σx² − (Σx)²) / N², exact until its one division. Memory is bounded by the chunk and one
    (601, 601) grid per scenario, whatever the number of maps. ``progress(done, total)`` is
    called after each chunk (total: the number of maps). ``ValueError`` without maps."""
    if not maps:
        raise ValueError("no valid rater × scenario answers to map")
    by_scenario: dict[str, list[RaterMap]] = {}
    for item in maps:
        by_scenario.setdefault(item.scenario, []).append(item)
    sums, squares, done = np.zeros((SIZE, SIZE)), np.zeros((SIZE, SIZE)), 0
    scenarios: dict[str, NDArray[np.float64]] = {}
    distances: dict[tuple[str, str], float] = {}
    for name, items in by_scenario.items():
        scenario_sum = np.zeros((SIZE, SIZE))
        chunks = [map_rectangles(items[k : k + CHUNK]) for k in range(0, len(items), CHUNK)]
        for rect in chunks:
            scenario_sum += _painted(rect, 1)
            squares += _painted(rect, 2)
            done += len(rect.value)
            if progress is not None:
                progress(done, len(maps))
        sums += scenario_sum
        scenarios[name] = scenario_sum / len(items)
        apart = np.concatenate([_distances(rect, scenarios[name]) for rect in chunks])
        distances.update({(i.rater, name): float(d) for i, d in zip(items, apart, strict=True)})
    pooled = np.mean(np.stack(list(scenarios.values())), axis=0)
    n = len(maps)
    variance = np.maximum(n * squares - sums**2, 0.0) / n**2
    return ElicitedGrids(
        pooled=pooled,
        scenarios=scenarios,
        raters={name: tuple(i.rater for i in items) for name, items in by_scenario.items()},
        spread=np.sqrt(variance),
        count=np.full((SIZE, SIZE), n, dtype=np.int64),
        distances=distances,
    )
