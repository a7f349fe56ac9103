"""riskgrid's numerical core: regularized ranking, λ rules, metrics and clinical error grids.

No user interface lives here; the dashboard and the CLI call into this package.
"""

from ranking_core.filters import (
    IteratedLavrentiev,
    Landweber,
    Lavrentiev,
    Showalter,
    SpectralCutoff,
)
from ranking_core.kernels import GaussianKernel, LaplacianKernel, LinearKernel, PolynomialKernel
from ranking_core.pairwise_linear import PairwiseLinearRanker
from ranking_core.rankboost import RankBoost
from ranking_core.ranker import RegularizationPath, SpectralRanker, SpectralRegressor

__all__ = [
    "GaussianKernel",
    "IteratedLavrentiev",
    "Landweber",
    "LaplacianKernel",
    "Lavrentiev",
    "LinearKernel",
    "PairwiseLinearRanker",
    "PolynomialKernel",
    "RankBoost",
    "RegularizationPath",
    "Showalter",
    "SpectralCutoff",
    "SpectralRanker",
    "SpectralRegressor",
]
