"""What the fork server of the local job cluster imports first (:mod:`ranking_core.job_cluster`
puts this module in multiprocessing's fork-server preload). Importing it changes three things in
that process, and so in every worker process it forks, the cluster's first workers and those
its nannies restart later alike; nothing in any other process:

- **No worker runs the server's ``__main__``**: multiprocessing sends each new process the
  parent's ``__main__`` (a module name or a file), which the child imports or runs before
  anything else. Under Streamlit, ``__main__`` is the last page script the server ran, so a
  worker restarted after a page had run would run that page bare (and fail, noisily). Here
  the child skips that step: a job's function is named by its module, never taken from
  ``__main__``.
- **Group signals are the server's to act on**: the SIGINT of a Ctrl-C in a terminal and the
  SIGTERM a service manager sends to a whole process group reach the workers too; a worker that
  died of them would be restarted by its nanny while the server shuts the cluster down. They
  are ignored here (by a Python handler, so a program a job starts gets the default action
  again); a worker ends when the server closes the cluster, or when the server process has
  gone (dask.distributed's watch of its parent), and SIGKILL still ends it at once
  (:func:`ranking_core.job_cluster.kill_left_workers` so ends one left at the server's exit).
  multiprocessing's resource tracker ignores both signals for the same reason.
- **A job cut short by the stop is not a warning**: a worker closed while a task runs logs that
  the task "ended with CancelledError"; the server closes its workers only as it stops, after
  cancelling every job (:meth:`ranking_core.job_cluster.Engine.shutdown`), so that one line
  (:func:`cut_at_close`) is dropped and every other line of the workers' logs is kept.
"""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import Mapping
from multiprocessing import forkserver, spawn
from types import FrameType
from typing import Any

MAIN_KEYS = ("init_main_from_name", "init_main_from_path")  # a child's ``__main__`` to import
STATE_MACHINE_LOGGER = "distributed.worker.state_machine"  # where a worker logs a task cut short


def _ignore(signum: int, frame: FrameType | None) -> None:
    """A signal handler that does nothing (the signal is the server's to act on)."""


_PREPARE = spawn.prepare  # multiprocessing's own


def _prepare_without_main(data: Mapping[str, Any]) -> None:
    """multiprocessing's preparation of a new child, without importing or running the parent's
    ``__main__`` (every other step kept: its name, sys.path, working directory…)."""
    _PREPARE({key: value for key, value in data.items() if key not in MAIN_KEYS})


def in_fork_server() -> bool:
    """This module is being imported by multiprocessing's fork server (its preload), not by any
    other process that happens to import it."""
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code is forkserver.main.__code__:
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def cut_at_close(record: logging.LogRecord) -> bool:
    """False for dask.distributed's warning that a worker closed while a task ran ("Async
    instruction for <Task …> ended with CancelledError", which it says happens only then): the
    server closes its workers only as it stops, having cancelled every job, and a job still
    running then is cut short as cancelled."""
    message = record.getMessage()
    return not (message.startswith("Async instruction for") and "CancelledError" in message)


def install() -> None:
    """Apply this module's changes to this process."""
    spawn.prepare = _prepare_without_main
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, _ignore)
    logging.getLogger(STATE_MACHINE_LOGGER).addFilter(cut_at_close)


if in_fork_server():
    install()
