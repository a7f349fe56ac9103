"""How the report's tables and figures look, below both the report's sections and its documents:
tables for readers (:mod:`~ranking_core.meter.drawing.display`: human headers, units, rounding,
verdicts) and matplotlib plots (:mod:`~ranking_core.meter.drawing.grid_plots`: error grids,
CG-DIVA)."""
