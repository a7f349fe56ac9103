"""Times in text cells: a date (year first, or day and month first), a time of day to the minute
or finer, an optional AM/PM and an optional UTC offset.

Each time is converted to UTC with its own offset (−12:00..+14:00); partial dates, dates without
a time, impossible dates, years outside :data:`YEARS` are refused; the day/month order of dates
written with the year last is decided from the whole file (a number above 12 can only be a day) or
given, else the file is refused as ambiguous; a file has offsets on every time or on none.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ranking_core.inputs.schema import Field, InputError

__all__ = ["OFFSETS", "YEARS", "Clock", "clock_parts"]

# a date (year first, or day and month first in either order), a time of day to the minute or
# finer, an optional AM/PM and an optional UTC offset
_TIME = re.compile(
    r"^(?:(?P<y1>\d{4})(?P<s1>[-/.])(?P<a1>\d{1,2})(?P=s1)(?P<b1>\d{1,2})"
    r"|(?P<a2>\d{1,2})(?P<s2>[-/.])(?P<b2>\d{1,2})(?P=s2)(?P<y2>\d{4}))"
    r"(?:[Tt]|\s+)(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:[.,](?P<f>\d{1,9}))?)?"
    r"\s*(?P<ampm>[AaPp]\.?[Mm]\.?)?"
    r"\s*(?P<off>[Zz]|[+-]\d{2}(?::?\d{2})?)?$"
)
_DATE_ONLY = re.compile(r"^\d{4}(?:[-/.]\d{1,2}){0,2}$|^\d{1,2}[-/.]\d{1,2}[-/.]\d{4}$")
_ORDER_NAMES = {
    "ymd": "YYYY-MM-DD",
    "dmy": "DD-MM-YYYY (day first)",
    "mdy": "MM-DD-YYYY (month first)",
}
YEARS = (1900, 2200)  # years accepted: far from the limits of nanosecond times (1677..2262)
OFFSETS = (-12 * 60, 14 * 60)  # UTC offsets in use, in minutes (−12:00..+14:00)
_NO_OFFSET = np.iinfo(np.int64).min
# the columns of a chunk's parsed times: year, the two day/month numbers in text order, the
# year's place (0 first, 1 last), hour (24-hour), minute, second, nanoseconds, offset (minutes)
_Y, _A, _B, _LAST, _H, _MI, _S, _NS, _OFF = range(9)


_GROUP_NAMES = (
    "last",
    "y",
    "a",
    "b",
    "h",
    "mi",
    "s",
    "ns",
    "ampm",
    "aware",
    "sign",
    "off_h",
    "off_m",
)


def _time_groups(cells: NDArray[np.object_]) -> tuple[NDArray[np.bool_], dict[str, NDArray]]:
    """Which cells match :data:`_TIME`, and their parts as integers (0 where not matched):
    last (the year written last), y, a, b (the day/month numbers in text order), h, mi, s, ns,
    ampm (0 none, 1 AM, 2 PM), aware (an offset given), sign, off_h, off_m.

    Cells laid out exactly like the first one (same length, digits and separators in the same
    places; the usual export) are read from a byte matrix at once; the others by the regular
    expression."""
    n = len(cells)
    matched = np.zeros(n, dtype=bool)
    groups = {k: np.zeros(n, dtype=np.int64) for k in _GROUP_NAMES}
    rest = np.ones(n, dtype=bool)
    first = _TIME.match(cells[0]) if n else None
    if first is not None and cells[0].isascii():
        fast = _fixed_layout(cells, first)
        if fast is not None:
            rows, values = fast
            matched[rows] = True
            rest[rows] = False
            for k, v in values.items():
                groups[k][rows] = v
    if rest.any():
        parts = pd.Series(cells[rest], dtype=object).str.extract(_TIME)
        found = parts["h"].notna().to_numpy()
        matched[rest] = found

        def number(name: str) -> NDArray[np.int64]:
            return parts[name].fillna("0").to_numpy(dtype=str).astype(np.int64)

        last = parts["y2"].notna().to_numpy()
        offset = parts["off"].fillna("")
        digits = offset.str[1:].str.replace(":", "", regex=False)  # '' for Z
        ampm = parts["ampm"].str.upper().str[0].fillna("").to_numpy(dtype=str)
        values = {
            "last": last,
            "y": np.where(last, number("y2"), number("y1")),
            "a": np.where(last, number("a2"), number("a1")),
            "b": np.where(last, number("b2"), number("b1")),
            "h": number("h"),
            "mi": number("mi"),
            "s": number("s"),
            "ns": parts["f"].fillna("").str.ljust(9, "0").to_numpy(dtype=str).astype(np.int64),
            "ampm": (ampm == "A") + 2 * (ampm == "P"),
            "aware": (offset != "").to_numpy(),
            "sign": np.where(offset.str.startswith("-").to_numpy(dtype=bool), -1, 1),
            "off_h": digits.str[:2].replace("", "0").to_numpy(dtype=str).astype(np.int64),
            "off_m": digits.str[2:4].replace("", "0").to_numpy(dtype=str).astype(np.int64),
        }
        for k, v in values.items():
            groups[k][rest] = v
    return matched, groups


def _fixed_layout(
    cells: NDArray[np.object_], first: re.Match[str]
) -> tuple[NDArray[np.bool_], dict[str, NDArray[np.int64]]] | None:
    """The rows laid out like ``first`` (see :func:`_time_groups`), with their parts."""
    width = len(first.string)
    lengths = np.fromiter(map(len, cells), np.int64, len(cells))
    same = lengths == width
    try:
        raw = "".join(cells[same]).encode("ascii")
    except UnicodeEncodeError:
        return None
    codes = np.frombuffer(raw, np.uint8).reshape(-1, width)
    template = np.frombuffer(first.string.encode("ascii"), np.uint8)
    free = np.zeros(width, dtype=bool)  # positions checked by kind, not by equality
    digit = np.zeros(width, dtype=bool)
    spans = {}
    for name in ("y1", "a1", "b1", "a2", "b2", "y2", "h", "mi", "s", "f"):
        if first.group(name) is not None:
            start, end = first.span(name)
            spans[name] = (start, end)
            digit[start:end] = True
    ok = np.ones(len(codes), dtype=bool)
    if digit.any():
        ok &= ((codes[:, digit] >= 48) & (codes[:, digit] <= 57)).all(axis=1)
    free |= digit
    values: dict[str, NDArray[np.int64]] = {}
    if first.group("ampm") is not None:
        at = first.start("ampm")
        free[at] = True
        letter = codes[:, at] | 0x20  # lower case
        ok &= (letter == ord("a")) | (letter == ord("p"))
        values["ampm"] = np.where(letter == ord("p"), 2, 1)
    offset = first.group("off")
    if offset is not None and offset not in ("Z", "z"):
        at = first.start("off")
        free[at] = True
        ok &= (codes[:, at] == ord("+")) | (codes[:, at] == ord("-"))
        values["sign"] = np.where(codes[:, at] == ord("-"), -1, 1)
        body = [at + 1 + i for i, c in enumerate(offset[1:]) if c != ":"]
        digit_off = np.zeros(width, dtype=bool)
        digit_off[body] = True
        ok &= ((codes[:, digit_off] >= 48) & (codes[:, digit_off] <= 57)).all(axis=1)
        free |= digit_off
        spans["off_h"] = (body[0], body[0] + 2)
        if len(body) == 4:
            spans["off_m"] = (body[2], body[4 - 1] + 1)
    ok &= (codes[:, ~free] == template[~free]).all(axis=1)
    codes = codes[ok]

    def number(start: int, end: int) -> NDArray[np.int64]:
        powers = 10 ** np.arange(end - start - 1, -1, -1, dtype=np.int64)
        return (codes[:, start:end].astype(np.int64) - 48) @ powers

    last = "y2" in spans
    for key, (name_first, name_last) in {
        "y": ("y1", "y2"),
        "a": ("a1", "a2"),
        "b": ("b1", "b2"),
    }.items():
        values[key] = number(*spans[name_last if last else name_first])
    for key in ("h", "mi", "s", "off_h", "off_m"):
        if key in spans:
            values[key] = number(*spans[key])
    if "f" in spans:
        start, end = spans["f"]
        values["ns"] = number(start, end) * 10 ** (9 - (end - start))
    values["last"] = np.full(len(codes), last, dtype=np.int64)
    values["aware"] = np.full(len(codes), offset is not None, dtype=np.int64)
    if "ampm" in values:
        values["ampm"] = values["ampm"][ok]
    if "sign" in values:
        values["sign"] = values["sign"][ok]
    else:
        values["sign"] = np.ones(len(codes), dtype=np.int64)
    return np.flatnonzero(same)[ok], values


def clock_parts(
    cells: pd.Series, field_: Field
) -> tuple[NDArray[np.int64], list[tuple[str, NDArray[np.bool_]]]]:
    """Stripped time cells → (n, 9) integer parts (see the column names above) and the broken
    rules. The date's day/month order is decided later, from the whole file (:class:`Clock`)."""
    n = len(cells)
    empty = (cells == "").to_numpy()
    matched, g = _time_groups(cells.to_numpy(dtype=object))
    out = np.zeros((n, 9), dtype=np.int64)
    last = g["last"].astype(bool)
    out[:, _Y], out[:, _A], out[:, _B], out[:, _LAST] = g["y"], g["a"], g["b"], last
    hour = g["h"]
    out[:, _MI], out[:, _S], out[:, _NS] = g["mi"], g["s"], g["ns"]
    twelve = g["ampm"] > 0
    bad_clock = np.where(twelve, (hour < 1) | (hour > 12), hour > 23)
    out[:, _H] = np.where(twelve, hour % 12 + 12 * (g["ampm"] == 2), hour)
    bad_clock |= (out[:, _MI] > 59) | (out[:, _S] > 59)
    aware = g["aware"].astype(bool)
    off_m = g["off_m"]
    minutes = g["sign"] * (g["off_h"] * 60 + off_m)
    out[:, _OFF] = np.where(aware, minutes, _NO_OFFSET)
    bad_offset = aware & ((off_m > 59) | (minutes < OFFSETS[0]) | (minutes > OFFSETS[1]))
    bad_year = (out[:, _Y] < YEARS[0]) | (out[:, _Y] > YEARS[1])
    orders = ", ".join(_ORDER_NAMES[o] for o in field_.date_orders)
    partial = ~empty & ~matched & cells.str.match(_DATE_ONLY).to_numpy(dtype=bool, na_value=False)
    not_time = ~empty & ~matched & ~partial
    if "ymd" not in field_.date_orders:
        not_time |= matched & ~last
    if not set(field_.date_orders) - {"ymd"}:
        not_time |= matched & last
    ok = matched & ~not_time
    name = field_.name
    return out, [
        (f"{name} is empty", empty),
        (
            f"{name} is a date without a time of day, or a partial date (rule: a date and a time, "
            "at least to the minute)",
            partial,
        ),
        (
            f"{name} is not a time (date {orders}, then hh:mm[:ss], optional AM/PM and UTC offset)",
            not_time,
        ),
        (
            f"{name} has no valid time of day (hours 0..23, or 1..12 with AM/PM; minutes and "
            "seconds 0..59)",
            ok & bad_clock,
        ),
        (f"{name} has a UTC offset outside -12:00..+14:00", ok & ~bad_clock & bad_offset),
        (
            f"{name} is outside the years {YEARS[0]}..{YEARS[1]}",
            ok & ~bad_clock & ~bad_offset & bad_year,
        ),
    ]


@dataclass
class Clock:
    """The file's day/month order: given (``dayfirst`` True/False) or decided from the whole
    file's times when every time is read (``option`` names how to give it)."""

    dayfirst: bool | None = None
    option: str = "--dayfirst or --monthfirst"

    def finish(
        self, parts: NDArray[np.int64], lines: NDArray[np.int64], field_: Field, label: str
    ) -> tuple[NDArray[np.datetime64], list[tuple[str, NDArray[np.bool_]]], str, list[str]]:
        """The instants (UTC when the file gives offsets), the rules broken, the offsets seen
        ("" for none) and notes. InputError when the order cannot be decided or when the file
        mixes times with and without offsets."""
        name = field_.name
        last = parts[:, _LAST] == 1
        a, b = parts[:, _A], parts[:, _B]
        day_first = last & (a > 12) & (b <= 12)
        month_first = last & (b > 12) & (a <= 12)
        notes = []
        dayfirst = self.dayfirst
        if dayfirst is None and last.any():
            if day_first.any() and month_first.any():
                raise InputError(
                    f"{label}: {name} has the day first in line "
                    f"{lines[day_first][0]} ({a[day_first][0]} > 12) and the month first in "
                    f"line {lines[month_first][0]} ({b[month_first][0]} > 12) (rule: one "
                    f"day/month order per file); give the order with {self.option} to refuse "
                    "the lines that do not fit it"
                )
            if day_first.any() or month_first.any():
                dayfirst = bool(day_first.any())
                decides = day_first if dayfirst else month_first
                notes.append(
                    f"{label}: {name} read {_ORDER_NAMES['dmy' if dayfirst else 'mdy']}"
                    f", as line {lines[decides][0]} shows (a day "
                    f"{(a if dayfirst else b)[decides][0]} > 12)"
                )
            elif (last & (a != b)).any():
                shown = lines[last & (a != b)][0]
                raise InputError(
                    f"{label}: {name} is ambiguous: every date fits both day-first and "
                    f"month-first order (no number above 12 decides it; e.g. line {shown}); "
                    f"give the order with {self.option}"
                )
        elif dayfirst is not None and last.any():
            notes.append(f"{label}: {name} read {'day' if dayfirst else 'month'} first (as given)")
        month = np.where(last & bool(dayfirst), b, a)
        day = np.where(last & bool(dayfirst), a, b)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dates = pd.to_datetime(
                pd.DataFrame(
                    {
                        "year": parts[:, _Y],
                        "month": month,
                        "day": day,
                        "hour": parts[:, _H],
                        "minute": parts[:, _MI],
                        "second": parts[:, _S],
                    }
                ),
                errors="coerce",
            )
        values = dates.to_numpy(dtype="datetime64[ns]") + parts[:, _NS].astype("timedelta64[ns]")
        wrong_order = last & (month > 12)
        invalid = np.isnat(values) & ~wrong_order
        order = "day first" if dayfirst else "month first"
        offset = parts[:, _OFF]
        aware = offset != _NO_OFFSET
        rules = [
            (f"{name} does not fit the file's day/month order ({order})", wrong_order),
            (f"{name} is not a valid date", invalid),
        ]
        kept = ~wrong_order & ~invalid
        if (aware & kept).any() and (~aware & kept).any():
            first_with = lines[aware & kept][0]
            first_without = lines[~aware & kept][0]
            raise InputError(
                f"{label}: {name} has a UTC offset in line {first_with} and none "
                f"in line {first_without} (rule: offsets on every time, or on none)"
            )
        seen = ""
        if (aware & kept).any():
            values = values - np.where(aware, offset, 0).astype("timedelta64[m]")
            distinct = np.unique(offset[aware & kept])
            seen = ", ".join(_offset_text(int(m)) for m in distinct)
            notes.append(f"{label}: {name} in UTC (each time's offset applied: {seen})")
        return values, rules, seen, notes


def _offset_text(minutes: int) -> str:
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
