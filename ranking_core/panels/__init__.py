"""Rating panels: simulation, robust learning (outliers, rater model, coarse answers), the panel
report, uncertainty of a learned grid and survey planning."""

from ranking_core.learners.robust import RobustRanker, rating_step
from ranking_core.panels.design import PLAN_METHODS, plan_pairs, start_design, write_rating_form
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

__all__ = [
    "DESIGNS",
    "PANEL_MODELS",
    "PLAN_METHODS",
    "RATER_EFFECT_PANELS",
    "SEG_OUTLIER_FRACTION",
    "PanelReport",
    "RiskBand",
    "RobustRanker",
    "panel_report",
    "parkes_surface",
    "plan_pairs",
    "rating_step",
    "risk_band",
    "simulate_panel",
    "simulate_rater_effects_panel",
    "start_design",
    "write_rating_form",
]
