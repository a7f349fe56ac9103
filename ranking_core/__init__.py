"""riskgrid's numerical core: regularized ranking, λ rules, metrics and clinical error grids.

No user interface lives here; the dashboard and the CLI call into this package. The layout is
described in docs/ARCHITECTURE.md. The names below are imported on first use (PEP 562), so that
``import ranking_core`` (and ``riskgrid --help``) does not load NumPy, SciPy or scikit-learn.
"""

from __future__ import annotations

from ranking_core.lazy import lazy_exports

# public name → the module that defines it
_EXPORTS = {
    "LEARNERS": "ranking_core.learners",
    "GaussianKernel": "ranking_core.kernels.definitions",
    "LaplacianKernel": "ranking_core.kernels.definitions",
    "LinearKernel": "ranking_core.kernels.definitions",
    "PolynomialKernel": "ranking_core.kernels.definitions",
    "IteratedLavrentiev": "ranking_core.filters.definitions",
    "Landweber": "ranking_core.filters.definitions",
    "Lavrentiev": "ranking_core.filters.definitions",
    "NuMethod": "ranking_core.filters.definitions",
    "Showalter": "ranking_core.filters.definitions",
    "SpectralCutoff": "ranking_core.filters.definitions",
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
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
