"""What every ``riskgrid`` command writes: its lines on the terminal and its output files.

Terminal
    :data:`out` prints results on standard output, :data:`err` messages on standard error;
    neither highlights numbers. :func:`fail` is the one error printer of every command: one
    sentence on standard error, never a traceback, exit status 1 for refused input or output
    (2 for a usage error, such as an option's value out of its range; the command line's own
    parsing errors reach it through :func:`usage_sentence`). User text inside a line printed
    with markup goes through :func:`~ranking_core.inputs.text.terminal` (``cli.shown``); lines
    printed here take the message as plain text (never markup).

Files
    :func:`check_output` refuses, before any work starts, an output path that is a folder, a
    symbolic link, below a file, in a folder that cannot be written, or the same file as one of
    the command's inputs. :func:`write_output` writes the bytes to a temporary file in the same
    folder and moves it over the target with ``os.replace``: a reader never sees half a file,
    a symbolic link planted at the target is never followed, and a failed write (a full disk)
    leaves the old file as it was. A device such as ``/dev/null`` is written directly. Every
    failure is :class:`OutputError`: one sentence naming the option and the path.

Exit
    A command whose every output goes through :func:`write_output` and that holds no database
    connection may call :func:`exit_without_collecting`: its process then leaves its objects to
    the operating system at exit instead of walking them once more.
"""

from __future__ import annotations

import atexit
import errno
import gc
import os
import stat
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from ranking_core.inputs.text import printable

if TYPE_CHECKING:
    from rich.table import Table

__all__ = [
    "OutputError",
    "check_output",
    "check_outputs",
    "err",
    "fail",
    "out",
    "say",
    "titled_table",
    "usage_sentence",
    "write_output",
    "write_outputs",
]

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


class OutputError(OSError):
    """An output file cannot be written; the message is one sentence naming the path."""


def fail(message: object, code: int = 1) -> NoReturn:
    """Print ``message`` (plain text, unsafe characters escaped) on standard error in red and
    exit with ``code`` (1: refused input or output; 2: a usage error)."""
    err.print(Text(printable(message, keep="\n"), style="red"))
    raise typer.Exit(code)


def usage_sentence(command: str, message: str) -> str:
    """A parsing error of the command line (unknown option, value out of range, missing
    argument) as one sentence naming the command and where its options are listed."""
    text = " ".join(message.split()).rstrip(".")
    text = text[:1].lower() + text[1:]
    return f"{command}: {text}; see {command} --help"


def say(message: object, *, style: str = "") -> None:
    """Print ``message`` on standard output as plain text (never markup)."""
    out.print(Text(printable(message, keep="\n"), style=style))


def _reason(exc: OSError) -> str:
    text = exc.strerror or str(exc) or type(exc).__name__
    return text[:1].lower() + text[1:]


def _label(path: Path, option: str) -> str:
    return f"{option} {printable(path)}" if option else printable(path)


def _cannot(path: Path, option: str, reason: str) -> OutputError:
    where = f"{printable(path)} ({option})" if option else printable(path)
    return OutputError(f"cannot write {where}: {reason}")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        try:
            return a.resolve() == b.resolve()
        except (OSError, RuntimeError):
            return False


def _file_mode(path: Path) -> int:
    """The permissions a new file gets (0o666 less the umask), or those of the file replaced."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mask = os.umask(0o022)
        os.umask(mask)
        return 0o666 & ~mask


def check_output(path: Path, option: str = "", inputs: Iterable[Path | None] = ()) -> Path:
    """``path`` if a file can be written there; else :class:`OutputError` saying why.

    Refused: a folder, a symbolic link (never written through), the same file as one of
    ``inputs`` (which the output would replace), a path below a file, a folder that cannot be
    written. Nothing is created."""
    path = Path(path)
    label = _label(path, option)
    if not str(path) or path.name in ("", ".", ".."):
        raise OutputError(f"{label}: not a file name")
    for source in inputs:
        if source is not None and _same_file(path, Path(source)):
            raise OutputError(
                f"{label} is the input file {printable(source)}; choose another output "
                "file (the input is never overwritten)"
            )
    if path.is_symlink():
        raise OutputError(
            f"{label} is a symbolic link; outputs are never written through a link "
            "(remove it or choose another path)"
        )
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise _cannot(path, option, _reason(exc)) from None
    if mode is not None and stat.S_ISDIR(mode):
        raise OutputError(f"{label} is a folder; give a file name")
    if mode is not None and not stat.S_ISREG(mode):
        return path  # a device (/dev/null, /dev/full): written directly, its errors caught
    if mode is not None and not os.access(path, os.W_OK):
        raise _cannot(path, option, "the file is read-only")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        if folder.is_symlink():
            break
        folder = folder.parent
    if not folder.is_dir():
        raise _cannot(path, option, f"{printable(folder)} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise _cannot(path, option, f"the folder {printable(folder)} is not writable")
    return path


def check_outputs(outputs: dict[str, Path | None], inputs: Iterable[Path | None] = ()) -> None:
    """:func:`check_output` for every given output (option → path); also refuses two options
    naming the same file."""
    inputs = list(inputs)
    seen: dict[Path, str] = {}
    for option, path in outputs.items():
        if path is None:
            continue
        check_output(path, option, inputs)
        for earlier, other in seen.items():
            if _same_file(Path(path), earlier):
                raise OutputError(
                    f"{option} and {other} name the same file {printable(path)}; give each "
                    "output its own file"
                )
        seen[Path(path)] = option


def write_output(
    path: Path, data: bytes | str, option: str = "", inputs: Iterable[Path | None] = ()
) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` safely (module notes); the folder is created
    if needed. Returns the path; raises :class:`OutputError` (one sentence) on any failure."""
    path = check_output(Path(path), option, inputs)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    try:
        if path.exists() and not path.is_file():  # a device: no temporary file beside it
            with open(path, "wb") as stream:
                stream.write(payload)
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _cannot(path, option, _reason(exc)) from None
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
        )
        os.fchmod(handle, _file_mode(path))
        with os.fdopen(handle, "wb") as stream:
            stream.write(payload)
            stream.flush()
            os.fsync(stream.fileno())
        if path.is_symlink():  # planted meanwhile: still never followed
            raise OSError(errno.ELOOP, "a symbolic link appeared at the target")
        os.replace(temporary, path)
        temporary = None
    except OSError as exc:
        raise _cannot(path, option, _reason(exc)) from None
    finally:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass
    return path


def exit_without_collecting() -> None:
    """At this process's exit (an exit handler, registered once), freeze every object
    (``gc.freeze``): Python's last garbage collections then leave them to the operating system
    instead of walking each one once more, 0.25 s of the exit after a 10,000-pair meter report,
    0.45 s after its PDF (matplotlib and ReportLab loaded). Only for a command whose outputs are
    written and closed by :func:`write_output` and that holds no database connection: a file or
    a connection caught in a reference cycle would be left to the operating system too."""
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)


def write_json(
    path: Path | None, data: object, option: str = "--json", inputs: Iterable[Path | None] = ()
) -> None:
    """Write ``data`` as indented JSON to ``path`` (nothing when None) with :func:`write_output`,
    say which file was written, and :func:`fail` with its one sentence when it cannot be."""
    if path is None:
        return
    import json

    try:
        write_output(path, json.dumps(data, indent=2), option, inputs)
    except OutputError as exc:
        fail(exc)
    say(f"wrote {printable(path)}")


def write_outputs(
    folder: Path, files: dict[str, bytes], option: str = "--out-dir", inputs: Iterable = ()
) -> list[Path]:
    """Write each named file into ``folder`` with :func:`write_output` (every target checked
    first, so that nothing is written when one of them is refused)."""
    inputs = list(inputs)
    targets = [Path(folder) / name for name in files]
    for target in targets:
        check_output(target, option, inputs)
    return [
        write_output(target, content, option, inputs)
        for target, content in zip(targets, files.values(), strict=True)
    ]


def titled_table(title: str, columns: Sequence[str], left: Sequence[str] = ()) -> Table:
    """A Rich table of results: ``title`` above it on the left, ``columns`` right-aligned (for
    numbers) except those named in ``left``."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column, justify="left" if column in left else "right")
    return table
