"""The per-user protocol (Cortes et al. 2007, §4.1, Kriukova et al. 2014, §4.2) on small synthetic
data."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

from ranking_core import SpectralRanker, SpectralRegressor
from ranking_core.cf import RatingMatrix, read_movielens_100k, synthetic_ratings
from ranking_core.cf.parallel import SYNCHRONOUS, run_per_user
from ranking_core.cf.per_user import (
    LEARNERS,
    PROTOCOL_LEARNERS,
    PerUserConfig,
    _chosen_prediction,
    _prediction,
    evaluate_tasks,
    evaluate_user,
    learner_spec,
    plan_tasks,
    reference_inputs,
    summarize,
)
from ranking_core.learners import LEARNERS as REGISTRY
from ranking_core.learners.rankboost import RankBoost
from ranking_core.metrics import pairwise_misranking, pairwise_misranking_rows


@pytest.fixture(scope="module")
def data() -> RatingMatrix:
    return synthetic_ratings(n_users=200, n_items=300, median_ratings=60, seed=4)


def small(**changes) -> PerUserConfig:
    settings = dict(
        group=(20, 60),
        test_range=(50, 150),
        n_reference=100,
        n_test_users=6,
        repeats=2,
        max_rounds=40,
    )
    settings.update(changes)
    return PerUserConfig(**settings)


def test_reference_inputs_fill_and_shift() -> None:
    # users 1..3, items 1..3; user 2 rated item 2 with 0.0 (a Jester zero, kept as a rating)
    data = RatingMatrix.from_triples(
        [1, 1, 2, 2, 3], [1, 3, 2, 3, 1], [-4.0, 6.0, 0.0, 2.0, 9.0], (-10.0, 10.0), "test"
    )
    X = reference_inputs(data, np.array([0, 1]), np.array([0, 1, 2]), "minus-one", 10.0)
    np.testing.assert_array_equal(X, [[6.0, -1.0], [-1.0, 10.0], [16.0, 12.0]])
    X = reference_inputs(data, np.array([1, 0]), np.array([0, 1]), "median", 0.0)
    # medians: user 2 → 1.0, user 1 → 1.0 (of −4 and 6)
    np.testing.assert_array_equal(X, [[1.0, -4.0], [0.0, 1.0]])


def test_plan_draws_distinct_eligible_test_users(data: RatingMatrix) -> None:
    config = small(n_test_users=10, repeats=3)
    tasks = plan_tasks(data, config)
    assert len(tasks) == 30 and tasks == plan_tasks(data, config)
    counts = data.counts()
    for rep in range(3):
        users = [u for r, _, u in tasks if r == rep]
        assert len(set(users)) == 10
        assert all(50 <= counts[u] <= 150 for u in users)
    assert {u for r, _, u in tasks if r == 0} != {u for r, _, u in tasks if r == 1}
    assert plan_tasks(data, small(seed=1)) != plan_tasks(data, small())


@pytest.mark.parametrize("protocol", ["split", "refit"])
@pytest.mark.parametrize("estimator", [SpectralRanker, SpectralRegressor])
def test_lambda_choice_agrees_with_brute_force_refits(estimator: type, protocol: str) -> None:
    """The protocol's λ is the one a separate fit per λ on the fit part would pick; the tested
    model is that fit ("split") or a fresh fit on fit + validation parts at that λ ("refit")."""
    rng = np.random.default_rng(3)
    X = rng.integers(-1, 6, size=(60, 40)).astype(float)
    y = np.clip(np.round(X[:, :5].mean(axis=1) + rng.normal(size=60)), 1, 5)
    parts = (np.arange(15), np.arange(15, 30), np.arange(30, 60))
    config = small(n_lams=60, protocol=protocol)
    spec = dataclasses.replace(
        learner_spec("lavrentiev"),
        make=lambda gamma: estimator(gamma=gamma, filter="iterated-lavrentiev"),
    )
    ours = _chosen_prediction(spec, X, y, parts, config)
    fits = [
        estimator(gamma=1e4, filter="iterated-lavrentiev", lam=lam).fit(X[:15], y[:15])
        for lam in config.lams()
    ]
    errors = [pairwise_misranking(y[15:30], model.predict(X[15:30])) for model in fits]
    best = fits[int(np.argmin(errors))]
    if protocol == "refit":
        best = estimator(gamma=1e4, filter="iterated-lavrentiev", lam=best.lam).fit(X[:30], y[:30])
    np.testing.assert_allclose(ours, best.predict(X[30:]), rtol=1e-8, atol=1e-10)


def test_refit_boosts_again_on_the_training_half_for_the_chosen_rounds() -> None:
    """RankBoost under "refit": the number of rounds with the lowest validation misranking
    (brute force: one model per number of rounds on the fit part), then boosted on fit +
    validation parts for that many rounds."""
    rng = np.random.default_rng(6)
    X = rng.integers(-1, 6, size=(48, 20)).astype(float)
    y = np.clip(np.round(X[:, :4].mean(axis=1) + rng.normal(size=48)), 1, 5)
    parts = (np.arange(12), np.arange(12, 24), np.arange(24, 48))
    config = small(max_rounds=15, protocol="refit")
    errors = [
        pairwise_misranking(y[12:24], RankBoost(n_rounds=t).fit(X[:12], y[:12]).predict(X[12:24]))
        for t in range(1, 16)
    ]
    rounds = 1 + int(np.argmin(errors))
    expected = RankBoost(n_rounds=rounds).fit(X[:24], y[:24]).predict(X[24:])
    ours = _prediction(learner_spec("rankboost"), X, y, parts, config)
    np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=1e-12)
    split = _prediction(
        learner_spec("rankboost"), X, y, parts, small(max_rounds=15, protocol="split")
    )
    np.testing.assert_allclose(
        split,
        RankBoost(n_rounds=rounds).fit(X[:12], y[:12]).predict(X[24:]),
        rtol=1e-12,
        atol=1e-12,
    )


def test_every_learner_ranks_better_than_chance(data: RatingMatrix) -> None:
    result = run_per_user(
        data, small(learners=tuple(PROTOCOL_LEARNERS), n_test_users=20), scheduler=SYNCHRONOUS
    )
    misranking = {name: v["pairwise_misranking"]["mean"] for name, v in result["learners"].items()}
    for name in PROTOCOL_LEARNERS:
        metrics = result["learners"][name]
        limit = 0.43 if name in ("iterated-lavrentiev", "lavrentiev", "spectral-cutoff") else 0.49
        assert misranking[name] < limit, (name, misranking)
        assert 0.0 < metrics["ndcg10"]["mean"] <= 1.0
        assert len(metrics["msd"]["per_repeat"]) == 2
    # the papers' finding: ranking beats regression (SLR) on pairwise misranking
    assert misranking["iterated-lavrentiev"] < misranking["slr"]
    assert result["test_users_per_repeat"] == 20 and result["skipped_test_users"] == 0
    # ranking by iterated Lavrentiev keeps magnitudes: MSD near the ratings' own spread, while
    # RankBoost's scores are not on the rating scale
    assert result["learners"]["iterated-lavrentiev"]["msd"]["mean"] < 4.0


def test_user_result_is_seeded_and_group_dependent(data: RatingMatrix) -> None:
    config = small(learners=("lavrentiev", "rankboost"))
    task = plan_tasks(data, config)[0]
    first = evaluate_user(data, config, task)
    np.testing.assert_array_equal(first, evaluate_user(data, config, task))
    other = evaluate_user(data, small(learners=("lavrentiev", "rankboost"), group=(60, 100)), task)
    assert not np.array_equal(first, other)
    median = evaluate_user(
        data, small(learners=("lavrentiev", "rankboost"), missing="median"), task
    )
    assert not np.array_equal(first, median)


def test_summary_is_mean_and_sd_over_repetitions() -> None:
    config = small(learners=("lavrentiev",), repeats=2)
    tasks = [(0, 0, 5), (0, 1, 6), (1, 0, 7), (1, 1, 8)]
    values = np.array([0.2, 0.4, 0.5, np.nan])[:, None, None] * np.ones((4, 1, 4))
    out = summarize(config, tasks, values)["learners"]["lavrentiev"]["pairwise_misranking"]
    assert out["per_repeat"] == pytest.approx([0.3, 0.5])
    assert out["mean"] == pytest.approx(0.4)
    assert out["sd"] == pytest.approx(np.std([0.3, 0.5], ddof=1))


def test_dask_gives_the_same_numbers_as_one_process(data: RatingMatrix) -> None:
    """A Dask scheduler reached by its address (as with --scheduler tcp://host:port), two
    workers, batches of 3: the same numbers as the in-process run."""
    from distributed import Client, LocalCluster

    config = small(learners=("iterated-lavrentiev", "rankboost"), n_test_users=5)
    single = run_per_user(data, config, scheduler=SYNCHRONOUS)
    calls: list[tuple[int, int]] = []
    with LocalCluster(
        processes=False, n_workers=2, threads_per_worker=1, dashboard_address=":0"
    ) as cluster:
        parallel = run_per_user(
            data,
            config,
            scheduler=cluster.scheduler_address,
            batch_size=3,
            progress=lambda done, total: calls.append((done, total)),
        )
        # one client used for two runs in a row (the second scatter must not race the first's
        # release)
        with Client(cluster) as client:
            again = [run_per_user(data, config, scheduler=client) for _ in range(2)]
    for result in (parallel, *again):
        assert_same_numbers(result, single)
    assert calls[-1] == (10, 10) and len(calls) == 4


def assert_same_numbers(result, expected, where: str = "") -> None:
    """The same keys, counts and texts; the same real numbers to round-off (1e-12 relative: a
    sum's last bits follow the memory alignment of its array, not the scheduler)."""
    if isinstance(expected, dict):
        assert isinstance(result, dict) and result.keys() == expected.keys(), where
        for key in expected:
            assert_same_numbers(result[key], expected[key], f"{where}/{key}")
    elif isinstance(expected, list):
        assert isinstance(result, list) and len(result) == len(expected), where
        for i, (a, b) in enumerate(zip(result, expected, strict=True)):
            assert_same_numbers(a, b, f"{where}[{i}]")
    elif isinstance(expected, float):
        assert result == pytest.approx(expected, rel=1e-12, abs=1e-15, nan_ok=True), where
    else:
        assert result == expected and type(result) is type(expected), where


def test_gamma_chosen_with_lambda_on_the_validation_part() -> None:
    """With several γ, the prediction is that of the γ whose best validation misranking is
    lowest (each γ alone gives its own prediction)."""
    rng = np.random.default_rng(5)
    X = rng.integers(-1, 6, size=(60, 30)).astype(float)
    y = np.clip(np.round(X[:, :4].mean(axis=1) + rng.normal(size=60)), 1, 5)
    parts = (np.arange(15), np.arange(15, 30), np.arange(30, 60))
    gammas = (30.0, 1e4)
    single = {}
    for gamma in gammas:
        config = small(gammas=(gamma,))
        model = SpectralRanker(gamma=gamma, filter="lavrentiev").fit(X[:15], y[:15])
        curve = pairwise_misranking_rows(y[15:30], model.path(config.lams()).predict(X[15:30]))
        single[gamma] = (
            curve.min(),
            _chosen_prediction(learner_spec("lavrentiev"), X, y, parts, config),
        )
    assert single[30.0][0] != single[1e4][0]
    best = min(gammas, key=lambda g: single[g][0])
    both = _chosen_prediction(learner_spec("lavrentiev"), X, y, parts, small(gammas=gammas))
    np.testing.assert_array_equal(both, single[best][1])


def test_rejects_bad_configuration() -> None:
    with pytest.raises(ValueError, match="learners must be among"):
        PerUserConfig(learners=("svm",))
    with pytest.raises(ValueError, match="'missing' must be one of"):
        PerUserConfig(missing="zero")
    with pytest.raises(ValueError, match="group must satisfy"):
        PerUserConfig(group=(60, 40))
    with pytest.raises(ValueError, match="'protocol' must be one of"):
        PerUserConfig(protocol="quarter")


def test_real_movielens_groups() -> None:
    root = os.environ.get("MOVIELENS_100K")
    if not root:
        pytest.skip("MOVIELENS_100K is not set (path to the ml-100k directory)")
    data = read_movielens_100k(root)
    sizes = [len(data.users_in(lo, hi)) for lo, hi in ((20, 40), (40, 60), (60, 80))]
    assert sizes == [305, 151, 90]
    config = PerUserConfig(
        group=(40, 60), learners=("lavrentiev",), n_test_users=3, repeats=2, n_lams=50
    )
    result = run_per_user(data, config, scheduler=SYNCHRONOUS)
    assert 0.2 < result["learners"]["lavrentiev"]["pairwise_misranking"]["mean"] < 0.55


# evaluate_tasks of the five per-user protocol learners under the "split" reading, recorded before
# they were routed through the shared registry ranking_core.learners.LEARNERS (commit b853844); the
# routing must not change them beyond floating-point rounding (other NumPy/BLAS builds differ in
# the last bits).
RECORDED_PER_USER_NUMBERS = [
    [
        [0.3717805151175812, 2.2307630442032296, 1.1239877642648992, 0.6803299713772465],
        [0.3717805151175812, 2.230981372153149, 1.1239938770582598, 0.6803299713772465],
        [0.3628219484882419, 2.0453213288998033, 1.1156411477660548, 0.7131305270615772],
        [0.6394176931690929, 2.2359481257474476, 1.1262794779612424, 0.2972617788297484],
        [0.4322508398656215, 3.1090037544387443, 1.396150444542524, 0.5566635063143902],
    ],
    [
        [0.5576086956521739, 5.065536376945058, 1.7971002543085666, 0.31695189751822567],
        [0.525, 3.7664891444137574, 1.5522956580174552, 0.3307646485029376],
        [0.4141304347826087, 3.288674445644062, 1.4306403612934118, 0.3539341762449909],
        [0.6206521739130435, 2.7891869320061136, 1.2945454327293942, 0.25096859716219627],
        [0.475, 3.0231315417298528, 1.407818261173778, 0.3875728484743602],
    ],
    [
        [0.35452793834296725, 0.9346043660709511, 0.7382523649279509, 0.722888321468806],
        [0.35452793834296725, 0.9425162416782181, 0.7375124349029509, 0.722888321468806],
        [0.35067437379576105, 0.9077052751731256, 0.7633687220264118, 0.5997523983610364],
        [0.36801541425818884, 0.9220714915493512, 0.7598363026185478, 0.6770014801878207],
        [0.394990366088632, 2.884807573733051, 1.293386197274402, 0.7753578750378172],
    ],
]


def test_per_user_learners_reproduce_the_numbers_recorded_before_the_shared_registry() -> None:
    data = synthetic_ratings(n_users=120, n_items=200, median_ratings=60, seed=11)
    config = small(
        n_reference=60,
        n_test_users=3,
        repeats=1,
        max_rounds=30,
        protocol="split",
        learners=("iterated-lavrentiev", "lavrentiev", "spectral-cutoff", "slr", "rankboost"),
    )
    values = evaluate_tasks(data, config, plan_tasks(data, config))
    np.testing.assert_allclose(values, np.array(RECORDED_PER_USER_NUMBERS), rtol=1e-9, atol=0)


def test_every_registry_learner_is_offered_once() -> None:
    """Every learner of the registry but those made for glucose pairs only, each once."""
    assert sorted(learner_spec(name).description for name in LEARNERS) == sorted(
        spec.description for spec in REGISTRY.values() if not spec.glucose_pairs
    )
    assert learner_spec("slr") is REGISTRY["regressor"]
    assert learner_spec("spectral-landweber") is REGISTRY["spectral-landweber"]


def test_grid_learner_picks_its_registry_value_on_the_validation_part() -> None:
    """Brute force: each registry grid value fitted on the fit part, the lowest validation
    misranking kept, its test predictions returned ("split")."""
    rng = np.random.default_rng(8)
    X = rng.integers(-1, 6, size=(48, 20)).astype(float)
    y = np.clip(np.round(X[:, :4].mean(axis=1) + rng.normal(size=48)), 1, 5)
    parts = (np.arange(0, 24, 2), np.arange(1, 24, 2), np.arange(24, 48))
    spec = REGISTRY["online-mprank"]
    errors, predictions = [], []
    for value in spec.grid(12):
        model = spec.make(1e4).set_params(lam=value).fit(X[parts[0]], y[parts[0]])
        errors.append(pairwise_misranking(y[parts[1]], model.predict(X[parts[1]])))
        predictions.append(model.predict(X[parts[2]]))
    ours = _chosen_prediction(spec, X, y, parts, small(protocol="split"))
    np.testing.assert_allclose(ours, predictions[int(np.argmin(errors))], rtol=1e-12, atol=1e-12)


def test_learner_over_its_max_m_is_skipped_and_counted(
    data: RatingMatrix, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = small(learners=("lavrentiev", "online-mprank"), n_test_users=8, repeats=1)
    tasks = plan_tasks(data, config)
    free = evaluate_tasks(data, config, tasks)
    monkeypatch.setitem(
        REGISTRY, "online-mprank", dataclasses.replace(REGISTRY["online-mprank"], max_m=35)
    )
    capped = evaluate_tasks(data, config, tasks)
    counts = data.counts()
    within = np.array([counts[user] // 2 <= 35 for _, _, user in tasks])  # training half
    assert 0 < within.sum() < len(tasks)
    assert np.isnan(capped[~within, 1]).all()
    # the reviewers it still runs on, and the other learner, get the numbers of the free run
    np.testing.assert_array_equal(capped[within], free[within])
    np.testing.assert_array_equal(capped[:, 0], free[:, 0])
    summary = summarize(config, tasks, capped)
    assert summary["learners"]["online-mprank"]["test_users_run"] == within.sum()
    assert summary["learners"]["online-mprank"]["max_m"] == 35
    assert summary["learners"]["lavrentiev"]["test_users_run"] == len(tasks)
    assert summary["skipped_test_users"] == 0


@pytest.mark.parametrize("name", LEARNERS)
def test_every_offered_learner_fits_item_features(name):
    """The CF protocol offers only learners that take features of any width (a user's item
    features here: 12 columns), not those made for glucose pairs."""
    spec = learner_spec(name)
    if spec.max_m is not None and spec.max_m < 40:
        pytest.skip(f"{name} takes at most {spec.max_m} points")
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 12)), rng.integers(1, 6, size=40).astype(float)
    model = spec.make(10.0).set_params(**{spec.param: spec.grid(40)[0]}).fit(X, y)
    assert np.all(np.isfinite(model.predict(X)))
