"""Collaborative-filtering experiments of the papers (Cortes et al. 2007, §4, Kriukova et al. 2014,
§4.2, Duchi et al. 2010, §4): rating data, a synthetic generator, the per-user ranking protocol and
its parallel runner.

The names are imported on first use (PEP 562): the protocol's learners
(:mod:`~ranking_core.cf.protocol_learners`) load without NumPy, for the command line's help.
"""

# ruff: noqa: F401 (the imports for type checkers re-export the names of _HOMES)

from __future__ import annotations

from typing import TYPE_CHECKING

from ranking_core.lazy import checked_homes, lazy_exports

if TYPE_CHECKING:  # the same names, for type checkers (exported at run time by _HOMES)
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
    from ranking_core.cf.per_user import PerUserConfig
    from ranking_core.cf.protocol_learners import LEARNERS
    from ranking_core.cf.synthetic import synthetic_ratings

# public name → the module that defines it
_HOMES = checked_homes(__name__)  # name → its module, from the TYPE_CHECKING imports
__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
