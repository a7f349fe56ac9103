"""Choosing a learner's regularization parameter (Kriukova et al. 2014, §4.1, §4.4; DESIGN §4).

:func:`choose` is the one entry point (hold-out, k-fold, quasi-optimality, a-priori λ(m), manual);
:func:`fit_apriori_lambda` fits the a-priori rule; the exact leave-pair-out estimate of the
least-squares ranker lives in :mod:`ranking_core.selection.leave_pair_out`.
"""

from ranking_core.selection.apriori import AprioriRule, fit_apriori_lambda
from ranking_core.selection.choose import (
    CRITERIA,
    PROTOCOLS,
    RULE_CHOICES,
    RULES,
    TIE_TOLERANCE,
    VALIDATED_RULES,
    Choice,
    RuleCall,
    choose,
    kfold_curves,
    kfold_splits,
    mean_over_folds,
    near_minimum,
    paper_lambda_grid,
    protocol_refits,
    validation_scores,
)
from ranking_core.selection.leave_pair_out import (
    leave_pair_out,
    leave_pair_out_differences,
    leave_pair_out_squared,
)

__all__ = [
    "CRITERIA",
    "PROTOCOLS",
    "RULES",
    "RULE_CHOICES",
    "TIE_TOLERANCE",
    "VALIDATED_RULES",
    "AprioriRule",
    "Choice",
    "RuleCall",
    "choose",
    "fit_apriori_lambda",
    "kfold_curves",
    "kfold_splits",
    "leave_pair_out",
    "leave_pair_out_differences",
    "leave_pair_out_squared",
    "mean_over_folds",
    "near_minimum",
    "paper_lambda_grid",
    "protocol_refits",
    "validation_scores",
]
