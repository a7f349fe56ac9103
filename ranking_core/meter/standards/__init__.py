"""Judging pairs: the registry of acceptance standards
(:mod:`~ranking_core.meter.standards.registry`), counts, shares and verdicts per criterion
(:mod:`~ranking_core.meter.standards.acceptance`), lower confidence bounds
(:mod:`~ranking_core.meter.standards.bounds`), from read pairs to verdicts
(:mod:`~ranking_core.meter.standards.verdicts`), and planning a study
(:mod:`~ranking_core.meter.standards.study_plan`)."""
