"""The Surveillance Error Grid's way of asking clinicians (Klonoff et al., J Diabetes Sci Technol
2014;8:658), as pure logic: scenarios, action thresholds, the risk matrix and its checks.

For each patient scenario a clinician (a) gives the glucose ranges in which they would take each
of five actions, as four cut points — the highest glucose (mg/dL) at which they would take
A, B, C and D; E runs from above D's cut point to 600 mg/dL — and then (b) scores the risk of
every combination "the meter says range i (measured), the truth is range j (actual)" on a
1..9 scale, the diagonal being no risk (1). A grid follows from one clinician's answers as
risk(REF, BGM) = (score[action(BGM), action(REF)] − 1) / 2 on the 0..4 scale.

Action A is taken at glucose g when g ≤ A's cut point, B when A's < g ≤ B's, and so on; E above
D's cut point. Cut points are whole mg/dL, 0 ≤ A < B < C < D < 600; the rules on values, types
and limits are :mod:`ranking_core.elicit.rules`, which ``riskgrid elicit`` applies too. A value
given in mmol/L (one decimal) is converted with the project's factor
(:data:`~ranking_core.inputs.units.MGDL_PER_MMOLL`) and rounded to whole mg/dL; distinct
one-decimal values stay distinct (0.1 mmol/L is 1.8 mg/dL).

Consistency (a note, never a refusal): risk should not fall as the two ranges move apart. A
cell is flagged when, in its row or its column, a cell on the same side of the diagonal and
nearer to it scored higher.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ranking_core.elicit.rules import (
    ACTION_LABELS,
    ACTIONS,
    CUT_ACTIONS,
    CUT_HIGH,
    CUT_LOW,
    GLUCOSE_TOP,
    MAX_SCENARIOS,
    SCORE_MAX,
    SCORE_MIN,
    cut_problems,
    first_not_increasing,
    number_or_none,
    score_problems,
)
from ranking_core.inputs.units import MGDL_PER_MMOLL, to_mgdl
from ranking_core.surveys.design import METHODS, SEG_METHOD

__all__ = [
    "ACTIONS",
    "CUT_ACTIONS",
    "DEFAULT_SCENARIOS",
    "DESCRIPTION_MAX",
    "GLUCOSE_TOP",
    "MATRIX_COLUMNS",
    "MAX_SCENARIOS",
    "METHODS",
    "SCENARIO_NAME_MAX",
    "SCORE_RANGE",
    "SEG_METHOD",
    "THRESHOLD_COLUMNS",
    "Flag",
    "Scenario",
    "action_label",
    "action_name",
    "action_ranges",
    "check_matrix",
    "check_scenarios",
    "check_thresholds",
    "consistency_flags",
    "flag_sentence",
    "matrix_rows",
    "threshold_rows",
]

# the actions and the score scale are riskgrid elicit's (ranking_core.elicit.mapping), which reads
# this survey's export; a rater sees D as "insulin" or, without insulin, "exercise and eat less"
INSULIN_D, NO_INSULIN_D = "insulin", "exercise and eat less"
SCORE_RANGE = (SCORE_MIN, SCORE_MAX)  # the risk scale of the matrix; 1 = no risk (the diagonal)
SCENARIO_NAME_MAX = 80  # characters
DESCRIPTION_MAX = 1_000  # characters
THRESHOLD_COLUMNS = ("rater", "scenario", "action", "max")
MATRIX_COLUMNS = ("rater", "scenario", "measured", "actual", "score")


@dataclass(frozen=True)
class Scenario:
    """A patient scenario: its name, a short description, and whether the patient takes insulin
    (if not, action D is "exercise and eat less")."""

    name: str
    description: str = ""
    insulin: bool = True


# The SEG survey's four patients (Klonoff et al. 2014, Methods), in the project's own words.
DEFAULT_SCENARIOS = (
    Scenario(
        "Type 1 diabetes, insulin pump",
        "A person with type 1 diabetes treated with an insulin pump, acting on a blood glucose "
        "reading.",
    ),
    Scenario(
        "Type 2 diabetes, insulin",
        "A person with type 2 diabetes treated with insulin (with or without other glucose-"
        "lowering medicines), acting on a blood glucose reading.",
    ),
    Scenario(
        "Type 2 diabetes, no insulin",
        "A person with type 2 diabetes not treated with insulin (diet, exercise or oral "
        "medicines); action D is to exercise and eat less.",
        insulin=False,
    ),
    Scenario(
        "Type 1 diabetes, injections and CGM",
        "A person with type 1 diabetes on multiple daily insulin injections who wears a "
        "continuous glucose monitor, acting on its reading.",
    ),
)


def action_name(letter: str, insulin: bool = True) -> str:
    """The action's words (D: insulin, or exercise and eat less without insulin)."""
    if letter == "D":
        return INSULIN_D if insulin else NO_INSULIN_D
    return ACTION_LABELS[letter]


def action_label(letter: str, insulin: bool = True) -> str:
    """``"A: emergency treatment of a low"``."""
    return f"{letter}: {action_name(letter, insulin)}"


def _bad_text(text: str, keep: str = "") -> list[str]:
    return sorted({f"U+{ord(c):04X}" for c in text if not c.isprintable() and c not in keep})


def check_scenarios(scenarios: Sequence[Scenario]) -> tuple[Scenario, ...]:
    """The scenarios with spaces trimmed; ValueError (one sentence naming the scenario and the
    rule) unless there are 1..:data:`MAX_SCENARIOS` of them, each named by one line of
    1..:data:`SCENARIO_NAME_MAX` printable characters, names unique, descriptions of at most
    :data:`DESCRIPTION_MAX` characters of plain text (line breaks allowed)."""
    scenarios = list(scenarios)
    if not 1 <= len(scenarios) <= MAX_SCENARIOS:
        raise ValueError(
            f"a SEG-method survey has 1..{MAX_SCENARIOS} scenarios; got {len(scenarios)}"
        )
    kept: list[Scenario] = []
    for number, s in enumerate(scenarios, start=1):
        name = " ".join(str(s.name).split())
        text = str(s.description).replace("\r\n", "\n").strip()
        if not 1 <= len(name) <= SCENARIO_NAME_MAX:
            raise ValueError(
                f"scenario {number}: a name of 1..{SCENARIO_NAME_MAX} characters is needed; "
                f"got {len(name)}"
            )
        if len(text) > DESCRIPTION_MAX:
            raise ValueError(
                f"scenario {number}: the description is {len(text):,} characters long; at most "
                f"{DESCRIPTION_MAX:,} are kept"
            )
        bad = _bad_text(name) or _bad_text(text, keep="\n")
        if bad:
            raise ValueError(
                f"scenario {number}: names and descriptions must be plain text; this one "
                f"contains {', '.join(bad)}"
            )
        if any(k.name.casefold() == name.casefold() for k in kept):
            raise ValueError(f"scenario {number}: the name {name!r} is taken by an earlier one")
        kept.append(Scenario(name, text, bool(s.insulin)))
    return tuple(kept)


def _one_value(letter: str, value: object, unit: str) -> int:
    number = number_or_none(value, f"{letter}'s highest glucose")
    if number is None:
        raise ValueError(
            f"give the highest glucose for each of A, B, C and D; {letter}'s is missing"
        )
    if not math.isfinite(number):
        raise ValueError(f"{letter}'s highest glucose must be a number; got {number}")
    if unit == "mmol/L":
        if abs(number * 10 - round(number * 10)) > 1e-6:
            raise ValueError(
                f"{letter}'s highest glucose is given in mmol/L to one decimal; got {number:g}"
            )
        return round(float(to_mgdl(np.array([number]), unit)[0]))
    if cut_problems([number])[0] == "is not a whole number":
        raise ValueError(f"{letter}'s highest glucose is a whole number of mg/dL; got {number:g}")
    return int(number)


def _shown(mg_dl: float, unit: str) -> str:
    return f"{mg_dl / MGDL_PER_MMOLL:.1f} mmol/L" if unit == "mmol/L" else f"{mg_dl:.0f} mg/dL"


def check_thresholds(values: Sequence[object], unit: str = "mg/dL") -> tuple[int, ...]:
    """The four cut points (A, B, C, D) given in ``unit`` → whole mg/dL; ValueError (one
    sentence with the rule) unless each is a number (not true/false, not text: the rules'
    types) given as whole mg/dL or mmol/L to one decimal, inside 0..599 mg/dL (E runs to 600)
    and strictly increasing from A to D (:mod:`ranking_core.elicit.rules`)."""
    if len(values) != len(CUT_ACTIONS):
        raise ValueError(f"four thresholds (A, B, C, D) are needed; got {len(values)}")
    cuts = [_one_value(letter, v, unit) for letter, v in zip(CUT_ACTIONS, values, strict=True)]
    for letter, mg, problem in zip(CUT_ACTIONS, cuts, cut_problems(cuts), strict=True):
        if problem:
            raise ValueError(
                f"{letter}'s highest glucose must lie inside the whole range {CUT_LOW}-"
                f"{GLUCOSE_TOP} mg/dL and below {_shown(GLUCOSE_TOP, unit)} (E runs to "
                f"{GLUCOSE_TOP} mg/dL, so at most {CUT_HIGH} mg/dL); got {_shown(mg, unit)}"
            )
    i = first_not_increasing(cuts)
    if i is not None:
        low, high, a, b = CUT_ACTIONS[i - 1], CUT_ACTIONS[i], cuts[i - 1], cuts[i]
        raise ValueError(
            f"the thresholds must increase strictly from A to D; {high}'s highest glucose "
            f"({_shown(b, unit)}) is not above {low}'s ({_shown(a, unit)})"
        )
    return tuple(cuts)


def action_ranges(cuts: Sequence[int], unit: str = "mg/dL") -> dict[str, str]:
    """Each action's glucose range in ``unit`` for labels: ``{"A": "up to 50 mg/dL", "B":
    "above 50 to 70 mg/dL", …, "E": "above 250 mg/dL"}``."""

    def value(mg: float) -> str:
        return f"{mg / MGDL_PER_MMOLL:.1f}" if unit == "mmol/L" else f"{mg:.0f}"

    ranges = {"A": f"up to {value(cuts[0])} {unit}"}
    for i, letter in enumerate(ACTIONS[1:4], start=1):
        ranges[letter] = f"above {value(cuts[i - 1])} to {value(cuts[i])} {unit}"
    ranges["E"] = f"above {value(cuts[3])} {unit}"
    return ranges


def check_matrix(scores: Sequence[Sequence[float | None]]) -> np.ndarray:
    """The 5 × 5 matrix (rows: measured action A..E, columns: actual action) as whole scores
    1..9 with the diagonal 1; ValueError naming the cells and the rule when a cell off the
    diagonal is empty, not a whole number, or outside 1..9. A diagonal cell given as other
    than 1 is refused too (no risk when the meter's range is the truth's)."""
    low, high = SCORE_RANGE
    grid = np.full((5, 5), np.nan)
    rows = list(scores)
    if len(rows) != 5 or any(len(list(r)) != 5 for r in rows):
        raise ValueError("the risk matrix has 5 rows (measured A..E) of 5 cells (actual A..E)")
    empty, wrong = [], []
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            name = f"meter says {ACTIONS[i]}, truth is {ACTIONS[j]}"
            value = number_or_none(cell, f"the score of {name}")
            if i == j:
                if value is not None and value != SCORE_MIN:
                    raise ValueError(f"{name} is on the diagonal: its score is 1 (no risk)")
                grid[i, j] = SCORE_MIN
            elif value is None:
                empty.append(name)
            elif score_problems([value])[0]:
                wrong.append(f"{name} ({value:g})")
            else:
                grid[i, j] = value
    if empty:
        raise ValueError(
            f"score every cell of the matrix (whole numbers {low}-{high}); {len(empty)} "
            f"empty: {', '.join(empty[:4])}{' …' if len(empty) > 4 else ''}"
        )
    if wrong:
        raise ValueError(
            f"scores are whole numbers {low}-{high}; not so: {', '.join(wrong[:4])}"
            f"{' …' if len(wrong) > 4 else ''}"
        )
    return grid.astype(np.int64)


@dataclass(frozen=True)
class Flag:
    """A cell scored lower than a cell nearer the diagonal in its row or column (indices
    0..4 for A..E; ``nearer`` is the highest-scored such cell)."""

    measured: int
    actual: int
    score: int
    nearer: tuple[int, int]
    nearer_score: int


def consistency_flags(matrix: np.ndarray) -> list[Flag]:
    """Every cell that scored lower than a cell on the same side of the diagonal and nearer to
    it, in the same row or the same column (one flag per cell, naming the highest such nearer
    cell). One pass outward from the diagonal with a running maximum per line."""
    m = np.asarray(matrix)
    flags: list[Flag] = []
    for i in range(5):
        for j in range(5):
            if i == j:
                continue
            best: tuple[int, tuple[int, int]] | None = None
            step = 1 if j > i else -1  # along the row, from the diagonal (i, i) to (i, j)
            for k in range(i + step, j, step):
                if best is None or m[i, k] > best[0]:
                    best = (int(m[i, k]), (i, k))
            step = 1 if i > j else -1  # along the column, from (j, j) to (i, j)
            for k in range(j + step, i, step):
                if best is None or m[k, j] > best[0]:
                    best = (int(m[k, j]), (k, j))
            if best is not None and m[i, j] < best[0]:
                flags.append(Flag(i, j, int(m[i, j]), best[1], best[0]))
    return flags


def flag_sentence(flag: Flag) -> str:
    """``"meter says D, truth is A: 3, lower than 5 for meter says C, truth is A (nearer the
    diagonal)"``."""
    a, b = flag.nearer
    return (
        f"meter says {ACTIONS[flag.measured]}, truth is {ACTIONS[flag.actual]}: {flag.score}, "
        f"lower than {flag.nearer_score} for meter says {ACTIONS[a]}, truth is {ACTIONS[b]} "
        "(nearer the diagonal)"
    )


def threshold_rows(rater: str, scenario: str, cuts: Sequence[int]) -> list[tuple]:
    """The rows of ``thresholds.csv`` for one answer: (rater, scenario, action, max mg/dL)
    for A..D."""
    return [(rater, scenario, a, int(c)) for a, c in zip(CUT_ACTIONS, cuts, strict=True)]


def matrix_rows(rater: str, scenario: str, matrix: np.ndarray) -> list[tuple]:
    """The rows of ``matrix.csv`` for one answer: (rater, scenario, measured, actual, score),
    all 25 cells (the diagonal written as 1)."""
    m = np.asarray(matrix)
    return [
        (rater, scenario, ACTIONS[i], ACTIONS[j], int(m[i, j])) for i in range(5) for j in range(5)
    ]


def export_frames(thresholds: list[tuple], matrices: list[tuple]) -> tuple[pd.DataFrame, ...]:
    """``thresholds.csv`` and ``matrix.csv`` as frames with exactly their columns."""
    return (
        pd.DataFrame(thresholds, columns=list(THRESHOLD_COLUMNS)),
        pd.DataFrame(matrices, columns=list(MATRIX_COLUMNS)),
    )
