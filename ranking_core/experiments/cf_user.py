"""One test reviewer's learned ranking against their own ratings (the per-user protocol of Kriukova
et al. 2014 §4.2 / Cortes et al. 2007, §4.1, for a single user, keeping the predictions for
display).

:mod:`ranking_core.cf.per_user` runs the protocol over hundreds of users and keeps only metrics;
this module keeps one user's held-out items, true ratings and predicted scores.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ranking_core.cf.data import RatingMatrix
from ranking_core.cf.per_user import PerUserConfig, reference_inputs
from ranking_core.filters import FILTERS
from ranking_core.learners.spectral import SpectralRanker
from ranking_core.metrics import ndcg, pairwise_misranking
from ranking_core.selection import choose, protocol_refits
from ranking_core.validation import one_of

__all__ = ["UserRanking", "user_ranking"]


@dataclass(frozen=True)
class UserRanking:
    """A test reviewer's held-out items with true ratings and predicted scores.

    Attributes
    ----------
    user, items : the reviewer's and the held-out items' ids (as in the data file).
    true, predicted : (n,) ratings (shifted as configured) and ranking scores.
    lam : λ chosen on the training half (its first half fits, its second chooses, eq. (1)).
    misranking : pairwise misranking (Kriukova et al. 2014, eq. (1)) on the held-out items.
    ndcg10 : NDCG@10 of the predicted order (Le & Smola 2007, §3.2, exponential gain).
    n_reference : reference reviewers forming the inputs.
    """

    user: int
    items: NDArray[np.int64]
    true: NDArray[np.float64]
    predicted: NDArray[np.float64]
    lam: float
    misranking: float
    ndcg10: float
    n_reference: int


def user_ranking(
    data: RatingMatrix,
    user: int,
    config: PerUserConfig,
    filter: str = "iterated-lavrentiev",
    repetition: int = 0,
) -> UserRanking:
    """Learn one reviewer's ranking as the per-user protocol does and keep the predictions.

    ``user`` is a row of ``data`` (0..n_users−1). Reference reviewers are drawn from
    ``config.group`` (the reviewer excluded); half the reviewer's items (random) train — their
    first half fits a :class:`~ranking_core.SpectralRanker` (Gaussian, ``config.gammas[0]``), the
    second chooses λ from ``config.lams()``; under ``config.protocol == "refit"`` the whole
    training half is then refitted at that λ — and the other half is predicted. O(m³) for m rated
    items. Random draws come from ``SeedSequence((config.seed, repetition, user))``.
    """
    one_of(filter, "filter", tuple(FILTERS), "user_ranking")
    rng = np.random.default_rng(np.random.SeedSequence((config.seed, repetition, int(user))))
    group = data.users_in(*config.group)
    group = group[group != user]
    if group.size < 2:
        raise ValueError(
            f"user_ranking: the reference group {config.group} holds fewer than two other users"
        )
    reference = rng.choice(group, size=min(config.n_reference, group.size), replace=False)
    items, y = data.user_ratings(int(user))
    y = y + config.shift
    if y.size < 8 or np.ptp(y) == 0:
        raise ValueError(
            f"user_ranking: user row {user} has {y.size} ratings "
            f"({'all equal' if y.size and np.ptp(y) == 0 else 'too few'}); "
            "need at least 8 with two different values"
        )
    X = reference_inputs(data, reference, items, config.missing, config.shift)
    order = rng.permutation(y.size)
    train, test = order[: y.size // 2], order[y.size // 2 :]
    ranker = SpectralRanker(
        kernel="gaussian", gamma=config.gammas[0], filter=filter, solver="dense"
    )
    choice = choose(
        ranker,
        X[train],
        y[train],
        rule="holdout",
        grid=config.lams(),
        refit=protocol_refits(config.protocol),
    )
    predicted = choice.model.predict(X[test])
    return UserRanking(
        user=int(data.user_ids[user]),
        items=data.item_ids[items[test]],
        true=y[test],
        predicted=predicted,
        lam=choice.value,
        misranking=float(pairwise_misranking(y[test], predicted)),
        ndcg10=float(ndcg(y[test], predicted, k=config.ndcg_k)),
        n_reference=len(reference),
    )
