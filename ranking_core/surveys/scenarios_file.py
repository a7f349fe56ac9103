"""A SEG-method survey's scenarios from a small file, read by the one input layer
(:func:`ranking_core.inputs.read_table`).

The file has a column ``name`` (alias ``scenario``) and, optionally, ``description`` and
``insulin`` (yes/no, default yes: whether the patient takes insulin; without it action D is
"exercise and eat less"). CSV, TSV or XLSX with every rule of the input layer (encodings, size
and row limits checked before reading, refused rows named by line). Beyond them: at most
:data:`~ranking_core.surveys.seg_method.MAX_SCENARIOS` rows and 64 KiB, names of at most
:data:`~ranking_core.surveys.seg_method.SCENARIO_NAME_MAX` characters, unique, descriptions of
at most :data:`~ranking_core.surveys.seg_method.DESCRIPTION_MAX`; a row breaking one is named by
its line and nothing is kept (a survey's scenarios are all or none).
"""

from __future__ import annotations

import os

from ranking_core.inputs import InputError, Limits, Role, Schema, read_table
from ranking_core.surveys.seg_method import (
    DESCRIPTION_MAX,
    MAX_SCENARIOS,
    Scenario,
    check_scenarios,
)

__all__ = ["SCENARIOS_BYTES", "read_scenarios", "scenarios_schema"]

SCENARIOS_BYTES = 64 * 1024  # a scenarios file is small: a dozen lines of text
YES = ("yes", "y", "true", "1")
NO = ("no", "n", "false", "0")


def scenarios_schema() -> Schema:
    """The columns of a scenarios file."""
    return Schema(
        "survey scenarios",
        (
            Role("name", kind="text", aliases=("scenario",)),
            Role("description", kind="text", required=False),
            Role("insulin", kind="text", required=False),
        ),
    )


def read_scenarios(source: str | os.PathLike) -> tuple[Scenario, ...]:
    """The scenarios of the file (module notes); :class:`~ranking_core.inputs.InputError`,
    one sentence naming the line and the rule, when any row is refused."""
    limits = Limits(
        max_rows=MAX_SCENARIOS, max_bytes=SCENARIOS_BYTES, max_cell=DESCRIPTION_MAX + 100
    )
    table = read_table(source, scenarios_schema(), limits=limits)
    if table.n_refused:
        raise InputError(f"{table.source}: " + "; ".join(table.messages()[1:] or table.messages()))
    if not len(table):
        raise InputError(f"{table.source}: no scenario is named (a column 'name' is needed)")
    names = table.values["name"]
    descriptions = table.values.get("description", [""] * len(names))
    flags = table.values.get("insulin", ["yes"] * len(names))
    scenarios = []
    for line, name, text, flag in zip(table.lines, names, descriptions, flags, strict=True):
        word = str(flag).strip().lower() or "yes"
        if word not in YES + NO:
            raise InputError(
                f"{table.source}, line {line}: insulin is yes or no; got {str(flag)[:20]!r}"
            )
        scenarios.append(Scenario(str(name), str(text), word in YES))
    try:
        return check_scenarios(scenarios)
    except ValueError as exc:  # "scenario k: …" → the file's line
        message = str(exc)
        if message.startswith("scenario "):
            number, _, rest = message[len("scenario ") :].partition(": ")
            if number.isdigit() and 1 <= int(number) <= len(table.lines):
                message = f"line {table.lines[int(number) - 1]}: {rest}"
        raise InputError(f"{table.source}, {message}") from None
