"""Opening an input and decoding its text: the size limit checked before reading, the encoding
found (or the file refused, naming the encoding it looks like), line ends counted as editors
count them.

* line ends: LF, CRLF, CR CR LF (a run of CRs followed by LF is one line end) and CR alone;
  lines are numbered as editors (and ``awk``) number them;
* encodings: UTF-8 with or without BOM, UTF-16 with BOM; anything else refuses the file, naming the
  encoding it looks like;
* a last line cut off (:func:`cut_last_line`): a text table that ends inside its last line (no
  final line break) with fewer fields than the header, or a last field shorter than every other
  line's, was cut short by its writer; the text reader refuses that line by number.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

import pandas as pd

from ranking_core.inputs.schema import InputError, Limits

__all__ = [
    "TAIL_LINES",
    "LineEnds",
    "cut_last_line",
    "decode_error",
    "open_binary",
    "read_text",
    "source_label",
    "text_stream",
]

TAIL_LINES = 2000  # the lines above the last one that a cut last line is judged against


def source_label(source: object, name: str | None) -> str:
    """What messages call an input: ``name``, the path, "table" or the upload's name."""
    if name:
        return str(name)
    if isinstance(source, str | os.PathLike):
        return str(source)
    if isinstance(source, pd.DataFrame):
        return "table"
    return str(getattr(source, "name", "") or "upload")


def open_binary(
    source: str | os.PathLike | IO[bytes] | bytes, label: str, limits: Limits | None = None
) -> IO[bytes]:
    """A seekable binary stream of at most ``limits.max_bytes`` bytes (checked before reading
    a path; an upload is read up to one byte past the limit)."""
    limits = limits or Limits()
    too_big = (
        f"{label}: larger than the {limits.max_bytes:,}-byte limit (split the file or "
        "raise the limit)"
    )
    if isinstance(source, bytes | bytearray | memoryview):
        if len(source) > limits.max_bytes:
            raise InputError(too_big)
        return io.BytesIO(bytes(source))
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        try:
            if path.is_dir():
                raise InputError(f"{label}: is a folder, not a file")
            if path.stat().st_size > limits.max_bytes:
                raise InputError(too_big)
            return path.open("rb")
        except FileNotFoundError as exc:
            raise InputError(f"{label}: file not found") from exc
        except OSError as exc:
            raise InputError(f"{label}: cannot be opened ({exc.strerror})") from exc
    data = source.read(limits.max_bytes + 1)
    if isinstance(data, str):
        data = data.encode("utf-8")
    if len(data) > limits.max_bytes:
        raise InputError(too_big)
    return io.BytesIO(data)


def _guess_encoding(sample: bytes) -> str:
    if sample.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32"
    even, odd = sample[0::2], sample[1::2]
    if sample and max(even.count(0), odd.count(0)) > 0.3 * len(sample) / 2:
        return "UTF-16 without a byte-order mark"
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        if len(sample) == 65536 and exc.start >= len(sample) - 4:  # a character cut by the sample
            return "UTF-8"
        return "an 8-bit code page such as Windows-1252 or Latin-1 (not UTF-8)"
    return "UTF-8"


def read_text(
    source: str | os.PathLike | IO[bytes] | bytes,
    name: str | None = None,
    limits: Limits | None = None,
) -> str:
    """The whole input as text (UTF-8 ± BOM or UTF-16 with BOM, at most ``limits.max_bytes``;
    a run of CRs before LF read as LF, so that lines count as editors count them);
    :class:`InputError` otherwise, naming the encoding."""
    label = source_label(source, name)
    binary = open_binary(source, label, limits)
    try:
        text, encoding = text_stream(binary, label)
        return LineEnds(text).read()
    except UnicodeDecodeError as exc:
        raise decode_error(label, encoding, exc) from exc
    finally:
        binary.close()


def decode_error(label: str, encoding: str, exc: UnicodeDecodeError) -> InputError:
    bad = exc.object[exc.start : exc.start + 1].hex().upper()
    return InputError(
        f"{label}: not valid {encoding} text (byte 0x{bad}; it looks like "
        f"{_guess_encoding(bytes(exc.object))}); accepted: UTF-8 with or "
        "without BOM, UTF-16 with BOM (save the file as UTF-8)"
    )


class LineEnds:
    """A text stream with line ends as editors count them: a run of CRs followed by LF (LF,
    CRLF, CR CR LF) is one line end, given as LF; a CR not followed by LF ends a line by itself
    (old Mac files). Reads like a file: ``read``, ``readline`` and line iteration."""

    def __init__(self, inner: IO[str]) -> None:
        self.inner = inner
        self.buf = ""  # text read from ``inner`` and not given out yet

    def _more(self) -> bool:
        data = self.inner.read(1 << 16)
        self.buf += data
        return bool(data)

    def read(self, size: int = -1) -> str:
        data = self.buf + self.inner.read(-1 if size < 0 else max(size - len(self.buf), 0))
        self.buf = ""
        if data.endswith("\r"):  # the run of CRs may go on to its LF
            while (tail := self.inner.read(1)) == "\r":
                data += tail
            if tail == "\n":
                data += tail
            else:
                self.buf = tail
        return _CRS_LF.sub("\n", data) if "\r" in data else data

    def _line_end(self, limit: int) -> int:
        """The index in the buffer of the first line end (CR or LF), reading on until one is
        found, ``limit`` characters are buffered (``limit`` ≥ 0) or the text ends (then −1).
        Each piece read is searched once and the pieces joined once, so a line of n characters
        costs O(n), however long."""
        found = _ANY_END.search(self.buf)
        if found is not None:
            return found.start()
        pieces, size, at = [self.buf], len(self.buf), -1
        while not 0 <= limit <= size:
            data = self.inner.read(1 << 16)  # as _more reads: the buffer runs ahead by < 64 kB
            if not data:
                break
            found = _ANY_END.search(data)
            pieces.append(data)
            if found is not None:
                at = size + found.start()
                break
            size += len(data)
        self.buf = "".join(pieces)
        return at

    def readline(self, limit: int = -1) -> str:
        i = self._line_end(limit)
        if i < 0 or 0 <= limit <= i:
            end = len(self.buf) if limit < 0 else min(limit, len(self.buf))
            line, self.buf = self.buf[:end], self.buf[end:]
            return line
        j = i + 1
        if self.buf[i] == "\r":
            while True:
                while j < len(self.buf) and self.buf[j] == "\r":
                    j += 1
                if j < len(self.buf) or not self._more():
                    break
            if j < len(self.buf) and self.buf[j] == "\n":
                line, self.buf = self.buf[:i] + "\n", self.buf[j + 1 :]
                return line
            j = i + 1
        line, self.buf = self.buf[:j], self.buf[j:]
        return line

    def __iter__(self) -> Iterator[str]:
        rest = ""
        while block := self.read(1 << 16):
            lines = io.StringIO(rest + block, newline="").readlines()
            rest = "" if lines[-1].endswith(("\n", "\r")) else lines.pop()
            yield from lines
        if rest:
            yield rest


_CRS_LF = re.compile("\r+\n")
_ANY_END = re.compile("[\r\n]")


def text_stream(binary: IO[bytes], label: str) -> tuple[IO[str], str]:
    """A text stream (universal newlines kept for the csv module) and the encoding's name."""
    head = binary.read(65536)
    binary.seek(0)
    if head.startswith(codecs.BOM_UTF8):
        return io.TextIOWrapper(binary, "utf-8-sig", newline=""), "UTF-8"
    guess = _guess_encoding(head)
    if guess == "UTF-32":
        raise InputError(
            f"{label}: the text is UTF-32; accepted: UTF-8 with or without BOM, "
            "UTF-16 with BOM (save the file as UTF-8)"
        )
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return io.TextIOWrapper(binary, "utf-16", newline=""), "UTF-16"
    if guess != "UTF-8":
        raise InputError(
            f"{label}: the text looks like {guess}; accepted: UTF-8 with or "
            "without BOM, UTF-16 with BOM (save the file as UTF-8)"
        )
    return io.TextIOWrapper(binary, "utf-8", newline=""), "UTF-8"


def cut_last_line(lines: Sequence[str], delimiter: str, width: int) -> str | None:
    """Why the last of ``lines`` (the end of a text table, up to :data:`TAIL_LINES` lines with
    their line ends, line ends as :class:`LineEnds` gives them) looks cut off, or None when it
    looks whole. The rule is worded to be followed by "in line N".

    A last line is judged only when the file does not end with a line break (a writer that
    finished ends its last line) and other lines stand above it. A cut keeps the fields before
    it whole and shortens the last one, so the line is cut when it has fewer fields (split by
    ``delimiter``, quotes as the csv module reads them) than the header's ``width``, or when
    all of these hold: the line is shorter than every other line, its last field is shorter
    than every other line's last field, and the fields before it are at least as long as the
    shortest such part above (``150,1`` under ``100,110`` and ``120,130`` is cut; ``95,180``,
    ``1000,12`` and ``150;130`` under ``100,5;110,5`` are whole).
    """
    if not lines or lines[-1].endswith(("\n", "\r")) or not lines[-1].strip():
        return None
    last = lines[-1]
    before = [line.rstrip("\r\n") for line in lines[:-1] if line.strip()]
    if not before:
        return None
    try:
        fields = next(csv.reader([last], delimiter=delimiter), [])
    except csv.Error:  # a field beyond the csv module's limit: the line-length rule refuses it
        return None
    if len(fields) < width:
        return (
            f"the file ends without a line break inside a line of {len(fields)} field(s) where "
            f"the header has {width} (it looks cut off)"
        )
    if len(fields) != width:
        return None
    shortest = min(map(len, before))
    shortest_last = min(len(line.rsplit(delimiter, 1)[-1]) for line in before)
    shortest_head = min(len(line) - len(line.rsplit(delimiter, 1)[-1]) for line in before)
    head = len(last) - len(last.rsplit(delimiter, 1)[-1])
    if len(last) < shortest and len(fields[-1]) < shortest_last and head >= shortest_head:
        return (
            f"the file ends without a line break inside a line of {len(last)} characters "
            f"whose last field has {len(fields[-1])}, where every other line's has at least "
            f"{shortest_last}: it looks cut off (end the file with a line break if the line "
            "is whole)"
        )
    return None
