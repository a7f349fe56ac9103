"""Rating panels: simulation, robust learning (outliers, rater model, coarse answers), the panel
report, uncertainty of a learned grid and survey planning.

The names are imported on first use (PEP 562): the planning methods and their labels
(:mod:`~ranking_core.panels.planning`) load without NumPy, for the command line's help.
"""

# ruff: noqa: F401 (the imports for type checkers re-export the names of _HOMES)

from __future__ import annotations

from typing import TYPE_CHECKING

from ranking_core.lazy import checked_homes, lazy_exports

if TYPE_CHECKING:  # the same names, for type checkers (exported at run time by _HOMES)
    from ranking_core.learners.robust import RobustRanker, rating_step
    from ranking_core.panels.design import plan_pairs, start_design, write_rating_form
    from ranking_core.panels.planning import (
        DEFAULT_PLAN_METHOD,
        DEFAULT_RANGE,
        PLAN_METHOD_LABELS,
        PLAN_METHODS,
    )
    from ranking_core.panels.report import PanelReport, panel_report
    from ranking_core.panels.simulation import (
        DESIGNS,
        PANEL_MODELS,
        RATER_EFFECT_PANELS,
        SEG_OUTLIER_FRACTION,
        parkes_surface,
        simulate_panel,
        simulate_rater_effects_panel,
    )
    from ranking_core.panels.uncertainty import RiskBand, risk_band

# public name → the module that defines it
_HOMES = checked_homes(__name__)  # name → its module, from the TYPE_CHECKING imports
__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
