"""The λ rules by name, :data:`RULES`, with what a reader sees of each, and the names they are
scored and tested by (:data:`CRITERIA`, :data:`VALIDATED_RULES`, :data:`PROTOCOLS`): importable
without NumPy, so that ``riskgrid learn --help``, :class:`~ranking_core.learn.LearnSettings` and
the Learn page read them at once. How each rule is computed is
:data:`ranking_core.selection.choose.RULE_CHOICES` (a name without its computation is refused by
:func:`~ranking_core.selection.choose` with a sentence); :mod:`ranking_core.selection` exports
these names too.
"""

from __future__ import annotations

__all__ = ["CRITERIA", "PROTOCOLS", "RULES", "VALIDATED_RULES"]

# the λ rules, name → what a reader sees (the CLI help and the Learn page read this registry)
RULES = {
    "kfold": "cross-validation",
    "holdout": "hold-out (half fits, half chooses)",
    "quasi-optimality": "quasi-optimality",
    "apriori": "a-priori λ(m) = α·m^(−β/2)",
    "manual": "set by hand",
}
# the rules that score validation ratings, by a criterion of CRITERIA (the others do not)
VALIDATED_RULES = ("kfold", "holdout")
# The two readings of the papers' hold-out protocols (Kriukova et al. 2014, §4.1–4.2 say which
# part fits and which chooses λ, not which function is then tested): the CLI help and the
# dashboard read these sentences.
PROTOCOLS = {
    "refit": "test the function refitted on all training ratings at the chosen λ",
    "split": "test the function fitted on the first part only (the other part chose λ)",
}
CRITERIA = ("misranking", "absolute-error")
