"""The JSON reader: a file holding a list of records (objects), as device platforms export them
(Nightscout ``entries.json``, Tidepool's data export). The keys are the header (in the order they
are first met), each record a row numbered from 1 ("record 12"); a value that is itself an object
or a list is kept as its JSON text, a missing key as an empty cell. A record that is not an object
is refused by its number. The file's size is checked before it is read
(:attr:`~ranking_core.inputs.Limits.max_bytes`, at most :data:`MAX_JSON_BYTES`: JSON is parsed
whole), the number of records against
:attr:`~ranking_core.inputs.Limits.max_rows`.

Every JSON input of the library is parsed by :func:`load_json`: the nesting depth of its
brackets is measured on the bytes before parsing (at most :data:`MAX_JSON_DEPTH`; a file of
nested brackets is refused naming its line, never parsed), and an object naming one key twice is
marked, never silently reduced to its last value: a record holding such an object, at any depth,
is refused by its number (rule: a key holds one value).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ranking_core.inputs.rows import (
    CHUNK_ROWS,
    Chunk,
    ReadRequest,
    Rows,
    match_header,
    missing_header,
)
from ranking_core.inputs.schema import InputError, cell_text, quote

__all__ = ["MAX_JSON_BYTES", "MAX_JSON_DEPTH", "RepeatedKeys", "load_json", "read_json_records"]

# JSON is parsed whole into Python objects, about ten times its size in memory: a JSON file may
# be at most this large (a year of 5-minute CGM readings in Nightscout's entries.json is ~25 MB)
MAX_JSON_BYTES = 64 * 2**20


# brackets nested deeper than this are refused before parsing (a Nightscout or Tidepool record
# is at most 4 deep inside its list; Python's parser recurses once per level)
MAX_JSON_DEPTH = 64
_DEPTH_STEP = 1 << 20  # bytes scanned at once
_BRACKET = np.zeros(256, dtype=np.int64)
_BRACKET[[ord("["), ord("{")]] = 1
_BRACKET[[ord("]"), ord("}")]] = -1


class RepeatedKeys(dict[str, Any]):
    """A JSON object that names a key more than once: the last value of each key, and the keys
    repeated (``repeated``), so that a reader can refuse it by its record."""

    repeated: tuple[str, ...] = ()


class _Objects:
    """``object_pairs_hook``: each object a dict, or a :class:`RepeatedKeys` when it names a
    key twice (``repeats`` counts those)."""

    def __init__(self) -> None:
        self.repeats = 0

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) == len(pairs):
            return out
        self.repeats += 1
        times = Counter(k for k, _ in pairs)
        marked = RepeatedKeys(out)
        marked.repeated = tuple(k for k, n in times.items() if n > 1)
        return marked


def too_deep(data: bytes, limit: int = MAX_JSON_DEPTH) -> int:
    """The byte offset of the first bracket (``[`` or ``{`` outside strings) nested deeper than
    ``limit``, or −1. O(n) in the bytes, scanned in steps of 1 MiB: a quote preceded by an odd
    run of backslashes is escaped and does not end a string (the run is carried across steps)."""
    depth, in_string, run = 0, 0, 0
    for start in range(0, len(data), _DEPTH_STEP):
        codes = np.frombuffer(data, np.uint8, min(_DEPTH_STEP, len(data) - start), start)
        quotes = np.flatnonzero(codes == ord('"'))
        slashes = np.flatnonzero(codes == ord("\\"))
        if run or slashes.size:
            # runs of backslashes: where each ends and how long it is (the carried run first)
            new = np.r_[True, np.diff(slashes) != 1] if slashes.size else np.empty(0, bool)
            ends = slashes[np.r_[new[1:], True]] if slashes.size else slashes
            lengths = ends - slashes[new] + 1
            if lengths.size and slashes[0] == 0:
                lengths[0] += run
            odd_ends = np.r_[-1 if run % 2 else -2, ends[lengths % 2 == 1]]
            quotes = quotes[~np.isin(quotes - 1, odd_ends)]
            ended = ends.size and ends[-1] == codes.size - 1
            run = int(lengths[-1]) if ended else 0
        brackets = np.flatnonzero(_BRACKET[codes])
        outside = brackets[(in_string + np.searchsorted(quotes, brackets)) % 2 == 0]
        levels = depth + np.cumsum(_BRACKET[codes[outside]])
        if levels.size and levels.max() > limit:
            return start + int(outside[np.argmax(levels > limit)])
        depth = int(levels[-1]) if levels.size else depth
        in_string = (in_string + quotes.size) % 2
    return -1


def load_json(data: bytes, label: str) -> Any:
    """Parse JSON bytes (UTF-8 with or without BOM): brackets nested at most
    :data:`MAX_JSON_DEPTH` deep (checked on the bytes before parsing), each object a dict, or a
    :class:`RepeatedKeys` when it names a key twice. Raises :class:`InputError` in one sentence
    naming the line and the rule otherwise."""
    return _parse(data, label)[0]


def _parse(data: bytes, label: str) -> tuple[Any, int]:
    """:func:`load_json`'s value and the number of objects that name a key twice."""
    deep = too_deep(data)
    if deep >= 0:
        line = data.count(b"\n", 0, deep) + 1
        raise InputError(
            f"{label}: line {line} nests brackets more than {MAX_JSON_DEPTH} deep (the limit for "
            "JSON; a record is a few levels deep)"
        )
    hook = _Objects()
    try:
        return json.loads(data.decode("utf-8-sig"), object_pairs_hook=hook), hook.repeats
    except UnicodeDecodeError:
        raise InputError(f"{label}: JSON must be UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{label}: not valid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})"
        ) from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer of more than 4,300 digits
        raise InputError(f"{label}: not readable as JSON ({str(exc).split(';')[0]})") from None


def _repeats(value: Any) -> tuple[str, ...]:
    """The keys an object inside ``value`` (at any depth) names twice, or ()."""
    if isinstance(value, RepeatedKeys):
        return value.repeated
    inner = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return next((found for v in inner if (found := _repeats(v))), ())


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
    records, repeats = _parse(data, label)
    if isinstance(records, RepeatedKeys):
        raise InputError(
            f"{label}: the top-level object names {quote(records.repeated[0])} twice (rule: a "
            "key holds one value)"
        )
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
    repeated: list[int] = []
    example = ""
    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            not_objects.append(number)
        elif repeats and (twice := _repeats(record)):
            repeated.append(number)
            example = example or quote(twice[0])
        else:
            keys.update(dict.fromkeys(map(str, record)))
    if repeated:
        refuse.add(
            "the record names a key twice (rule: a key holds one value)",
            repeated,
            example,
            unsplit=True,
        )
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
        skip = set(repeated)
        numbered = [
            (n, r) for n, r in enumerate(records, start=1) if isinstance(r, dict) and n not in skip
        ]
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
