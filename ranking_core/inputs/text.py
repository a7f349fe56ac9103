"""Users' text as text: the one home of the rules for text that came from a file.

* :data:`UNSAFE`: control characters (C0, DEL, C1: ESC starts terminal sequences such as OSC-8
  hyperlinks), invisible format characters (zero-width spaces, the BOM, Unicode tags) and bidi
  controls (U+202A–U+202E overrides, U+2066–U+2069 isolates, marks): characters that change
  how the text around them is shown. The input layer refuses a text cell holding one
  (:data:`UNSAFE_RULE`); :func:`printable` shows them escaped (``\\x1b``, ``\\u202e``) wherever
  text is written for a person.
* :func:`terminal`: text for a Rich console line written with markup: unsafe characters
  escaped and Rich's square-bracket markup taken literally (``a[/]b``, ``ICU panel [v2]``);
  :func:`named` the same between single quotes, the one quote style of messages.
* :func:`safe_csv`: CSV in which no text cell can start a spreadsheet formula, also behind a
  full-width or other look-alike prefix (``＝`` ``＋`` ``－`` ``＠``, ``﹦``, ``−``), and in which
  unsafe characters are escaped.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FORMULA_PREFIXES",
    "UNSAFE",
    "UNSAFE_RULE",
    "named",
    "neutralise",
    "printable",
    "safe_csv",
    "terminal",
]

# categories Cc (controls), Cf (format characters), Zl, Zp (line and paragraph separators) and
# lone surrogates; tests/test_hostile_inputs.py checks this class against unicodedata
UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f]"
)
UNSAFE_RULE = (
    "contains a control character, an invisible format character or a bidi override "
    "(rule: text cells hold printable text only)"
)
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_LOOK_ALIKES = "\u2212\u2796\u2795\u2797\ufe62\ufe63\ufe66\uff0b\uff0d\uff1d\uff20\u207a\u207b"


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else (f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    )


def printable(text: object, keep: str = "") -> str:
    """``text`` with every :data:`UNSAFE` character (except those in ``keep``) written as its
    escape (``\\x1b``, ``\\u202e``), so that it cannot move, hide or recolour what is shown."""
    text = str(text)
    if UNSAFE.search(text) is None:
        return text
    return UNSAFE.sub(lambda m: m.group() if m.group() in keep else _escape(m), text)


def terminal(text: object) -> str:
    """User text for a Rich console line printed with markup: every :data:`UNSAFE` character
    but the line break escaped (:func:`printable`), then Rich's markup escaped
    (``rich.markup.escape``), so that ``a[/]b`` or ``ICU panel [v2]`` print as written. Never
    ``repr()`` the result: a doubled backslash would undo the escape."""
    from rich.markup import escape

    return escape(printable(text, keep="\n"))


def named(text: object) -> str:
    """A user's name inside a message, in the one quote style: ``'ICU panel [v2]'`` (unsafe
    characters escaped; for a line printed without markup)."""
    return f"'{printable(text)}'"


def _starts_formula(text: str) -> bool:
    head = text.lstrip(" \u00a0\u3000")[:1] or text[:1]
    return bool(head) and (
        text.startswith(FORMULA_PREFIXES)
        or head in FORMULA_PREFIXES
        or head in _LOOK_ALIKES
        or unicodedata.normalize("NFKC", head)[:1] in FORMULA_PREFIXES
    )


def neutralise(value: object) -> object:
    """A text cell for a spreadsheet: unsafe characters escaped (tab, CR, LF kept: CSV quotes
    them) and a leading apostrophe when it could start a formula; other values unchanged."""
    if not isinstance(value, str):
        return value
    value = printable(value, keep="\t\r\n")
    return "'" + value if _starts_formula(value) else value


def safe_csv(frame: pd.DataFrame) -> str:
    """CSV text of a table in which no text cell (nor header) can start a spreadsheet formula
    (:func:`neutralise`). Numbers stay numbers; line ends are CRLF (RFC 4180), so that a CR or
    LF inside a text cell is always quoted."""
    import pandas as pd

    safe = frame.copy()
    safe.columns = [neutralise(str(c)) for c in safe.columns]
    for column in safe.columns:
        if not pd.api.types.is_numeric_dtype(safe[column]):
            safe[column] = safe[column].map(neutralise)
    return safe.to_csv(index=False, lineterminator="\r\n")
