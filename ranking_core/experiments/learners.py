"""Every learner of :data:`ranking_core.learners.LEARNERS` on the SEG protocol of Kriukova et al.
2014, §4.3.

Per repetition: m inputs uniform on [0, 600]² mg/dL labelled with the risk of the reference
surface at the rounded point (:func:`ranking_core.experiments.seg.draw_seg_ratings`); the first
m/2 fit, the last m/2 choose the learner's parameter by pairwise misranking (eq. (1)); the chosen
model is scored by misranking on ``test_size`` new inputs. Every learner sees the same draws.
Shared by ``riskgrid learners compare`` and the dashboard's Compare page.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from ranking_core.experiments.seg import draw_seg_ratings
from ranking_core.grids.seg import SEGTable
from ranking_core.learners import LEARNERS
from ranking_core.metrics import pairwise_misranking
from ranking_core.selection import choose

__all__ = ["check_learner_names", "compare_learners"]

Progress = Callable[[int, int], None]


def check_learner_names(names: Sequence[str]) -> list[str]:
    """``names`` as a list; ``ValueError`` naming those that are not in ``LEARNERS``."""
    unknown = [name for name in names if name not in LEARNERS]
    if unknown:
        raise ValueError(f"unknown learner(s) {unknown}; choose from {list(LEARNERS)}")
    return list(names)


def compare_learners(
    risk: SEGTable | ArrayLike,
    names: Sequence[str],
    m: int,
    reps: int,
    gamma: float = 1e4,
    test_size: int = 1000,
    seed: int = 0,
    progress: Progress | None = None,
) -> list[dict]:
    """Misranking (Kriukova et al. 2014, eq. (1)) of each named learner, mean ± sd over ``reps``
    draws.

    Parameters
    ----------
    risk : the reference: a :class:`SEGTable` or a (601, 601) risk surface indexed [REF, BGM]
        in mg/dL.
    names : keys of ``LEARNERS``.
    m : ratings per repetition (half fit, half choose the parameter); a learner with a
        ``max_m`` below m uses the first ``max_m`` of them.
    reps : repetitions (new draws; sd uses ddof = 1, 0 for one repetition).
    gamma : Gaussian kernel width γ in (mg/dL)².
    test_size : unseen test inputs per repetition.
    seed : seed of the draws (all learners see the same draws).
    progress : called as ``progress(fits_done, fits_total)`` after each fit.

    Returns
    -------
    One dict per learner, in the order of ``names``: ``learner``, ``description``, ``m`` (ratings
    used), ``capped`` (m was cut to ``max_m``), ``misranking_mean`` and ``misranking_sd``
    (fractions of pairs), ``param``, ``values`` (chosen per repetition) and
    their ``value_median``, ``seconds_per_fit``
    (mean wall time of the choice and fit).
    """
    names = check_learner_names(names)
    table = risk if isinstance(risk, SEGTable) else SEGTable(np.asarray(risk, dtype=np.float64))
    rng = np.random.default_rng(seed)
    draws = [
        (draw_seg_ratings(table, m, rng), draw_seg_ratings(table, test_size, rng))
        for _ in range(reps)
    ]
    rows, done, total = [], 0, len(names) * reps
    for name in names:
        spec = LEARNERS[name]
        size = m if spec.max_m is None else min(m, spec.max_m)
        errors, values, seconds = [], [], 0.0
        for (X, y), (X_test, y_test) in draws:
            start = time.perf_counter()
            # Kriukova et al. 2014, §4.3: the first half fits, the second chooses the parameter;
            # the model keeps the first half (refit=False), as every recorded number did
            choice = choose(
                spec.make(gamma),
                X[:size],
                y[:size],
                rule="holdout",
                grid=spec.grid(size // 2),
                param=spec.param,
                refit=False,
            )
            model, value = choice.model, float(choice.value)
            seconds += time.perf_counter() - start
            errors.append(pairwise_misranking(y_test, model.predict(X_test)))
            values.append(value)
            done += 1
            if progress is not None:
                progress(done, total)
        rows.append(
            {
                "learner": name,
                "description": spec.description,
                "m": size,
                "capped": size < m,
                "misranking_mean": float(np.mean(errors)),
                "misranking_sd": float(np.std(errors, ddof=1)) if reps > 1 else 0.0,
                "param": spec.param,
                "values": values,
                "value_median": float(np.median(values)),
                "seconds_per_fit": seconds / reps,
            }
        )
    return rows
