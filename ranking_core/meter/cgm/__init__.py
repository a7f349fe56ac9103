"""Analyses of a CGM study beyond point accuracy: trend agreement and clinical trend concurrence
(:mod:`~ranking_core.meter.cgm.trend`), CG-EGA (:mod:`~ranking_core.meter.cgm.cg_ega`) and
CG-DIVA (:mod:`~ranking_core.meter.cgm.cg_diva`)."""
