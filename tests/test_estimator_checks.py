"""scikit-learn's estimator checks over every learner class of the registry (γ = 1, suited to the
checks' standardised data), with the few documented exceptions below.

The five ``spectral-*`` entries differ only in their filter, so the first stands for its class.
"""

from __future__ import annotations

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from ranking_core.learners import LEARNERS


def _one_per_class() -> dict[str, object]:
    estimators: dict[str, object] = {}
    for name, spec in LEARNERS.items():
        estimator = spec.make(1.0)
        if all(type(other) is not type(estimator) or type(estimator).__name__ == "Pipeline"
               for other in estimators.values()):
            estimators[name] = estimator
    return estimators


ESTIMATORS = _one_per_class()

# Checks a learner is known to fail, each with the reason (scikit-learn's own mechanism).
EXPECTED_FAILURES: dict[str, dict[str, str]] = {}


def _expected_failures(estimator) -> dict[str, str]:
    for name, candidate in ESTIMATORS.items():
        if candidate is estimator:
            return EXPECTED_FAILURES.get(name, {})
    return {}


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::RuntimeWarning")
@parametrize_with_checks(list(ESTIMATORS.values()), expected_failed_checks=_expected_failures)
def test_registry_learner_follows_scikit_learn_conventions(estimator, check) -> None:
    check(estimator)
