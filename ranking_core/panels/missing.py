"""Figures of a panel or a survey that cannot be measured, as shown to a person.

A figure that does not exist (no pair rated twice, too few answers) is shown as :data:`MISSING`
("—") with the reason, never as ``None``, ``nan`` or ``+nan``; machine outputs (JSON) keep
null. :data:`REASONS` holds the one sentence per figure; :func:`shown` formats a value with its
unit or the dash, :func:`reason_note` the line that explains the dashes of a table.
"""

from __future__ import annotations

import math

__all__ = ["MISSING", "REASONS", "is_missing", "reason_note", "shown"]

MISSING = "—"
REASONS: dict[str, str] = {
    "seconds_per_answer": "not measurable: fewer than two answers",
    "retest_agreement": "not measurable: no pair rated twice by this rater yet",
    "retest_difference": "not measurable: no pair rated twice by this rater yet",
    "alpha": "not measurable: no pair rated by two raters",
    "bias": "not estimated: the learner fitted no offset or scale for this rater",
    "scale": "not estimated: the learner fitted no offset or scale for this rater",
    "noise_sd": "not estimated: the learner fitted no offset or scale for this rater",
    "agreement": "not measurable: fewer than 3 ratings, or no spread in them",
    "consensus_r2": "not measurable: the ratings do not vary",
}


def is_missing(value: object) -> bool:
    """Whether a figure is absent: None or a NaN."""
    if value is None:
        return True
    try:
        return math.isnan(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def shown(value: object, fmt: str, figure: str, unit: str = "", *, reason: bool = True) -> str:
    """``value`` formatted by ``fmt`` (e.g. ``"{:.1f}"``) with its ``unit`` (e.g. ``" s"``), or
    "—" followed by the figure's reason in brackets (only the dash when ``reason`` is False)."""
    if is_missing(value):
        return f"{MISSING} ({REASONS[figure]})" if reason else MISSING
    return fmt.format(value) + unit


def reason_note(labels: dict[str, str], values: dict[str, list[object]]) -> str | None:
    """One line explaining the dashes of a table: for each figure (``labels``: figure → column
    name) with a missing value in ``values`` (figure → the column's values), "column — reason";
    None when nothing is missing."""
    parts = [
        f"{label} {MISSING} {REASONS[figure]}"
        for figure, label in labels.items()
        if any(is_missing(v) for v in values.get(figure, ()))
    ]
    return "; ".join(parts) if parts else None
