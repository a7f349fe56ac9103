"""The joint model of a planned accuracy study, simulated: every criterion of one study counted
from the same sensors and, within a glucose range, from the same pairs.

The model, per simulated study of S sensors with M pairs each in every criterion's range:

* **Sensors.** Sensor s has one quality z_s ~ N(0, 1), drawn once and shared by every criterion.
  Its agreement in criterion c is the quantile of that quality in Beta(a_c, b_c) with mean p_c
  (the ``--agreement``) and intra-class correlation R = 1/(a_c + b_c + 1) (``--icc``):
  p_{s,c} = F⁻¹_{Beta(a_c, b_c)}(Φ(z_s)) (the quantile tabled at 4,097 qualities from −8.5
  to 8.5 and interpolated). A sensor good in one criterion is good in every one; each criterion
  alone is the beta-binomial model (its pairs Binomial(M, p_{s,c}) given the sensor). R = 0:
  p_{s,c} = p_c for every sensor, the pairs independent.
* **Pairs.** Criteria over the same pairs (the same range: A, D and H over iCGM < 70 mg/dL)
  share them. Within such a range, a criterion whose counted pairs contain another's (within
  ±40 mg/dL contains within ±15 mg/dL) counts them from the same pairs: each pair has one
  uniform v, and it counts for criterion c when v < p_{s,c} (the counts nested: every pair
  within ±15 is within ±40). Criteria of one range that do not nest count independently given
  the sensor; criteria of different ranges (G over every reading, A over < 70) count different
  pairs. Which criteria share a range and which nest is read from the registry's own rules on a
  fixed probe of pairs, never listed by hand.
* **Verdict.** Each criterion's own rule on its S·M pairs (the lower bound over the S sensors
  as clusters); the study passes when every criterion passes.

Common random numbers: sensors are drawn in blocks of 64 (``BLOCK``) from a generator seeded by
(seed, block), so a study of S sensors holds the first S sensors of every larger one and the
probability of passing is compared across S on the same draws (the bisection for the sensors
needed sees no simulation noise between its steps).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.stats import beta, norm

from ranking_core.meter.standards.bounds import equal_clusters_exceed
from ranking_core.meter.standards.registry import Criterion, PairsView

__all__ = [
    "BLOCK",
    "JointSimulation",
    "RangeStructure",
    "grid_cells",
    "interpolate",
    "range_structure",
]

BLOCK = 64  # sensors drawn at once
_PROBE_PAIRS = 20_000
_Z_GRID = np.linspace(-8.5, 8.5, 4097)  # sensor qualities where the beta quantiles are tabled


def _probe() -> PairsView:
    """Fixed pairs spread over 20–500 mg/dL, near and far from the reference, with rates of
    change −5..5 mg/dL/min: where the criteria's ranges and nesting are read."""
    rng = np.random.default_rng(20_240_601)
    ref = rng.uniform(20, 500, _PROBE_PAIRS)
    bgm = np.clip(ref * np.exp(rng.normal(0, 0.4, _PROBE_PAIRS)), 20, 500)
    bgm[::4] = rng.uniform(20, 500, bgm[::4].size)
    rates = rng.uniform(-5, 5, (2, _PROBE_PAIRS))
    return PairsView(ref, bgm, rates[0], rates[1])


def _counted(criterion: Criterion, probe: PairsView) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """(scope, counted) on the probe; counted: within the limit, or free of the error."""
    scope, hit = criterion.select(probe)
    counted = hit if criterion.rule in ("share", "lower-bound") else ~hit
    return scope, scope & counted


@dataclass(frozen=True)
class RangeStructure:
    """The criteria (indices into the planned list) grouped by the pairs they count: ``ranges``
    holds, per range, its chains; a chain lists nested criteria, fewest counted pairs first."""

    ranges: tuple[tuple[tuple[int, ...], ...], ...]

    @property
    def shared(self) -> bool:
        """Whether two criteria count the same pairs."""
        return any(sum(len(chain) for chain in chains) > 1 for chains in self.ranges)


def range_structure(
    criteria: tuple[Criterion, ...], agreement: tuple[float, ...]
) -> RangeStructure:
    """Which criteria share pairs and which nest, from their rules on the probe.
    ``ValueError`` when an agreement contradicts the nesting (a criterion expected to count a
    larger share than one whose pairs it is contained in)."""
    probe = _probe()
    read = [_counted(c, probe) for c in criteria]
    groups: list[list[int]] = []
    for i, (scope, _) in enumerate(read):
        home = next((g for g in groups if np.array_equal(read[g[0]][0], scope)), None)
        if home is None:
            groups.append([i])
        else:
            home.append(i)

    def inside(i: int, j: int) -> bool:  # every pair i counts, j counts
        return not bool(np.any(read[i][1] & ~read[j][1]))

    for group in groups:
        for i in group:
            for j in group:
                if i != j and inside(i, j) and not inside(j, i) and agreement[i] > agreement[j]:
                    a, b = criteria[i], criteria[j]
                    raise ValueError(
                        f"--agreement: {b.id}={agreement[j]:g} is below {a.id}="
                        f"{agreement[i]:g}, though every pair {a.id} counts ({a.label}) "
                        f"{b.id} counts too ({b.label})"
                    )
    ranges = []
    for group in groups:
        chains: list[list[int]] = []
        for i in sorted(group, key=lambda k: agreement[k]):
            chain = next((c for c in chains if inside(c[-1], i)), None)
            if chain is None:
                chains.append([i])
            else:
                chain.append(i)
        ranges.append(tuple(tuple(c) for c in chains))
    return RangeStructure(tuple(ranges))


def _quantile_table(agreement: float, icc: float) -> NDArray[np.float64]:
    """p at each quality of :data:`_Z_GRID`: the Beta(mean ``agreement``, ICC ``icc``)
    quantile of Φ(z)."""
    scale = 1.0 / icc - 1.0
    return beta.ppf(norm.cdf(_Z_GRID), agreement * scale, (1 - agreement) * scale)


def grid_cells(z: NDArray[np.float64]) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """For each quality ``z`` (clipped to :data:`_Z_GRID`), the cell j with
    grid[j] ≤ z < grid[j + 1] (the last point for z at the grid's end) and z − grid[j]: found
    once per block of sensors and shared by every criterion's table. The grid is even, so j is
    read off, then set right where rounding put it one cell off."""
    last = _Z_GRID.size - 1
    z = np.clip(z, _Z_GRID[0], _Z_GRID[-1])
    j = np.clip(((z - _Z_GRID[0]) / (_Z_GRID[1] - _Z_GRID[0])).astype(np.intp), 0, last)
    j -= _Z_GRID[j] > z
    j += (j < last) & (_Z_GRID[np.minimum(j + 1, last)] <= z)
    return j, z - _Z_GRID[j]


def interpolate(
    table: NDArray[np.float64], cells: tuple[NDArray[np.intp], NDArray[np.float64]]
) -> NDArray[np.float64]:
    """``np.interp(z, _Z_GRID, table)`` from :func:`grid_cells` of z, to the last bit: the
    same arithmetic, slope·(z − grid[j]) + table[j], without a search per criterion."""
    j, offset = cells
    slopes = np.append(np.diff(table) / np.diff(_Z_GRID), 0.0)
    return slopes[j] * offset + table[j]


class JointSimulation:
    """The module's model for ``criteria`` (with their expected ``agreement``, 0–1), ``pairs``
    per sensor in each range, intra-class correlation ``icc`` and the lower bound ``bound``,
    over ``studies`` simulated studies (seeded). :meth:`probabilities` at S sensors."""

    def __init__(
        self,
        criteria: tuple[Criterion, ...],
        agreement: tuple[float, ...],
        pairs: int,
        icc: float,
        bound: str,
        studies: int,
        seed: int,
    ) -> None:
        self.criteria, self.agreement = criteria, agreement
        self.pairs, self.icc, self.bound = pairs, icc, bound
        self.studies, self.seed = studies, seed
        self.structure = range_structure(criteria, agreement)
        self._tables = [_quantile_table(p, icc) if icc > 0 else None for p in agreement]
        k = len(criteria)
        zero = np.zeros((k, studies), dtype=np.int64)
        self._cumulative: list[tuple[NDArray[np.int64], NDArray[np.int64]]] = [(zero, zero)]
        self._last: tuple[int, NDArray[np.int64]] | None = None

    def _block(self, index: int) -> NDArray[np.int64]:
        """Counted pairs of each criterion, study and sensor of block ``index``:
        shape (criteria, studies, :data:`BLOCK`)."""
        if self._last is not None and self._last[0] == index:
            return self._last[1]
        rng = np.random.default_rng([self.seed, index])
        z = rng.standard_normal((self.studies, BLOCK))
        cells = grid_cells(z)
        share = [
            np.full(z.shape, p) if table is None else interpolate(table, cells)
            for p, table in zip(self.agreement, self._tables, strict=True)
        ]
        counts = np.empty((len(self.criteria), self.studies, BLOCK), dtype=np.int64)
        for chains in self.structure.ranges:
            for chain in chains:
                done = np.zeros(z.shape, dtype=np.int64)  # pairs counted by the chain so far
                below = np.zeros(z.shape)  # their share of the sensor's pairs
                for i in chain:  # nested: the next criterion counts those and some of the rest
                    p = np.maximum(share[i], below)
                    rest = np.clip((p - below) / np.maximum(1.0 - below, 1e-300), 0.0, 1.0)
                    done = done + rng.binomial(self.pairs - done, rest)
                    counts[i], below = done, p
        self._last = (index, counts)
        return counts

    def _sums(self, sensors: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Σ counted pairs and Σ (counted pairs)² over the first ``sensors`` sensors:
        shape (criteria, studies) each."""
        full, rest = divmod(sensors, BLOCK)
        while len(self._cumulative) <= full:
            block = self._block(len(self._cumulative) - 1)
            hits, squares = self._cumulative[-1]
            self._cumulative.append((hits + block.sum(axis=2), squares + (block**2).sum(axis=2)))
        hits, squares = self._cumulative[full]
        if rest:
            part = self._block(full)[:, :, :rest]
            hits, squares = hits + part.sum(axis=2), squares + (part**2).sum(axis=2)
        return hits, squares

    def passes(self, sensors: int) -> NDArray[np.bool_]:
        """Each criterion's verdict in each simulated study: shape (criteria, studies)."""
        hits, squares = self._sums(sensors)
        n = sensors * self.pairs
        out = np.empty(hits.shape, dtype=bool)
        for i, criterion in enumerate(self.criteria):
            need = criterion.required_percent
            k = hits[i]
            if criterion.rule == "share":
                out[i] = 100.0 * k / n >= need
            elif criterion.rule == "none":
                out[i] = k == n  # every pair free of the error
            elif criterion.rule == "at-most":
                out[i] = 100.0 * (n - k) / n <= need
            else:
                out[i] = equal_clusters_exceed(
                    self.bound, k, squares[i], sensors, self.pairs, need / 100.0
                )
        return out

    def probabilities(self, sensors: int) -> tuple[NDArray[np.float64], float]:
        """(P(each criterion passes), P(every one passes)) at ``sensors`` sensors."""
        passing = self.passes(sensors)
        return passing.mean(axis=1), float(passing.all(axis=0).mean())
