"""The table collector: a reader's chunks of rows → the typed columns of the valid rows, the
refused rows grouped by rule, notes and a summary (:class:`~ranking_core.inputs.TableRead`).

Rows: wrong number of fields, a NUL byte, a control character or bidi override in a text cell
(:mod:`ranking_core.inputs.text`), a cell longer than
:attr:`~ranking_core.inputs.Limits.max_cell`, an empty, non-numeric or non-finite number, an
ambiguous decimal mark (:mod:`ranking_core.inputs.numbers`), a time that is not one
(:mod:`ranking_core.inputs.times`), a value outside the role's physical range: the row is refused,
the other rows are kept. Only the parsed values are kept, so memory grows with the number of valid
values, not with the file's text.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.inputs.numbers import DecimalMark, parse_numbers, plain_numbers
from ranking_core.inputs.rows import Refusals, Rows
from ranking_core.inputs.schema import InputError, Limits, Role, Schema, TableRead, quote
from ranking_core.inputs.text import UNSAFE, UNSAFE_RULE
from ranking_core.inputs.times import Clock, clock_parts
from ranking_core.inputs.units import UnitError, resolve_unit, to_mgdl

__all__ = ["collect"]


def collect(
    rows: Rows,
    schema: Schema,
    label: str,
    unit: str | None,
    limits: Limits,
    refuse: Refusals,
    unit_option: str,
    clock: Clock,
) -> TableRead:
    """The typed columns of the valid rows of ``rows`` (a reader's header and chunks) for
    ``schema``: per chunk, NUL bytes, over-long cells, numbers, times and unsafe text refused by
    rule; then the glucose unit resolved and converted to mg/dL, the physical ranges checked and
    the times put in the file's day/month order (UTC with offsets). Raises :class:`InputError`
    over ``limits.max_rows`` data rows, or when no row is kept."""
    header, where = rows.header, rows.where
    typed = tuple(
        f
        for f in schema.typed  # an optional role absent from the header is left out
        if not (isinstance(f, Role) and f in schema.roles and f.name not in header.index)
    )
    decimal = DecimalMark(point=rows.point_is_decimal)
    parts: dict[str, list[NDArray[Any]]] = {f.name: [] for f in typed}
    kept_lines: list[NDArray[np.int64]] = []
    n_read = n_skipped = 0
    for chunk in rows.chunks:
        n = len(chunk.lines)
        n_read += n
        if n_read + refuse.unsplit > limits.max_rows:
            raise InputError(
                f"{label}: more than {limits.max_rows:,} data rows (the limit; "
                "split the file or raise the limit)"
            )
        lines = (
            np.arange(chunk.lines.start, chunk.lines.stop, dtype=np.int64)
            if isinstance(chunk.lines, range)
            else np.asarray(chunk.lines, dtype=np.int64)
        )
        if chunk.numbers is not None:  # plain numbers, already checked
            for f in typed:
                parts[f.name].append(chunk.numbers[header.index[f.name]])
            kept_lines.append(lines)
            continue
        bad = np.zeros(n, dtype=bool)
        if chunk.rows is not None:
            width = np.fromiter(map(len, chunk.rows), dtype=np.int64, count=n)
            bad = width != header.width
            if bad.any():
                first = int(np.flatnonzero(bad)[0])
                refuse.add(
                    f"the row has the wrong number of fields (the header has {header.width})",
                    lines[bad],
                    quote(",".join(chunk.rows[first])),
                )
        cells: dict[str, NDArray[np.object_]] = {}
        for role in schema.roles:
            if role.name not in header.index:
                cells[role.name] = np.full(n, "", dtype=object)
                continue
            k = header.index[role.name]
            column = np.empty(n, dtype=object)
            if chunk.columns is not None:
                column[:] = chunk.columns[k]
            else:
                assert chunk.rows is not None, "a chunk holds numbers, columns or rows"
                column[:] = [row[k] if len(row) > k else "" for row in chunk.rows]
            joined = "".join(column)
            if "\x00" in joined:
                nul = np.fromiter(("\x00" in c for c in column), bool, len(column)) & ~bad
                if nul.any():
                    refuse.add(
                        f"{role.name} contains a NUL byte", lines[nul], quote(column[nul][0])
                    )
                    bad |= nul
            if max(map(len, column), default=0) > limits.max_cell:
                long = (
                    np.fromiter((len(c) > limits.max_cell for c in column), bool, len(column))
                    & ~bad
                )
                if long.any():
                    refuse.add(
                        f"{role.name} is longer than {limits.max_cell:,} characters",
                        lines[long],
                        quote(column[long][0]),
                    )
                    bad |= long
            cells[role.name] = column
        keep = ~bad
        if schema.prepare is not None:
            data, cells = schema.prepare(cells)
            n_skipped += int((keep & ~data).sum())
            keep &= data
        lines = lines[keep]
        chunk_values: dict[str, NDArray[Any]] = {}
        bad = np.zeros(len(lines), dtype=bool)
        raw = {f.name: cells[f.name][keep] for f in typed}
        fast = {f.name: plain_numbers(raw[f.name], decimal) for f in typed if f.kind == "number"}
        series = {
            f.name: pd.Series(raw[f.name], dtype=object).str.strip()
            for f in typed
            if fast.get(f.name) is None
        }
        for f in typed:
            if f.kind == "number" and fast[f.name] is None:
                decimal.see(series[f.name])
        for f in typed:
            parsed: NDArray[Any]
            rules: list[tuple[str, NDArray[np.bool_]]]
            plain = fast.get(f.name)
            if plain is not None:
                parsed, rules = plain, []
            elif f.kind == "number":
                parsed, rules = parse_numbers(series[f.name], f.name, decimal)
            elif f.kind == "time":
                parsed, rules = clock_parts(series[f.name], f)
            else:
                parsed = series[f.name].to_numpy(dtype=object)
                rules = [
                    (
                        f"{f.name} {UNSAFE_RULE}",
                        series[f.name].str.contains(UNSAFE).to_numpy(dtype=bool, na_value=False),
                    )
                ]
                if f.choices:
                    parsed, unknown = _chosen(parsed, f.choices)
                    rules.append((f"{f.name} is not one of {', '.join(f.choices)}", unknown))
            for rule, mask in rules:
                mask = mask & ~bad
                if mask.any():
                    cell = series[f.name][mask].iloc[0]
                    refuse.add(rule, lines[mask], quote(cell) if cell else "")
                    bad |= mask
            chunk_values[f.name] = parsed
        for f in typed:
            parts[f.name].append(chunk_values[f.name][~bad])
        kept_lines.append(lines[~bad])
    n_read += refuse.unsplit - n_skipped
    if n_read == 0:
        raise InputError(f"{label}: the table has a header but no data rows")
    if not kept_lines:  # every row was refused by the reader
        raise InputError(
            f"{label}: no valid row. " + " ".join(r.message(where) for r in refuse.result())
        )
    values = {f.name: np.concatenate(parts.pop(f.name)) for f in typed}
    lines = np.concatenate(kept_lines)
    del kept_lines
    notes = list(rows.notes)
    if n_skipped:
        notes.append(f"{label}: {n_skipped:,} rows skipped: {schema.skip_note}")
    if decimal.comma and not decimal.point:
        notes.append(f"{label}: decimal comma")
    file_unit = None
    glucose = [f for f in typed if f.glucose]
    if glucose:
        try:
            file_unit = resolve_unit(
                [values[f.name] for f in glucose], unit, header.unit, label, unit_option
            )
        except UnitError as exc:
            raise InputError(str(exc)) from exc
        for f in glucose:
            values[f.name] = to_mgdl(values[f.name], file_unit)
        if file_unit != "mg/dL":
            notes.append(f"{label}: glucose read in {file_unit} and converted to mg/dL")
    bad = np.zeros(len(lines), dtype=bool)
    for f in typed:
        if f.kind != "number" or (f.low is None and f.high is None):
            continue
        v = values[f.name]
        if v.size == 0 or (
            (f.low is None or v.min() >= f.low) and (f.high is None or v.max() <= f.high)
        ):
            continue  # every value in range: no mask needed
        out = ((v < f.low) if f.low is not None else False) | (
            (v > f.high) if f.high is not None else False
        )
        out = np.asarray(out) & ~bad
        if out.any():
            low, high = ("" if b is None else f"{b:g}" for b in (f.low, f.high))
            rule = f.range_rule or (
                f"{f.name} is outside {low}..{high}" + (" mg/dL" if f.glucose else "")
            )
            refuse.add(rule, lines[out], quote(f"{v[out][0]:g}"))
            bad |= out
    if bad.any():
        values = {k: v[~bad] for k, v in values.items()}
        lines = lines[~bad]
    offset = None
    for f in typed:
        if f.kind != "time":
            continue
        values[f.name], rules, offset, clock_notes = clock.finish(values[f.name], lines, f, label)
        notes.extend(clock_notes)
        bad = np.zeros(len(lines), dtype=bool)
        for rule, mask in rules:
            mask = mask & ~bad
            if mask.any():
                refuse.add(rule, lines[mask], "")
                bad |= mask
        if bad.any():
            values = {k: v[~bad] for k, v in values.items()}
            lines = lines[~bad]
    result = TableRead(
        values, lines, refuse.result(), tuple(notes), label, where, file_unit, n_read, offset
    )
    if len(lines) == 0:
        raise InputError(f"{label}: no valid row. " + " ".join(result.messages()[1:]))
    return result


def _chosen(
    cells: NDArray[np.object_], choices: tuple[str, ...]
) -> tuple[NDArray[np.object_], NDArray[np.bool_]]:
    """Each cell as the choice it names (case-insensitively), and which name none."""
    spelled = {c.casefold(): c for c in choices}
    named = np.array([spelled.get(str(c).casefold(), "") for c in cells], dtype=object)
    return named, named == ""
