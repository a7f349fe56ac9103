"""Clarke error grid zones: the worked examples of Clarke et al. 1987 and both sides of every
boundary."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ranking_core.grids.clarke import clarke_zone

WORKED = [
    ((100, 121), "B"),
    ((50, 65), "A"),
    ((50, 75), "D"),
    ((60, 180), "E"),
    ((100, 250), "C"),
    ((150, 40), "B"),
    ((300, 150), "D"),
    ((400, 100), "D"),
    ((200, 60), "E"),
]


def test_worked_examples():
    ref, bgm = np.array([p for p, _ in WORKED]).T
    assert clarke_zone(ref, bgm).tolist() == [z for _, z in WORKED]


# (REF, BGM) -> zone on each side of a boundary, derived by hand from the rules
BOUNDARIES = [
    # upper E: REF <= 70 and BGM >= 180
    ((70, 180), "E"),
    ((70.5, 180), "B"),
    ((70.5, 200), "C"),
    ((60, 180), "E"),
    ((60, 179.9), "D"),
    # lower E: REF >= 180 and BGM <= 70
    ((300, 69.9), "E"),
    ((300, 70), "D"),
    ((181, 40), "E"),
    ((180, 70), "E"),
    ((180, 70.5), "B"),
    # D: 70 <= BGM < 180 and REF < 70 (left) or REF > 240 (right)
    ((69, 100), "D"),
    ((70, 100), "B"),
    ((50, 70), "D"),
    ((50, 69.9), "A"),
    ((241, 100), "D"),
    ((240, 100), "B"),
    ((300, 179.9), "D"),
    ((300, 180), "B"),
    # lower C: 130 <= REF <= 180 and BGM < 1.4 (REF - 130); overrides E at REF = 180
    ((170, 55.9), "C"),
    ((170, 56), "B"),
    ((131, 1), "C"),
    ((130, 0), "B"),
    ((180, 69.9), "C"),
    ((180.5, 69.9), "E"),
    ((129.9, 0), "B"),
    # upper C: REF > 70 and BGM > 180 and BGM > REF + 110
    ((100, 210.1), "C"),
    ((100, 210), "B"),
    ((71, 181.5), "C"),
    ((71, 181), "B"),
    ((70, 181.5), "E"),
    # A: |BGM - REF| <= 0.2 REF, or both below 70
    ((100, 120), "A"),
    ((100, 120.1), "B"),
    ((100, 80), "A"),
    ((100, 79.9), "B"),
    ((300, 360), "A"),
    ((300, 360.1), "B"),
    ((300, 240), "A"),
    ((300, 239.9), "B"),
    ((69.9, 0), "A"),
    ((70, 0), "B"),
    ((0, 69.9), "A"),
    ((0, 70), "D"),
    ((60, 72), "A"),
    ((60, 72.1), "D"),
]


@pytest.mark.parametrize(("pair", "zone"), BOUNDARIES)
def test_boundaries(pair, zone):
    assert clarke_zone(*pair) == zone


def _zone_by_first_match(ref: float, bgm: float) -> str:
    """The rules in reverse order, first match wins (an independent scalar reading of Clarke et al.
    1987)."""
    if abs(bgm - ref) <= 0.2 * ref or (ref < 70 and bgm < 70):
        return "A"
    if (130 <= ref <= 180 and bgm < 1.4 * (ref - 130)) or (
        ref > 70 and bgm > 180 and bgm > ref + 110
    ):
        return "C"
    if 70 <= bgm < 180 and (ref < 70 or ref > 240):
        return "D"
    if (ref <= 70 and bgm >= 180) or (ref >= 180 and bgm <= 70):
        return "E"
    return "B"


def test_vectorised_matches_scalar_rules_on_random_pairs():
    rng = np.random.default_rng(0)
    pairs = np.vstack([rng.uniform(0, 600, (3000, 2)), rng.integers(0, 601, (3000, 2))])
    expected = [_zone_by_first_match(r, b) for r, b in pairs]
    assert clarke_zone(pairs[:, 0], pairs[:, 1]).tolist() == expected


def test_shape_broadcast_and_bad_values():
    assert clarke_zone(np.full((2, 3), 100.0), 100).shape == (2, 3)
    assert clarke_zone(100, [100, 300]).tolist() == ["A", "C"]
    with pytest.raises(ValueError, match="row 1"):
        clarke_zone([100, np.nan], [100, 100])


def test_drawn_lines_separate_different_zones():
    from ranking_core.grids import zone_polylines

    for name, line in zone_polylines("clarke").items():
        for a, b in itertools.pairwise(line):
            mid, d = (a + b) / 2, b - a
            normal = np.array([-d[1], d[0]]) / np.hypot(*d) * 0.5
            one, other = clarke_zone(*(mid + normal)), clarke_zone(*(mid - normal))
            assert one != other, (name, mid)
