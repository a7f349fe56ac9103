"""The per-user ranking protocol of Cortes et al. 2007, §4.1 and Kriukova et al. 2014, §4.2 (Table
2; Cortes et al. 2007, Tables 1–2).

For each repetition, ``n_test_users`` test reviewers are drawn among the users with 50–300 ratings.
For each test reviewer, ``n_reference`` reference reviewers are drawn from a group (users who rated
20–40, 40–60 or 60–80 items, bounds inclusive; the test reviewer excluded); the reference
reviewers' ratings of item i form its input x_i ∈ R^300 (missing = −1 as in Kriukova et al. 2014, or
the reference reviewer's median rating as in Cortes et al. 2007), the test reviewer's rating is y_i.
A random half of the test reviewer's items trains, the other half tests; the training half is split
again: the first part fits, the second chooses λ from λ_j = 15·0.95^j (j < 200) by pairwise
misranking (eq. (1)) — or the number of rounds, for RankBoost. The paper does not say which
function is then tested: ``protocol="split"`` tests the one fitted on the first quarter of the
reviewer's ratings, ``protocol="refit"`` refits on the whole training half at the chosen value
(:data:`ranking_core.selection.PROTOCOLS`, the same two readings as the academic example).

Any learner of the shared registry :data:`ranking_core.learners.LEARNERS` runs here: a learner
with a λ path (``has_path``) chooses λ from that grid (times the learner's own scaling
``lam_scale(m)``, e.g. m² for RankRLS) on one decomposition; a boosting learner
(``staged_predict``) chooses its number of rounds ≤ ``max_rounds`` from its stages; any other
learner tries its registry grid on the same fit / validation parts, all by
:func:`ranking_core.selection.choose` (hold-out, the model kept on the fit part). A learner
with a ``max_m`` is skipped (NaN) for test reviewers whose training half (fit + validation)
exceeds it; the summary counts the reviewers each learner ran on. The column names of Kriukova
et al. 2014, Table 2 (:data:`~ranking_core.cf.protocol_learners.PROTOCOL_LEARNERS`) stay as short
names of five registry entries.

Reported per test reviewer on the test half:
pairwise misranking (eq. (1)), MSD and M1D (Cortes et al. 2007, eqs. (67)–(68)) and NDCG@10;
averaged over the test reviewers of a repetition, then mean and standard deviation over the
repetitions.

Every (repetition, test reviewer) task draws from its own ``SeedSequence((seed, repetition,
slot))``, so results do not depend on how tasks are scheduled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from ranking_core.cf.data import RatingMatrix
from ranking_core.cf.protocol_learners import LEARNERS, PROTOCOL_LEARNERS
from ranking_core.learners import LEARNERS as REGISTRY
from ranking_core.learners import LearnerSpec
from ranking_core.metrics import (
    mean_1norm_difference,
    mean_squared_difference,
    ndcg,
    pairwise_misranking_margin,
    pairwise_misranking_rows,
)
from ranking_core.selection import choose, paper_lambda_grid, protocol_refits
from ranking_core.validation import one_of

__all__ = [
    "JESTER_SHIFT",
    "LEARNERS",
    "METRICS",
    "PROTOCOL_LEARNERS",
    "PerUserConfig",
    "Task",
    "evaluate_tasks",
    "evaluate_user",
    "plan_tasks",
    "summarize",
]

# Kriukova et al. 2014, §4.2: Jester ratings (−10..10) are shifted by +10, so that −1 can mean
# "not rated".
JESTER_SHIFT = 10.0
METRICS = ("pairwise_misranking", "msd", "m1d", "ndcg10")
# what a table calls each metric (misranking in %, the others as computed)
METRIC_LABELS = {
    "pairwise_misranking": "Misranking (%)",
    "msd": "Mean squared difference",
    "m1d": "Mean absolute difference",
    "ndcg10": "NDCG@10",
}
MISSING = ("minus-one", "median")
SPLIT_ATTEMPTS = 100
Task = tuple[int, int, int]  # (repetition, slot, test user row)


@dataclass(frozen=True)
class PerUserConfig:
    """The protocol's settings (defaults: Kriukova et al. 2014, §4.2).

    Attributes
    ----------
    group : (low, high) ratings per reference reviewer, inclusive.
    test_range : (low, high) ratings per test reviewer, inclusive.
    n_reference, n_test_users, repeats : 300, 300, 10 in the papers. When a group holds fewer
        reference reviewers than ``n_reference``, all of them are used.
    learners : names from :data:`LEARNERS` (or any key of the registry
        :data:`ranking_core.learners.LEARNERS`).
    gammas : Gaussian γ values (in squared rating units); with more than one, (γ, λ) are chosen
        jointly on the validation part.
    lam0, q, n_lams : the λ grid λ_j = lam0·q^j.
    missing : ``"minus-one"`` (Kriukova et al. 2014: a missing rating is −1) or ``"median"`` (Cortes
        et al. 2007: the
        reference reviewer's median rating).
    shift : added to every rating before anything else (Kriukova et al. 2014 uses +10 for Jester).
    protocol : which function is tested, one of :data:`ranking_core.selection.PROTOCOLS`:
        ``"split"`` (fitted on the fit part) or ``"refit"`` (refitted on fit + validation parts
        at the chosen λ or number of rounds).
    max_rounds : RankBoost's largest number of rounds.
    ndcg_k : cut-off of NDCG (exponential gain 2^y − 1 on the shifted ratings).
    tie_threshold : in the reported misranking, test pairs whose ratings differ by no more than
        this (rating units) are not pairs (:func:`ranking_core.metrics.pairwise_misranking_margin`);
        0 is eq. (1) as printed (only equal ratings are not pairs). λ is still chosen by eq. (1).
    seed : root of every random draw.
    """

    group: tuple[int, int] = (40, 60)
    test_range: tuple[int, int] = (50, 300)
    n_reference: int = 300
    n_test_users: int = 300
    repeats: int = 10
    learners: tuple[str, ...] = ("iterated-lavrentiev",)
    gammas: tuple[float, ...] = (1e4,)
    lam0: float = 15.0
    q: float = 0.95
    n_lams: int = 200
    missing: str = "minus-one"
    shift: float = 0.0
    protocol: str = "refit"
    max_rounds: int = 200
    ndcg_k: int = 10
    tie_threshold: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        unknown = [name for name in self.learners if name not in LEARNERS + tuple(REGISTRY)]
        if unknown or not self.learners:
            raise ValueError(
                f"PerUserConfig: learners must be among {LEARNERS}; got {list(self.learners)!r}"
            )
        one_of(self.missing, "missing", MISSING, "PerUserConfig")
        protocol_refits(self.protocol, "PerUserConfig")
        for name in ("group", "test_range"):
            low, high = getattr(self, name)
            if not 0 < low <= high:
                raise ValueError(
                    f"PerUserConfig: {name} must satisfy 0 < low <= high; got {(low, high)!r}"
                )
        if not (np.isfinite(self.tie_threshold) and self.tie_threshold >= 0):
            raise ValueError(
                "PerUserConfig: tie_threshold must be a finite number >= 0; "
                f"got {self.tie_threshold!r}"
            )
        if self.test_range[0] < 8:
            raise ValueError(
                "PerUserConfig: test reviewers need at least 8 ratings to split "
                f"into fit, validation and test parts; got {self.test_range!r}"
            )
        for name in ("n_reference", "n_test_users", "repeats", "n_lams", "max_rounds", "ndcg_k"):
            if int(getattr(self, name)) < 1:
                raise ValueError(
                    f"PerUserConfig: {name} must be a positive integer; got {getattr(self, name)!r}"
                )

    def lams(self) -> NDArray[np.float64]:
        return paper_lambda_grid(self.lam0, self.q, self.n_lams)


def _rankable_users(data: RatingMatrix, low: int, high: int) -> NDArray[np.intp]:
    """Users with low..high ratings that are not all equal (a ranking needs two values)."""
    users = data.users_in(low, high)
    spread = [np.ptp(data.user_ratings(int(u))[1]) > 0 for u in users]
    return users[np.asarray(spread, dtype=bool)]


def plan_tasks(data: RatingMatrix, config: PerUserConfig) -> list[Task]:
    """The (repetition, slot, test user) tasks: per repetition, min(n_test_users, eligible)
    test reviewers drawn without replacement."""
    eligible = _rankable_users(data, *config.test_range)
    if eligible.size == 0:
        raise ValueError(
            f"no test reviewer: no user has {config.test_range[0]}–"
            f"{config.test_range[1]} ratings with at least two different values"
        )
    if data.users_in(*config.group).size < 2:
        raise ValueError(
            f"the reference group {config.group[0]}–{config.group[1]} holds fewer than two users"
        )
    tasks: list[tuple[int, int, int]] = []
    n = min(config.n_test_users, eligible.size)
    for rep in range(config.repeats):
        rng = np.random.default_rng(np.random.SeedSequence((config.seed, rep)))
        users = rng.choice(eligible, size=n, replace=False)
        tasks.extend((rep, slot, int(user)) for slot, user in enumerate(users))
    return tasks


def reference_inputs(
    data: RatingMatrix,
    reference: NDArray[np.intp],
    items: NDArray[np.intp],
    missing: str,
    shift: float,
) -> NDArray[np.float64]:
    """X (len(items), len(reference)): reference reviewer j's (shifted) rating of item i, or the
    missing code (−1, or reviewer j's median rating)."""
    block = data.ratings[reference][:, items].tocoo()
    if missing == "median":
        indptr, values = data.ratings.indptr, data.ratings.data
        fill = np.array([np.median(values[indptr[u] : indptr[u + 1]]) for u in reference]) + shift
    else:
        fill = np.full(len(reference), -1.0)
    X = np.repeat(fill[None, :], len(items), axis=0)
    X[block.col, block.row] = block.data + shift
    return X


def _split(rng: np.random.Generator, y: NDArray) -> tuple[NDArray, NDArray, NDArray] | None:
    """Random fit / validation / test index sets (quarter, quarter, half), redrawn until each
    part holds two different ratings."""
    m = y.size
    for _ in range(SPLIT_ATTEMPTS):
        order = rng.permutation(m)
        train, test = order[: m // 2], order[m // 2 :]
        fit, val = train[: train.size // 2], train[train.size // 2 :]
        if all(np.ptp(y[part]) > 0 for part in (fit, val, test)):
            return fit, val, test
    return None


def learner_spec(name: str) -> LearnerSpec:
    """The registry entry of a per-user learner name (a protocol name or a registry key)."""
    return REGISTRY[PROTOCOL_LEARNERS.get(name, name)]


def _chosen_prediction(
    spec: LearnerSpec, X: NDArray, y: NDArray, parts: tuple, config: PerUserConfig
) -> NDArray[np.float64]:
    """Test-part predictions after choosing (γ, parameter) by hold-out: the fit part fits (one
    decomposition per γ for a path learner, whose λ grid is ``lam_scale(m)``·λ_j; one fit per
    registry grid value otherwise), the validation part scores, the lowest misranking is kept.
    The tested model is the one fitted on the fit part (``protocol="split"``) or refitted on fit
    + validation parts at the chosen values (``"refit"``); λ is chosen on the fit part's size
    either way."""
    fit, val, test = parts
    grid = spec.lam_scale(fit.size) * config.lams() if spec.has_path else spec.grid(fit.size)
    train = np.concatenate([fit, val])  # the hold-out rule: first part fits, second chooses
    choice = choose(
        spec.make,
        X[train],
        y[train],
        rule="holdout",
        grid=grid,
        param=spec.param,
        gammas=config.gammas,
        refit=protocol_refits(config.protocol),
    )
    return choice.model.predict(X[test])


def _staged_prediction(
    spec: LearnerSpec, X: NDArray, y: NDArray, parts: tuple, config: PerUserConfig
) -> NDArray[np.float64]:
    """Test-part predictions of a boosting learner after the number of rounds (≤ max_rounds)
    with the lowest validation misranking (γ plays no part); under ``protocol="refit"`` the
    learner is boosted again on fit + validation parts for that number of rounds."""
    fit, val, test = parts
    model = spec.make(config.gammas[0]).set_params(**{spec.param: config.max_rounds})
    model.fit(X[fit], y[fit])
    if model.n_rounds_ == 0:
        return np.zeros(test.size)
    curve = pairwise_misranking_rows(y[val], model.staged_predict(X[val]))
    rounds = int(np.argmin(curve))
    if protocol_refits(config.protocol):
        train = np.concatenate([fit, val])
        return model.set_params(**{spec.param: rounds + 1}).fit(X[train], y[train]).predict(X[test])
    return model.staged_predict(X[test])[rounds]


def _prediction(
    spec: LearnerSpec, X: NDArray, y: NDArray, parts: tuple, config: PerUserConfig
) -> NDArray[np.float64]:
    if not spec.has_path and hasattr(spec.make(config.gammas[0]), "staged_predict"):
        return _staged_prediction(spec, X, y, parts, config)
    return _chosen_prediction(spec, X, y, parts, config)


def evaluate_user(data: RatingMatrix, config: PerUserConfig, task: Task) -> NDArray[np.float64]:
    """Metrics (len(learners), len(METRICS)) of one test reviewer (NaN when the reviewer's
    ratings cannot be split into three parts with two different values each, and in the row of a
    learner whose ``max_m`` is below the training half)."""
    rep, slot, user = task
    rng = np.random.default_rng(np.random.SeedSequence((config.seed, rep, slot)))
    group = data.users_in(*config.group)
    group = group[group != user]
    reference = rng.choice(group, size=min(config.n_reference, group.size), replace=False)
    items, y = data.user_ratings(user)
    y = y + config.shift
    out = np.full((len(config.learners), len(METRICS)), np.nan)
    parts = _split(rng, y)
    if parts is None:
        return out
    X = reference_inputs(data, reference, items, config.missing, config.shift)
    y_test = y[parts[2]]
    for row, name in enumerate(config.learners):
        spec = learner_spec(name)
        if spec.max_m is not None and parts[0].size + parts[1].size > spec.max_m:
            continue
        prediction = _prediction(spec, X, y, parts, config)
        out[row] = (
            pairwise_misranking_margin(y_test, prediction, config.tie_threshold),
            mean_squared_difference(y_test, prediction),
            mean_1norm_difference(y_test, prediction),
            ndcg(y_test, prediction, k=config.ndcg_k),
        )
    return out


def evaluate_tasks(
    data: RatingMatrix, config: PerUserConfig, tasks: Sequence[Task]
) -> NDArray[np.float64]:
    """:func:`evaluate_user` for a batch of tasks, shape (len(tasks), learners, metrics).

    BLAS runs single-threaded here: the per-user matrices are small, and a multi-threaded BLAS
    may round differently from a single-threaded one (Dask workers run with one thread), which
    would make results depend on the scheduler."""
    with threadpool_limits(limits=1, user_api="blas"):
        return np.stack([evaluate_user(data, config, task) for task in tasks])


def summarize(config: PerUserConfig, tasks: Sequence[Task], values: NDArray[np.float64]) -> dict:
    """Per repetition: mean over test reviewers; then mean and sd (ddof = 1) over repetitions.

    ``values`` is (len(tasks), learners, metrics) in task order. ``skipped_test_users`` counts
    reviewers without a misranking for any learner: their ratings could not be split, or (with
    ``tie_threshold`` > 0) no two of their test ratings differ by more than it; each learner's
    ``test_users_run`` counts the reviewers it was scored on (fewer when its ``max_m`` is below
    some reviewers' training half)."""
    reps = np.array([task[0] for task in tasks])
    per_rep = np.stack([np.nanmean(values[reps == r], axis=0) for r in range(config.repeats)])
    skipped = int(np.isnan(values[:, :, 0]).all(axis=1).sum())
    learners = {}
    for i, name in enumerate(config.learners):
        learners[name] = {
            "test_users_run": int((~np.isnan(values[:, i, 0])).sum()),
            "max_m": learner_spec(name).max_m,
            **{
                metric: {
                    "mean": float(np.mean(per_rep[:, i, k])),
                    "sd": float(np.std(per_rep[:, i, k], ddof=1)) if config.repeats > 1 else 0.0,
                    "per_repeat": [float(v) for v in per_rep[:, i, k]],
                }
                for k, metric in enumerate(METRICS)
            },
        }
    return {
        "protocol": "per-user ranking, Cortes et al. 2007, §4.1 / Kriukova et al. 2014, §4.2",
        "config": asdict(config),
        "test_users_per_repeat": int(len(tasks) // config.repeats),
        "tasks": len(tasks),
        "skipped_test_users": skipped,
        "learners": learners,
    }
