"""Parkes error grid zones: both sides of every boundary segment, for type 1 and type 2.

Each case is the midpoint of a published polyline segment (computed by hand from the vertices
of Parkes et al. 2000). Half a mg/dL beyond an upper line (above) or a lower line (to the right)
lies in the line's zone; half a mg/dL inside lies in the zone below it.
"""

from __future__ import annotations

import numpy as np
import pytest

from ranking_core.grids.parkes import parkes_zone

PREVIOUS = {"B": "A", "C": "B", "D": "C", "E": "D"}

# (diabetes type, zone, side, midpoint (REF, BGM) in mg/dL)
MIDPOINTS = [
    (1, "B", "upper", (15, 50)),
    (1, "B", "upper", (85, 110)),
    (1, "B", "upper", (210, 275)),
    (1, "B", "upper", (355, 465)),
    (1, "B", "lower", (50, 15)),
    (1, "B", "lower", (110, 87.5)),
    (1, "B", "lower", (277.5, 222.5)),
    (1, "B", "lower", (467.5, 375)),
    (1, "C", "upper", (15, 60)),
    (1, "C", "upper", (40, 70)),
    (1, "C", "upper", (60, 95)),
    (1, "C", "upper", (165, 330)),
    (1, "C", "lower", (120, 15)),
    (1, "C", "lower", (190, 80)),
    (1, "C", "lower", (405, 190)),
    (1, "D", "upper", (12.5, 100)),
    (1, "D", "upper", (37.5, 112.5)),
    (1, "D", "upper", (65, 170)),
    (1, "D", "upper", (102.5, 382.5)),
    (1, "D", "lower", (250, 20)),
    (1, "D", "lower", (400, 95)),
    (1, "E", "upper", (17.5, 152.5)),
    (1, "E", "upper", (42.5, 352.5)),
    (2, "B", "upper", (15, 50)),
    (2, "B", "upper", (130, 190)),
    (2, "B", "upper", (335, 440)),
    (2, "B", "lower", (50, 15)),
    (2, "B", "lower", (70, 55)),
    (2, "B", "lower", (210, 155)),
    (2, "B", "lower", (440, 340)),
    (2, "C", "upper", (15, 60)),
    (2, "C", "upper", (155, 305)),
    (2, "C", "lower", (175, 65)),
    (2, "C", "lower", (405, 190)),
    (2, "D", "upper", (12.5, 80)),
    (2, "D", "upper", (30, 85)),
    (2, "D", "upper", (80, 320)),
    (2, "D", "lower", (250, 20)),
    (2, "D", "lower", (330, 75)),
    (2, "D", "lower", (480, 135)),
    (2, "E", "upper", (17.5, 200)),
    (2, "E", "upper", (42.5, 375)),
]


@pytest.mark.parametrize(("dtype", "zone", "side", "mid"), MIDPOINTS)
def test_both_sides_of_every_segment(dtype, zone, side, mid):
    x, y = mid
    out, inside = ((x, y + 0.5), (x, y - 0.5)) if side == "upper" else ((x + 0.5, y), (x - 0.5, y))
    assert parkes_zone(*out, diabetes_type=dtype) == zone
    assert parkes_zone(*inside, diabetes_type=dtype) == PREVIOUS[zone]
    # a point exactly on a line belongs to the inner (less severe) zone
    assert parkes_zone(x, y, diabetes_type=dtype) == PREVIOUS[zone]


# last segments continued along their slope to the lattice edge (hand-computed crossings)
EXTENSIONS = [
    # type 1 B upper (280,380)-(430,550): at REF 470, BGM = 550 + 40·170/150 = 595.33
    (1, (470, 595), "A"),
    (1, (470, 596), "B"),
    # type 1 B lower (385,300)-(550,450): at BGM 480, REF = 550 + 30·165/150 = 583
    (1, (582.5, 480), "A"),
    (1, (583.5, 480), "B"),
    # type 1 D lower (250,40)-(550,150): at BGM 160, REF = 550 + 10·300/110 = 577.27
    (1, (577, 160), "C"),
    (1, (577.5, 160), "D"),
    # type 1 E upper (35,155)-(50,550): at REF 51, BGM = 550 + 395/15 = 576.33
    (1, (51, 576), "D"),
    (1, (51, 577), "E"),
    # type 2 B upper (230,330)-(440,550): at REF 480, BGM = 550 + 40·220/210 = 591.90
    (2, (480, 591.5), "A"),
    (2, (480, 592.5), "B"),
    # type 2 D lower (410,110)-(550,160): at BGM 175, REF = 550 + 15·140/50 = 592
    (2, (591.5, 175), "C"),
    (2, (592.5, 175), "D"),
]


@pytest.mark.parametrize(("dtype", "pair", "zone"), EXTENSIONS)
def test_last_segments_extend_to_lattice_edge(dtype, pair, zone):
    assert parkes_zone(*pair, diabetes_type=dtype) == zone


def test_type1_lower_d_line_is_not_bent_at_410_110():
    # type 1 D lower runs straight from (250,40) to (550,150): at BGM 110 it is at REF 440.9;
    # the type-2 line has a vertex at (410,110)
    assert parkes_zone([420, 441], [110, 110], diabetes_type=1).tolist() == ["C", "D"]
    assert parkes_zone(420, 110, diabetes_type=2) == "D"


def test_corners_and_no_lower_e_zone():
    corners = np.array([[0, 0], [600, 600], [0, 600], [600, 0]])
    for dtype in (1, 2):
        zones = parkes_zone(corners[:, 0], corners[:, 1], diabetes_type=dtype)
        assert zones.tolist() == ["A", "A", "E", "D"]


def test_zones_are_nested_on_the_lattice():
    # moving away from the diagonal along a row or column never lowers the zone
    axis = np.arange(0, 601, 3.0)
    ref, bgm = np.meshgrid(axis, axis, indexing="ij")
    for dtype in (1, 2):
        rank = np.searchsorted(np.array(list("ABCDE")), parkes_zone(ref, bgm, dtype))
        upper = np.where(bgm >= ref, rank, 0)
        lower = np.where(bgm <= ref, rank, 0)
        assert np.all(np.diff(upper, axis=1)[bgm[:, 1:] > ref[:, 1:]] >= 0)
        assert np.all(np.diff(lower, axis=0)[ref[1:] > bgm[1:]] >= 0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="diabetes_type"):
        parkes_zone(100, 100, diabetes_type=3)
    with pytest.raises(ValueError, match="row 0"):
        parkes_zone([np.inf], [100])


def test_zone_polylines_follow_the_zone_boundaries():
    from ranking_core.grids import zone_polylines

    for dtype in (1, 2):
        lines = zone_polylines(f"parkes-type{dtype}")
        assert "E lower" not in lines
        # type 1 B upper: published vertices, then (430,550) continued to BGM 600 at REF 474.1
        if dtype == 1:
            np.testing.assert_allclose(lines["B upper"][-1], [430 + 50 * 150 / 170, 600])
        for name, line in lines.items():
            assert line.min() >= 0 and line.max() <= 600 + 1e-9
            assert np.isclose(line[-1], 600).any(), name
            # half a mg/dL off every vertex, on the outer side, the pair is in the line's zone
            zone = name[0]
            shift = np.array([0, 0.5]) if name.endswith("upper") else np.array([0.5, 0])
            outer = line[1:-1] + shift
            assert (parkes_zone(outer[:, 0], outer[:, 1], dtype) == zone).all(), name
    clarke = zone_polylines("clarke")
    assert set(clarke) >= {"A upper", "A lower", "C upper", "C lower", "E upper", "E lower"}
    with pytest.raises(ValueError, match="clarke"):
        zone_polylines("seg")
