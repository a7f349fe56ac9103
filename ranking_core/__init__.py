"""riskgrid's numerical core: regularized ranking, λ rules, metrics and clinical error grids.

No user interface lives here; the dashboard and the CLI call into this package. The layout is
described in docs/ARCHITECTURE.md.
"""

from ranking_core.filters import (
    IteratedLavrentiev,
    Landweber,
    Lavrentiev,
    Showalter,
    SpectralCutoff,
)
from ranking_core.kernels import GaussianKernel, LaplacianKernel, LinearKernel, PolynomialKernel
from ranking_core.learners import LEARNERS
from ranking_core.learners.base import RegularizationPath
from ranking_core.learners.dorm import DORM
from ranking_core.learners.nystrom import NystromRanker
from ranking_core.learners.online import OnlineMPRank
from ranking_core.learners.pairwise_linear import PairwiseLinearRanker
from ranking_core.learners.preference import PreferenceRanker
from ranking_core.learners.rankboost import RankBoost
from ranking_core.learners.spectral import SpectralRanker, SpectralRegressor
from ranking_core.learners.svrank import SVRank
from ranking_core.selection import Choice, choose

__all__ = [
    "DORM",
    "LEARNERS",
    "Choice",
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
    "choose",
]
