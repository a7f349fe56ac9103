"""Spectral filters against 700-digit decimal references, limits and the theory's bounds."""

from decimal import Decimal, getcontext

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ranking_core.filters import (
    IteratedLavrentiev,
    Landweber,
    Lavrentiev,
    NuMethod,
    Showalter,
    SpectralCutoff,
    make_filter,
)

getcontext().prec = 700  # enough digits that σ = 1e-300 does not vanish beside λ


def reference(name: str, sigma: float, lam: float, k: int = 2, mu: float = 1.0) -> float:
    """g_λ(σ) from its textbook formula in 700-digit decimal arithmetic."""
    s, lm = Decimal(sigma), Decimal(lam)
    if name == "lavrentiev":
        return float(1 / (s + lm))
    if name == "iterated":
        return float((1 - (lm / (s + lm)) ** k) / s)
    if name == "landweber":
        n = int(np.ceil(1 / lam))
        return float((1 - (1 - Decimal(mu) * s) ** n) / s)
    if name == "showalter":
        return float((1 - (-s / lm).exp()) / s)
    raise AssertionError(name)


SIGMAS = [1e-300, 1e-15, 1e-9, 1e-4, 0.3, 1.0]
LAMS = [1e-6, 3.7e-5, 1e-2, 0.7]


@pytest.mark.parametrize("sigma", SIGMAS)
@pytest.mark.parametrize("lam", LAMS)
def test_filters_match_high_precision_reference(sigma: float, lam: float) -> None:
    cases = [
        (Lavrentiev(), "lavrentiev", {}),
        (IteratedLavrentiev(k=2), "iterated", {"k": 2}),
        (IteratedLavrentiev(k=5), "iterated", {"k": 5}),
        (Showalter(), "showalter", {}),
    ]
    for filt, name, kw in cases:
        got = filt.factors(np.array([sigma]), lam)[0]
        assert got == pytest.approx(reference(name, sigma, lam, **kw), rel=1e-12), (name, kw)


@pytest.mark.parametrize("sigma", [1e-300, 1e-12, 1e-6, 0.25, 1.0])
@pytest.mark.parametrize("lam", [1e-3, 0.05, 0.5])
def test_landweber_matches_reference_with_default_step(sigma: float, lam: float) -> None:
    spectrum = np.array([sigma, 1.0])  # largest eigenvalue 1 → μ = 1
    got = Landweber().factors(spectrum, lam)[0]
    assert got == pytest.approx(reference("landweber", sigma, lam, mu=1.0), rel=1e-11)


def test_limits_at_zero() -> None:
    lam = 0.01
    zero = np.zeros(1)
    assert Lavrentiev().factors(zero, lam)[0] == pytest.approx(1 / lam)
    assert IteratedLavrentiev(k=3).factors(zero, lam)[0] == pytest.approx(3 / lam)
    assert Showalter().factors(zero, lam)[0] == pytest.approx(1 / lam)
    assert SpectralCutoff().factors(zero, lam)[0] == 0.0
    # Landweber: g(0) = nμ with n = ⌈1/λ⌉ = 100 and μ = 1/max σ = 1/2
    assert Landweber().factors(np.array([0.0, 2.0]), lam)[0] == pytest.approx(100 * 0.5)


def test_iterated_k2_is_kriukova_eq13() -> None:
    sigma = np.geomspace(1e-12, 10, 50)
    lam = 0.03
    expected = (sigma + 2 * lam) / (sigma + lam) ** 2
    np.testing.assert_allclose(IteratedLavrentiev(2).factors(sigma, lam), expected, rtol=1e-13)


def test_spectral_cutoff_threshold() -> None:
    np.testing.assert_array_equal(
        SpectralCutoff().factors(np.array([0.09, 0.1, 0.4]), 0.1), [0.0, 10.0, 2.5]
    )


def test_broadcasts_over_a_lambda_path() -> None:
    sigma = np.array([0.0, 0.5, 2.0])
    lams = np.array([1.0, 0.1, 0.01])
    grid = Lavrentiev().factors(sigma[None, :], lams[:, None])
    assert grid.shape == (3, 3)
    np.testing.assert_allclose(grid[1], 1 / (sigma + 0.1))


def test_qualifications() -> None:
    assert Lavrentiev.qualification == 1
    assert IteratedLavrentiev(k=4).qualification == 4
    assert np.isinf(SpectralCutoff.qualification)
    assert np.isinf(Landweber.qualification)
    assert np.isinf(Showalter.qualification)


def test_names_and_errors() -> None:
    assert isinstance(make_filter("iterated-lavrentiev"), IteratedLavrentiev)
    assert make_filter("iterated-lavrentiev").k == 2
    with pytest.raises(ValueError, match="unknown filter"):
        make_filter("tikhonov-2")
    with pytest.raises(ValueError, match="positive"):
        Lavrentiev().factors(np.ones(2), 0.0)
    with pytest.raises(ValueError, match=r"integer 1\.\.100"):
        IteratedLavrentiev(k=0)
    with pytest.raises(ValueError, match=r"integer 1\.\.100"):
        IteratedLavrentiev(k=101)
    with pytest.raises(ValueError, match="step"):
        Landweber(step=2.0).factors(np.array([1.0]), 0.1)


@given(
    sigma=st.floats(0, 1e3, allow_nan=False),
    lam=st.floats(1e-8, 1e2, allow_nan=False),
    k=st.integers(1, 6),
)
def test_residual_filter_between_zero_and_one(sigma: float, lam: float, k: int) -> None:
    """0 ≤ σ·g_λ(σ) ≤ 1 for every filter of the family (regularization on [0, a], Kriukova et al.
    2014, §3)."""
    s = np.array([sigma, 1e3])  # include the top of the spectrum for Landweber's step
    for filt in (Lavrentiev(), IteratedLavrentiev(k), SpectralCutoff(), Landweber(), Showalter()):
        product = s[0] * filt.factors(s, lam)[0]
        assert np.isfinite(product)
        assert -1e-12 <= product <= 1 + 1e-12, type(filt).__name__


def _nu_method_by_iteration(A: np.ndarray, b: np.ndarray, steps: int, nu: float) -> np.ndarray:
    """The ν-method run on the linear system A x = b (A symmetric, 0 ≤ A ≤ I), written out as
    the iteration of Engl, Hanke & Neubauer 1996, §6.3 on vectors — not through the filter."""
    previous, x = np.zeros_like(b), np.zeros_like(b)
    for j in range(1, steps + 1):
        if j == 1:
            mu, omega = 0.0, (4 * nu + 2) / (4 * nu + 1)
        else:
            mu = (
                (j - 1)
                * (2 * j - 3)
                * (2 * j + 2 * nu - 1)
                / ((j + 2 * nu - 1) * (2 * j + 4 * nu - 1) * (2 * j + 2 * nu - 3))
            )
            omega = (
                4 * (2 * j + 2 * nu - 1) * (j + nu - 1) / ((j + 2 * nu - 1) * (2 * j + 4 * nu - 1))
            )
        previous, x = x, x + mu * (x - previous) + omega * (b - A @ x)
    return x


@pytest.mark.parametrize(("nu", "lam"), [(0.5, 1e-2), (1.0, 3e-3), (2.0, 1e-4), (1.0, 2.0)])
def test_nu_method_equals_the_iteration_it_stands_for(nu: float, lam: float) -> None:
    """g_λ(A)·b through the eigendecomposition equals ⌈λ^(−1/2)⌉ steps of the ν-method on A."""
    rng = np.random.default_rng(7)
    V = np.linalg.qr(rng.normal(size=(30, 30)))[0]
    sigma = np.r_[1.0, rng.uniform(0, 1, 29) ** 3]  # max σ = 1, so the default step is 1
    A, b = (V * sigma) @ V.T, rng.normal(size=30)
    via_filter = V @ (NuMethod(nu).factors(sigma, lam) * (V.T @ b))
    steps = int(np.ceil(lam**-0.5))
    np.testing.assert_allclose(
        via_filter, _nu_method_by_iteration(A, b, steps, nu), rtol=1e-9, atol=1e-9
    )


def test_nu_method_residual_and_qualification() -> None:
    """|1 − σg_λ(σ)| ≤ 1 on [0, 1]; σ^ν|1 − σg_λ(σ)| ≤ C·λ^ν (qualification ν); one step
    (λ ≥ 1) is the constant ω_1 = (4ν + 2)/(4ν + 1)."""
    sigma = np.linspace(0.0, 1.0, 2001)
    for nu in (0.5, 1.0, 2.0):
        filt = NuMethod(nu, step=1.0)
        assert filt.qualification == nu and make_filter("nu-method") == NuMethod()
        np.testing.assert_allclose(filt.factors(sigma, 1.5), (4 * nu + 2) / (4 * nu + 1))
        bounds = []
        for lam in (1e-2, 1e-3, 1e-4, 1e-5):
            residual = 1.0 - sigma * filt.factors(sigma, lam)
            assert np.all(np.abs(residual) <= 1 + 1e-12)
            bounds.append(np.max(sigma**nu * np.abs(residual)) / lam**nu)
        assert max(bounds) < 10.0 and max(bounds) / min(bounds) < 5.0
    with pytest.raises(ValueError, match="positive"):
        NuMethod(nu=0.0)
    with pytest.raises(ValueError, match="step"):
        NuMethod(step=2.0).factors(np.array([1.0]), 0.1)


def test_every_registered_filter_has_a_label_and_a_class_and_every_class_is_registered() -> None:
    """The CLI and the dashboard list FILTERS with their labels (without importing the classes);
    each entry's class is a distinct Filter of the definitions module, and every filter defined
    there is registered (the light registry and the heavy module agree)."""
    import inspect

    import ranking_core.filters.definitions as definitions
    from ranking_core.filters import FILTERS

    classes = [entry.load() for entry in FILTERS.values()]
    for name, entry in FILTERS.items():
        assert entry.label and issubclass(entry.load(), definitions.Filter)
        assert make_filter(name).factors(np.array([0.5, 1.0]), 0.1).shape == (2,)
    defined = {
        c
        for _, c in inspect.getmembers(definitions, inspect.isclass)
        if issubclass(c, definitions.Filter) and c is not definitions.Filter
    }
    assert len(set(classes)) == len(classes) and set(classes) == defined


@pytest.mark.parametrize("k", [1, 2, 3, 9, 40, 100])
def test_iterated_lavrentiev_closed_form_is_k_successive_solves(k):
    """Up to REFINED_ORDER the fit refines k solves; above it the filter's closed form
    g(σ) = (1 − (λ/(λ + σ))^k)/σ: both equal the k solves to rounding."""
    from ranking_core import SpectralRanker
    from ranking_core.filters import IteratedLavrentiev

    rng = np.random.default_rng(k)
    X = rng.uniform(0, 10, (50, 2))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.standard_normal(50)
    lam = 0.05
    model = SpectralRanker(
        kernel="gaussian", gamma=20.0, filter=IteratedLavrentiev(k=k), lam=lam, solver="dense"
    ).fit(X, y)
    # the solves of Kriukova et al. 2014, eq. (13): (A + λI) c_j = b + λ c_{j−1}, c_0 = 0
    m = len(y)
    C = np.eye(m) - 1.0 / m
    A = C @ model.kernel_(X, X) @ C / m
    b = C @ y / m
    c = np.zeros(m)
    for _ in range(k):
        c = np.linalg.solve(A + lam * np.eye(m), b + lam * c)
    np.testing.assert_allclose(model.coef_, c, rtol=1e-9, atol=1e-9 * np.abs(c).max())
