"""The registry of error grids and the one risk scale."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

import numpy as np
import pytest

from ranking_core.grids import (
    RiskGrid,
    SEGTable,
    UnknownGridError,
    ZoneGrid,
    clarke_zone,
    dts_zone,
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


def declared_grids() -> list:
    """Every grid a module of ranking_core.grids declares in its GRIDS tuple."""
    package = importlib.import_module("ranking_core.grids")
    return [
        grid
        for info in pkgutil.iter_modules(package.__path__)
        for grid in getattr(importlib.import_module(f"ranking_core.grids.{info.name}"), "GRIDS", ())
    ]


def test_every_grid_is_registered_once_with_its_paper():
    declared = declared_grids()
    assert grid_names() == tuple(g.name for g in sorted(declared, key=lambda g: g.order))
    assert len(set(grid_names())) == len(declared)  # each declared grid once
    for kind in (ZoneGrid, RiskGrid):
        assert grid_names(kind) == tuple(n for n in grid_names() if isinstance(get_grid(n), kind))
    assert set(grid_names(ZoneGrid)) | set(grid_names(RiskGrid)) == set(grid_names())
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
    with pytest.raises(UnknownGridError, match=", ".join(grid_names(ZoneGrid))):
        zone_grid("parkes-type3")
    with pytest.raises(UnknownGridError, match=", ".join(grid_names())):
        get_grid("consensus")
    with pytest.raises(
        UnknownGridError, match=f"zone grid 'seg'; choose one of {grid_names(ZoneGrid)[0]}"
    ):
        zone_grid("seg")  # a risk grid has no fixed zones


def test_zone_lattices_follow_each_grid_rule_at_every_point():
    """The lattice (its rules read once per row and column) against the rule read pair by
    pair, at each of the 601 × 601 points."""
    ref, bgm = (axis.ravel() for axis in np.mgrid[0:601, 0:601])
    for name, rule in (
        ("clarke", clarke_zone),
        ("dts", dts_zone),
        ("parkes-type1", lambda r, b: parkes_zone(r, b, 1)),
        ("parkes-type2", lambda r, b: parkes_zone(r, b, 2)),
    ):
        codes = zone_grid(name)[ref, bgm]
        assert np.array_equal(codes, np.searchsorted(np.array(list("ABCDE")), rule(ref, bgm)))
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


THROWAWAY_GRID = '''
"""A throw-away zone grid: zones by |BGM − REF| in mg/dL (< 10, < 20, < 40, < 80, beyond)."""

import numpy as np

from ranking_core.grids.registry import ZONE_COLOURS, ZoneGrid


def band_zone(ref, bgm):
    gap = np.abs(np.asarray(bgm, dtype=float) - np.asarray(ref, dtype=float))
    return np.array(list("ABCDE"))[np.digitize(gap, [10, 20, 40, 80])]


GRIDS = (
    ZoneGrid(
        name="throwaway-band",
        title="Throw-away Band Grid",
        citation="none: a grid made up for a test",
        purpose="Checks that one module declaring GRIDS is all a new grid needs.",
        zones=tuple("ABCDE"),
        meanings=("< 10", "10-20", "20-40", "40-80", ">= 80"),
        colours=ZONE_COLOURS,
        order=99,
        rule=band_zone,
        boundaries=lambda: {},
    ),
)
'''


@pytest.fixture
def throwaway_grid(tmp_path, monkeypatch):
    """The recipe of docs/ARCHITECTURE.md ("How to add a zone grid"): one module of
    ranking_core.grids declaring GRIDS (here in a folder added to the package's path)."""
    import ranking_core.grids
    from ranking_core.grids import registry

    (tmp_path / "throwaway_band.py").write_text(THROWAWAY_GRID)
    path = [*ranking_core.grids.__path__, str(tmp_path)]
    monkeypatch.setattr(ranking_core.grids, "__path__", path)
    registry._registry.cache_clear()
    yield get_grid("throwaway-band")
    registry._registry.cache_clear()
    sys.modules.pop("ranking_core.grids.throwaway_band", None)


def test_a_zone_grid_module_is_all_a_new_grid_needs(throwaway_grid, tmp_path):
    from typer.testing import CliRunner

    from ranking_core.cli import app
    from ranking_core.meter import meter_report
    from ranking_core.meter.pairs.readings import read_pairs

    assert grid_names(ZoneGrid)[-1] == "throwaway-band" and "throwaway-band" in report_grids()
    sample = Path(__file__).resolve().parents[1] / "data" / "sample_meter_pairs.csv"
    pairs = read_pairs(sample)
    report = meter_report(pairs, None)
    gap = np.abs(pairs.frame["BGM"].to_numpy() - pairs.frame["REF"].to_numpy())
    expected = np.histogram(gap, bins=[0, 10, 20, 40, 80, np.inf])[0]  # brute force
    assert report.zones["throwaway-band"]["count"].tolist() == expected.tolist()
    result = CliRunner().invoke(app, ["meter-report", str(sample)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Throw-away Band Grid" in result.output
