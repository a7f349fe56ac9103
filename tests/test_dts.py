"""The DTS Error Grid (Klonoff et al. 2024) against the border coordinates the paper publishes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ranking_core.grids import dts_zone, zone_grid, zone_polylines

# Klonoff et al. 2024, Supplemental Table A1: (reference, measured) in mg/dL of each border; the
# zone named is the one on the border's outer side
UPPER = {
    "B": ((0, 60), (50, 60), (500, 600)),
    "C": ((0, 86.5), (50, 86.5), (347, 600)),
    "D": ((0, 124), (50, 124), (241, 600)),
    "E": ((0, 179), (50, 179), (167, 600)),
}
LOWER = {
    "B": ((62.5, 0), (62.5, 50), (600, 480)),
    "C": ((97.5, 0), (97.5, 50), (600, 307)),
    "D": ((153, 0), (153, 50), (600, 197)),
    "E": ((238, 0), (238, 50), (600, 126)),
}
INNER = {"B": "A", "C": "B", "D": "C", "E": "D"}
EPS = 0.05  # mg/dL


def _zone(ref: float, bgm: float) -> str:
    return str(dts_zone(ref, bgm))


def test_borders_meet_the_50_mg_dl_lines_where_the_paper_says():
    above = [bgm for (_, _), (r, bgm), _ in UPPER.values() if r == 50]
    below = [ref for (_, _), (ref, b), _ in LOWER.values() if b == 50]
    assert above == [60, 86.5, 124, 179] and below == [62.5, 97.5, 153, 238]


@pytest.mark.parametrize("zone", list(UPPER))
def test_every_vertex_just_inside_and_just_outside(zone):
    # above the diagonal the border is BGM = u(REF): a hair above is the outer zone
    for ref, bgm in UPPER[zone]:
        ref = min(max(ref, EPS), 600 - EPS)  # stay on the lattice at the corners
        u = np.interp(ref, *np.array(UPPER[zone]).T)
        assert _zone(ref, u + EPS) == zone, (zone, ref, bgm)
        assert _zone(ref, u - EPS) == INNER[zone], (zone, ref, bgm)
    # below the diagonal the border is REF = l(BGM): a hair to the right is the outer zone
    for ref, bgm in LOWER[zone]:
        bgm = min(max(bgm, EPS), 600 - EPS)
        low = np.array(LOWER[zone])
        l_ = np.interp(bgm, low[:, 1], low[:, 0])
        assert _zone(l_ + EPS, bgm) == zone, (zone, ref, bgm)
        assert _zone(l_ - EPS, bgm) == INNER[zone], (zone, ref, bgm)


def test_points_on_a_border_belong_to_the_less_severe_zone():
    assert _zone(40, 60) == "A" and _zone(40, 60.001) == "B"
    assert _zone(62.5, 20) == "A" and _zone(62.501, 20) == "B"
    assert _zone(500, 600) == "A" and _zone(238, 0) == "D" and _zone(238.01, 0) == "E"


def test_diagonal_and_extreme_corners():
    axis = np.arange(0, 601, 7.0)
    assert (dts_zone(axis, axis) == "A").all()
    assert _zone(0, 600) == "E" and _zone(600, 0) == "E" and _zone(20, 20) == "A"
    # the Supplemental figure's reading: a badly missed hypoglycaemia, REF 40 → BGM 150, is D
    assert _zone(40, 150) == "D" and _zone(100, 60) == "B"


def _by_hand(ref: float, bgm: float) -> str:
    """Zone by explicit straight-line tests on each published segment (no interpolation)."""
    zone = "A"
    for name in "BCDE":
        (_, _), (x1, y1), (x2, y2) = UPPER[name]
        u = y1 if ref <= x1 else y1 + (y2 - y1) / (x2 - x1) * (ref - x1)
        (_, _), (a1, b1), (a2, b2) = LOWER[name]
        l_ = a1 if bgm <= b1 else a1 + (a2 - a1) / (b2 - b1) * (bgm - b1)
        if bgm > u or ref > l_:
            zone = name
    return zone


def test_lattice_against_a_pair_by_pair_reading_of_the_table():
    rng = np.random.default_rng(11)
    ref = rng.integers(0, 601, 3000).astype(float)
    bgm = rng.integers(0, 601, 3000).astype(float)
    expected = [_by_hand(r, b) for r, b in zip(ref, bgm, strict=True)]
    assert dts_zone(ref, bgm).tolist() == expected
    codes = zone_grid("dts")
    assert codes[ref.astype(int), bgm.astype(int)].tolist() == ["ABCDE".index(z) for z in expected]


def test_drawn_lines_lie_on_the_published_borders_and_separate_zones():
    lines = zone_polylines("dts")
    assert set(lines) == {f"{z} {side}" for z in "BCDE" for side in ("upper", "lower")}
    for name, line in lines.items():
        published = np.array((UPPER if name.endswith("upper") else LOWER)[name[0]], dtype=float)
        np.testing.assert_allclose(line[: len(published)], published)
        for a, b in itertools.pairwise(line):
            for t in np.linspace(0.05, 0.95, 7):
                p = a + t * (b - a)
                d = b - a
                normal = np.array([-d[1], d[0]]) / np.hypot(*d) * 0.05
                sides = {_zone(*(p + normal)), _zone(*(p - normal))}
                assert sides == {name[0], INNER[name[0]]}, (name, p)
