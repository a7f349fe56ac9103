"""The registry of error grids and the one risk scale."""

from __future__ import annotations

import numpy as np
import pytest

from ranking_core.grids import (
    RiskGrid,
    SEGTable,
    UnknownGridError,
    ZoneGrid,
    clarke_zone,
    get_grid,
    grid_names,
    parkes_zone,
    zone_grid,
)
from ranking_core.grids.registry import report_grids
from ranking_core.grids.risk_scale import (
    RISK_CATEGORIES,
    RISK_COLOR_STOPS,
    risk_category,
    risk_colour,
    risk_grade,
)


def test_every_grid_is_registered_once_with_its_paper():
    assert grid_names() == ("seg", "dts", "clarke", "parkes-type1", "parkes-type2", "learned")
    assert grid_names(ZoneGrid) == ("dts", "clarke", "parkes-type1", "parkes-type2")
    assert grid_names(RiskGrid) == ("seg", "learned")
    years = {
        "seg": "2014",
        "dts": "2024",
        "clarke": "1987",
        "parkes-type1": "2000",
        "learned": "2014",
    }
    for name, year in years.items():
        grid = get_grid(name)
        assert year in grid.citation and grid.purpose.endswith(".")
        assert len(grid.zones) == len(grid.meanings) == len(grid.colours) == 5


def test_unknown_names_are_refused_with_the_choices():
    with pytest.raises(UnknownGridError, match="dts, clarke, parkes-type1, parkes-type2"):
        zone_grid("parkes-type3")
    with pytest.raises(UnknownGridError, match="seg, dts, clarke"):
        get_grid("consensus")
    with pytest.raises(UnknownGridError, match="choose one of dts"):
        zone_grid("seg")  # a risk grid has no fixed zones


def test_zone_lattices_follow_each_grid_rule():
    rng = np.random.default_rng(5)
    ref, bgm = rng.integers(0, 601, (2, 500))
    for name, rule in (
        ("clarke", clarke_zone),
        ("parkes-type1", lambda r, b: parkes_zone(r, b, 1)),
        ("parkes-type2", lambda r, b: parkes_zone(r, b, 2)),
    ):
        codes = zone_grid(name)[ref, bgm]
        assert codes.tolist() == ["ABCDE".index(z) for z in rule(ref, bgm)]
        assert not zone_grid(name).flags.writeable


def test_report_grids_pick_one_parkes_type():
    assert {f: g.name for f, g in report_grids(2).items()} == {
        "dts": "dts",
        "clarke": "clarke",
        "parkes": "parkes-type2",
    }


def test_risk_grids_grade_a_surface():
    surface = np.zeros((601, 601))
    surface[100, 100:105] = [0.49, -0.5, 1.5, -3.49, 3.5]
    seg = get_grid("seg")
    assert seg.zone_index(SEGTable(surface), 100, np.arange(100, 105)).tolist() == [0, 1, 2, 3, 4]
    assert get_grid("learned").risk(surface, 100.4, 101.2) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="601"):
        seg.risk(np.zeros((3, 3)), 1, 1)


def test_one_scale_grades_categories_and_colours():
    values = np.array([-0.1, 0.0, 0.5, 0.5000001, 1.0, 1.5, 2.5, 3.5, 3.5000001])
    assert risk_grade(values).tolist() == [0, 0, 1, 1, 1, 2, 3, 4, 4]
    assert risk_category(values).tolist() == [0, 0, 0, 1, 1, 2, 4, 6, 7]
    assert RISK_CATEGORIES[1] == "Slight, lower" and len(RISK_CATEGORIES) == 8
    for risk, colour in RISK_COLOR_STOPS:
        assert risk_colour(risk) == colour
    assert risk_colour(-1) == "#00A500" and risk_colour(9) == "#800000"
    assert risk_colour(2.75 + (4 - 2.75) / 2) == "#C00000"  # halfway FF0000 → 800000
