"""The learners of the per-user protocol (:mod:`ranking_core.cf.per_user`), by name: the column
names of Kriukova et al. 2014, Table 2 (:data:`PROTOCOL_LEARNERS`) and every other learner of the
shared registry :data:`ranking_core.learners.LEARNERS` (:data:`LEARNERS`). Importable without
NumPy: ``riskgrid cf per-user --help`` lists them at once.
"""

from __future__ import annotations

from ranking_core.learners import LEARNERS as REGISTRY

__all__ = ["LEARNERS", "PROTOCOL_LEARNERS"]

# The per-user protocol learners (Kriukova et al. 2014, Table 2's columns) → their registry entries.
PROTOCOL_LEARNERS = {
    "iterated-lavrentiev": "spectral-iterated-lavrentiev",
    "lavrentiev": "spectral-lavrentiev",
    "spectral-cutoff": "spectral-spectral-cutoff",
    "slr": "regressor",
    "rankboost": "rankboost",
}
# Every registry learner once (but those made for glucose pairs only): under its protocol name if
# it has one, else its registry name.
LEARNERS = (
    *PROTOCOL_LEARNERS,
    *(
        name
        for name, spec in REGISTRY.items()
        if name not in PROTOCOL_LEARNERS.values() and not spec.glucose_pairs
    ),
)
