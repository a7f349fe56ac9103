"""Collaborative-filtering experiments of the papers (Cortes et al. 2007, §4, Kriukova et al. 2014,
§4.2, Duchi et al. 2010, §4): rating data, a synthetic generator, the per-user ranking protocol and
its parallel runner."""

from ranking_core.cf.data import (
    FORMATS,
    RatingMatrix,
    read_jester,
    read_jester_long,
    read_movielens_1m,
    read_movielens_100k,
    read_ratings,
)
from ranking_core.cf.pairs import PairsConfig, run_pairs
from ranking_core.cf.parallel import run_per_user
from ranking_core.cf.per_user import LEARNERS, PerUserConfig
from ranking_core.cf.synthetic import synthetic_ratings

__all__ = [
    "FORMATS",
    "LEARNERS",
    "PairsConfig",
    "PerUserConfig",
    "RatingMatrix",
    "read_jester",
    "read_jester_long",
    "read_movielens_1m",
    "read_movielens_100k",
    "read_ratings",
    "run_pairs",
    "run_per_user",
    "synthetic_ratings",
]
