"""Rating panels: simulation, robust learning (outliers, rater model, coarse answers), the panel
report, uncertainty of a learned grid and survey planning."""

from ranking_core.panels.robust import RobustRanker, rating_step
from ranking_core.panels.simulation import (
    DESIGNS,
    PANEL_MODELS,
    SEG_OUTLIER_FRACTION,
    parkes_surface,
    simulate_panel,
)

__all__ = [
    "DESIGNS",
    "PANEL_MODELS",
    "SEG_OUTLIER_FRACTION",
    "RobustRanker",
    "parkes_surface",
    "rating_step",
    "simulate_panel",
]
