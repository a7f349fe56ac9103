"""``riskgrid survey`` for SEG-method surveys (``--method seg``): create with the SEG's four
scenarios or a scenarios file, status per rater and scenario, and the export of two long tables,
``thresholds.csv`` (rater, scenario, action, max) and ``matrix.csv`` (rater, scenario, measured,
actual, score), the input of ``riskgrid elicit``. The commands in :mod:`ranking_core.cli.survey`
call these when the survey asks by the SEG's method.
"""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import typer
from rich.text import Text

from ranking_core.cli.output import (
    OutputError,
    check_output,
    fail,
    out,
    say,
    write_json,
    write_outputs,
)
from ranking_core.inputs.text import named, printable

__all__ = ["EXPORT_FILES", "create_seg", "export_seg", "is_seg", "refuse_batches", "seg_status"]

EXPORT_FILES = ("thresholds.csv", "matrix.csv")


def is_seg(surveys, name: str) -> bool:
    """Whether the stored survey ``name`` asks by the SEG's method (fails with the store's
    sentence when it cannot be opened)."""
    from ranking_core.storage import StorageError
    from ranking_core.surveys.design import SEG_METHOD

    try:
        return surveys.get(name).method == SEG_METHOD
    except StorageError as exc:
        fail(exc)


def refuse_batches(name: str) -> NoReturn:
    fail(
        f"survey {named(name)} asks by the SEG's method (scenarios, thresholds, matrices); "
        "batches of pairs are for pairs surveys"
    )


def create_seg(
    surveys,
    name: str,
    scenarios: Path | None,
    unit: str | None,
    base_url: str,
    instructions: str | None,
    pairs_given: bool,
) -> None:
    """``survey create NAME --method seg``: the SEG's four scenarios, or those of
    ``--scenarios FILE``; the organiser's link printed once."""
    from ranking_core.inputs import InputError
    from ranking_core.storage import StorageError
    from ranking_core.surveys import SurveySettings
    from ranking_core.surveys.scenarios_file import read_scenarios
    from ranking_core.surveys.seg_method import DEFAULT_SCENARIOS
    from ranking_core.surveys.seg_storage import create_seg_survey

    if pairs_given:
        fail(
            "--pairs and --design are for --method pairs; a SEG-method survey asks about "
            "scenarios (--scenarios FILE, default: the SEG's four)",
            2,
        )
    try:
        settings = SurveySettings(unit=unit or "mg/dL", checks=0, repeats=0.0, base_url=base_url)
        listed = DEFAULT_SCENARIOS if scenarios is None else read_scenarios(scenarios)
        survey, token = create_seg_survey(surveys, name, listed, settings, instructions or "")
    except (ValueError, InputError, StorageError, OSError) as exc:
        fail(exc)
    say(
        f"survey {named(survey.name)}: SEG method, {len(listed)} scenarios "
        f"({'; '.join(printable(s.name) for s in listed)}), shown in {settings.unit}; invite "
        "raters with 'riskgrid survey invite'"
    )
    say("organiser link (keep it private):")
    typer.echo(survey.organiser_link(token))


def export_seg(surveys, name: str, folder: Path) -> None:
    """``survey export NAME -o DIR``: ``thresholds.csv`` and ``matrix.csv`` written into DIR
    (each checked before either is written; an existing file is replaced whole, never half)."""
    from ranking_core.inputs.text import safe_csv
    from ranking_core.storage import StorageError
    from ranking_core.surveys.seg_storage import seg_export

    try:
        if Path(folder).exists() and not Path(folder).is_dir():
            raise OutputError(
                f"--out {printable(folder)} is a file; a SEG-method survey is exported into a "
                "folder (two files: thresholds.csv, matrix.csv)"
            )
        for file in EXPORT_FILES:
            check_output(Path(folder) / file, "--out")
        thresholds, matrix = seg_export(surveys, name)
        write_outputs(
            Path(folder),
            {
                "thresholds.csv": safe_csv(thresholds).encode("utf-8"),
                "matrix.csv": safe_csv(matrix).encode("utf-8"),
            },
            "--out",
        )
    except (StorageError, OutputError) as exc:
        fail(exc)
    say(
        f"wrote {len(thresholds) // 4} threshold answers to "
        f"{printable(Path(folder) / 'thresholds.csv')} and {len(matrix) // 25} matrices to "
        f"{printable(Path(folder) / 'matrix.csv')} (glucose in mg/dL)"
    )


def seg_status(surveys, name: str, json_out: Path | None) -> None:
    """``survey status NAME`` of a SEG-method survey: per rater, scenarios with thresholds,
    with a matrix, complete, and the consistency flags raised."""
    from rich.table import Table

    from ranking_core.storage import StorageError
    from ranking_core.surveys.seg_storage import seg_status as state_of

    try:
        if json_out is not None:
            check_output(json_out, "--json")
        state = state_of(surveys, name)
    except (StorageError, OutputError) as exc:
        fail(exc)
    say(
        f"survey {named(state['survey'])}: SEG method, {'open' if state['open'] else 'closed'}, "
        f"{state['complete']} of {state['asked']} scenario answers complete, "
        f"{len(state['scenarios'])} scenarios, {len(state['raters'])} raters"
    )
    table = Table(title="Raters", title_justify="left")
    for column in ("Rater", "Thresholds", "Matrices", "Complete", "Flags", "Link"):
        table.add_column(column, justify="left" if column in ("Rater", "Link") else "right")
    for r in state["raters"]:
        of = f" of {r['scenarios']}"
        table.add_row(
            Text(printable(r["rater"])),
            f"{r['thresholds']}{of}",
            f"{r['matrices']}{of}",
            f"{r['complete']}{of}",
            str(r["flags"]) if r["matrices"] else "— (no matrix yet)",
            "revoked" if r["revoked"] else "open",
        )
    out.print(table)
    write_json(json_out, state)
