"""A panel's SEG-method answers from two long tables, read by the one input layer
(:func:`ranking_core.inputs.read_table`).

``thresholds`` (columns ``rater, scenario, action, max``)
    the highest glucose (whole mg/dL, 0..599) at which the rater takes action A, B, C or D in the
    scenario; E runs to 600 mg/dL (a row for E is accepted only with max 600, and ignored).
``matrix`` (columns ``rater, scenario, measured, actual, score``)
    the risk score 1..9 (whole) of "the meter says the range of action ``measured``, the truth is
    the range of action ``actual``", actions A–E; a missing diagonal cell means 1 (no risk), a
    diagonal cell given must be 1.

Every rule of the input layer holds (encodings, delimiters, limits on bytes and rows checked
before reading, names with control characters or bidi overrides refused by line). Beyond them,
a row is refused by line and rule: rater or scenario blank, an unknown action, a number that is
not one, not whole or outside its range, a diagonal score other than 1, a row repeating a
threshold or cell given earlier. A rater × scenario with a refused row, a missing threshold,
thresholds that do not increase (max_A < max_B < max_C < max_D), a missing off-diagonal cell, or
rows in one file only is excluded as a whole (:class:`Exclusion`, with its reasons and lines);
the other raters × scenarios are used. Rater and scenario names are kept as written (the input
layer strips surrounding spaces) and compared exactly.

The values' rules (cut points, scores, types) and the limits are those of
:mod:`ranking_core.elicit.rules`, the ones the survey's pages and storage apply.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ranking_core.elicit.mapping import RaterMap
from ranking_core.elicit.rules import (
    ACTIONS,
    CUT_HIGH,
    CUT_LOW,
    DIAGONAL_RULE,
    GLUCOSE_TOP,
    INCREASING_RULE,
    MAX_MAPS,
    MAX_RATERS,
    MAX_SCENARIOS,
    SCORE_MAX,
    SCORE_MIN,
    first_not_increasing,
    whole_problems,
)
from ranking_core.elicit.rules import CUT_ACTIONS as THRESHOLD_ACTIONS
from ranking_core.inputs import InputError, Limits, Role, Schema, name_lines, read_table
from ranking_core.inputs.text import named

__all__ = [
    "MATRIX_SCHEMA",
    "MAX_MAPS",
    "MAX_RATERS",
    "MAX_SCENARIOS",
    "THRESHOLDS_SCHEMA",
    "Answers",
    "Exclusion",
    "read_answers",
]

MAX_BYTES = 64 * 2**20
THRESHOLD_ROWS = MAX_MAPS * len(ACTIONS)
MATRIX_ROWS = MAX_MAPS * len(ACTIONS) ** 2


def _text(name: str, *aliases: str) -> Role:
    return Role(name, kind="text", aliases=aliases)


THRESHOLDS_SCHEMA = Schema(
    "elicited thresholds",
    (
        _text("rater", "rater id", "clinician"),
        _text("scenario"),
        _text("action"),
        _text("max", "maximum", "max glucose"),
    ),
)
MATRIX_SCHEMA = Schema(
    "elicited risk matrix",
    (
        _text("rater", "rater id", "clinician"),
        _text("scenario"),
        _text("measured"),
        _text("actual"),
        _text("score"),
    ),
)


@dataclass(frozen=True)
class Exclusion:
    """A rater × scenario left out: its reasons (each naming its file and lines) and the lines
    by file."""

    rater: str
    scenario: str
    reasons: tuple[str, ...]
    lines: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def message(self) -> str:
        """One line: "rater 'r1', scenario 'fasting' excluded: …" (names escaped)."""
        return f"rater {named(self.rater)}, scenario {named(self.scenario)} excluded: " + "; ".join(
            self.reasons
        )

    def to_dict(self) -> dict:
        return {
            "rater": self.rater,
            "scenario": self.scenario,
            "reasons": list(self.reasons),
            "lines": {k: list(v) for k, v in self.lines.items()},
        }


@dataclass(frozen=True)
class Answers:
    """The answers read: the valid rater × scenario maps (in order of first appearance in the
    thresholds file), the exclusions, and the lines to show (summaries and refused rows that
    belong to no rater × scenario)."""

    maps: tuple[RaterMap, ...] = field(repr=False)
    exclusions: tuple[Exclusion, ...] = ()
    messages: tuple[str, ...] = ()

    @property
    def raters(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.rater for m in self.maps))

    @property
    def scenarios(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.scenario for m in self.maps))


@dataclass
class _Rows:
    """Rows of one file as a frame with their lines, and the rules they break."""

    label: str
    frame: pd.DataFrame
    messages: list[str]
    rules: pd.Series = field(init=False)

    def __post_init__(self) -> None:
        self.rules = pd.Series("", index=self.frame.index, dtype=object)

    def refuse(self, mask: pd.Series | np.ndarray, rule: str) -> None:
        mask = np.asarray(mask, dtype=bool) & (self.rules == "").to_numpy()
        self.rules[mask] = rule

    @property
    def ok(self) -> pd.Series:
        return self.rules == ""


Source = str | os.PathLike | bytes


def _read(source: Source, schema: Schema, max_rows: int, name: str | None) -> _Rows:
    limits = Limits(max_bytes=MAX_BYTES, max_rows=max_rows)
    table = read_table(source, schema, limits=limits, name=name)
    frame = pd.DataFrame({k: v for k, v in table.values.items()})
    frame["line"] = table.lines
    rows = _Rows(os.path.basename(table.source), frame, table.messages())
    blank = (frame["rater"] == "") | (frame["scenario"] == "")
    rows.refuse(blank, "rater or scenario is blank")
    return rows


def _whole(
    rows: _Rows, column: str, low: int, high: int, what: str, among: np.ndarray | None = None
) -> pd.Series:
    """The column as numbers, rows breaking :func:`~ranking_core.elicit.rules.whole_problems`
    refused (only the rows ``among`` when given)."""
    values = pd.to_numeric(rows.frame[column], errors="coerce")
    problems = whole_problems(values.to_numpy(dtype=np.float64), low, high)
    if among is not None:
        problems[~among] = ""
    for rule in ("is not a number", "is not a whole number", f"is outside {low}..{high}"):
        shown = f"{rule} ({what})" if rule == "is not a whole number" else rule
        rows.refuse(problems == rule, f"{column} {shown}")
    return values


def _actions(rows: _Rows, column: str, allowed: tuple[str, ...]) -> pd.Series:
    letters = rows.frame[column].str.upper()
    rows.refuse(~letters.isin(allowed), f"{column} is not one of the actions {', '.join(allowed)}")
    return letters


def _repeats(rows: _Rows, keys: list[str], what: str) -> None:
    ok = np.flatnonzero(rows.ok.to_numpy())
    kept = rows.frame.iloc[ok]
    repeated = kept[keys].duplicated().to_numpy()
    if repeated.any():
        first = kept.drop_duplicates(keys).set_index(keys)["line"]
        for i in ok[repeated]:
            earlier = first.loc[tuple(rows.frame.iloc[int(i)][keys])]
            rows.rules.iloc[int(i)] = f"repeats the {what} of line {int(earlier)}"


def _excluded_rows(
    rows: _Rows, reasons: dict[tuple[str, str], list[str]], lines: dict
) -> list[str]:
    """Refused rows: those of a named rater × scenario become reasons to exclude it, the others
    are messages."""
    bad = rows.frame[~rows.ok]
    messages = []
    attributable = (bad["rater"] != "") & (bad["scenario"] != "")
    for rule, group in bad[~attributable].groupby(rows.rules[~rows.ok][~attributable]):
        messages.append(f"{rule} in {name_lines(group['line'].to_numpy())} of {rows.label}")
    keyed = bad[attributable].assign(rule=rows.rules[bad.index][attributable])
    for (rater, scenario, rule), group in keyed.groupby(["rater", "scenario", "rule"], sort=False):
        key = (str(rater), str(scenario))
        where = group["line"].to_numpy()
        reasons.setdefault(key, []).append(f"{rule} in {name_lines(where)} of {rows.label}")
        lines.setdefault(key, {}).setdefault(rows.label, []).extend(int(n) for n in where)
    return messages


def read_answers(
    thresholds: Source, matrix: Source, file_names: tuple[str, str] | None = None
) -> Answers:
    """Read and check both files (module notes), given as paths or as bytes (then ``file_names``
    gives their file names, e.g. a survey's export). Raises :class:`InputError` (one sentence)
    when a file cannot be read, is over a limit, or when more than :data:`MAX_RATERS` raters,
    :data:`MAX_SCENARIOS` scenarios or :data:`MAX_MAPS` raters × scenarios are named."""
    t_name, m_name = file_names or (None, None)
    t = _read(thresholds, THRESHOLDS_SCHEMA, THRESHOLD_ROWS, t_name)
    m = _read(matrix, MATRIX_SCHEMA, MATRIX_ROWS, m_name)
    names = pd.concat([t.frame[["rater", "scenario"]], m.frame[["rater", "scenario"]]])
    for column, limit in (("rater", MAX_RATERS), ("scenario", MAX_SCENARIOS)):
        n = names[column][names[column] != ""].nunique()
        if n > limit:
            raise InputError(f"{n:,} {column}s are named; at most {limit:,} are read (the limit)")
    pairs = names[(names["rater"] != "") & (names["scenario"] != "")].drop_duplicates()
    if len(pairs) > MAX_MAPS:
        raise InputError(
            f"{len(pairs):,} raters × scenarios are named; at most {MAX_MAPS:,} are mapped "
            "(the limit)"
        )
    # thresholds: action A–D (E only as 600), max whole in 0..600, each action once
    action = _actions(t, "action", ACTIONS)
    t.frame["action"] = action
    is_e = (action == ACTIONS[-1]).to_numpy()
    maxima = _whole(t, "max", CUT_LOW, CUT_HIGH, "mg/dL", among=~is_e)
    t.frame["max"] = maxima
    t.refuse(
        is_e & (maxima != GLUCOSE_TOP).to_numpy(),
        f"action E has no threshold (it runs to {GLUCOSE_TOP} mg/dL)",
    )
    _repeats(t, ["rater", "scenario", "action"], "threshold")
    # matrix: actions A–E, score whole in 1..9, diagonal 1, each cell once
    m.frame["measured"] = _actions(m, "measured", ACTIONS)
    m.frame["actual"] = _actions(m, "actual", ACTIONS)
    m.frame["score"] = _whole(m, "score", SCORE_MIN, SCORE_MAX, "1..9")
    diagonal = (m.frame["measured"] == m.frame["actual"]).to_numpy()
    m.refuse(diagonal & (m.frame["score"] != SCORE_MIN).to_numpy(), DIAGONAL_RULE)
    _repeats(m, ["rater", "scenario", "measured", "actual"], "cell")

    reasons: dict[tuple[str, str], list[str]] = {}
    lines: dict[tuple[str, str], dict[str, list[int]]] = {}
    messages = t.messages + m.messages
    messages += _excluded_rows(t, reasons, lines) + _excluded_rows(m, reasons, lines)
    refused_in = {
        label: {k for k, v in lines.items() if label in v} for label in (t.label, m.label)
    }
    good_t = t.frame[t.ok & (t.frame["action"] != ACTIONS[-1])]
    good_m = m.frame[m.ok]
    order = list(dict.fromkeys(map(tuple, pairs[["rater", "scenario"]].to_numpy())))
    t_groups = dict(list(good_t.groupby(["rater", "scenario"], sort=False)))
    m_groups = dict(list(good_m.groupby(["rater", "scenario"], sort=False)))
    in_t = set(map(tuple, t.frame[["rater", "scenario"]].to_numpy()))
    in_m = set(map(tuple, m.frame[["rater", "scenario"]].to_numpy()))
    maps: list[RaterMap] = []
    for key in order:
        why = reasons.setdefault(key, [])
        if key not in in_t:
            why.append(f"no rows in {t.label}")
        if key not in in_m:
            why.append(f"no rows in {m.label}")
        given = t_groups.get(key)
        values = np.full(len(THRESHOLD_ACTIONS), np.nan)
        if given is not None:
            index = given["action"].map(THRESHOLD_ACTIONS.index).to_numpy()
            values[index] = given["max"].to_numpy(dtype=np.float64)
        missing = [a for a, v in zip(THRESHOLD_ACTIONS, values, strict=True) if np.isnan(v)]
        if missing and key in in_t and key not in refused_in[t.label]:
            why.append(f"no threshold for action {', '.join(missing)} in {t.label}")
        if not missing and first_not_increasing(values) is not None:
            where = given["line"].to_numpy() if given is not None else np.array([])
            shown = ", ".join(f"{a} {v:g}" for a, v in zip(THRESHOLD_ACTIONS, values, strict=True))
            why.append(
                f"thresholds do not increase ({shown} mg/dL; rule: {INCREASING_RULE}) in "
                f"{name_lines(np.sort(where))} of {t.label}"
            )
            lines.setdefault(key, {}).setdefault(t.label, []).extend(int(n) for n in where)
        scores = np.full((len(ACTIONS), len(ACTIONS)), np.nan)
        np.fill_diagonal(scores, SCORE_MIN)
        cells = m_groups.get(key)
        if cells is not None:
            rows_ = cells["measured"].map(ACTIONS.index).to_numpy()
            cols_ = cells["actual"].map(ACTIONS.index).to_numpy()
            scores[rows_, cols_] = cells["score"].to_numpy(dtype=np.float64)
        absent = np.argwhere(np.isnan(scores))
        if absent.size and key in in_m and key not in refused_in[m.label]:
            example = ", ".join(f"{ACTIONS[i]}/{ACTIONS[j]}" for i, j in absent[:3])
            why.append(
                f"{len(absent)} off-diagonal cell(s) missing in {m.label} (measured/actual "
                f"{example}{', …' if len(absent) > 3 else ''}; rule: every off-diagonal cell "
                "is scored)"
            )
        if not why:
            maps.append(RaterMap(key[0], key[1], values, scores))
    exclusions = tuple(
        Exclusion(
            key[0],
            key[1],
            tuple(reasons[key]),
            {k: tuple(sorted(set(v))) for k, v in lines.get(key, {}).items()},
        )
        for key in order
        if reasons.get(key)
    )
    return Answers(tuple(maps), exclusions, tuple(messages))
