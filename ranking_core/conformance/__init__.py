"""Conformance of riskgrid's statistics with public test vectors: data another project published
with the numbers that project computed from it (``$RISKGRID_CONFORMANCE``, one folder per
vector, described in that folder's README). Each vector gives rows of :class:`Comparison` —
the published number, ours, their difference and, where they differ, the known reason — and
:func:`conformance_markdown` writes them as the tables of ``docs/CONFORMANCE.md``.

Vectors (:data:`VECTORS`):

* ``ifdtulm-ci`` — agreement rates of an iCGM study and their one-sided 95 % lower bounds
  (Clopper–Pearson, clustered continuity-corrected Wilson, BCa bootstrap over sensors) from the
  IfDTUlm reference implementation (Stephan et al., Diabetes Technol Ther 2022).
* ``ega`` — Clarke and Parkes (type 1) zone counts of the R package ega's example data.
* ``seg-app`` — the official SEG app's reports of its two example files (needs the SEG table).
* ``cg-diva`` — CG-DIVA deviation intervals and sensor variability of the IfDTUlm test data
  (Eichenlaub et al., J Diabetes Sci Technol 2022); optional: left out when the data folder has
  no ``cg-diva/`` (:data:`OPTIONAL_VECTORS`).
* ``ctca`` — the Clinical Trend Concurrence Analysis of the IfDTUlm trend test data (Eichenlaub,
  Pleus, Freckmann); optional like ``cg-diva``.
* ``dgr`` — comparator data coverage by Dynamic Glucose Regions of the IfDTUlm test data
  (Eichenlaub et al., Diabetes Technol Ther 2024; regions of the IFCC WG-CGM guideline 2025):
  counts per region and the exclusion ellipse as their code computes them; optional.
* ``cg-ega`` — the continuous glucose-error grid analysis of the documented example of the open
  Python implementation dotXem/CG-EGA (Kovatchev et al., Diabetes Care 2004); optional.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "CONFORMANCE_ENV",
    "MAX_VECTOR_BYTES",
    "OPTIONAL_VECTORS",
    "VECTORS",
    "Comparison",
    "ConformanceDataError",
    "check_file",
    "compare_all",
    "conformance_markdown",
    "left_out_vectors",
]

from ranking_core.conformance.common import (
    CONFORMANCE_ENV,
    MAX_VECTOR_BYTES,
    Comparison,
    ConformanceDataError,
    check_file,
)


def _ifdtulm(data: Path, seg_table: object | None) -> list[Comparison]:
    from ranking_core.conformance.ifdtulm import compare_ifdtulm

    return compare_ifdtulm(data / "ifdtulm-ci")


def _ega(data: Path, seg_table: object | None) -> list[Comparison]:
    from ranking_core.conformance.ega import compare_ega

    return compare_ega(data / "ega")


def _seg_app(data: Path, seg_table: object | None) -> list[Comparison]:
    from ranking_core.conformance.seg_app import compare_seg_app
    from ranking_core.grids.seg import SEGTable

    if not isinstance(seg_table, SEGTable):  # the vectors table leaves seg-app out without one
        raise ConformanceDataError("seg-app needs the SEG table (--seg-table or $SEG_TABLE)")
    return compare_seg_app(data / "seg-app", seg_table)


def _cg_diva(data: Path, seg_table: object | None) -> list[Comparison]:
    from ranking_core.conformance.cg_diva import compare_cg_diva

    return compare_cg_diva(data / "cg-diva")


def _ctca(data: Path, seg_table: object | None) -> list[Comparison]:
    from ranking_core.conformance.ctca import compare_ctca

    return compare_ctca(data / "ctca")


def _dgr(data: Path, seg_table: object | None) -> list[Comparison]:
    from ranking_core.conformance.dgr import compare_dgr

    return compare_dgr(data / "dgr")


def _cg_ega(data: Path, seg_table: object | None) -> list[Comparison]:
    from ranking_core.conformance.cg_ega import compare_cg_ega

    return compare_cg_ega(data / "cg-ega")


# name → (title, what it checks, comparison function of (data folder, SEG table or None))
VECTORS: dict[str, tuple[str, str, Callable[[Path, object | None], list[Comparison]]]] = {
    "ifdtulm-ci": (
        "iCGM agreement rates and their lower confidence bounds",
        "IfDTUlm CGM_Performance_Assessment, “Confidence Intervals” (commit 1627801c): "
        "3,600 pairs of 24 sensors; their Python and R results. Ranges by the CGM value; "
        "criteria A–G of 21 CFR 862.1355 through the iCGM acceptance profile of "
        "`riskgrid meter-report`, the other cells by the same rule; bounds by "
        "`ranking_core.meter.standards.bounds.lower_bound`. Tolerances: rates and Clopper–Pearson "
        "and Wilson bounds to 0.0001 percentage point, the intra-class correlation to 1e-6; the "
        "BCa bootstrap (10,000 resamples, seed 1) is Monte Carlo with random numbers of its own "
        "(their R and Python results differ by up to 0.09 point), compared to 0.75 point.",
        _ifdtulm,
    ),
    "ega": (
        "Clarke and Parkes (type 1) zones",
        "R package ega 2.0.0 (commit 04e9e90b): `glucose_data`, 5,072 pairs; zone counts "
        "published in its vignette. Ours from the registered grids `clarke` and "
        "`parkes-type1`.",
        _ega,
    ),
    "seg-app": (
        "The official SEG app's example reports",
        "segtools (the DTS SEG app's R package, commit 529b29bb): its two example files "
        "through `riskgrid meter-report FILE --seg-table $SEG_TABLE --json out.json`; the "
        "app's reports give percentages to one decimal: ours agree when within half that last "
        "digit (0.05).",
        _seg_app,
    ),
    "cg-diva": (
        "CG-DIVA deviation intervals and sensor variability",
        "IfDTUlm CGM_Performance_Assessment, “CG-DIVA” v1.0 (commit 1627801c): 3,600 pairs of "
        "24 sensors; their Python and R results (10,000 resamples over sensors, seed 1). Ranges "
        "by the comparator value; deviations in mg/dL below 70, % from 70 (Total: %). Ours from "
        "`ranking_core.meter.cgm.cg_diva.cg_diva` (what `riskgrid meter-report` shows for pairs "
        "with a sensor column). Medians and variabilities are deterministic (tolerance 1e-6; "
        "their smallest and largest sensor medians are printed to two decimals: 0.005); their "
        "Python draws the same resamples as ours (1e-6); their R draws its own, compared within "
        "1 (inner interval) and 4 (outer interval) — the Monte Carlo error of 10,000 resamples.",
        _cg_diva,
    ),
    "ctca": (
        "Clinical Trend Concurrence Analysis",
        "IfDTUlm CGM_Performance_Assessment, “Clinical Trend Concurrence Analysis” (commit "
        "1627801c): 2,634 pairs with the comparator's rate of change and both categories; "
        "their results as published in their figure `CTCA.png` (shares to one decimal: "
        "tolerance 0.05; MARoC to two: 0.005). Our categories of the comparator's rate "
        "(`ranking_core.meter.cgm.trend.ctca_category`) against theirs pair by pair (128 rates lie "
        "exactly on a category edge), then the concurrence matrix, zones A–D and MARoC from "
        "their categories by `ranking_core.meter.cgm.trend.trend_concurrence`.",
        _ctca,
    ),
    "cg-ega": (
        "Continuous glucose-error grid analysis (CG-EGA)",
        "dotXem/CG-EGA (De Bois 2019, doi:10.5281/zenodo.3459485; commit d4a8898): its "
        "documented example `example.npy`, 246 reference and estimate readings 5 min apart, and "
        "the shares of accurate readings, benign errors and erroneous readings its README "
        "prints. Ours: rates of change as `riskgrid meter-report` computes them "
        "(`ranking_core.meter.standards.acceptance.rates_of_change`), then "
        "`ranking_core.meter.cgm.cg_ega.cg_ega`; every pair's point and rate zone equals theirs, "
        "the error matrix follows the published one where their filters differ (tolerance: "
        "the same ratio of counts, 1e-9 point).",
        _cg_ega,
    ),
    "dgr": (
        "Comparator data coverage (Dynamic Glucose Regions)",
        "IfDTUlm CGM_Performance_Assessment, “Dynamic Glucose Region (DGR) Plot” (commit "
        "1627801c, the regions of the IFCC WG-CGM guideline): their `Test_Data.csv`, 5,285 "
        "comparator readings with rates. Their published figure `DGR_plot.png` predates the "
        "updated regions (it shows n = 4,813), so the expected numbers were computed by their "
        "`DGR_plot.py` at that commit, run unchanged on the file (`region_cnt`, then "
        "`remove_data` for the exclusion ellipse, then `region_cnt` again); they are kept as "
        "data in `ranking_core.conformance.dgr.EXPECTED`. Ours from "
        "`ranking_core.meter.cgm.dgr.dgr`: counts exact, the ellipse's D to 1e-12.",
        _dgr,
    ),
}
# vectors left out, with a sentence saying so, when the data folder lacks their subfolder
OPTIONAL_VECTORS = ("cg-diva", "ctca", "cg-ega", "dgr")


def compare_all(
    data: Path, seg_table: object | None = None, vectors: tuple[str, ...] | None = None
) -> dict[str, list[Comparison]]:
    """Every vector's comparisons (``vectors``: a subset of :data:`VECTORS`), from the folder
    ``data``; ``seg_table`` is the SEG table (the ``seg-app`` vector is left out without it)."""
    chosen = tuple(VECTORS) if vectors is None else vectors
    out = {}
    for name in chosen:
        if name == "seg-app" and seg_table is None:
            continue
        if name in OPTIONAL_VECTORS and not (data / name).is_dir():
            continue
        out[name] = VECTORS[name][2](data, seg_table)
    return out


def _number(value: float | None, decimals: int, signed: bool = False) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    value = round(value, decimals) + 0.0  # no "−0"
    if decimals == 0:
        text = f"{value:+,.0f}" if signed else f"{value:,.0f}"
    else:
        text = f"{value:+.{decimals}f}" if signed else f"{value:.{decimals}f}"
    return text.replace("-", "−")


def _explanation(row: Comparison) -> str:
    if row.status == "agrees":
        return f"agrees (tolerance ±{row.tolerance:g})" if row.tolerance else "equal"
    if row.status == "explained":
        return row.explanation
    return "**differs beyond the tolerance; no known reason**"


def conformance_markdown(results: dict[str, list[Comparison]], left_out: str = "") -> str:
    """``docs/CONFORMANCE.md``: a summary and one table per vector with the columns vector,
    source, statistic, expected, ours, difference, explanation. ``left_out`` is a sentence on
    vectors that were not run."""
    rows = [row for table in results.values() for row in table]
    counts = {s: sum(row.status == s for row in rows) for s in ("agrees", "explained", "differs")}
    lines = [
        "# Conformance with public test vectors",
        "",
        "riskgrid's statistics against numbers published by projects nobody here wrote, on the "
        "data they published. Regenerate this file with "
        "`riskgrid conformance --data DIR --out docs/CONFORMANCE.md` (DIR: the vectors, "
        f"default `${CONFORMANCE_ENV}`; the SEG table from `--seg-table` or `$SEG_TABLE`); "
        "`tests/test_conformance.py` checks that it is up to date.",
        "",
        f"Statistics compared: {len(rows)}; within their tolerance: {counts['agrees']}; "
        f"different for a known reason stated beside them: {counts['explained']}; different "
        f"without a known reason: {counts['differs']}.",
    ]
    if left_out:
        lines += ["", left_out]
    header = "| vector | source | statistic | expected | ours | difference | explanation |"
    for name, table in results.items():
        title, about, _ = VECTORS[name]
        lines += ["", f"## {name}: {title}", "", about, "", header, "|" + " --- |" * 7]
        for row in table:
            cells = (
                row.vector,
                row.source,
                row.statistic,
                _number(row.expected, row.decimals),
                _number(row.ours, row.decimals),
                _number(row.difference, row.decimals, signed=True),
                _explanation(row),
            )
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def left_out_vectors(data: Path) -> str:
    """A sentence naming the optional vectors whose folder ``data`` lacks (empty when none)."""
    absent = [name for name in OPTIONAL_VECTORS if not (data / name).is_dir()]
    if not absent:
        return ""
    names = ", ".join(absent)
    return f"Left out for want of their folder in the data folder: {names}."


def default_data_folder(environ: dict[str, str] | None = None) -> Path | None:
    """The folder named by ``$RISKGRID_CONFORMANCE``, or None."""
    value = (os.environ if environ is None else environ).get(CONFORMANCE_ENV)
    return Path(value) if value else None
