"""How the next pairs of a panel are planned, by name: the methods with the labels the command
line's help and the dashboard show (:data:`PLAN_METHOD_LABELS`), the default method and the
default glucose range of proposed pairs. Importable without NumPy; the planning itself is
:func:`ranking_core.panels.design.plan_pairs`.
"""

from __future__ import annotations

__all__ = ["DEFAULT_PLAN_METHOD", "DEFAULT_RANGE", "PLAN_METHODS", "PLAN_METHOD_LABELS"]

# how the next pairs are picked (ranking_core.panels.design), each with the label the command
# line's help and the dashboard show; the first is the default (measured best)
PLAN_METHOD_LABELS = {
    "imse": "largest reduction of the grid's total uncertainty (measured best)",
    "variance": "most uncertain pairs first",
    "random": "uniformly at random",
}
PLAN_METHODS = tuple(PLAN_METHOD_LABELS)
DEFAULT_PLAN_METHOD = PLAN_METHODS[0]
DEFAULT_RANGE = (20.0, 600.0)  # mg/dL: the glucose range of proposed pairs (meters read ≥ 20)
