"""SpectralRanker / SpectralRegressor against the closed forms of the papers and brute force."""

import itertools
from unittest import mock

import numpy as np
import pytest
import scipy.linalg
from extended_precision import refined_predictions, refined_solve
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from ranking_core import IteratedLavrentiev, SpectralRanker, SpectralRegressor
from ranking_core.grids.coordinates import GlucoseTransform, TransformedKernel
from ranking_core.kernels import GaussianKernel, LaplacianKernel
from ranking_core.selection import paper_lambda_grid

RTOL = 1e-8
# the best recipe's kernel, and the λ it picks near m = 2,000 ratings: ‖K̃‖/λ is near 10⁸ there
WARPED_L1 = TransformedKernel(LaplacianKernel(1e3), GlucoseTransform("log", 50.0))
TINY_LAM = 2.5e-9


def glucose_data(m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 600, size=(m, 2))
    y = np.clip(np.abs(X[:, 0] - X[:, 1]) / 120 + rng.normal(scale=0.2, size=m), 0, 4)
    return X, y


def centered(v: np.ndarray) -> np.ndarray:
    """Predictions up to the constant the ranking loss cannot see."""
    return v - v.mean()


def assert_close_up_to_constant(a: np.ndarray, b: np.ndarray) -> None:
    a, b = centered(a), centered(b)
    assert np.max(np.abs(a - b)) <= RTOL * np.max(np.abs(b))


def test_lavrentiev_equals_mprank_closed_form() -> None:
    """Cortes et al. 2007, eq. (13): h(x') = C'K'(I + K̄)⁻¹(Y − Ȳ) with C' = 1/(mλ)."""
    X, y = glucose_data(60)
    Xt = glucose_data(40, seed=1)[0]
    lam = 2e-3
    m = len(y)
    K = GaussianKernel(1e4)(X, X)
    C = np.eye(m) - 1.0 / m
    c_prime = 1.0 / (m * lam)
    K_bar = c_prime * C @ K @ C
    K_new = GaussianKernel(1e4)(Xt, X)
    K_prime = K_new - K_new.mean(axis=1, keepdims=True)  # eq. (14)
    expected = c_prime * K_prime @ np.linalg.solve(np.eye(m) + K_bar, y - y.mean())
    got = SpectralRanker(gamma=1e4, lam=lam).fit(X, y).predict(Xt)
    assert_close_up_to_constant(got, expected)


def test_lavrentiev_equals_rankrls_dual_with_explicit_preference_graph() -> None:
    """Pahikkala et al. 2009, eq. (17) A = (MMᵀK + λI)⁻¹MN with every pair an edge, N = Mᵀy (eq. 23)
    and λ_RankRLS = m²λ."""
    X, y = glucose_data(30, seed=2)
    Xt = glucose_data(25, seed=3)[0]
    m, lam = len(y), 5e-3
    edges = list(itertools.combinations(range(m), 2))
    M = np.zeros((m, len(edges)))
    for e, (h, j) in enumerate(edges):
        M[h, e], M[j, e] = 1.0, -1.0
    N = M.T @ y
    K = GaussianKernel(1e4)(X, X)
    A = np.linalg.solve(M @ M.T @ K + m**2 * lam * np.eye(m), M @ N)
    expected = GaussianKernel(1e4)(Xt, X) @ A
    got = SpectralRanker(gamma=1e4, lam=lam).fit(X, y).predict(Xt)
    assert_close_up_to_constant(got, expected)


def test_iterated_lavrentiev_k2_equals_eq13_by_direct_solve() -> None:
    """c = (K̃ + 2λI)(K̃ + λI)⁻² Cy/m (Kriukova et al. 2014, eq. (13))."""
    X, y = glucose_data(50, seed=4)
    m, lam = len(y), 1e-3
    K = GaussianKernel(1e4)(X, X)
    C = np.eye(m) - 1.0 / m
    Kt = C @ K @ C / m
    b = C @ y / m
    shifted = Kt + lam * np.eye(m)
    c = np.linalg.solve(shifted, np.linalg.solve(shifted, (Kt + 2 * lam * np.eye(m)) @ b))
    model = SpectralRanker(gamma=1e4, filter="iterated-lavrentiev", lam=lam).fit(X, y)
    np.testing.assert_allclose(model.coef_, c, rtol=0, atol=RTOL * np.abs(c).max())


def test_regressor_equals_kernel_ridge_regression() -> None:
    """SLR with Lavrentiev: c = (K + mλI)⁻¹ y (Smale–Zhou regularized least squares)."""
    X, y = glucose_data(40, seed=5)
    m, lam = len(y), 1e-2
    K = GaussianKernel(1e4)(X, X)
    c = np.linalg.solve(K + m * lam * np.eye(m), y)
    model = SpectralRegressor(gamma=1e4, lam=lam).fit(X, y)
    np.testing.assert_allclose(model.coef_, c, atol=RTOL * np.abs(c).max())
    assert model.intercept_ == 0.0


def relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernel products in blocks of 7 rows of 300, so that the dense solver keeps no Gram
    matrix and refines against kernel rows recomputed block by block."""
    monkeypatch.setattr("ranking_core.learners.base.BLOCK_ENTRIES", 7 * 300)
    monkeypatch.setattr("ranking_core.learners.spectral.BLOCK_ENTRIES", 7 * 300)


@pytest.mark.parametrize("gram_kept", [True, False])
def test_lavrentiev_at_tiny_lambda_is_refined_to_working_precision(
    monkeypatch: pytest.MonkeyPatch, gram_kept: bool
) -> None:
    """At λ ≪ σ_max the eigendecomposition formula (the λ path) loses digits; the solution held
    after fit and after resolve (Kriukova et al. 2014, eq. (4)) matches extended precision."""
    if not gram_kept:
        small_blocks(monkeypatch)
    X, y = glucose_data(300, seed=20)
    X_new = glucose_data(400, seed=21)[0]
    reference = refined_predictions(WARPED_L1, X, y, TINY_LAM, X_new)
    model = SpectralRanker(WARPED_L1, lam=TINY_LAM, solver="dense").fit(X, y)
    assert (model.gram_ is not None) == gram_kept
    assert relative(model.predict(X_new), reference) < 1e-10
    assert relative(model.path([TINY_LAM]).predict(X_new)[0], reference) > 1e-9
    resolved = SpectralRanker(WARPED_L1, lam=1.0, solver="dense").fit(X, y).resolve(TINY_LAM)
    assert relative(resolved.predict(X_new), reference) < 1e-10


@pytest.mark.parametrize("k", [2, 3])
def test_iterated_lavrentiev_at_tiny_lambda_matches_its_closed_form(k: int) -> None:
    """Eq. (13) at λ ≪ σ_max: g_λ(σ) = Σ_{j≤k} λ^{j−1}/(σ + λ)^j in extended precision."""
    X, y = glucose_data(300, seed=22)
    X_new = glucose_data(400, seed=23)[0]
    reference = refined_predictions(WARPED_L1, X, y, TINY_LAM, X_new, k=k)
    model = SpectralRanker(
        WARPED_L1, filter=IteratedLavrentiev(k), lam=TINY_LAM, solver="dense"
    ).fit(X, y)
    assert relative(model.predict(X_new), reference) < 1e-10
    assert relative(model.path([TINY_LAM]).predict(X_new)[0], reference) > 1e-9


def test_regressor_at_tiny_lambda_is_refined_to_working_precision() -> None:
    """SLR (Kriukova et al. 2014, §4.1): (K/m + λI)c = y/m, solved in extended precision."""
    X, y = glucose_data(300, seed=24)
    X_new = glucose_data(400, seed=25)[0]
    K = WARPED_L1(X, X)
    m = len(y)
    reference = WARPED_L1(X_new, X) @ refined_solve(K / m + TINY_LAM * np.eye(m), y / m)
    model = SpectralRegressor(WARPED_L1, lam=TINY_LAM, solver="dense").fit(X, y)
    assert relative(model.predict(X_new), reference) < 1e-10
    assert relative(model.path([TINY_LAM]).predict(X_new)[0], reference) > 1e-9


@pytest.mark.parametrize(
    "filt", ["lavrentiev", "iterated-lavrentiev", "spectral-cutoff", "landweber", "showalter"]
)
def test_path_equals_separate_fits(filt: str) -> None:
    X, y = glucose_data(80, seed=6)
    Xt = glucose_data(30, seed=7)[0]
    lams = paper_lambda_grid(1.0, 0.8, 12)
    model = SpectralRanker(gamma=1e4, filter=filt, solver="dense").fit(X, y)
    path = model.path(lams).predict(Xt)
    for row, lam in zip(path, lams, strict=True):
        separate = clone(model).set_params(lam=lam).fit(X, y).predict(Xt)
        np.testing.assert_allclose(row, separate, atol=RTOL * max(np.abs(separate).max(), 1))


def test_path_and_resolve_never_refactorise() -> None:
    X, y = glucose_data(70, seed=8)
    model = SpectralRanker(gamma=1e4, solver="dense")
    with mock.patch("ranking_core.spectral.scipy.linalg.eigh", wraps=scipy.linalg.eigh) as eigh:
        model.fit(X, y)
        model.path(paper_lambda_grid()).predict(X[:5])
        model.resolve(0.1).predict(X[:5])
    assert eigh.call_count == 1


def test_predictions_live_on_the_rating_scale() -> None:
    X, y = glucose_data(90, seed=9)
    model = SpectralRanker(gamma=1e4, lam=1e-2).fit(X, y)
    assert model.predict(X).mean() == pytest.approx(y.mean(), abs=1e-12)
    path = model.path([1.0, 1e-2, 1e-4])
    np.testing.assert_allclose(path.predict(X).mean(axis=1), y.mean(), atol=1e-12)


@pytest.mark.parametrize("estimator", [SpectralRanker, SpectralRegressor])
def test_primal_equals_dual_for_linear_kernel(estimator: type) -> None:
    rng = np.random.default_rng(10)
    X = rng.normal(size=(120, 5))
    y = X @ rng.normal(size=5) + rng.normal(scale=0.3, size=120)
    Xt = rng.normal(size=(30, 5))
    for filt in ("lavrentiev", IteratedLavrentiev(3), "showalter"):
        primal = estimator(kernel="linear", filter=filt, lam=0.05, solver="primal").fit(X, y)
        dual = estimator(kernel="linear", filter=filt, lam=0.05, solver="dense").fit(X, y)
        assert primal.spectrum_.method == "primal" and dual.spectrum_.method == "dense"
        expected = dual.predict(Xt)
        np.testing.assert_allclose(primal.predict(Xt), expected, atol=RTOL * np.abs(expected).max())
    assert estimator(kernel="linear").fit(X, y).spectrum_.method == "primal"  # auto


def test_low_rank_equals_dense_over_the_path() -> None:
    X, y = glucose_data(700, seed=11)
    Xt = glucose_data(200, seed=12)[0]
    lams = paper_lambda_grid()
    for filt in ("lavrentiev", "iterated-lavrentiev", "showalter"):
        dense = SpectralRanker(gamma=4e4, filter=filt, solver="dense").fit(X, y)
        low = SpectralRanker(gamma=4e4, filter=filt, solver="low-rank").fit(X, y)
        assert low.spectrum_.method == "low-rank" and low.spectrum_.rank < len(y) // 3
        expected = dense.path(lams).predict(Xt)
        got = low.path(lams).predict(Xt)
        scale = np.abs(expected).max(axis=1, keepdims=True)
        assert np.max(np.abs(got - expected) / scale) < RTOL


def test_low_rank_falls_back_to_dense_with_a_warning() -> None:
    X, y = glucose_data(60, seed=13)
    with pytest.warns(UserWarning, match="not numerically low-rank"):
        model = SpectralRanker(gamma=10.0, solver="low-rank").fit(X, y)
    assert model.spectrum_.method == "dense"


def test_learned_ranking_invariant_under_shift_of_ratings() -> None:
    X, y = glucose_data(60, seed=14)
    a = SpectralRanker(gamma=1e4, lam=1e-3).fit(X, y)
    b = SpectralRanker(gamma=1e4, lam=1e-3).fit(X, y + 17.5)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-12 * np.abs(a.coef_).max())
    np.testing.assert_allclose(b.predict(X), a.predict(X) + 17.5, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(shift=st.floats(-1e3, 1e3, allow_nan=False), seed=st.integers(0, 10_000))
def test_shift_invariance_property(shift: float, seed: int) -> None:
    X, y = glucose_data(25, seed=seed)
    a = SpectralRanker(gamma=1e4, lam=1e-2).fit(X, y)
    b = SpectralRanker(gamma=1e4, lam=1e-2).fit(X, y + shift)
    Xt = glucose_data(10, seed=seed + 1)[0]
    np.testing.assert_allclose(centered(b.predict(Xt)), centered(a.predict(Xt)), atol=1e-8)


def test_score_is_one_minus_misranking() -> None:
    X, y = glucose_data(100, seed=15)
    model = SpectralRanker(gamma=1e4, lam=1e-3).fit(X, y)
    f = model.predict(X)
    greater = y[:, None] > y[None, :]
    brute = (greater & (f[:, None] <= f[None, :])).sum() / greater.sum()
    assert model.score(X, y) == pytest.approx(1 - brute)


@pytest.mark.parametrize(
    ("params", "X", "y", "message"),
    [
        ({}, np.zeros((3, 2)), np.arange(4.0), "3 rows but y has 4"),
        ({}, np.array([[0.0, 1], [np.nan, 2], [3, 4]]), np.arange(3.0), "row 1"),
        ({}, np.zeros((3, 2)), np.array([1.0, np.inf, 2]), "row 1"),
        ({}, np.zeros((1, 2)), np.array([1.0]), "at least 2"),
        ({}, np.arange(6.0).reshape(3, 2), np.ones(3), "constant"),
        ({"lam": 0.0}, np.arange(6.0).reshape(3, 2), np.arange(3.0), "'lam' must be a positive"),
        ({"lam": -1}, np.arange(6.0).reshape(3, 2), np.arange(3.0), "'lam' must be a positive"),
        ({"filter": "tikhonov"}, np.arange(6.0).reshape(3, 2), np.arange(3.0), "unknown filter"),
        ({"kernel": "rbf"}, np.arange(6.0).reshape(3, 2), np.arange(3.0), "unknown kernel"),
        ({"solver": "qr"}, np.arange(6.0).reshape(3, 2), np.arange(3.0), "'solver' must be"),
    ],
)
def test_clear_errors(params: dict, X: np.ndarray, y: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SpectralRanker(**params).fit(X, y)


def test_predict_checks_feature_count() -> None:
    model = SpectralRanker().fit(*glucose_data(10))
    with pytest.raises(ValueError, match="X has 3 features, but SpectralRanker is expecting 2"):
        model.predict(np.zeros((2, 3)))
