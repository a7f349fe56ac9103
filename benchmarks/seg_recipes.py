"""The SEG-reconstruction variants tried beyond Kriukova et al. 2014 (docs/RESULTS.md). Prints JSON.

Each variant is the Table 3 protocol (``run_seg_table3``: m ratings uniform on [0, 600]², SEG
abs_risk labels, misranking on 1,000 new points) with one recipe; the same seed gives every
variant the same training and test draws, so differences between variants are paired.

    SEG_TABLE=... python benchmarks/seg_recipes.py --variants paper,kfold --reps 8 --seed 1

``rotated`` and ``rotated-laplacian`` need more than a recipe and are defined here only: a
Gaussian (or L1 kernel) on the (sum, difference) of the log-warped coordinates, anisotropic along /
across the diagonal (they do not factorise over REF and estimate). ``anchors`` =
``best-no-anchors`` plus 41 zero-risk points (g, g), g = 0, 15, …, 600 mg/dL (prior knowledge, not
ratings) was the best Gaussian recipe; ``best`` is the same with the Laplacian kernel γ = 10³.
``multiscale-*``, ``matern32-*``, ``laplacian-gaussian-*``, ``laplacian-300-3000`` are
``anchors`` with another kernel (sums of kernels, product Matérn 3/2; experiment only). Target
transforms and bagging change the fit, not the recipe: ``benchmarks/seg_targets_bagging.py``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.spatial.distance import cdist

from ranking_core import SpectralRanker
from ranking_core.experiments.seg import run_seg_table3
from ranking_core.filters import IteratedLavrentiev
from ranking_core.grids.coordinates import GlucoseTransform, TransformedKernel
from ranking_core.grids.seg import find_seg_table
from ranking_core.kernels import GaussianKernel, Kernel, LaplacianKernel
from ranking_core.recipes import BEST_RECIPE, PAPER_RECIPE, SEGRecipe

LOG50 = GlucoseTransform("log", offset=50.0)
WIDE = (1e3, 2e3, 4e3, 8e3, 1.6e4)
KFOLD_SIGNED_LOG = {"transform": LOG50, "selection": "kfold", "n_lams": 400, "signed": True}


@dataclass(frozen=True)
class DiagonalFrameKernel(Kernel):
    """exp(−(u − u')²/γ_u − (v − v')²/γ_v), u, v = (t(REF) ± t(est))/√2 (experiment only)."""

    gamma: tuple[float, float]
    transform: GlucoseTransform
    smooth: ClassVar[bool] = True

    def _frame(self, X):
        w = self.transform(np.atleast_2d(X))
        return np.column_stack([w[:, 0] + w[:, 1], w[:, 0] - w[:, 1]]) / np.sqrt(2.0)

    def __call__(self, X, Y):
        return GaussianKernel(self.gamma)(self._frame(X), self._frame(Y))

    def diagonal(self, X):
        return np.ones(len(np.atleast_2d(X)))


@dataclass(frozen=True)
class DiagonalFrameLaplacian(DiagonalFrameKernel):
    """exp(−|u − u'|/γ_u − |v − v'|/γ_v) in the frame of :class:`DiagonalFrameKernel`."""

    smooth: ClassVar[bool] = False

    def __call__(self, X, Y):
        scale = np.asarray(self.gamma, dtype=np.float64)
        return np.exp(-cdist(self._frame(X) / scale, self._frame(Y) / scale, "cityblock"))


@dataclass(frozen=True)
class SumKernel(Kernel):
    """Σ_k w_k K_k(x, x') with w_k ≥ 0 (PSD; multi-scale when the parts differ in width)."""

    parts: tuple[Kernel, ...]
    weights: tuple[float, ...]
    smooth: ClassVar[bool] = False

    def __call__(self, X, Y):
        return sum(w * k(X, Y) for w, k in zip(self.weights, self.parts, strict=True))

    def diagonal(self, X):
        return sum(w * k.diagonal(X) for w, k in zip(self.weights, self.parts, strict=True))


@dataclass(frozen=True)
class Matern32Product(Kernel):
    """Π_k (1 + √3|d_k|/ℓ)·exp(−√3|d_k|/ℓ), the product of 1-D Matérn-3/2 kernels."""

    length: float
    smooth: ClassVar[bool] = False

    def __call__(self, X, Y):
        X, Y = np.atleast_2d(X), np.atleast_2d(Y)
        d = np.abs(X[:, None, :] - Y[None, :, :]) * np.sqrt(3.0) / self.length
        return np.prod((1.0 + d) * np.exp(-d), axis=-1)

    def diagonal(self, X):
        return np.ones(len(np.atleast_2d(X)))


@dataclass(frozen=True)
class KernelRecipe(SEGRecipe):
    """A recipe whose kernel is ``make(γ)`` on the recipe's warped coordinates."""

    make: Callable[[object], Kernel] | None = None

    def ranker(self, gamma):
        return SpectralRanker(kernel=TransformedKernel(self.make(gamma), self.transform),
                              filter=self.filter)


def kernel_variant(name: str, gammas: tuple, make: Callable[[object], Kernel]) -> KernelRecipe:
    """``anchors`` (the best Gaussian recipe) with the kernel ``make(γ)``."""
    return KernelRecipe(name, gammas=gammas, make=make, diagonal_anchors=41, **KFOLD_SIGNED_LOG)


@dataclass(frozen=True)
class RotatedRecipe(SEGRecipe):
    def ranker(self, gamma):
        frame = DiagonalFrameLaplacian if self.kernel == "laplacian" else DiagonalFrameKernel
        return SpectralRanker(kernel=frame(gamma, self.transform), filter=self.filter)


def laplacian(name: str, **changes) -> SEGRecipe:
    """The best recipe (L1 kernel γ = 10³, log50, signed, 41 anchors, 5-fold) with changes."""
    return SEGRecipe(name, **{**KFOLD_SIGNED_LOG, "kernel": "laplacian", "gammas": (1e3,),
                              "diagonal_anchors": 41, **changes})


VARIANTS: dict[str, SEGRecipe] = {
    "paper": PAPER_RECIPE,
    "lams400": SEGRecipe("lams400", n_lams=400),
    "kfold": SEGRecipe("kfold", selection="kfold"),
    "kfold-lams400": SEGRecipe("kfold-lams400", selection="kfold", n_lams=400),
    "gamma-choice": SEGRecipe("gamma-choice", gammas=WIDE, n_lams=400),
    "log50": SEGRecipe("log50", transform=LOG50, n_lams=400),
    "log50-gamma-choice": SEGRecipe("log50-gamma-choice", gammas=WIDE, transform=LOG50,
                                    n_lams=400),
    "log20-gamma-choice": SEGRecipe("log20-gamma-choice", gammas=WIDE, n_lams=400,
                                    transform=GlucoseTransform("log", 20.0)),
    "log100-gamma-choice": SEGRecipe("log100-gamma-choice", gammas=WIDE, n_lams=400,
                                     transform=GlucoseTransform("log", 100.0)),
    "anisotropic": SEGRecipe("anisotropic", gammas=((4e3, 1.6e4), (1.6e4, 4e3), (8e3, 8e3)),
                             n_lams=400),
    "iterated2": SEGRecipe("iterated2", filter=IteratedLavrentiev(2), n_lams=400),
    "iterated3": SEGRecipe("iterated3", filter=IteratedLavrentiev(3), n_lams=400),
    "signed": SEGRecipe("signed", signed=True),
    "kfold-signed": SEGRecipe("kfold-signed", selection="kfold", n_lams=400, signed=True),
    "kfold-signed-log50": SEGRecipe("kfold-signed-log50", **KFOLD_SIGNED_LOG),
    "ksl-gammas-2k-16k": SEGRecipe("ksl-gammas-2k-16k", gammas=(2e3, 4e3, 8e3, 1.6e4),
                                   **KFOLD_SIGNED_LOG),
    "ksl-gammas-16k-64k": SEGRecipe("ksl-gammas-16k-64k", gammas=(1.6e4, 3.2e4, 6.4e4),
                                    **KFOLD_SIGNED_LOG),
    "ksl-iterated2": SEGRecipe("ksl-iterated2", gammas=(4e3, 8e3),
                               filter=IteratedLavrentiev(2), **KFOLD_SIGNED_LOG),
    "ksl-iterated2-wide": SEGRecipe("ksl-iterated2-wide", gammas=(3.2e4, 6.4e4),
                                    filter=IteratedLavrentiev(2), **KFOLD_SIGNED_LOG),
    "ksl-10fold-wide": SEGRecipe("ksl-10fold-wide", gammas=(3.2e4, 6.4e4), n_splits=10,
                                 **KFOLD_SIGNED_LOG),
    "kfold-signed-log20": SEGRecipe("kfold-signed-log20", selection="kfold", n_lams=400,
                                    signed=True, transform=GlucoseTransform("log", 20.0)),
    "kfold-signed-log100": SEGRecipe("kfold-signed-log100", selection="kfold", n_lams=400,
                                     signed=True, transform=GlucoseTransform("log", 100.0)),
    "kfold-signed-linear-wide": SEGRecipe("kfold-signed-linear-wide", gammas=(1.6e4, 3.2e4, 6.4e4),
                                          selection="kfold", n_lams=400, signed=True),
    "ksl-anisotropic": SEGRecipe("ksl-anisotropic", gammas=((8e3, 1.6e4), (1.6e4, 8e3),
                                                           (1.6e4, 3.2e4), (3.2e4, 1.6e4)),
                                 **KFOLD_SIGNED_LOG),
    "best-no-anchors": SEGRecipe("best-no-anchors", gammas=(1.6e4,), **KFOLD_SIGNED_LOG),
    "best": BEST_RECIPE,
    "best-10fold": SEGRecipe("best-10fold", gammas=(1.6e4,), n_splits=10, **KFOLD_SIGNED_LOG),
    "best-10fold-gamma12k": SEGRecipe("best-10fold-gamma12k", gammas=(1.2e4,), n_splits=10,
                                      **KFOLD_SIGNED_LOG),
    "best-fine-lams": SEGRecipe("best-fine-lams", gammas=(1.6e4,), q=0.98,
                                **{**KFOLD_SIGNED_LOG, "n_lams": 1000}),
    "best-gamma12k": SEGRecipe("best-gamma12k", gammas=(1.2e4,), **KFOLD_SIGNED_LOG),
    "best-gamma24k": SEGRecipe("best-gamma24k", gammas=(2.4e4,), **KFOLD_SIGNED_LOG),
    "best-cutoff": SEGRecipe("best-cutoff", gammas=(1.6e4,), filter="spectral-cutoff",
                             **KFOLD_SIGNED_LOG),
    "best-showalter": SEGRecipe("best-showalter", gammas=(1.6e4,), filter="showalter",
                                **KFOLD_SIGNED_LOG),
    "rotated": RotatedRecipe("rotated", gammas=((3.2e4, 4e3), (1.6e4, 4e3), (1.6e4, 2e3),
                                                (3.2e4, 8e3)), **KFOLD_SIGNED_LOG),
    "anchors": SEGRecipe("anchors", gammas=(1.6e4,), diagonal_anchors=41, **KFOLD_SIGNED_LOG),
    **{f"laplacian-{g:g}": laplacian(f"laplacian-{g:g}", gammas=(g,))
       for g in (250.0, 700.0, 1000.0, 1500.0, 2000.0, 4000.0)},
    "laplacian-gamma-choice": laplacian("laplacian-gamma-choice", gammas=(1e3, 2e3, 4e3)),
    "laplacian-no-anchors": laplacian("laplacian-no-anchors", diagonal_anchors=0),
    "laplacian-unsigned": laplacian("laplacian-unsigned", signed=False),
    "laplacian-linear": laplacian("laplacian-linear", transform=None),
    "laplacian-10fold": laplacian("laplacian-10fold", n_splits=10),
    "laplacian-log20": laplacian("laplacian-log20", transform=GlucoseTransform("log", 20.0)),
    "laplacian-log100": laplacian("laplacian-log100", transform=GlucoseTransform("log", 100.0)),
    **{f"multiscale-{a:g}-{b:g}-{w:g}": kernel_variant(
        f"multiscale-{a:g}-{b:g}-{w:g}", ((a, b),),
        lambda g, w=w: SumKernel((GaussianKernel(g[0]), GaussianKernel(g[1])), (1.0, w)))
       for a, b, w in ((1.6e4, 2e3, 0.3), (1.6e4, 4e3, 0.5), (3.2e4, 8e3, 1.0),
                       (6.4e4, 8e3, 1.0))},
    **{f"matern32-{ell:g}": kernel_variant(f"matern32-{ell:g}", (ell,), Matern32Product)
       for ell in (150.0, 300.0)},
    **{f"laplacian-gaussian-{w:g}": kernel_variant(
        f"laplacian-gaussian-{w:g}", ((1e3, 1.6e4),),
        lambda g, w=w: SumKernel((LaplacianKernel(g[0]), GaussianKernel(g[1])), (1.0, w)))
       for w in (1.0, 0.2)},
    "laplacian-300-3000": kernel_variant(
        "laplacian-300-3000", ((300.0, 3e3),),
        lambda g: SumKernel((LaplacianKernel(g[0]), LaplacianKernel(g[1])), (1.0, 1.0))),
    "rotated-laplacian": RotatedRecipe("rotated-laplacian", kernel="laplacian",
                                       gammas=((1e3, 1e3), (2e3, 500.0), (4e3, 1e3)),
                                       diagonal_anchors=41, **KFOLD_SIGNED_LOG),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="paper,best", help=f"of {', '.join(VARIANTS)}")
    parser.add_argument("--m", type=int, default=400)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    table = find_seg_table()
    names = args.variants.split(",")
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    for name in names:
        start = time.perf_counter()
        result = run_seg_table3(table, (args.m,), args.reps, VARIANTS[name], seed=args.seed)
        entry = result["sizes"][str(args.m)]
        print(json.dumps({
            "variant": name, "m": args.m, "reps": args.reps, "seed": args.seed,
            "misranking_mean": entry["misranking_mean"], "misranking_sd": entry["misranking_sd"],
            "misranking": entry["misranking"],
            "share_below_0.5": entry["delta_bins"]["0–0.5"],
            "lambda_median": float(np.median(entry["lambda"])),
            "gammas_chosen": entry["gamma"], "seconds": time.perf_counter() - start,
        }), flush=True)


if __name__ == "__main__":
    main()
