"""Passing–Bablok's slopes of whole-number pairs from the count lattice
(ranking_core/meter/comparison/slope_lattice.py) against every slope read pair by pair: the
multiset (each rank, N, K, the −∞ and +∞ of vertical pairs by read order) against Python loops
over i < j, and the whole fit against the pair-by-pair path of passing_bablok, bit for bit, on
random tied data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ranking_core.meter.comparison.passing_bablok as pb_module
import ranking_core.meter.comparison.slope_lattice as lattice_module
from ranking_core.meter.comparison.passing_bablok import passing_bablok
from ranking_core.meter.comparison.slope_lattice import ascending_pairs, lattice_slopes


def paper_slopes(x, y):
    """Every kept S_ij, i < j in read order, sorted (Python loops, the paper's definition)."""
    slopes = []
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if (dx == 0 and dy == 0) or dy == -dx:
                continue
            slopes.append((math.inf if dy > 0 else -math.inf) if dx == 0 else dy / dx)
    return sorted(slopes)


def tied_pairs(seed, n, span):
    """n whole-number pairs in a box of about ``span`` values a side: many ties, many
    vertical pairs, slopes of −1 among them."""
    rng = np.random.default_rng(seed)
    x = rng.integers(20, 20 + span, n).astype(np.float64)
    y = np.rint(x * rng.normal(1.02, 0.1, n) + rng.normal(0, 2, n))
    return x, y


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 70), span=st.integers(1, 40))
def test_the_lattice_gives_every_slope_of_the_paper(seed, n, span):
    x, y = tied_pairs(seed, n, span)
    found = lattice_slopes(x, y)
    expected = paper_slopes(list(x), list(y))
    assert found is not None
    assert found.total == len(expected)
    assert found.below_minus_one == sum(s < -1 for s in expected)
    assert found.minus_infinity == sum(s == -math.inf for s in expected)
    assert found.plus_infinity == sum(s == math.inf for s in expected)
    assert [found.at_rank(r) for r in range(1, len(expected) + 1)] == expected
    assert math.isnan(found.at_rank(0)) and math.isnan(found.at_rank(len(expected) + 1))


def test_vertical_pairs_take_the_sign_of_the_read_order():
    # one reference, y read as 5, 3, 5, 9: pairs (5,3) +∞, (5,5) none, (5,9) −∞, (3,5) −∞,
    # (3,9) −∞, (5,9) −∞
    x = np.array([10.0, 10.0, 10.0, 10.0, 12.0])
    y = np.array([5.0, 3.0, 5.0, 9.0, 4.0])
    found = lattice_slopes(x, y)
    assert found is not None
    assert (found.minus_infinity, found.plus_infinity) == (4, 1)
    reversed_order = lattice_slopes(x[::-1].copy(), y[::-1].copy())
    assert reversed_order is not None
    assert (reversed_order.minus_infinity, reversed_order.plus_infinity) == (1, 4)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 300), top=st.integers(0, 20))
def test_ascending_pairs_counts_every_pair_that_ascends(seed, n, top):
    keys = np.random.default_rng(seed).integers(0, top + 1, n)
    expected = sum(keys[p] < keys[q] for p in range(n) for q in range(p + 1, n))
    assert ascending_pairs(keys) == expected


def fit_or_refusal(x, y):
    """The fit's every number as text (NaN too, bit for bit), or the refusal's sentence."""
    try:
        return repr(passing_bablok(x, y))
    except ValueError as exc:
        return str(exc)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 400), span=st.integers(1, 120))
def test_the_fit_from_the_lattice_equals_the_pair_by_pair_fit(seed, n, span):
    x, y = tied_pairs(seed, n, span)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pb_module, "LATTICE_PAIRS_PER_CELL", 10**18)  # never the lattice
        pair_by_pair = fit_or_refusal(x, y)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pb_module, "LATTICE_PAIRS_PER_CELL", 0)  # always the lattice
        patch.setattr(pb_module, "_select_direct", None)  # the pair-by-pair path unreachable
        patch.setattr(pb_module, "_select_bracketed", None)
        from_lattice = fit_or_refusal(x, y)
    assert from_lattice == pair_by_pair


def test_pairs_of_one_point_are_refused_both_ways(monkeypatch):
    x, y = np.full(5, 100.0), np.full(5, 104.0)
    with pytest.raises(ValueError, match="no two pairs differ"):
        passing_bablok(x, y)
    monkeypatch.setattr(pb_module, "LATTICE_PAIRS_PER_CELL", 0)
    monkeypatch.setattr(pb_module, "_select_direct", None)
    with pytest.raises(ValueError, match="no two pairs differ"):
        passing_bablok(x, y)


def test_a_meter_sized_file_gives_the_same_fit_both_ways():
    """3,000 meter pairs in whole mg/dL (the bracketed pair-by-pair path: 4.5·10⁶ slopes): the
    default (the lattice) equals the pairs read one by one."""
    rng = np.random.default_rng(42)
    ref = np.rint(np.clip(rng.lognormal(np.log(140), 0.45, 3000), 20, 550))
    bgm = np.rint(ref * rng.normal(1.02, 0.07, ref.size) + rng.normal(0, 3, ref.size))
    calls = []
    original = lattice_module.lattice_slopes

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pb_module, "lattice_slopes", counted)
        default = passing_bablok(ref, bgm)
    assert calls == [1]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pb_module, "LATTICE_PAIRS_PER_CELL", 10**18)
        assert repr(passing_bablok(ref, bgm)) == repr(default)


def test_values_that_are_not_whole_or_a_box_too_large_are_read_pair_by_pair():
    x, y = tied_pairs(3, 50, 30)
    assert lattice_slopes(x + 0.5, y) is None
    assert lattice_slopes(x, y, max_cells=10) is None
    assert lattice_slopes(x[:1], y[:1]) is None


def test_counts_the_fft_cannot_round_leave_the_slopes_to_the_pairs(monkeypatch):
    x, y = tied_pairs(5, 200, 60)
    expected = passing_bablok(x, y)  # 19,900 slopes, a box of about 60 × 90: pair by pair
    real = lattice_module._autocorrelation
    monkeypatch.setattr(lattice_module, "_autocorrelation", lambda m: real(m) + 0.4)
    assert lattice_slopes(x, y) is None
    monkeypatch.setattr(pb_module, "LATTICE_PAIRS_PER_CELL", 0)
    assert repr(passing_bablok(x, y)) == repr(expected)


def test_the_fft_counts_round_exactly_at_the_largest_report():
    """The rounding margin where the FFT's error is largest: all 50,000 pairs a report allows on
    two points of the 601 × 601 box (Σ M² = 1.25·10⁹); every count stays within 10⁻⁴ of its
    integer, and the counts are the exact ones (n₁·n₂ pairs at the one offset)."""
    lattice = np.zeros((601, 601))
    lattice[0, 0] = lattice[600, 600] = 25_000
    found = lattice_module._autocorrelation(lattice)
    assert np.abs(found - np.rint(found)).max() < 1e-4
    counts = np.rint(found)
    assert counts[600, 600] == 25_000**2 and counts[0, 0] == 2 * 25_000**2
    assert counts.sum() == counts[600, 600] + counts[0, 0]
