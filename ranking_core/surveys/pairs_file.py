"""A survey's start design from a pair file, read by the one input layer
(:func:`ranking_core.inputs.read_table`).

The file has columns ``reference`` and ``estimate`` (aliases as in a rating set: ref, reference
glucose; estimated, bgm, meter), e.g. ``riskgrid plan-panel``'s rating form; a rating or rater
column is ignored. Every rule of the input layer holds: CSV, TSV or XLSX, the glucose unit
(``unit``, else as named in the header, else mg/dL; values that look like mmol/L are refused
until it is given) converted to mg/dL, limits on bytes, rows and archives checked before
reading, refused rows named by line. Beyond them: a pair outside the survey's range is
refused by line, at most :data:`~ranking_core.surveys.design.MAX_PAIRS` rows are read, and a
pair that repeats an earlier one once both are rounded to whole mg/dL (as stored) is named
and kept once. A cut last line is refused by the input layer's text reader.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ranking_core.inputs import InputError, Limits, Role, Schema, name_lines, read_table
from ranking_core.panels.design import check_range
from ranking_core.surveys.design import MAX_PAIRS

__all__ = ["SurveyPairs", "read_survey_pairs", "survey_pairs_schema"]


def survey_pairs_schema(glucose_range: tuple[float, float]) -> Schema:
    """The columns of a survey's pair file, each glucose value inside ``glucose_range``
    (mg/dL, after conversion)."""
    low, high = check_range(glucose_range)
    rule = f"outside the survey's range {low:g}-{high:g} mg/dL"
    return Schema(
        "survey pairs",
        (
            Role(
                "reference",
                glucose=True,
                low=low,
                high=high,
                range_rule=f"reference glucose is {rule}",
                aliases=("ref", "reference glucose"),
            ),
            Role(
                "estimate",
                glucose=True,
                low=low,
                high=high,
                range_rule=f"estimate glucose is {rule}",
                aliases=("estimated", "bgm", "meter"),
            ),
        ),
    )


@dataclass(frozen=True)
class SurveyPairs:
    """The pairs read: ``frame`` (reference, estimate in whole mg/dL, each pair once) and the
    lines to show (the summary, refusals, repeats, notes)."""

    frame: pd.DataFrame = field(repr=False)
    messages: tuple[str, ...] = ()


def read_survey_pairs(
    source: str | os.PathLike,
    glucose_range: tuple[float, float],
    unit: str | None = None,
    max_bytes: int | None = None,
) -> SurveyPairs:
    """Read a survey's start design (module notes); :class:`~ranking_core.inputs.InputError`
    (one sentence) when no pair can be kept."""
    limits = Limits(max_rows=MAX_PAIRS)
    if max_bytes is not None:
        limits = Limits(max_rows=MAX_PAIRS, max_bytes=max_bytes)
    table = read_table(source, survey_pairs_schema(glucose_range), unit=unit, limits=limits)
    if not len(table):
        raise InputError(f"{table.source}: no pair can be kept; " + "; ".join(table.messages()))
    values = np.rint(np.column_stack([table.values["reference"], table.values["estimate"]])).astype(
        np.int64
    )
    frame = pd.DataFrame(values, columns=["reference", "estimate"])
    repeated = frame.duplicated().to_numpy()
    messages = table.messages()
    if repeated.any():
        messages.append(
            f"{int(repeated.sum()):,} pair(s) repeat an earlier pair once rounded to whole "
            f"mg/dL, in {name_lines(table.lines[repeated])}; each pair is kept once"
        )
    kept = frame[~repeated].reset_index(drop=True).astype(float)
    return SurveyPairs(kept, tuple(messages))
