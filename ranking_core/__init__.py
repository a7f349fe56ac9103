"""riskgrid's numerical core: regularized ranking, λ rules, metrics and clinical error grids.

No user interface lives here; the dashboard and the CLI call into this package. The layout is
described in docs/ARCHITECTURE.md. The names below are imported on first use (PEP 562), so that
``import ranking_core`` (and ``riskgrid --help``) does not load NumPy, SciPy or scikit-learn.
"""

from __future__ import annotations

import importlib

# public name → the module that defines it
_EXPORTS = {
    "LEARNERS": "ranking_core.learners",
    "GaussianKernel": "ranking_core.kernels",
    "LaplacianKernel": "ranking_core.kernels",
    "LinearKernel": "ranking_core.kernels",
    "PolynomialKernel": "ranking_core.kernels",
    "IteratedLavrentiev": "ranking_core.filters",
    "Landweber": "ranking_core.filters",
    "Lavrentiev": "ranking_core.filters",
    "NuMethod": "ranking_core.filters",
    "Showalter": "ranking_core.filters",
    "SpectralCutoff": "ranking_core.filters",
    "RegularizationPath": "ranking_core.learners.base",
    "DORM": "ranking_core.learners.dorm",
    "NystromRanker": "ranking_core.learners.nystrom",
    "OnlineMPRank": "ranking_core.learners.online",
    "PairwiseLinearRanker": "ranking_core.learners.pairwise_linear",
    "PreferenceRanker": "ranking_core.learners.preference",
    "RankBoost": "ranking_core.learners.rankboost",
    "SpectralRanker": "ranking_core.learners.spectral",
    "SpectralRegressor": "ranking_core.learners.spectral",
    "SVRank": "ranking_core.learners.svrank",
    "Choice": "ranking_core.selection",
    "choose": "ranking_core.selection",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'ranking_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
