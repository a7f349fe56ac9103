"""scikit-learn's estimator checks over every learner class of the registry (γ = 1, suited to the
checks' standardised data), with the few documented exceptions below.

The five ``spectral-*`` entries differ only in their filter, so the first stands for its class.
"""

from __future__ import annotations

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from ranking_core.learners import LEARNERS

# Left out, with the reason: SVRank solves a QP over all m(m − 1)/2 pairs with an O(m⁴) pair
# kernel (registry max_m = 80); scikit-learn's checks fit up to 200 points, i.e. a 3.2 GB matrix
# per fit. tests/test_svrank.py checks it against brute force and its own input rules.
LEFT_OUT = {"svrank"}


def _one_per_class() -> dict[str, object]:
    estimators: dict[str, object] = {}
    for name, spec in LEARNERS.items():
        if name in LEFT_OUT:
            continue
        estimator = spec.make(1.0)
        if all(
            type(other) is not type(estimator) or type(estimator).__name__ == "Pipeline"
            for other in estimators.values()
        ):
            estimators[name] = estimator
    return estimators


ESTIMATORS = _one_per_class()

# Checks a learner is known to fail, each with the reason (scikit-learn's own mechanism).
EXPECTED_FAILURES: dict[str, dict[str, str]] = {
    "preference": {
        "check_supervised_y_2d": "a 2-D y is v scorings learnt at once from one decomposition "
        "(Pahikkala et al. 2009, §3.2), not a column to flatten with a "
        "DataConversionWarning",
    },
    # the registry's DORM is a Pipeline (Nyström features, then DORM): Pipeline's own behaviour
    "dorm": {
        "check_estimators_overwrite_params": "Pipeline fits its steps in place of 'steps' "
        "(scikit-learn expects this failure for Pipeline)",
        "check_dont_overwrite_parameters": "Pipeline fits its steps in place of 'steps' "
        "(scikit-learn expects this failure for Pipeline)",
        "check_estimator_sparse_tag": "the Nystroem step accepts sparse X, Pipeline's default "
        "tag says it does not",
        "check_supervised_y_no_nan": "DORM refuses NaN/inf y naming the rows and the rule "
        "('y has NaN or infinite values in rows …'), not with "
        "scikit-learn's wording",
    },
}


# RobustRanker reads (REF, estimate) and an optional third column of rater codes (whole numbers,
# −1 = unknown rater): it refuses, naming the rule, the checks' data with 1, 4, 5 or 10 columns
# or a third column of non-integers. Its learning is checked on its own inputs in
# tests/test_panels_robust.py (the weighted fit it solves, λ paths equal to refits, clone, the
# k-fold choice against a hand-written loop).
ROBUST_COLUMNS = (
    "RobustRanker takes (REF, estimate[, rater code]) columns and refuses other "
    "inputs with the rule named"
)
EXPECTED_FAILURES["robust"] = {
    check: ROBUST_COLUMNS
    for check in (
        "check_fit_score_takes_y",
        "check_dont_overwrite_parameters",
        "check_n_features_in_after_fitting",
        "check_positive_only_tag_during_fit",
        "check_estimators_dtypes",
        "check_dtype_object",
        "check_pipeline_consistency",
        "check_estimators_nan_inf",
        "check_estimators_pickle",
        "check_f_contiguous_array_estimator",
        "check_regressors_train",
        "check_regressor_data_not_an_array",
        "check_regressors_no_decision_function",
        "check_supervised_y_2d",
        "check_regressors_int",
        "check_non_transformer_estimators_n_iter",
        "check_methods_sample_order_invariance",
        "check_methods_subset_invariance",
        "check_fit2d_1feature",
        "check_dict_unchanged",
        "check_fit2d_predict1d",
    )
}


def _expected_failures(estimator) -> dict[str, str]:
    for name, candidate in ESTIMATORS.items():
        if candidate is estimator:
            return EXPECTED_FAILURES.get(name, {})
    return {}


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::RuntimeWarning")
@parametrize_with_checks(list(ESTIMATORS.values()), expected_failed_checks=_expected_failures)
def test_registry_learner_follows_scikit_learn_conventions(estimator, check) -> None:
    check(estimator)
