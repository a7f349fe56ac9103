"""How many raters a survey's overlap needs, and what its invited raters cover (pure Python: a
survey's state is read without NumPy).

The start design is dealt out by :func:`~ranking_core.surveys.design.start_chunk`: rater j (in
order of invitation, from 0) gets the K = ``per_rater`` pairs jK, jK + 1, … (mod n) of a design
of n pairs. The chunks of the first ⌈n·R / K⌉ raters together run R times round the design, so
every pair is rated by ``overlap`` = R raters (R + 1 for the pairs where the last chunk wraps
past the R-th round) once that many raters are invited; with fewer raters the first pairs are
asked once and the last ones not at all, and no pair is rated twice until more than n / K raters are
in. With no ``per_rater`` every rater rates every pair, and R raters are needed.

Krippendorff's α (and every agreement between raters) needs pairs rated by two raters at least;
the sentences here say so when the raters invited cannot give any.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import accumulate

from ranking_core.surveys.design import SurveySettings

__all__ = [
    "Coverage",
    "batch_warning",
    "coverage",
    "coverage_warning",
    "overlap_needs",
    "pair_ranges",
    "raters_needed",
    "start_counts",
]

TIMES = {1: "once", 2: "twice", 3: "three times"}


def _times(r: int) -> str:
    return TIMES.get(r, f"{r} times")


def _per_rater(n_pairs: int, per_rater: int | None) -> int:
    return n_pairs if per_rater is None else min(int(per_rater), n_pairs)


def raters_needed(n_pairs: int, per_rater: int | None, overlap: int) -> int:
    """The fewest raters whose start chunks rate every one of ``n_pairs`` pairs ``overlap``
    times: ⌈n·R / K⌉ with K = min(per_rater, n) pairs each (R when every rater rates all)."""
    if n_pairs < 1:
        return 0
    k = _per_rater(n_pairs, per_rater)
    return math.ceil(n_pairs * int(overlap) / k)


def start_counts(n_pairs: int, per_rater: int | None, raters: Iterable[int]) -> list[int]:
    """How many of the given raters (their invitation indices, from 0) have each start pair
    in their chunk (:func:`~ranking_core.surveys.design.start_chunk`): a list of n counts.
    Each chunk is an arc of the cycle of pairs, counted in O(1) (a difference array): O(n +
    raters) in all."""
    if n_pairs < 1:
        return []
    k = _per_rater(n_pairs, per_rater)
    diff = [0] * (n_pairs + 1)
    for rater in raters:
        start = (int(rater) * k) % n_pairs
        end = start + k
        diff[start] += 1
        if end <= n_pairs:
            diff[end] -= 1
        else:  # the arc runs past the last pair and on from the first
            diff[0] += 1
            diff[end - n_pairs] -= 1
    return list(accumulate(diff[:n_pairs]))


class Coverage:
    """What the active raters of a survey cover of its start design.

    Attributes
    ----------
    n_pairs : start-design pairs (check pairs not counted).
    overlap : the survey's raters per pair.
    raters : active raters counted.
    needed : raters needed for the overlap (:func:`raters_needed`).
    full : pairs rated by at least ``overlap`` raters.
    fewer : pairs rated, but by fewer than ``overlap`` raters.
    not_asked : pairs no active rater is asked.
    shared : pairs rated by two raters at least (what Krippendorff's α is measured on).
    counts : n_pairs counts: the raters of each start pair, in the order the pairs are stored.
    more : further raters to invite for every pair to reach the overlap (0: none).
    """

    def __init__(
        self,
        n_pairs: int,
        per_rater: int | None,
        overlap: int,
        invited: Iterable[int],
        next_index: int | None = None,
    ) -> None:
        indices = sorted(int(i) for i in invited)
        if next_index is None:  # the next rater invited takes the next index
            next_index = (indices[-1] + 1) if indices else 0
        counts = start_counts(n_pairs, per_rater, indices)
        self.n_pairs, self.overlap, self.raters = n_pairs, int(overlap), len(indices)
        self.needed = raters_needed(n_pairs, per_rater, overlap)
        self.full = sum(c >= self.overlap for c in counts)
        self.not_asked = counts.count(0)
        self.fewer = n_pairs - self.full - self.not_asked
        self.shared = sum(c >= 2 for c in counts)
        self.counts = counts
        self.more = self._more(counts, per_rater, int(next_index))

    def _more(self, counts: list[int], per_rater: int | None, first: int) -> int:
        """The fewest further raters (indices ``first``, ``first`` + 1, …) after whom every pair
        has the overlap: a binary search, since adding raters never lowers a count; at most
        :attr:`needed` (that many consecutive chunks run the overlap's rounds in full)."""

        def enough(more: int) -> bool:
            extra = start_counts(self.n_pairs, per_rater, range(first, first + more))
            return all(c + e >= self.overlap for c, e in zip(counts, extra, strict=True))

        low, high = 0, self.needed
        while low < high:
            middle = (low + high) // 2
            if enough(middle):
                high = middle
            else:
                low = middle + 1
        return low

    @property
    def complete(self) -> bool:
        """Whether every start pair is rated by ``overlap`` raters."""
        return self.full == self.n_pairs


def coverage(
    n_pairs: int,
    settings: SurveySettings,
    invited: Iterable[int] | int,
    next_index: int | None = None,
) -> Coverage:
    """The :class:`Coverage` of the start design by the raters of these invitation indices
    (or by the first ``invited`` raters when a number is given); ``next_index``: the index the
    next rater invited gets (every rater ever invited, revoked ones too; default: one past the
    last given)."""
    indices = range(invited) if isinstance(invited, int) else invited
    return Coverage(n_pairs, settings.per_rater, settings.overlap, indices, next_index)


def overlap_needs(
    n_pairs: int, settings: SurveySettings, per_rater_name: str = "--per-rater"
) -> str:
    """One sentence: how many raters the survey's overlap needs (``per_rater_name``: how the
    pairs-per-rater setting is called where the sentence is shown)."""
    r = settings.overlap
    needed = raters_needed(n_pairs, settings.per_rater, r)
    if settings.per_rater is None or settings.per_rater >= n_pairs:
        how = "every rater rates every pair, so"
    else:
        how = f"with {per_rater_name} {settings.per_rater}"
    return (
        f"overlap {r} needs at least {r} rater{'s' if r > 1 else ''}; {how} every one of the "
        f"{n_pairs:,} start pairs is rated {_times(r)} once {needed:,} raters are invited"
    )


def pair_ranges(indices: Sequence[int], shown: int = 3) -> str:
    """Start pairs by their place in the stored design (0-based ``indices``, increasing; shown
    from 1), as ranges: "pairs 25-30", "pairs 1-6, 13-18"; at most ``shown`` ranges, then how
    many more."""
    if not len(indices):
        return "none"
    runs: list[list[int]] = []  # [first, last] of each run of consecutive indices
    for index in indices:
        if runs and index == runs[-1][1] + 1:
            runs[-1][1] = index
        else:
            runs.append([index, index])
    ranges = [f"{a + 1}" if a == b else f"{a + 1}-{b + 1}" for a, b in runs]
    more = f" and {len(ranges) - shown:,} more ranges" if len(ranges) > shown else ""
    return f"pair{'s' if len(indices) > 1 else ''} {', '.join(ranges[:shown])}{more}"


def coverage_warning(state: Coverage) -> str | None:
    """One sentence saying what the raters so far leave out of the overlap (None when every
    start pair has it): pairs rated fewer times, pairs not asked, and whether Krippendorff's α
    can be measured."""
    if state.complete or state.n_pairs == 0:
        return None
    counts = state.counts
    parts = [f"{state.full:,} of {state.n_pairs:,} start pairs are rated {_times(state.overlap)}"]
    if state.fewer:
        fewer = [i for i, c in enumerate(counts) if 0 < c < state.overlap]
        parts.append(f"{state.fewer:,} rated fewer times ({pair_ranges(fewer)})")
    if state.not_asked:
        not_asked = [i for i, c in enumerate(counts) if c == 0]
        parts.append(f"{state.not_asked:,} not asked at all ({pair_ranges(not_asked)})")
    alpha = (
        "; no pair is rated twice, so Krippendorff's α and rater agreement are not measurable"
        if state.shared == 0
        else ""
    )
    return (
        f"{state.raters:,} active rater{'s' if state.raters != 1 else ''} but overlap "
        f"{state.overlap} needs {state.needed:,}: {', '.join(parts)}{alpha}; invite "
        f"{state.more:,} more rater{'s' if state.more != 1 else ''} to rate every pair "
        f"{_times(state.overlap)}"
    )


def batch_warning(active: int, overlap: int) -> str | None:
    """One sentence when a batch is shared among fewer active raters than the overlap (each of
    its pairs then has ``active`` raters, :func:`~ranking_core.surveys.design.batch_chunk`);
    None otherwise."""
    if active >= overlap:
        return None
    return (
        f"{active:,} active rater{'s' if active != 1 else ''} but overlap {overlap}: each pair "
        f"of a batch is rated by {active:,} rater{'s' if active != 1 else ''} only; invite "
        f"{overlap - active:,} more to give later batches their overlap"
    )
