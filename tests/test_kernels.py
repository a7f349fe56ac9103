"""Kernels against point-by-point formulas; the lattice factorisation against direct evaluation."""

import numpy as np
import pytest

from ranking_core.kernels import (
    KERNELS,
    GaussianKernel,
    LaplacianKernel,
    LinearKernel,
    PolynomialKernel,
    gaussian_lattice,
    laplacian_lattice,
    make_kernel,
)


def pointwise(kernel, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    return np.array([[kernel(x, y) for y in Y] for x in X])


RNG = np.random.default_rng(0)
X = RNG.uniform(0, 600, size=(7, 2))
Y = RNG.uniform(0, 600, size=(5, 2))


def test_gaussian_uses_the_papers_gamma() -> None:
    # K(x, x') = exp(−‖x − x'‖²/γ): at distance 10 with γ = 100 the value is e^{-1}
    assert GaussianKernel(100.0)([[0.0]], [[10.0]])[0, 0] == pytest.approx(np.exp(-1.0))
    expected = pointwise(lambda a, b: np.exp(-np.sum((a - b) ** 2) / 1e4), X, Y)
    np.testing.assert_allclose(GaussianKernel(1e4)(X, Y), expected, rtol=1e-13)


def test_anisotropic_gaussian() -> None:
    widths = np.array([2e4, 5e3])
    expected = pointwise(lambda a, b: np.exp(-np.sum((a - b) ** 2 / widths)), X, Y)
    np.testing.assert_allclose(GaussianKernel(tuple(widths))(X, Y), expected, rtol=1e-13)


def test_other_kernels() -> None:
    np.testing.assert_allclose(
        LaplacianKernel(50.0)(X, Y),
        pointwise(lambda a, b: np.exp(-np.sum(np.abs(a - b)) / 50.0), X, Y),
        rtol=1e-13,
    )
    np.testing.assert_allclose(LinearKernel()(X, Y), pointwise(np.dot, X, Y), rtol=1e-13)
    np.testing.assert_allclose(
        PolynomialKernel(1e4, 2, 1.0)(X, Y),
        pointwise(lambda a, b: (a @ b / 1e4 + 1.0) ** 2, X, Y),
        rtol=1e-13,
    )


@pytest.mark.parametrize(
    "kernel",
    [GaussianKernel(1e3), LaplacianKernel(9.0), LinearKernel(), PolynomialKernel(7.0, 3, 0.5)],
)
def test_diagonal_matches_gram(kernel) -> None:
    np.testing.assert_allclose(kernel.diagonal(X), np.diag(kernel(X, X)), rtol=1e-12)


@pytest.mark.parametrize("gamma", [1e4, (2e4, 5e3)])
def test_gaussian_lattice_equals_direct_evaluation(gamma) -> None:
    centers = RNG.uniform(0, 600, size=(40, 2))
    coef = RNG.normal(size=40)
    axis_0, axis_1 = np.arange(0, 601, 25.0), np.arange(0, 601, 40.0)
    grid = np.array([[a, b] for a in axis_0 for b in axis_1])
    direct = (
        GaussianKernel(gamma if np.ndim(gamma) == 0 else tuple(gamma))(grid, centers) @ coef
    ).reshape(len(axis_0), len(axis_1))
    np.testing.assert_allclose(
        gaussian_lattice(axis_0, axis_1, centers, coef, gamma), direct, rtol=1e-11, atol=1e-12
    )
    many = gaussian_lattice(axis_0, axis_1, centers, np.column_stack([coef, 2 * coef]), gamma)
    np.testing.assert_allclose(many[1], 2 * direct, rtol=1e-11, atol=1e-12)


def test_laplacian_lattice_equals_direct_evaluation() -> None:
    centers = RNG.uniform(0, 600, size=(40, 2))
    coef = RNG.normal(size=40)
    axis_0, axis_1 = np.arange(0, 601, 25.0), np.arange(0, 601, 40.0)
    grid = np.array([[a, b] for a in axis_0 for b in axis_1])
    direct = pointwise(lambda a, b: np.exp(-np.sum(np.abs(a - b)) / 70.0), grid, centers) @ coef
    np.testing.assert_allclose(
        laplacian_lattice(axis_0, axis_1, centers, coef, 70.0),
        direct.reshape(len(axis_0), len(axis_1)),
        rtol=1e-11,
        atol=1e-12,
    )
    many = laplacian_lattice(axis_0, axis_1, centers, np.column_stack([coef, -coef]), 70.0)
    np.testing.assert_allclose(
        many[1], -direct.reshape(len(axis_0), len(axis_1)), rtol=1e-11, atol=1e-12
    )


def test_make_kernel_and_errors() -> None:
    assert make_kernel("gaussian", gamma=5.0) == GaussianKernel(5.0)
    assert make_kernel("gaussian", gamma=[1.0, 2.0]) == GaussianKernel((1.0, 2.0))
    with pytest.raises(ValueError, match="unknown kernel"):
        make_kernel("rbf")
    with pytest.raises(ValueError, match="gamma must be positive"):
        GaussianKernel(-1.0)(X, Y)
    with pytest.raises(ValueError, match="shape"):
        gaussian_lattice([0.0], [0.0], np.zeros((3, 3)), np.zeros(3), 1.0)
    with pytest.raises(ValueError, match="gamma must be positive"):
        laplacian_lattice([0.0], [0.0], np.zeros((3, 2)), np.zeros(3), 0.0)


@pytest.mark.filterwarnings("ignore:OnlineMPRank. not converged")
@pytest.mark.parametrize("name", ["gaussian", "laplacian", "polynomial", "linear"])
def test_every_estimator_takes_its_kernel_default_from_the_kernel_class(name: str) -> None:
    """A kernel named without parameters is the kernel class's own default, whichever estimator
    resolves it (the Laplacian's γ is 10², not the Gaussian's 10⁴)."""
    from ranking_core import (
        NystromRanker,
        OnlineMPRank,
        PreferenceRanker,
        SpectralRanker,
        SpectralRegressor,
        SVRank,
    )

    expected = KERNELS[name].load()()
    rng = np.random.default_rng(0)
    X, y = rng.uniform(0, 2, (12, 2)), rng.uniform(0, 4, 12)
    for estimator in (
        SpectralRanker,
        SpectralRegressor,
        NystromRanker,
        PreferenceRanker,
        OnlineMPRank,
        SVRank,
    ):
        assert estimator(kernel=name).fit(X, y).kernel_ == expected, estimator.__name__
    assert make_kernel(name) == expected
    assert LaplacianKernel().gamma == 1e2 and GaussianKernel().gamma == 1e4


def test_make_kernel_passes_only_the_parameters_a_kernel_has() -> None:
    assert make_kernel("laplacian", gamma=30.0, degree=5) == LaplacianKernel(30.0)
    assert make_kernel("polynomial", gamma=2.0, degree=2, coef0=0.5) == PolynomialKernel(
        2.0, 2, 0.5
    )
    with pytest.raises(ValueError, match="one scalar gamma"):
        make_kernel("laplacian", gamma=[1.0, 2.0])


def test_the_registry_names_every_kernel_class_once() -> None:
    """The light registry (names, glucose labels and widths, no NumPy) and the definitions agree:
    each entry loads a distinct Kernel class of the definitions module and every kernel defined
    there is registered; the kernels offered for glucose grids have a label, a unit and a default
    width inside their suited range."""
    import inspect

    import ranking_core.kernels.definitions as definitions

    classes = [entry.load() for entry in KERNELS.values()]
    defined = {
        c
        for _, c in inspect.getmembers(definitions, inspect.isclass)
        if issubclass(c, definitions.Kernel) and c is not definitions.Kernel
    }
    assert len(set(classes)) == len(classes) and set(classes) == defined
    for entry in KERNELS.values():
        if entry.glucose_width is not None:
            assert entry.label and entry.width_unit and entry.suited_widths is not None
            low, high = entry.suited_widths
            assert low <= entry.glucose_width <= high
