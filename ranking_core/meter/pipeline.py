"""The meter report's pipeline, one home for the command (``riskgrid meter-report``) and the Meter
page: read the pairs, find the SEG table and the learned grid, judge (the settings resolved
once: :func:`judge_settings`), report (:func:`report_from_pairs`, every section of
:data:`~ranking_core.meter.sections.SECTIONS`) and make every output's bytes
(:func:`report_document`, :func:`report_json`, :func:`out_dir_files`, :func:`pairs_csv`). The
command parses options, calls these and prints; the page calls :func:`report_from_pairs`
with the same settings."""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.grids.seg import SEG_TABLE_ENV, SEGTable, SEGTableMissing, find_seg_table
from ranking_core.inputs import InputError, with_limits
from ranking_core.inputs.text import named, printable
from ranking_core.meter.comparison.decision_levels import parse_levels
from ranking_core.meter.comparison.summary import ComparisonSettings
from ranking_core.meter.pairs.readings import MeterPairs, read_pairs
from ranking_core.meter.report import MeterReport, meter_report
from ranking_core.meter.standards.acceptance import (
    RATE_GAP_MINUTES,
    JudgeSettings,
    default_standards,
    parse_measuring_range,
)
from ranking_core.meter.standards.bounds import BOUNDS
from ranking_core.meter.standards.registry import DEVICES, profile_names, profile_title
from ranking_core.meter.standards.verdicts import device_of

__all__ = [
    "ReportRequest",
    "ReportRun",
    "comparison_settings",
    "failed_verdicts",
    "judge_settings",
    "out_dir_files",
    "pairs_csv",
    "parse_standards",
    "report_document",
    "report_from_pairs",
    "report_json",
    "run_report",
]


def parse_standards(profile: str | None) -> tuple[str, ...] | None:
    """``--profile NAME[,NAME]`` or ``all`` → the standards' names (None: the device's default).
    Raises ValueError with one sentence naming the choices."""
    if profile is None:
        return None
    names = tuple(n.strip() for n in profile.split(",") if n.strip())
    choices = profile_names()
    if names == ("all",):
        return choices
    if not names or any(n not in choices for n in names):
        raise ValueError(
            f"--profile: choose from {', '.join(choices)} or all (comma-separated); "
            f"got {named(profile)}"
        )
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class ReportRequest:
    """Every choice of a report, as the command's options give them (text where the option
    is text; checked by :func:`judge_settings`)."""

    device: str | None = None
    profile: str | None = None
    measuring_range: str | None = None
    bound: str | None = None
    resamples: int = 10_000
    seed: int = 1
    rate_gap: float = RATE_GAP_MINUTES
    parkes_type: int = 1
    deming_ratio: float = 1.0
    decision_levels: str | None = None


def comparison_settings(request: ReportRequest) -> ComparisonSettings:
    """The method comparison's choices (``--deming-ratio``, ``--decision-levels``: numbers in
    the file's unit, comma-separated), each checked (ValueError with one sentence naming the
    option)."""
    try:
        levels = None if request.decision_levels is None else parse_levels(request.decision_levels)
    except ValueError as exc:
        raise ValueError(f"--decision-levels: {exc}") from None
    try:
        return ComparisonSettings(float(request.deming_ratio), levels)
    except ValueError as exc:
        raise ValueError(f"--deming-ratio: {exc}") from None


def judge_settings(request: ReportRequest, pairs: MeterPairs | None) -> tuple[str, JudgeSettings]:
    """The device (given, else detected from the pairs) and the judging settings, each choice
    checked (ValueError with one sentence naming the option)."""
    standards = parse_standards(request.profile)
    span = (
        "default"
        if request.measuring_range is None
        else parse_measuring_range(request.measuring_range)
    )
    if request.device is not None and request.device not in DEVICES:
        raise ValueError(f"--device: choose bgm or cgm; got {named(request.device)}")
    if request.bound is not None and request.bound not in BOUNDS:
        raise ValueError(f"--bound: choose one of {', '.join(BOUNDS)}; got {named(request.bound)}")
    comparison_settings(request)
    device = request.device or (device_of(pairs) if pairs is not None else "bgm")
    judge = JudgeSettings(
        standards or default_standards(device),
        measuring_range=span,
        bound=request.bound,
        resamples=request.resamples,
        seed=request.seed,
    )
    return device, judge


def report_from_pairs(
    pairs: MeterPairs | pd.DataFrame,
    seg_table: SEGTable | None,
    learned: NDArray[np.float64] | None,
    request: ReportRequest,
    given: dict[str, Any] | None = None,
) -> MeterReport:
    """The report of pairs already read, judged as ``request`` says (the command and the page)."""
    device, judge = judge_settings(request, pairs if isinstance(pairs, MeterPairs) else None)
    comparison = comparison_settings(request)
    if isinstance(pairs, MeterPairs):  # levels are in the file's unit: checked against it
        try:
            comparison.levels_in(pairs.glucose_unit)
        except ValueError as exc:
            raise ValueError(f"--decision-levels: {exc}") from None
    return meter_report(
        pairs,
        seg_table,
        learned,
        parkes_type=request.parkes_type,
        provenance=given,
        judge=judge,
        device=device,
        rate_gap=request.rate_gap,
        comparison=comparison,
    )


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(2**20), b""):
            digest.update(block)
    return digest.hexdigest()


def seg_provenance(option: Path | None) -> str:
    """The SEG table used: its file name, the first 12 hex digits of the file's SHA-256 and who
    gave it (the operator, by --seg-table or $SEG_TABLE)."""
    path = Path(option if option is not None else os.environ[SEG_TABLE_ENV])
    given_by = "--seg-table" if option is not None else f"${SEG_TABLE_ENV}"
    return f"{path.name} (sha256 {file_sha256(path)[:12]}, the operator's file: {given_by})"


def _grid_metadata(path: Path) -> Any:
    """The grid.json beside a learned grid, parsed by the one JSON reader (nesting bounded
    before parsing, size bounded before reading); None when there is none. Raises InputError in
    one sentence naming the file when it is there but not readable JSON."""
    from ranking_core.inputs.json_records import MAX_JSON_BYTES, load_json

    meta_path = path.parent / "grid.json"
    try:
        size = meta_path.stat().st_size
        if size > MAX_JSON_BYTES:
            raise InputError(
                f"{meta_path.name} beside {path.name}: {size:,} bytes, more than the "
                f"{MAX_JSON_BYTES:,} a grid's metadata may hold"
            )
        data = meta_path.read_bytes()
    except OSError:
        return None
    return load_json(data, f"{meta_path.name} beside {path.name}")


def learned_provenance(path: Path) -> dict[str, str | int | float]:
    """The learned grid's file name and, from the grid.json written beside it by riskgrid
    learn (when present), its λ (a number) and the checksum of its ratings; for a grid written
    by riskgrid elicit, its number of raters and the checksums of its inputs. A grid.json that
    is not JSON raises InputError (one sentence)."""
    out: dict[str, str | int | float] = {"learned grid": path.name}
    meta = _grid_metadata(path)
    if meta is None:
        out["learned grid λ"] = "unknown (no grid.json beside the grid file)"
        return out
    try:
        if isinstance(meta, dict) and meta.get("kind") == "elicited grid":  # riskgrid elicit
            out["learned grid λ"] = "none (elicited by the SEG method, not learned)"
            out["learned grid raters"] = len(meta["raters"])
            out["learned grid inputs checksum"] = ", ".join(
                str(item["sha256"]) for item in meta["inputs"].values()
            )
            return out
        lam = float(meta["lambda"])
        if not math.isfinite(lam):
            raise ValueError(lam)
        out["learned grid λ"] = lam
        out["learned grid ratings checksum"] = str(meta["ratings_checksum"])
    except (ValueError, KeyError, TypeError, AttributeError):
        out["learned grid λ"] = "unknown (grid.json beside the grid file does not give it)"
    return out


@dataclass(frozen=True)
class ReportRun:
    """A report made from files: the pairs read, the SEG table (None: not configured, and
    ``seg_missing`` says how to give one), the learned surface and the report."""

    pairs: MeterPairs
    seg_table: SEGTable | None
    learned: NDArray[np.float64] | None
    report: MeterReport
    seg_missing: str = ""


def run_report(
    path: Path,
    request: ReportRequest,
    *,
    unit: str | None = None,
    sheet: str | None = None,
    max_rows: int | None = None,
    max_bytes: int | None = None,
    by: str | None = None,
    seg_option: Path | None = None,
    learned_grid: Path | None = None,
) -> ReportRun:
    """Read the pairs file, the SEG table and the learned grid, and report. Raises the readers'
    errors (PairsFileError, SEGTableError, GridFileError) and ValueError, each one sentence."""
    judge_settings(request, None)  # every choice checked before anything is read
    limits = with_limits(None, max_rows=max_rows, max_bytes=max_bytes)
    pairs = read_pairs(path, unit=unit, sheet=sheet, limits=limits, by=by)
    seg_missing = ""
    try:
        table: SEGTable | None = find_seg_table(seg_option)
    except SEGTableMissing as exc:
        table, seg_missing = None, str(exc)
    given: dict[str, Any] = {"input file": path.name, "input file sha256": file_sha256(path)}
    if table is not None:
        given["SEG table"] = seg_provenance(seg_option)
    learned = None
    if learned_grid is not None:
        from ranking_core.grids.files import read_grid_file

        learned = read_grid_file(learned_grid)
        given.update(learned_provenance(learned_grid))
    report = report_from_pairs(pairs, table, learned, request, given)
    return ReportRun(pairs, table, learned, report, seg_missing)


def report_json(report: MeterReport) -> str:
    """The report as JSON text (every number a JSON number)."""
    return json.dumps(report.to_dict(), indent=2, allow_nan=False)


def report_document(report: MeterReport, suffix: str, name: str | None = None) -> bytes:
    """The whole report as one PDF (``suffix`` ".pdf") or HTML (".html") document."""
    from ranking_core.meter.documents.document import (
        collecting_new_objects_only,
        report_blocks,
        report_html,
        report_pdf,
    )

    with collecting_new_objects_only():
        blocks = report_blocks(report, name=name)
        return report_pdf(blocks) if suffix.lower() == ".pdf" else report_html(blocks).encode()


def out_dir_files(report: MeterReport, png: bool = False) -> dict[str, bytes]:
    """The ``--out-dir`` files: every section's tables as CSV, every section's figures as PNG
    and PDF (the Bland–Altman plot among them), the interactive SEG heat map as HTML (PNG with
    ``png``: kaleido, which needs a browser; raises FigureExportError without one)."""
    from ranking_core.meter.documents.export import report_files

    interactive = {}
    seg = report.results.get("seg")
    if seg is not None:
        from ranking_core.meter.documents.figures import seg_heatmap

        interactive["seg_heatmap"] = seg_heatmap(seg.table, report)
    plots = {f.name: f.draw() for view in report.views() for f in view.figures}
    return report_files(report, interactive, png=png, plots=plots)


def pairs_csv(report: MeterReport) -> str:
    """Every valid pair with its results, as formula-safe CSV (``--pairs-out``)."""
    from ranking_core.meter.documents.export import pair_results, safe_csv

    return safe_csv(pair_results(report))


def failed_verdicts(report: MeterReport) -> tuple[list[str], int]:
    """The judged criteria that fail ("ISO 15197:2013 1", with "(all pairs)" or the group
    under ``--by``) and the number of criteria; criteria with no pair in range never fail."""
    judged = report.acceptance
    grouped = "group" in judged
    failed = [
        printable(f"{profile_title(row['profile'])} {row['id']}")
        + (f" ({printable(row['group'] or 'all pairs')})" if grouped else "")
        for _, row in judged.iterrows()
        if pd.notna(row["passes"]) and not row["passes"]
    ]
    return failed, len(judged)
