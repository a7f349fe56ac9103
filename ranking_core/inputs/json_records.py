"""The JSON reader: a file holding a list of records (objects), as device platforms export them
(Nightscout ``entries.json``, Tidepool's data export). The keys are the header (in the order they
are first met), each record a row numbered from 1 ("record 12"); a value that is itself an object
or a list is kept as its JSON text, a missing key as an empty cell. A record that is not an object
is refused by its number. The file's size is checked before it is read
(:attr:`~ranking_core.inputs.Limits.max_bytes`, at most :data:`MAX_JSON_BYTES`: JSON is parsed
whole), the number of records against
:attr:`~ranking_core.inputs.Limits.max_rows`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

from ranking_core.inputs.rows import (
    CHUNK_ROWS,
    Chunk,
    ReadRequest,
    Rows,
    match_header,
    missing_header,
)
from ranking_core.inputs.schema import InputError, cell_text

__all__ = ["MAX_JSON_BYTES", "read_json_records"]

# JSON is parsed whole into Python objects, about ten times its size in memory: a JSON file may
# be at most this large (a year of 5-minute CGM readings in Nightscout's entries.json is ~25 MB)
MAX_JSON_BYTES = 64 * 2**20


def _cell(value: object) -> str:
    """A JSON value as cell text: objects and lists as compact JSON, booleans as JSON spells
    them, the rest as :func:`~ranking_core.inputs.schema.cell_text` gives it."""
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return cell_text(value, ("false", "true"))


@contextmanager
def read_json_records(request: ReadRequest) -> Iterator[Rows]:
    """Records of a JSON list as rows of the keys' columns."""
    label, limits, refuse = request.label, request.limits, request.refuse  # no sheets in JSON
    cap = min(limits.max_bytes, MAX_JSON_BYTES)
    data = request.binary.read(cap + 1)
    if len(data) > cap:
        raise InputError(f"{label}: larger than {cap / 2**20:g} MiB (the limit for JSON)")
    try:
        records = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise InputError(f"{label}: JSON must be UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{label}: not valid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})"
        ) from None
    if isinstance(records, dict):  # {"entries": [...]} or {"data": [...]}: the one list inside
        lists = [v for v in records.values() if isinstance(v, list)]
        records = lists[0] if len(lists) == 1 else None
    if not isinstance(records, list):
        raise InputError(f"{label}: expected a JSON list of records (objects)")
    if len(records) > limits.max_rows:
        raise InputError(
            f"{label}: {len(records):,} records, more than the limit of {limits.max_rows:,}"
        )
    keys: dict[str, None] = {}
    not_objects = []
    for number, record in enumerate(records, start=1):
        if isinstance(record, dict):
            keys.update(dict.fromkeys(map(str, record)))
        else:
            not_objects.append(number)
    if not_objects:
        refuse.add(
            "not a JSON object (record)",
            not_objects,
            _cell(records[not_objects[0] - 1])[:80],
            unsplit=True,
        )
    columns = list(keys)
    header = match_header(columns, request.schema, label)
    if header is None:
        raise missing_header(columns, request.schema, label, ", ".join(columns) or "(no keys)")
    at = {name: i for i, name in enumerate(columns)}

    def chunks() -> Iterator[Chunk]:
        numbered = [(n, r) for n, r in enumerate(records, start=1) if isinstance(r, dict)]
        for start in range(0, len(numbered), CHUNK_ROWS):
            part = numbered[start : start + CHUNK_ROWS]
            rows = []
            for _, record in part:
                row = [""] * len(columns)
                for key, value in record.items():
                    row[at[str(key)]] = _cell(value)
                rows.append(row)
            yield Chunk([n for n, _ in part], rows=rows)

    yield Rows(header, chunks(), "record", [], True)
