"""Matrix-free CG for the Lavrentiev system against the direct solve and the exact ranker."""

from __future__ import annotations

import numpy as np
import pytest

from ranking_core import GaussianKernel, SpectralRanker
from ranking_core.learners.conjugate_gradient import CGOptions, lavrentiev_cg


def _data(m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 600, size=(m, 2))
    y = np.round(np.clip(np.abs(X[:, 0] - X[:, 1]) / 100 + rng.normal(0, 0.3, m), 0, 4))
    return X, y


@pytest.mark.parametrize(
    ("rank", "options"),
    [
        (0, CGOptions()),
        (0, CGOptions(cache_bytes=0, block_entries=7 * 300)),
        (40, CGOptions(cache_bytes=0)),
    ],
)
def test_cg_equals_the_direct_solve(rank: int, options: CGOptions) -> None:
    X, y = _data(300)
    lam = 1e-3
    kernel = GaussianKernel(1e4)
    m = len(y)
    C = np.eye(m) - 1.0 / m
    direct = np.linalg.solve(C @ kernel(X, X) @ C / m + lam * np.eye(m), C @ y / m)
    solution = lavrentiev_cg(
        kernel, X, y, lam, tol=1e-12, preconditioner_rank=rank, options=options
    )
    assert solution.converged
    np.testing.assert_allclose(solution.coef, direct, atol=1e-8 * np.abs(direct).max())
    exact = SpectralRanker(gamma=1e4, lam=lam, solver="dense").fit(X, y)
    assert solution.intercept == pytest.approx(exact.intercept_, abs=1e-8)


def test_nystrom_preconditioner_cuts_the_iterations() -> None:
    X, y = _data(400, seed=1)
    kernel = GaussianKernel(1e4)
    plain = lavrentiev_cg(kernel, X, y, 1e-5, tol=1e-10)
    preconditioned = lavrentiev_cg(kernel, X, y, 1e-5, tol=1e-10, preconditioner_rank=100)
    assert plain.converged and preconditioned.converged
    assert preconditioned.iterations < plain.iterations / 3
    np.testing.assert_allclose(
        preconditioned.coef, plain.coef, atol=1e-6 * np.abs(plain.coef).max()
    )


def test_rejects_a_non_positive_lambda() -> None:
    X, y = _data(10)
    with pytest.raises(ValueError, match="'lam'"):
        lavrentiev_cg(GaussianKernel(1e4), X, y, 0.0)
