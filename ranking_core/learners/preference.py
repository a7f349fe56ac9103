"""RankRLS on a weighted preference graph (Pahikkala et al. 2009, §2.3–3.2, eqs. (11)–(31)).

A preference e = (h, j, y_e) says x_h is preferred to x_j with magnitude y_e. With the incidence
matrix M (column e = w_e(e_h − e_j)) and N_e = w_e z_e, RankRLS minimises

    Σ_e w_e² (z_e − (f(x_h) − f(x_j)))² + λ‖f‖²_H                    (eq. (16))

with dual solution A = (MMᵀK + λI)⁻¹MN (eq. (17)). The cost functions of §2.4 are
(20) ``"unit"``: z = 1, w = 1; (21) ``"magnitude"``: z = y_e, w = 1; (22) ``"relative"``:
z = y_e, w = 1/y_e. The Laplacian L = MMᵀ = Σ_e w_e²(e_h − e_j)(e_h − e_j)ᵀ and MN are built
from the edge list in O(l) (eq. (18)) as a sparse matrix; no m × l matrix is formed.

The λ path (§3.2) uses a symmetric form of the same decomposition: with K^{1/2}LK^{1/2} =
W diag(μ) Wᵀ the training predictions are f_λ = K^{1/2}W(μ + λ)⁻¹WᵀK^{1/2}MN and, from (17),
A(λ) = (MN − L f_λ)/λ, so every λ costs O(m²) after O(m³) once. The primal form (eq. (28), linear
kernel, d features) decomposes XᵀLX (d × d) instead: w(λ) = V(μ + λ)⁻¹VᵀXᵀMN.

In the scoring setting the edges are the pairs of a scoring y, optionally only inside queries
(label ranking, Pahikkala et al. 2009, §3: L = D − PPᵀ per query). With all pairs and cost (21),
RankRLS is the Lavrentiev ranker of Kriukova et al. 2014: λ_RankRLS = m²·λ.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse
from numpy.typing import ArrayLike, NDArray

from ranking_core.kernels import Kernel, LinearKernel
from ranking_core.learners.base import KernelPathEstimator, store_params
from ranking_core.spectral import Spectrum
from ranking_core.validation import check_inputs, describe_rows, one_of, positive_float

__all__ = ["PreferenceRanker", "preference_edges", "preference_laplacian"]

COSTS = ("unit", "magnitude", "relative")
SOLVERS = ("auto", "dual", "primal")


def preference_edges(
    y: NDArray[np.float64], groups: NDArray | None = None, *, include_ties: bool = False
) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float64]]:
    """Edges (head, tail, magnitude = y_head − y_tail ≥ 0) of the scoring y, one per pair of
    inputs in the same query (all inputs form one query when ``groups`` is None); tied pairs only
    with ``include_ties``. O(Σ_q m_q²)."""
    groups = np.zeros(len(y), dtype=np.intp) if groups is None else np.asarray(groups)
    heads, tails = [], []
    for label in np.unique(groups):
        members = np.flatnonzero(groups == label)
        a, b = np.triu_indices(len(members), 1)
        a, b = members[a], members[b]
        swap = y[a] < y[b]
        heads.append(np.where(swap, b, a))
        tails.append(np.where(swap, a, b))
    head, tail = np.concatenate(heads), np.concatenate(tails)
    magnitude = y[head] - y[tail]
    keep = slice(None) if include_ties else magnitude > 0
    return head[keep], tail[keep], magnitude[keep]


def _weights_and_targets(magnitude: NDArray, cost: str) -> tuple[NDArray, NDArray]:
    """(w_e², w_e²·z_e) for the cost functions (20), (21), (22) of Pahikkala et al. 2009."""
    if cost == "unit":
        return np.ones_like(magnitude), np.ones_like(magnitude)
    if cost == "magnitude":
        return np.ones_like(magnitude), magnitude
    return 1.0 / magnitude**2, 1.0 / magnitude


def preference_laplacian(
    head: NDArray[np.intp], tail: NDArray[np.intp], magnitude: NDArray, m: int, cost: str
) -> tuple[scipy.sparse.csr_array, NDArray[np.float64]]:
    """(L = MMᵀ as a sparse m × m matrix, MN (m,)) in O(l) (Pahikkala et al. 2009, eq. (18))."""
    w2, w2z = _weights_and_targets(magnitude, cost)
    rows = np.concatenate([head, tail, head, tail])
    cols = np.concatenate([head, tail, tail, head])
    values = np.concatenate([w2, w2, -w2, -w2])
    laplacian = scipy.sparse.coo_array((values, (rows, cols)), shape=(m, m)).tocsr()
    # float64: the counts are weighted by w2z
    mn = np.asarray(
        np.bincount(head, weights=w2z, minlength=m) - np.bincount(tail, weights=w2z, minlength=m),
        dtype=np.float64,
    )
    return laplacian, mn


class PreferenceRanker(KernelPathEstimator):
    """RankRLS (Pahikkala et al. 2009, eqs. (16)–(17), (20)–(22), (28), (31)) on a preference graph.

    Parameters
    ----------
    kernel, gamma, degree, coef0 : as for :class:`~ranking_core.SpectralRanker`.
    lam : λ of eq. (16) (RankRLS scaling: λ = m²·λ_SpectralRanker for all pairs and cost (21)).
    cost : ``"unit"`` (eq. (20)), ``"magnitude"`` (eq. (21)) or ``"relative"`` (eq. (22),
        widths 1/y_e; needs every magnitude > 0).
    solver : ``"dual"`` (eq. (17), O(m³ + l)), ``"primal"`` (eq. (28), linear kernel,
        O(d³ + d²m + l)) or ``"auto"`` (primal for a linear kernel with d < m).

    ``fit(X, y, groups=None)`` builds the edges from the scoring y (pairs inside each query of
    ``groups``; tied pairs are kept, with magnitude 0, only for cost (21) as in Pahikkala et al.
    2009, §3); a 2-D y of v scorings (cost (21)) learns v rankers from one decomposition (§3.2).
    ``fit(X, edges=(head, tail, magnitude))`` takes a general preference graph (row indices).

    Attributes
    ----------
    coef_ : (m,) or (m, v) dual coefficients A (or (d,) / (d, v) primal weights W).
    intercept_ : puts the mean training prediction on the mean score (0 for an edge list).
    spectrum_ : the decomposition (vectors W or V, values μ) shared by every λ.
    """

    def __init__(
        self,
        kernel: str | Kernel = "gaussian",
        gamma: float | ArrayLike | None = None,
        lam: float = 1.0,
        *,
        cost: str = "magnitude",
        solver: str = "auto",
        degree: int | None = None,
        coef0: float | None = None,
    ) -> None:
        store_params(self, locals())

    # -- fitting ---------------------------------------------------------------------------
    def _check_params(self) -> None:
        owner = type(self).__name__
        positive_float(self.lam, "lam", owner)
        one_of(self.cost, "cost", COSTS, owner)
        one_of(self.solver, "solver", SOLVERS, owner)
        self._resolve_kernel()

    def _graph(
        self, X: NDArray, y: ArrayLike | None, groups: ArrayLike | None, edges: tuple | None
    ) -> tuple[scipy.sparse.csr_array, NDArray, NDArray | None]:
        owner, m = type(self).__name__, len(X)
        if y is None and edges is None:
            raise ValueError(
                f"{owner} requires y to be passed, but the target y is None "
                "(or pass edges=(head, tail, magnitude))"
            )
        if y is not None and edges is not None:
            raise ValueError(f"{owner}.fit needs exactly one of y (a scoring) and edges")
        if edges is not None:
            head, tail, magnitude = (np.asarray(a) for a in edges)
            bad = np.flatnonzero(
                (head < 0)
                | (head >= m)
                | (tail < 0)
                | (tail >= m)
                | (head == tail)
                | ~np.isfinite(magnitude)
            )
            if bad.size:
                raise ValueError(
                    f"{owner}: edge list {describe_rows(bad)} invalid (rule: "
                    f"head ≠ tail, both in 0..{m - 1}, finite magnitude)"
                )
            if self.cost == "relative" and np.any(magnitude <= 0):
                bad = np.flatnonzero(magnitude <= 0)
                raise ValueError(
                    f"{owner}: edge list {describe_rows(bad)}: magnitude ≤ 0 "
                    "(rule: cost='relative' uses widths 1/magnitude)"
                )
            laplacian, mn = preference_laplacian(
                head.astype(np.intp),
                tail.astype(np.intp),
                magnitude.astype(np.float64),
                m,
                self.cost,
            )
            return laplacian, mn, None
        Y = np.asarray(y, dtype=np.float64)
        if Y.shape[0] != m or Y.ndim > 2:
            raise ValueError(
                f"{owner}: y must have {m} rows (one score per input); got shape {Y.shape}"
            )
        bad = np.flatnonzero(~np.isfinite(Y.reshape(m, -1)).all(axis=1))
        if bad.size:
            raise ValueError(
                f"{owner}: y has NaN or infinite values in {describe_rows(bad)} "
                "(rule: every score must be a finite number)"
            )
        if Y.ndim == 2 and self.cost != "magnitude":
            raise ValueError(
                f"{owner}: several outputs share one preference graph only with "
                f"cost='magnitude'; got cost={self.cost!r}"
            )
        groups = None if groups is None else np.asarray(groups).ravel()
        if groups is not None and len(groups) != m:
            raise ValueError(f"{owner}: groups has {len(groups)} values for {m} inputs")
        first = Y if Y.ndim == 1 else Y[:, 0]
        head, tail, magnitude = preference_edges(
            first, groups, include_ties=self.cost == "magnitude"
        )
        if head.size == 0:
            raise ValueError(f"{owner}: y gives no preference (every pair is tied)")
        laplacian, mn = preference_laplacian(head, tail, magnitude, m, self.cost)
        if Y.ndim == 2:  # cost (21) with ties: L does not depend on y, and MN = L·y
            mn = laplacian @ Y
        return laplacian, mn, Y

    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike | None = None,
        *,
        groups: ArrayLike | None = None,
        edges: tuple[ArrayLike, ArrayLike, ArrayLike] | None = None,
    ) -> PreferenceRanker:
        """Decompose once (Pahikkala et al. 2009, §3.2) and solve at ``lam``.

        Parameters
        ----------
        X : (m, d) inputs. y : (m,) or (m, v) scores (the scoring setting).
        groups : (m,) query labels: preferences only inside a query (label ranking).
        edges : (head, tail, magnitude), each (l,): x_head preferred to x_tail.
        """
        self._check_params()
        owner = type(self).__name__
        X = check_inputs(X, owner)
        if len(X) < 2:
            raise ValueError(f"{owner}: need at least 2 training points, got {len(X)} sample(s)")
        self.n_features_in_ = X.shape[1]
        laplacian, mn, Y = self._graph(X, y, groups, edges)
        linear = isinstance(self.kernel_, LinearKernel)
        solver = self.solver
        if solver == "auto":
            solver = "primal" if linear and X.shape[1] < len(X) else "dual"
        if solver == "primal" and not linear:
            raise ValueError(
                f"{owner}: solver='primal' needs kernel='linear'; got kernel={self.kernel!r}"
            )
        self._laplacian, self._mn = laplacian, mn
        if solver == "primal":
            self.X_fit_ = None
            values, vectors = scipy.linalg.eigh(X.T @ (laplacian @ X), driver="evd")
            rhs = X.T @ mn
            self._train_features = X
        else:
            self.X_fit_ = X
            kappa, U = scipy.linalg.eigh(self.kernel_(X, X), driver="evd")
            root = (U * np.sqrt(np.maximum(kappa, 0.0))) @ U.T  # K^{1/2}
            values, vectors = scipy.linalg.eigh(root @ (laplacian @ root), driver="evd")
            self._root_vectors = root @ vectors
            rhs = root @ mn
        values = np.maximum(values, 0.0)
        projection = vectors.T @ rhs
        self.spectrum_ = Spectrum(
            vectors=vectors,
            values=values,
            rhs=rhs,
            projection=projection,
            residual=np.zeros(len(vectors)),
            feature_mean=X.mean(axis=0) if solver == "primal" else np.zeros(len(X)),
            norm_weights=projection**2 if projection.ndim == 1 else np.sum(projection**2, 1),
            method=solver,
        )
        self._score_mean = None if Y is None else Y.mean(axis=0)
        self._set_solution(positive_float(self.lam, "lam", owner))
        return self

    def _solution(self, lams: NDArray[np.float64]) -> tuple[NDArray, NDArray, NDArray]:
        """(coef (L, p[, v]), intercept (L[, v]), factors (L, r)) for every λ; O(m²) each."""
        factors = 1.0 / (self.spectrum_.values[None, :] + lams[:, None])
        proj = self.spectrum_.projection
        scaled = factors[..., None] * proj if proj.ndim == 2 else factors * proj  # (L, r[, v])
        if self.spectrum_.method == "primal":
            coef = np.einsum("pr,lr...->lp...", self.spectrum_.vectors, scaled)
            train = np.einsum("mp,lp...->lm...", self._train_features, coef)
        else:
            train = np.einsum("mr,lr...->lm...", self._root_vectors, scaled)  # f_λ(X)
            lap_train = np.stack([self._laplacian @ t for t in train])
            shape = (-1,) + (1,) * (train.ndim - 1)
            coef = (self._mn[None] - lap_train) / lams.reshape(shape)  # A = (MN − L f)/λ
        if self._score_mean is None:
            intercept = np.zeros(train.shape[:1] + train.shape[2:])
        else:
            intercept = self._score_mean - train.mean(axis=1)
        return coef, intercept, factors
