"""The registry of error grids: every grid by name, with its zones, labels, colours and paper.

Two kinds of grid:

* :class:`ZoneGrid` — zones defined by published boundary lines or rules (Clarke, Parkes type 1
  and 2, DTS); the zone of a pair needs only the pair.
* :class:`RiskGrid` — a risk surface on the 0..600 mg/dL lattice (SEG, a learned grid) whose zones
  are the grades of the one risk scale (:mod:`ranking_core.grids.risk_scale`); the zone of a pair
  needs the surface.

Each grid lives in its own module of :mod:`ranking_core.grids`, which declares a tuple ``GRIDS``;
the registry collects every such tuple in the package. Adding a grid is one module (plus its
test): nothing else to edit.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, TypeVar, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ranking_core.grids.lattice import GLUCOSE_MAX
from ranking_core.grids.risk_scale import (
    RISK_GRADE_RANGES,
    RISK_GRADES,
    risk_colour,
    risk_grade,
)

__all__ = [
    "ZONE_COLOURS",
    "ErrorGrid",
    "RiskGrid",
    "UnknownGridError",
    "ZoneGrid",
    "get_grid",
    "grid_names",
    "grids",
    "report_grids",
]

# zone k (A = 0 … E = 4) in the colour of risk k on the one risk scale
ZONE_COLOURS = tuple(risk_colour(k) for k in range(5))


class UnknownGridError(ValueError):
    """No grid of that name; the message lists the registered names."""


@dataclass(frozen=True, kw_only=True)
class ErrorGrid:
    """What every registered grid declares.

    Attributes
    ----------
    name : lookup key (``"dts"``, ``"parkes-type1"``, …).
    title : human name (``"DTS Error Grid"``).
    citation : the paper it comes from.
    purpose : one sentence on what the grid is for (shown beside its counts).
    zones : zone labels, least to most severe.
    meanings : one short clinical meaning per zone.
    colours : one '#RRGGBB' per zone.
    order : place in listings (reports show grids in this order).
    family : the key under which reports list the grid ("parkes" for both Parkes grids; the
        name otherwise); ``diabetes_type`` picks one grid of a family (None: the only one).
    """

    name: str
    title: str
    citation: str
    purpose: str
    zones: tuple[str, ...]
    meanings: tuple[str, ...]
    colours: tuple[str, ...]
    order: int
    family: str = ""
    diabetes_type: int | None = None

    def __post_init__(self) -> None:
        if not self.family:
            object.__setattr__(self, "family", self.name)


@dataclass(frozen=True, kw_only=True)
class ZoneGrid(ErrorGrid):
    """A grid whose zones are fixed by published lines or rules.

    ``rule(ref, bgm)`` gives zone letters for (REF, BGM) in mg/dL; ``boundaries()`` gives the
    drawn zone lines {"B upper": (k, 2) array of (REF, BGM) vertices, …}.
    """

    rule: Callable[[ArrayLike, ArrayLike], NDArray[np.str_]] = field(repr=False)
    boundaries: Callable[[], dict[str, NDArray[np.float64]]] = field(repr=False)

    def zone(self, ref: ArrayLike, bgm: ArrayLike) -> NDArray[np.str_]:
        """Zone letter of each (REF, BGM) pair in mg/dL (broadcast shape); O(n)."""
        return self.rule(ref, bgm)

    def zone_index(self, ref: ArrayLike, bgm: ArrayLike) -> NDArray[np.intp]:
        """Zone index 0 … len(zones) − 1 of each pair (A = 0)."""
        return np.searchsorted(np.array(self.zones), self.zone(ref, bgm))

    def lines(self) -> dict[str, NDArray[np.float64]]:
        """The zone boundary lines, (REF, BGM) vertices in mg/dL, within 0..600."""
        return self.boundaries()


@dataclass(frozen=True, kw_only=True)
class RiskGrid(ErrorGrid):
    """A grid given by a risk surface on the 601 × 601 mg/dL lattice; zones are the risk grades.

    ``needs`` names the surface (for messages).
    """

    needs: str = ""

    def risk(self, surface: ArrayLike, ref: ArrayLike, bgm: ArrayLike) -> NDArray[np.float64]:
        """|risk| of each (REF, BGM) pair (rounded to whole mg/dL) on ``surface``: a (601, 601)
        array indexed [REF, BGM] or an object with an ``absolute`` one (a SEG table)."""
        values = np.asarray(getattr(surface, "absolute", surface), dtype=np.float64)
        size = GLUCOSE_MAX + 1
        if values.shape != (size, size):
            raise ValueError(
                f"{self.title}: the risk surface must have shape ({size}, {size}) "
                f"indexed [REF, BGM] in mg/dL; got {values.shape}"
            )
        r = np.rint(np.asarray(ref, dtype=np.float64))
        b = np.rint(np.asarray(bgm, dtype=np.float64))
        if np.any((r < 0) | (r > GLUCOSE_MAX) | (b < 0) | (b > GLUCOSE_MAX)):
            raise ValueError(f"{self.title}: REF and BGM must lie in 0..{GLUCOSE_MAX} mg/dL")
        return np.abs(values[r.astype(np.intp), b.astype(np.intp)])

    def zone_index(self, surface: ArrayLike, ref: ArrayLike, bgm: ArrayLike) -> NDArray[np.intp]:
        """Risk grade index 0..4 (A..E) of each pair on ``surface``."""
        return risk_grade(self.risk(surface, ref, bgm))


def risk_grid(
    name: str, title: str, citation: str, purpose: str, order: int, needs: str
) -> RiskGrid:
    """A :class:`RiskGrid` whose zones are the five grades of the one risk scale."""
    return RiskGrid(
        name=name,
        title=title,
        citation=citation,
        purpose=purpose,
        zones=RISK_GRADES,
        meanings=tuple(f"risk {r}" for r in RISK_GRADE_RANGES),
        colours=tuple(risk_colour(k) for k in range(5)),
        order=order,
        needs=needs,
    )


@lru_cache(maxsize=1)
def _registry() -> dict[str, ErrorGrid]:
    package = importlib.import_module("ranking_core.grids")
    found: dict[str, ErrorGrid] = {}
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for grid in getattr(module, "GRIDS", ()):
            if grid.name in found:
                raise RuntimeError(f"two grids are registered as {grid.name!r}")
            found[grid.name] = grid
    return dict(sorted(found.items(), key=lambda item: item[1].order))


def grids(kind: type[ErrorGrid] = ErrorGrid) -> tuple[ErrorGrid, ...]:
    """The registered grids of a kind (:class:`ZoneGrid`, :class:`RiskGrid` or all), in order."""
    return tuple(g for g in _registry().values() if isinstance(g, kind))


def grid_names(kind: type[ErrorGrid] = ErrorGrid) -> tuple[str, ...]:
    """Names of the registered grids of a kind, in order."""
    return tuple(g.name for g in grids(kind))


GridKind = TypeVar("GridKind", bound=ErrorGrid)


@overload
def report_grids(diabetes_type: int = 1) -> dict[str, ZoneGrid]: ...
@overload
def report_grids(diabetes_type: int, kind: type[GridKind]) -> dict[str, GridKind]: ...
def report_grids(
    diabetes_type: int = 1, kind: type[ErrorGrid] = ZoneGrid
) -> dict[str, Any]:  # the overloads above type the result by ``kind``
    """One grid per family, by family ("dts", "clarke", "parkes"), in order: where a family has
    one grid per diabetes type (Parkes), the grid for ``diabetes_type``."""
    return {
        g.family: g
        for g in grids(kind)
        if g.diabetes_type is None or g.diabetes_type == diabetes_type
    }


@overload
def get_grid(name: str) -> ErrorGrid: ...
@overload
def get_grid(name: str, kind: type[GridKind]) -> GridKind: ...
def get_grid(name: str, kind: type[ErrorGrid] = ErrorGrid) -> ErrorGrid:
    """The grid registered under ``name``; :class:`UnknownGridError` lists the choices when there
    is none (of that kind)."""
    grid = _registry().get(name)
    if not isinstance(grid, kind):
        what = "zone grid" if kind is ZoneGrid else "risk grid" if kind is RiskGrid else "grid"
        raise UnknownGridError(
            f"unknown {what} {name!r}; choose one of {', '.join(grid_names(kind))}"
        )
    return grid
