"""The one way a grid is learned: settings → plan → fit → result.

=================  ==============================================================================
``settings.py``    :class:`LearnSettings` (the one settings type), :func:`with_robust` (the one
                   robust-learning policy of every front end), :data:`PRESETS` (best, robust,
                   paper), the settings' labels and :func:`describe_settings`
``plan.py``        :class:`FitPlan` from :func:`plan_fit`: method, engine, the kernel and ranker
                   built once, the candidate λ, the memory limits (:func:`fit_method` is its
                   method)
``training.py``    ratings → training set: count check, rater codes, diagonal points, checksum,
                   :func:`default_recipe` (robust for a rater panel)
``fit.py``         :func:`learn_grid` (a table of engines, :data:`ENGINES`) and
                   :func:`learn_panel`
``result.py``      :class:`LearnedGrid`, :class:`PanelFit`, :func:`settings_advice`
=================  ==============================================================================

The files of a learned grid are written by :func:`ranking_core.grids.files.write_grid_files`
(``grid.json``: :func:`~ranking_core.grids.files.grid_metadata`), its band's by
:func:`ranking_core.panels.uncertainty.write_band_files`; both are re-exported here, as are the
registries the settings are checked against (:data:`RULES`, :data:`CRITERIA`, …), so that
``from ranking_core.learn import X`` serves every front end.
"""

from __future__ import annotations

from ranking_core.grids.coordinates import SCALES
from ranking_core.grids.files import grid_metadata, write_grid_files
from ranking_core.learn.fit import APRIORI_SIZES, ENGINES, learn_grid, learn_panel
from ranking_core.learn.plan import (
    CHOLESKY_UP_TO,
    DENSE_UP_TO,
    MEMORY_BUDGET,
    METHOD_LABELS,
    METHODS,
    ROBUST_LAM_STRIDE,
    FitPlan,
    fit_method,
    glucose_kernel,
    glucose_ranker,
    plan_fit,
)
from ranking_core.learn.result import NO_RATER, LearnedGrid, PanelFit, panel_fit, settings_advice
from ranking_core.learn.settings import (
    CRITERION_LABELS,
    DIAGONAL_ANCHORS,
    FILTER_LABELS,
    KERNEL_LABELS,
    KERNELS,
    PRESET_LABELS,
    PRESETS,
    ROBUST_LABELS,
    RULE_LABELS,
    LearnSettings,
    describe_settings,
    preset_name,
    robust_settings,
    with_robust,
)
from ranking_core.learn.training import (
    MIN_RATINGS,
    check_rating_count,
    default_recipe,
    panel_traits,
    rating_positions,
    ratings_checksum,
    with_diagonal_anchors,
)
from ranking_core.panels.uncertainty import write_band_files
from ranking_core.selection import CRITERIA, RULES, VALIDATED_RULES

__all__ = [
    "APRIORI_SIZES",
    "CHOLESKY_UP_TO",
    "CRITERIA",
    "CRITERION_LABELS",
    "DENSE_UP_TO",
    "DIAGONAL_ANCHORS",
    "ENGINES",
    "FILTER_LABELS",
    "KERNELS",
    "KERNEL_LABELS",
    "MEMORY_BUDGET",
    "METHODS",
    "METHOD_LABELS",
    "MIN_RATINGS",
    "NO_RATER",
    "PRESETS",
    "PRESET_LABELS",
    "ROBUST_LABELS",
    "ROBUST_LAM_STRIDE",
    "RULES",
    "RULE_LABELS",
    "SCALES",
    "VALIDATED_RULES",
    "FitPlan",
    "LearnSettings",
    "LearnedGrid",
    "PanelFit",
    "check_rating_count",
    "default_recipe",
    "describe_settings",
    "fit_method",
    "glucose_kernel",
    "glucose_ranker",
    "grid_metadata",
    "learn_grid",
    "learn_panel",
    "panel_fit",
    "panel_traits",
    "plan_fit",
    "preset_name",
    "rating_positions",
    "ratings_checksum",
    "robust_settings",
    "settings_advice",
    "with_diagonal_anchors",
    "with_robust",
    "write_band_files",
    "write_grid_files",
]
