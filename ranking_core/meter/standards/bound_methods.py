"""The methods of a lower confidence bound, by name: :data:`BOUNDS` (each with its label for
reports and the text it follows), the one judged when none is chosen (:func:`default_bound`) and
those a planned study can be judged by (:data:`PLAN_BOUNDS`). Plain Python: the command line's
help lists them at once; the bounds are computed by
:func:`ranking_core.meter.standards.bounds.lower_bound` (the methods are described there).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BOUNDS", "PLAN_BOUNDS", "BoundMethod", "default_bound"]


@dataclass(frozen=True)
class BoundMethod:
    """A bound method: its registry key, a label for reports and the text it follows."""

    key: str
    label: str
    citation: str
    clustered: bool


BOUNDS: dict[str, BoundMethod] = {
    m.key: m
    for m in (
        BoundMethod(
            "cp",
            "exact Clopper–Pearson",
            "Clopper CJ, Pearson ES. Biometrika 1934;26:404–413",
            False,
        ),
        BoundMethod(
            "kg",
            "Korn–Graubard (Clopper–Pearson on the effective sample size, with the "
            "degrees-of-freedom factor of R survey::svyciprop)",
            "Korn EL, Graubard BI. Survey Methodology 1998;24:193–201",
            True,
        ),
        BoundMethod(
            "wilson-cc",
            "clustered continuity-corrected Wilson",
            "Short MI et al. Stat Methods Med Res 2020;29(1):111–121",
            True,
        ),
        BoundMethod(
            "bootstrap",
            "BCa bootstrap over clusters",
            "Stephan P et al. Diabetes Technol Ther 2022, doi:10.1089/dia.2022.0331; "
            "DiCiccio TJ, Efron B. Stat Sci 1996;11:189–228",
            True,
        ),
    )
}


def default_bound(clustered: bool) -> str:
    """The bound judged when none is chosen: ``kg`` when the pairs come in clusters (a sensor or
    subject column; a planned study with an intra-class correlation above 0), else ``cp``. The
    report and the planner both read it here."""
    return "kg" if clustered else "cp"


# the bound methods a plan simulates (ranking_core.meter.standards.study_plan; the bootstrap's
# 10,000 resamples per draw are too costly)
PLAN_BOUNDS = ("cp", "kg", "wilson-cc")
