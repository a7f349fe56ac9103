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

The names are imported on first use (PEP 562): the settings and their presets, labels and
registries load without NumPy (``riskgrid learn --help`` lists them at once); the fit, its plan
and its files load when first asked for.
"""

# ruff: noqa: F401 (the imports for type checkers re-export the names of _HOMES)

from __future__ import annotations

from typing import TYPE_CHECKING

from ranking_core.lazy import checked_homes, lazy_exports

if TYPE_CHECKING:  # the same names, for type checkers (exported at run time by _HOMES)
    from ranking_core.grids.files import grid_metadata, write_grid_files
    from ranking_core.grids.lattice import SCALES
    from ranking_core.lambda_rules import CRITERIA, RULES, VALIDATED_RULES
    from ranking_core.learn.fit import APRIORI_SIZES, ENGINES, learn_grid, learn_panel
    from ranking_core.learn.plan import (
        CHOLESKY_UP_TO,
        DENSE_UP_TO,
        MEMORY_BUDGET,
        METHOD_LABELS,
        ROBUST_LAM_STRIDE,
        FitPlan,
        fit_method,
        glucose_kernel,
        glucose_ranker,
        plan_fit,
    )
    from ranking_core.learn.result import (
        NO_RATER,
        LearnedGrid,
        PanelFit,
        panel_fit,
        settings_advice,
    )
    from ranking_core.learn.settings import (
        CRITERION_LABELS,
        DIAGONAL_ANCHORS,
        FILTER_LABELS,
        KERNEL_LABELS,
        KERNELS,
        METHODS,
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

# public name → the module that defines it
_HOMES = checked_homes(__name__)  # name → its module, from the TYPE_CHECKING imports
__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
