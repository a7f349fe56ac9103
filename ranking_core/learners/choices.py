"""The names some learners' parameters take, importable without NumPy: the settings of a learned
grid (:class:`~ranking_core.learn.LearnSettings`), the command line's help and the learners
themselves read one tuple each.

* :data:`ROBUST_LOSSES` — ``RobustRanker(loss=…)`` (:mod:`~ranking_core.learners.robust`);
* :data:`PAIRWISE_LOSSES` — ``PairwiseLinearRanker(loss=…)``
  (:mod:`~ranking_core.learners.pairwise_linear`, Duchi et al. 2010);
* :data:`DIRECT_METHODS` — how ``fast_kfold_lambda`` computes the k-fold rule
  (:mod:`~ranking_core.learners.direct`).
"""

from __future__ import annotations

__all__ = ["DIRECT_METHODS", "PAIRWISE_LOSSES", "ROBUST_LOSSES"]

ROBUST_LOSSES = ("squared", "huber", "tukey")
PAIRWISE_LOSSES = ("value-linear", "hinge", "logistic")
DIRECT_METHODS = ("auto", "exact", "one-fold", "lattice")
