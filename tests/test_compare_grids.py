"""Grid comparison against brute-force loops."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ranking_core.grids.compare import (
    DIFFERENCE_BINS,
    RISK_CATEGORIES,
    compare_grids,
    difference_shares,
    risk_category,
)


def _category_by_hand(v: float) -> int:
    for k in range(7):
        if v <= 0.5 * (k + 1):
            return k
    return 7


def test_category_boundaries_upper_bound_inclusive():
    values = np.array([-0.1, 0.0, 0.5, 0.5000001, 1.0, 1.2, 2.0, 3.5, 3.5000001, 4.0, 9.0])
    expected = [0, 0, 0, 1, 1, 2, 3, 6, 7, 7, 7]
    assert risk_category(values).tolist() == expected
    assert [_category_by_hand(v) for v in values] == expected
    assert len(RISK_CATEGORIES) == 8 and len(DIFFERENCE_BINS) == 8
    assert DIFFERENCE_BINS[0] == "0–0.5" and DIFFERENCE_BINS[-1] == "3.5–4"


def _brute_misranking(y, f):
    wrong = total = 0
    for i, j in itertools.permutations(range(len(y)), 2):
        if y[i] > y[j]:
            total += 1
            wrong += f[i] <= f[j]
    return wrong / total


def test_compare_grids_matches_brute_force():
    rng = np.random.default_rng(3)
    reference = np.round(rng.uniform(0, 4, size=(23, 19)), 1)
    other = reference + rng.normal(0, 0.6, size=reference.shape)
    result = compare_grids(reference, other, n_points=150, random_state=11)

    picks = np.random.default_rng(11).integers(0, reference.size, size=150)
    y, f = reference.ravel()[picks], other.ravel()[picks]
    assert result.misranking == pytest.approx(_brute_misranking(y, f), abs=1e-12)

    confusion = np.zeros((8, 8), dtype=int)
    bins = np.zeros(8)
    for r, o in zip(reference.ravel(), other.ravel(), strict=True):
        confusion[_category_by_hand(r), _category_by_hand(o)] += 1
        bins[_category_by_hand(abs(o - r))] += 1
    np.testing.assert_array_equal(result.category_confusion, confusion)
    np.testing.assert_allclose(result.difference_shares, bins / reference.size)
    assert result.category_agreement == pytest.approx(np.trace(confusion) / reference.size)
    assert result.max_abs_difference == pytest.approx(np.max(np.abs(other - reference)))
    assert result.mean_abs_difference == pytest.approx(np.mean(np.abs(other - reference)))
    as_json = result.to_dict()
    assert sum(as_json["difference_shares"].values()) == pytest.approx(1.0)


def test_identical_grids_agree_perfectly():
    grid = np.add.outer(np.arange(30.0), np.arange(30.0)) / 15.0
    result = compare_grids(grid, grid.copy(), n_points=500)
    assert result.misranking == 0.0
    assert result.category_agreement == 1.0
    assert result.difference_shares[0] == 1.0
    assert result.max_abs_difference == 0.0


def test_reversed_grid_misranks_every_pair():
    grid = np.arange(100.0).reshape(10, 10)
    assert compare_grids(grid, -grid, n_points=300).misranking == 1.0


def test_difference_shares_on_hand_case():
    shares = difference_shares([0, 0, 0, 0], [0.5, 0.6, -1.2, 5.0])
    np.testing.assert_allclose(shares, [0.25, 0.25, 0.25, 0, 0, 0, 0, 0.25])


@pytest.mark.parametrize(
    ("reference", "other", "message"),
    [
        (np.zeros((3, 3)), np.zeros((3, 4)), "differ in shape"),
        (np.zeros(3), np.zeros(3), "2-D"),
        (np.full((3, 3), np.nan), np.zeros((3, 3)), "NaN"),
    ],
)
def test_bad_grids_are_named(reference, other, message):
    with pytest.raises(ValueError, match=message):
        compare_grids(reference, other)


def test_seg_table_object_is_accepted():
    from ranking_core.grids.seg import SEGTable

    signed = np.linspace(-3, 3, 36).reshape(6, 6)
    table = SEGTable(signed)
    result = compare_grids(table, np.abs(signed), n_points=50)
    assert result.max_abs_difference == 0.0
