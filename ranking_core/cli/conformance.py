"""``riskgrid conformance``: riskgrid's statistics against public test vectors (the folder
``$RISKGRID_CONFORMANCE``, or ``--data``), written as ``docs/CONFORMANCE.md``'s Markdown."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ranking_core.cli import shown
from ranking_core.cli.output import OutputError, check_output, fail, write_output

console = Console(stderr=True)


def conformance(
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Folder of the test vectors (ifdtulm-ci/, ega/, seg-app/; optional: cg-diva/, "
            "ctca/); default $RISKGRID_CONFORMANCE.",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Write the Markdown here (e.g. docs/CONFORMANCE.md); default: print it.",
        ),
    ] = None,
    seg_table: Annotated[
        Path | None,
        typer.Option(
            "--seg-table",
            help="SEG RiskPairData table for the seg-app vector; default $SEG_TABLE "
            "(without one that vector is left out).",
        ),
    ] = None,
) -> None:
    """Check riskgrid's statistics against public test vectors: every published number beside
    ours, their difference and the known reason where they differ. Exit status 1 when a
    number differs beyond its tolerance without a known reason."""
    from ranking_core.conformance import (
        CONFORMANCE_ENV,
        ConformanceDataError,
        compare_all,
        conformance_markdown,
        default_data_folder,
        left_out_vectors,
    )
    from ranking_core.grids.seg import SEGTableError, SEGTableMissing, find_seg_table

    if out is not None:  # before the vectors are compared
        try:
            check_output(out, "--out", [data, seg_table])
        except OutputError as exc:
            fail(str(exc))
    folder = data if data is not None else default_data_folder()
    if folder is None:
        fail(f"--data: give the test-vector folder, or set ${CONFORMANCE_ENV}", code=2)
    if not folder.is_dir():
        fail(f"--data: {folder} is not a folder")
    left_out = ""
    try:
        table = find_seg_table(seg_table)
    except SEGTableMissing:
        table = None
        left_out = (
            "The seg-app vector was left out: no SEG table was given (--seg-table or $SEG_TABLE)."
        )
        console.print(left_out, highlight=False)
    except SEGTableError as exc:
        fail(f"--seg-table: {exc}")
    absent = left_out_vectors(folder)
    if absent:
        console.print(absent, highlight=False)
        left_out = f"{left_out} {absent}".strip()
    try:
        results = compare_all(folder, table)
    except ConformanceDataError as exc:
        fail(str(exc))
    text = conformance_markdown(results, left_out)
    rows = [row for table_rows in results.values() for row in table_rows]
    differs = [row for row in rows if row.status == "differs"]
    if out is None:
        sys.stdout.write(text)
    else:
        try:  # whole or not at all, never through a link
            write_output(out, text, "--out", [data, seg_table])
        except OutputError as exc:
            fail(str(exc))
        console.print(f"wrote {shown(out)}", highlight=False)
    explained = sum(row.status == "explained" for row in rows)
    console.print(
        f"{len(rows)} statistics: {len(rows) - explained - len(differs)} agree, {explained} "
        f"differ for a known reason, {len(differs)} differ without one",
        highlight=False,
    )
    for row in differs:
        console.print(
            shown(
                f"differs: {row.vector}, {row.source}, {row.statistic}: expected "
                f"{row.expected:g}, ours {row.ours}"
            ),
            style="red",
            highlight=False,
        )
    if differs:
        raise typer.Exit(1)
