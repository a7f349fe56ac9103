"""The nested-dissection Cholesky of the glucose-lattice system against dense linear algebra."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

from ranking_core.learners.lattice_cholesky import _tree, lattice_cholesky, ou_precision


def _system(n0: int, n1: int, lam: float, seed: int):
    """T₀, T₁ (OU precisions on uneven points), λ and d with most nodes empty (as the lattice
    of a rating set is), and the dense A = diag(d) + λ·T₀ ⊗ T₁."""
    rng = np.random.default_rng(seed)
    T0 = ou_precision(np.cumsum(rng.uniform(0.5, 3.0, n0)), 40.0)
    T1 = ou_precision(np.cumsum(rng.uniform(0.5, 3.0, n1)), 25.0)
    d = np.zeros(n0 * n1)
    nodes = rng.integers(0, n0 * n1, max(1, n0 * n1 // 10))
    np.add.at(d, nodes, 1.0 / len(nodes))
    A = (scipy.sparse.diags(d) + lam * scipy.sparse.kron(T0, T1)).toarray()
    return T0, T1, d, A


@pytest.mark.parametrize(
    "shape", [(1, 1), (1, 9), (2, 2), (3, 17), (17, 3), (9, 7), (16, 16), (31, 26)]
)
@pytest.mark.parametrize("lam", [1e-2, 1e-7])
def test_solve_is_the_inverse_of_the_lattice_matrix(shape, lam):
    T0, T1, d, A = _system(*shape, lam, seed=sum(shape))
    factor = lattice_cholesky(T0, T1, lam, d)
    N = A.shape[0]
    inverse = factor.solve(np.eye(N))
    np.testing.assert_allclose(A @ inverse, np.eye(N), atol=1e-9 * np.linalg.cond(A) ** 0.5)
    b = np.random.default_rng(1).standard_normal(N)
    expected = np.linalg.solve(A, b)
    got = factor.solve(b)
    assert got.shape == (N,)
    assert np.abs(got - expected).max() <= 1e-12 * np.linalg.cond(A) * np.abs(expected).max()


def test_dense_and_sparse_tridiagonals_give_the_same_factor():
    T0, T1, d, _ = _system(12, 10, 1e-4, seed=3)
    b = np.random.default_rng(2).standard_normal((120, 2))
    sparse = lattice_cholesky(T0, T1, 1e-4, d).solve(b)
    dense = lattice_cholesky(T0.toarray(), T1.toarray(), 1e-4, d).solve(b)
    np.testing.assert_array_equal(sparse, dense)


def test_every_node_is_eliminated_once_and_the_stored_count_is_the_factor():
    for n0, n1 in [(601, 601), (121, 121), (5, 40)]:
        tree, _ = _tree(n0, n1)
        eliminated = np.concatenate([g.ids[:, : g.s].ravel() for depth in tree for g in depth])
        np.testing.assert_array_equal(np.sort(eliminated), np.arange(n0 * n1))
        for depth in tree:  # a ring node is eliminated above (later), never below
            for group in depth:
                assert group.ids.min() >= 0 and group.ids.max() < n0 * n1
    T0, T1, d, _ = _system(40, 33, 1e-3, seed=4)
    factor = lattice_cholesky(T0, T1, 1e-3, d)
    assert factor.nbytes == 8 * _tree(40, 33)[1]


def test_the_factor_is_the_same_whatever_the_number_of_workers():
    # the fronts are split into parts that do not depend on the workers, so the result may not
    # depend on the machine's load (which sets the workers through the BLAS threads)
    T0, T1, d, _ = _system(61, 47, 1e-6, seed=5)
    b = np.random.default_rng(6).standard_normal(61 * 47)
    one = lattice_cholesky(T0, T1, 1e-6, d, workers=1)
    three = lattice_cholesky(T0, T1, 1e-6, d, workers=3)
    np.testing.assert_array_equal(one.solve(b), three.solve(b))
    for level_one, level_three in zip(one._factors, three._factors, strict=True):
        for (L1, X1), (L3, X3) in zip(level_one, level_three, strict=True):
            np.testing.assert_array_equal(L1, L3)
            np.testing.assert_array_equal(X1, X3)
