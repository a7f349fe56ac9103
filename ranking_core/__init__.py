"""riskgrid's numerical core: regularized ranking, λ rules, metrics and clinical error grids.

No user interface lives here; the dashboard and the CLI call into this package.
"""

from ranking_core.dorm import DORM
from ranking_core.filters import (
    IteratedLavrentiev,
    Landweber,
    Lavrentiev,
    Showalter,
    SpectralCutoff,
)
from ranking_core.kernels import GaussianKernel, LaplacianKernel, LinearKernel, PolynomialKernel
from ranking_core.nystrom import NystromRanker
from ranking_core.online import OnlineMPRank
from ranking_core.pairwise_linear import PairwiseLinearRanker
from ranking_core.preference import PreferenceRanker
from ranking_core.rankboost import RankBoost
from ranking_core.ranker import RegularizationPath, SpectralRanker, SpectralRegressor
from ranking_core.svrank import SVRank

__all__ = [
    "DORM",
    "GaussianKernel",
    "IteratedLavrentiev",
    "Landweber",
    "LaplacianKernel",
    "Lavrentiev",
    "LinearKernel",
    "NystromRanker",
    "OnlineMPRank",
    "PairwiseLinearRanker",
    "PolynomialKernel",
    "PreferenceRanker",
    "RankBoost",
    "RegularizationPath",
    "SVRank",
    "Showalter",
    "SpectralCutoff",
    "SpectralRanker",
    "SpectralRegressor",
]
