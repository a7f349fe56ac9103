"""Lower confidence bounds of an agreement rate (ranking_core.meter.standards.bounds) against
independent expectations: statsmodels' exact interval, the Korn–Graubard formula of R
survey::svyciprop written out by hand, Newcombe's published continuity-corrected Wilson intervals,
the ANOVA
intra-class correlation from sums of squares, and the bootstrap's own invariances."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta, t
from statsmodels.stats.proportion import proportion_confint

from ranking_core.meter.standards.bounds import (
    BOUNDS,
    MIN_BOOTSTRAP_CLUSTERS,
    anova_icc,
    equal_clusters_exceed,
    lower_bound,
)


def _hits(k: int, n: int) -> np.ndarray:
    return np.r_[np.ones(k, dtype=bool), np.zeros(n - k, dtype=bool)]


def test_registry_names_the_four_methods_with_labels_and_citations() -> None:
    assert list(BOUNDS) == ["cp", "kg", "wilson-cc", "bootstrap"]
    for key, method in BOUNDS.items():
        assert method.key == key and method.label and method.citation


@pytest.mark.parametrize("k, n", [(0, 10), (1, 10), (47, 49), (49, 49), (320, 374), (2979, 3600)])
def test_clopper_pearson_equals_statsmodels_beta_interval(k: int, n: int) -> None:
    expected = 100.0 * proportion_confint(k, n, alpha=0.10, method="beta")[0]
    result = lower_bound("cp", _hits(k, n))
    assert result.lower_percent == pytest.approx(expected, abs=1e-9)
    assert result.method == "cp" and result.clusters == n and result.icc is None


def _svyciprop_beta_by_hand(groups: list[list[int]], level: float = 0.90) -> float:
    """survey 4.5 R/svyttest.R, method "beta", for a one-stage cluster sample with equal weights,
    computed with explicit loops."""
    pairs = [y for g in groups for y in g]
    n, clusters = len(pairs), len(groups)
    p = sum(pairs) / n
    # svymean's variance of a ratio mean: C/(C - 1) * sum over clusters of (sum_i (y_i - p) / n)^2
    total = 0.0
    for g in groups:
        z = sum(y - p for y in g) / n
        total += z * z
    variance = clusters / (clusters - 1) * total
    n_eff = p * (1 - p) / variance
    alpha = 1 - level
    n_eff *= (t.ppf(alpha / 2, n - 1) / t.ppf(alpha / 2, clusters - 1)) ** 2
    return 100.0 * beta.ppf(alpha / 2, n_eff * p, n_eff * (1 - p) + 1)


def test_korn_graubard_follows_svyciprop_with_the_degrees_of_freedom_factor() -> None:
    groups = [[1, 1, 0, 1], [1, 1, 1, 1, 1], [0, 1, 0], [1, 1, 1, 0, 1, 1], [1, 0]]
    hits = np.array([y for g in groups for y in g], dtype=bool)
    cluster = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
    result = lower_bound("kg", hits, cluster)
    assert result.lower_percent == pytest.approx(_svyciprop_beta_by_hand(groups), abs=1e-9)
    assert result.clusters == 5
    # the factor (t_{0.05, n-1} / t_{0.05, C-1})^2 < 1 lowers the bound below the factor-free one
    n, p = hits.size, hits.mean()
    z = [sum(y - p for y in g) / n for g in groups]
    n_eff = p * (1 - p) / (5 / 4 * sum(v * v for v in z))
    factor_free = 100.0 * beta.ppf(0.05, n_eff * p, n_eff * (1 - p) + 1)
    assert result.lower_percent < factor_free - 1.0


def test_korn_graubard_without_clusters_is_clopper_pearson_on_n_minus_one() -> None:
    # each pair its own cluster: v = p(1 - p)/(n - 1), so n* = n - 1 and the factor is 1
    k, n = 37, 45
    p = k / n
    expected = 100.0 * beta.ppf(0.05, (n - 1) * p, (n - 1) * (1 - p) + 1)
    assert lower_bound("kg", _hits(k, n)).lower_percent == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("method", ["cp", "kg", "wilson-cc", "bootstrap"])
def test_weights_count_as_repeated_pairs(method: str) -> None:
    hit = np.array([1, 0, 1, 1, 0, 1, 1, 0], dtype=bool)
    cluster = np.array([0, 0, 1, 2, 2, 3, 4, 4])
    weight = np.array([3, 1, 2, 4, 2, 5, 3, 1])
    weighted = lower_bound(method, hit, cluster, weight=weight, resamples=2000)
    expanded = lower_bound(
        method, np.repeat(hit, weight), np.repeat(cluster, weight), resamples=2000
    )
    assert weighted.lower_percent == pytest.approx(expanded.lower_percent, abs=1e-9)


@pytest.mark.parametrize(
    "k, n, published",  # Newcombe, Stat Med 1998;17:857-872, Table II, method 4 (95 %, two-sided)
    [(81, 263, 0.2535), (1, 29, 0.0018), (0, 20, 0.0)],
)
def test_wilson_without_clusters_is_newcombes_continuity_corrected_interval(k, n, published):
    result = lower_bound("wilson-cc", _hits(k, n), confidence=0.975)
    assert round(result.lower_percent / 100, 4) == published
    assert result.icc == 0.0


def test_wilson_icc_is_the_anova_estimator_from_sums_of_squares() -> None:
    rng = np.random.default_rng(3)
    sizes = rng.integers(5, 30, size=12)
    rates = rng.uniform(0.6, 0.95, size=12)
    groups = [rng.random(m) < r for m, r in zip(sizes, rates, strict=True)]
    hits = np.concatenate(groups)
    cluster = np.repeat(np.arange(12), sizes)
    # one-way ANOVA on the pairs: between and within mean squares, n0 = (N - sum m^2/N)/(C - 1)
    big_n, c, p = hits.size, len(groups), hits.mean()
    ssb = sum(g.size * (g.mean() - p) ** 2 for g in groups)
    ssw = sum(((g - g.mean()) ** 2).sum() for g in groups)
    bms, wms = ssb / (c - 1), ssw / (big_n - c)
    n0 = (big_n - (sizes**2).sum() / big_n) / (c - 1)
    icc = max((bms - wms) / (bms + (n0 - 1) * wms), 0.0)
    result = lower_bound("wilson-cc", hits, cluster)
    assert result.icc == pytest.approx(icc, abs=1e-12)
    assert anova_icc(hits, cluster) == pytest.approx(icc, abs=1e-12)  # the report's icc column
    # clustering widens the interval: the bound is below the unclustered one when icc > 0
    assert icc > 0 and result.lower_percent < lower_bound("wilson-cc", hits).lower_percent


def test_one_cluster_gives_clopper_pearson_with_a_note() -> None:
    hits = _hits(18, 20)
    cp = lower_bound("cp", hits).lower_percent
    for method in ("kg", "wilson-cc"):
        result = lower_bound(method, hits, np.zeros(20))
        assert result.lower_percent == pytest.approx(cp)
        assert result.note == "one cluster: the clustered bound equals Clopper–Pearson"


def test_bootstrap_is_seeded_fast_and_close_to_the_unclustered_bootstrap() -> None:
    rng = np.random.default_rng(0)
    cluster = np.repeat(np.arange(24), 150)
    hits = rng.random(cluster.size) < 0.85
    start = time.perf_counter()
    first = lower_bound("bootstrap", hits, cluster)
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0
    assert lower_bound("bootstrap", hits, cluster).lower_percent == first.lower_percent
    assert first.clusters == 24 and first.lower_percent < 100 * hits.mean()
    # independent pairs: the binomial shortcut and a bootstrap over one-pair clusters agree
    small = hits[:300]
    by_pair = lower_bound("bootstrap", small, np.arange(300)).lower_percent
    shortcut = lower_bound("bootstrap", small).lower_percent
    assert by_pair == pytest.approx(shortcut, abs=0.5)
    assert by_pair == pytest.approx(lower_bound("cp", small).lower_percent, abs=1.5)


def test_bootstrap_needs_enough_clusters_and_spread() -> None:
    few = lower_bound("bootstrap", _hits(8, 12), np.repeat([0, 1, 2], 4))
    assert np.isnan(few.lower_percent)
    assert few.note == (
        f"too few clusters (3) for a bootstrap over sensors; at least {MIN_BOOTSTRAP_CLUSTERS} "
        "needed"
    )
    all_hits = lower_bound("bootstrap", np.ones(30, dtype=bool), np.repeat(np.arange(6), 5))
    assert all_hits.lower_percent == pytest.approx(lower_bound("cp", np.ones(30)).lower_percent)
    assert "Clopper–Pearson" in all_hits.note


def test_no_pairs_gives_nan_with_a_note() -> None:
    result = lower_bound("cp", np.array([], dtype=bool))
    assert np.isnan(result.lower_percent) and result.note == "no pairs: no bound"


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: lower_bound("wald", [1, 0]), "unknown bound method 'wald'"),
        (lambda: lower_bound("cp", [1, 0.5]), "hit must hold 0/1"),
        (lambda: lower_bound("cp", [1, 0], weight=[1]), "weight has 1 entries"),
        (lambda: lower_bound("cp", [1, 0], weight=[1, 0.5]), "weight must be whole numbers"),
        (lambda: lower_bound("kg", [1, 0], [1]), "cluster has 1 entries"),
        (lambda: lower_bound("cp", [1, 0], confidence=95), "confidence must be between"),
        (lambda: lower_bound("bootstrap", [1, 0], resamples=0), "resamples must be between"),
    ],
)
def test_bad_input_is_refused_with_the_rule(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def _reference_bca(frame, index: np.ndarray, sensors: np.ndarray, alpha: float = 0.05) -> float:
    """IfDTUlm's CI_Bootstrapping (Python) for one range, on given resamples of the study's
    sensors: per resample the mean of the in-range hits of the drawn sensors' pairs, the
    jackknife acceleration over the sensors in range, then their BCa quantile."""
    from scipy.stats import norm

    rates = []
    for row in index:
        drawn = pd.concat([frame[frame["SensorID"] == sensors[j]] for j in row])
        if len(drawn):
            rates.append(drawn["WI"].mean() * 100)
    dat = np.array(rates)
    theta = frame["WI"].mean() * 100
    in_range = np.sort(frame["SensorID"].unique())
    u = np.array([frame[frame["SensorID"] != s]["WI"].mean() * 100 for s in in_range])
    uu = u.mean() - u
    a = np.sum(uu**3) / (6 * np.sum(uu**2) ** 1.5)
    z = norm.ppf(np.sum(dat < theta) / len(dat))
    level = norm.cdf(z + (z + norm.ppf(alpha)) / (1 - a * (z + norm.ppf(alpha))))
    return float(np.quantile(dat, level))


def test_bootstrap_arithmetic_is_the_reference_algorithm_on_the_same_resamples() -> None:
    rng = np.random.default_rng(11)
    study = 12  # sensors in the study; the last 3 have no pair in this range
    sizes = rng.integers(3, 12, size=study - 3)
    cluster = np.repeat(np.arange(study - 3), sizes)
    hits = rng.random(cluster.size) < np.repeat(rng.uniform(0.6, 0.95, study - 3), sizes)
    frame = pd.DataFrame({"SensorID": cluster, "WI": hits.astype(int)})
    resamples, seed = 600, 4
    # the resamples lower_bound draws: one matrix of sensor indices from its seeded generator
    index = np.random.default_rng(seed).integers(0, study, size=(resamples, study))
    expected = _reference_bca(frame, index, np.arange(study))
    result = lower_bound(
        "bootstrap", hits, cluster, resamples=resamples, seed=seed, study_clusters=study
    )
    assert result.lower_percent == pytest.approx(expected, abs=1e-9)
    with pytest.raises(ValueError, match="study_clusters"):
        lower_bound("bootstrap", hits, cluster, study_clusters=5)


def test_cluster_labels_of_any_kind_name_the_same_clusters() -> None:
    hit = np.array([1, 0, 1, 1, 1, 0, 1, 1], dtype=bool)
    mixed = np.array(["a", None, 1, "a", 1, None, "b", "b"], dtype=object)
    codes = np.array([0, 3, 1, 0, 1, 3, 2, 2])
    for method in ("kg", "wilson-cc"):
        assert lower_bound(method, hit, mixed).lower_percent == pytest.approx(
            lower_bound(method, hit, codes).lower_percent
        )
    assert lower_bound("kg", hit, mixed).clusters == 4


@pytest.mark.parametrize("method", ["cp", "kg", "wilson-cc"])
def test_many_equal_clusters_at_once_give_lower_bounds_verdicts(method: str) -> None:
    """The planner's vectorised verdict equals lower_bound on every sample: random per-cluster
    counts, and the edges (no hit, every hit, every cluster alike, one cluster)."""
    rng = np.random.default_rng(11)
    for clusters, pairs in ((1, 12), (2, 5), (7, 1), (9, 20)):
        per = rng.binomial(pairs, rng.beta(9, 1, size=(300, clusters)))
        per[0], per[1], per[2] = 0, pairs, pairs - 1  # none, every hit, all alike
        got = equal_clusters_exceed(
            method, per.sum(axis=1), (per**2).sum(axis=1), clusters, pairs, 0.8
        )
        cluster = np.repeat(np.arange(clusters), 2)
        want = [
            lower_bound(
                method,
                np.tile([True, False], clusters),
                cluster,
                weight=np.column_stack([row, pairs - row]).ravel(),
            ).lower_percent
            > 80.0
            for row in per
        ]
        np.testing.assert_array_equal(got, want)
