"""The one way a long job runs beside a server: a bounded pool of worker processes.

A job is a function of picklable arguments that takes a ``progress(done, total)`` keyword, the
callback every long computation of ranking_core already accepts (``learn_grid``, ``choose``,
``next_batch``, the experiments; :mod:`ranking_core.cli.progress` draws the same callback as a
bar in a terminal). :class:`JobRunner` runs it in a worker process, so that the server's
interpreter stays free for every other session, and answers at any time with a
:class:`JobStatus`: queued, running (steps done of total), done (the result), failed (one
sentence, never a traceback) or cancelled.

- **Bounds, checked before any work**: at most :attr:`JobLimits.workers` jobs run at once, at
  most :attr:`JobLimits.jobs` are queued or running in all, at most :attr:`JobLimits.per_owner`
  of them for one owner (a browser session); a job past a bound is refused with
  :class:`JobRefused`.
- **Shared**: jobs are named by a key (e.g. the data and the settings); submitting a key that is
  queued, running or done attaches to that job, so two sessions asking for the same fit share one
  computation and its result. The last :attr:`JobLimits.kept` finished jobs are kept.
- **Cancel**: a queued job never starts; a running job stops at its next progress report (the
  callback raises :class:`JobCancelled` inside the worker). Only the owner that submitted a job
  cancels it.
- **Errors**: a ``ValueError`` (every input, storage and survey error of ranking_core is one)
  gives its own sentence; any other exception gives one sentence naming its type, and its
  traceback goes to the log of the worker, not to the page.

``mode="thread"`` runs the same jobs in threads of this process (same bounds, progress, cancel
and errors) for work that needs this process's memory; long numerical jobs use processes.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import logging
import multiprocessing
import os
import sys
import threading
import time
import types
import weakref
from collections.abc import Callable, Hashable, Iterator, MutableMapping
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

LOG = logging.getLogger("riskgrid.jobs")

TRACKER_WAIT = 10.0  # seconds the exit waits for multiprocessing's resource tracker to end

JobState = Literal["queued", "running", "done", "failed", "cancelled"]
STATES: tuple[JobState, ...] = ("queued", "running", "done", "failed", "cancelled")


class JobRefused(ValueError):
    """A job past a bound of :class:`JobLimits`, refused before it starts."""


class JobCancelled(Exception):
    """Raised by a job's progress callback once the job is cancelled (inside the worker)."""


@dataclass(frozen=True)
class JobLimits:
    """How many jobs a runner takes.

    Parameters
    ----------
    workers : jobs running at once (worker processes or threads).
    jobs : jobs queued or running at once, in all (``jobs >= workers``).
    per_owner : jobs queued or running at once for one owner.
    kept : finished jobs whose result or error is kept, the oldest dropped first.
    """

    workers: int = max(1, min(2, os.cpu_count() or 1))
    jobs: int = 8
    per_owner: int = 2
    kept: int = 8

    def __post_init__(self) -> None:
        for name in ("workers", "jobs", "per_owner", "kept"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"JobLimits.{name} must be at least 1; got {getattr(self, name)}")
        if self.jobs < self.workers:
            raise ValueError(
                f"JobLimits.jobs must be at least workers ({self.workers}); got {self.jobs}"
            )


@dataclass(frozen=True)
class JobStatus:
    """Where a job is: its state, its progress (steps ``done`` of ``total``, 0 of 0 before its
    first report), its result when done, its one-sentence error when failed, who submitted it."""

    state: JobState
    done: int = 0
    total: int = 0
    result: Any = None
    error: str | None = None
    owner: str | None = None

    @property
    def finished(self) -> bool:
        """Done, failed or cancelled: nothing more will change."""
        return self.state in ("done", "failed", "cancelled")

    @property
    def fraction(self) -> float:
        """The share of the steps done, in 0..1 (0 before the first report)."""
        return min(self.done / self.total, 1.0) if self.total > 0 else 0.0


@dataclass(frozen=True)
class _Outcome:
    """What a worker sends back: the value, or the error sentence, or that it was cancelled."""

    value: Any = None
    error: str | None = None
    cancelled: bool = False


def error_sentence(exc: BaseException) -> str:
    """One sentence for a failed job: a ``ValueError``'s own message (ranking_core words every
    input error as one), else the exception's type and message."""
    text = " ".join(str(exc).split())
    if isinstance(exc, ValueError) and text:
        return text
    if isinstance(exc, MemoryError):
        return "the job ran out of memory; try smaller sizes"
    kind = type(exc).__name__
    return f"the job stopped on an unexpected error ({kind}{': ' + text if text else ''})"


def _run(
    function: Callable[..., Any],
    args: tuple,
    kwargs: dict,
    board: MutableMapping[str, Any],
    job_id: str,
) -> _Outcome:
    """Runs in the worker: ``function(*args, progress=…, **kwargs)`` with its progress written to
    ``board`` and the cancel flag read from it at every report."""
    if board.get(f"cancel:{job_id}"):
        return _Outcome(cancelled=True)
    board[f"progress:{job_id}"] = (0, 0)

    def progress(done: int, total: int) -> None:
        if board.get(f"cancel:{job_id}"):
            raise JobCancelled
        board[f"progress:{job_id}"] = (int(done), int(total))

    try:
        return _Outcome(value=function(*args, progress=progress, **kwargs))
    except JobCancelled:
        return _Outcome(cancelled=True)
    except Exception as exc:
        if not isinstance(exc, ValueError):
            LOG.exception("job %s failed", job_id)
        return _Outcome(error=error_sentence(exc))


@contextmanager
def no_main_script() -> Iterator[None]:
    """Start processes with an empty ``__main__``. A spawned process first runs the parent's
    ``__main__`` file again; a server that runs scripts as ``__main__`` (Streamlit runs each
    page script so) would have the worker re-run a page script, or fail on one that is gone."""
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


@dataclass
class _Job:
    id: str
    owner: str
    future: Future


class JobRunner:
    """Long jobs in a bounded pool (module docstring).

    Parameters
    ----------
    limits : the bounds of :class:`JobLimits`.
    mode : ``"process"`` (fresh interpreters started by ``spawn``, no server state) or
        ``"thread"`` (threads of this process).
    """

    def __init__(
        self, limits: JobLimits | None = None, *, mode: Literal["process", "thread"] = "process"
    ) -> None:
        if mode not in ("process", "thread"):
            raise ValueError(f"mode must be 'process' or 'thread'; got {mode!r}")
        self.limits = limits or JobLimits()
        self.mode = mode
        self._lock = threading.Lock()
        self._jobs: dict[Hashable, _Job] = {}
        self._ids = itertools.count(1)
        self._executor: Executor
        self._board: MutableMapping[str, Any]
        if mode == "thread":
            self._executor = ThreadPoolExecutor(self.limits.workers, thread_name_prefix="job")
            self._board = {}
        else:
            context = multiprocessing.get_context("spawn")
            with no_main_script():
                self._manager = context.Manager()
            self._board = self._manager.dict()
            self._executor = ProcessPoolExecutor(self.limits.workers, mp_context=context)
            _stop_every_runner_at_exit(self)

    def _active(self) -> list[_Job]:
        return [job for job in self._jobs.values() if not job.future.done()]

    def submit(
        self,
        key: Hashable,
        function: Callable[..., Any],
        *args: Any,
        owner: str = "",
        again: bool = False,
        **kwargs: Any,
    ) -> JobStatus:
        """Start ``function(*args, progress=…, **kwargs)`` as the job ``key`` for ``owner``, or
        attach to the job ``key`` already queued, running or finished (``again``: start a
        finished job anew). ``function`` and the arguments must pickle in process mode
        (a module-level function). Raises :class:`JobRefused` past a bound."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and not (again and job.future.done()):
                return self._status(job)
            active = self._active()
            if len(active) >= self.limits.jobs:
                raise JobRefused(
                    f"the server is running {len(active)} long jobs, its limit; "
                    "please try again when one has finished"
                )
            mine = sum(job.owner == owner for job in active)
            if mine >= self.limits.per_owner:
                raise JobRefused(
                    f"this session already has {mine} long jobs running or queued, its limit "
                    f"of {self.limits.per_owner}; wait for one or cancel it"
                )
            job_id = f"job-{next(self._ids)}"
            self._board[f"progress:{job_id}"] = (0, 0)
            with no_main_script():  # a process pool starts its workers on a submit
                future = self._executor.submit(_run, function, args, kwargs, self._board, job_id)
            self._jobs.pop(key, None)
            self._jobs[key] = job = _Job(job_id, owner, future)
            self._forget_old()
            return self._status(job)

    def _forget_old(self) -> None:
        finished = [key for key, job in self._jobs.items() if job.future.done()]
        for key in finished[: max(len(finished) - self.limits.kept, 0)]:
            job = self._jobs.pop(key)
            for name in (f"progress:{job.id}", f"cancel:{job.id}"):
                self._board.pop(name, None)

    def status(self, key: Hashable) -> JobStatus | None:
        """The status of the job ``key``, or None when there is none (never submitted, or
        dropped after :attr:`JobLimits.kept` newer jobs finished)."""
        with self._lock:
            self._forget_old()
            job = self._jobs.get(key)
            return None if job is None else self._status(job)

    def _status(self, job: _Job) -> JobStatus:
        future = job.future
        if future.cancelled():
            return JobStatus("cancelled", owner=job.owner)
        if not future.done():
            done, total = self._board.get(f"progress:{job.id}", (0, 0))
            state: JobState = "running" if future.running() else "queued"
            return JobStatus(state, done, total, owner=job.owner)
        try:
            outcome: _Outcome = future.result()
        except Exception as exc:  # the worker itself died (killed, out of memory, unpicklable)
            return JobStatus("failed", error=error_sentence(exc), owner=job.owner)
        if outcome.cancelled:
            return JobStatus("cancelled", owner=job.owner)
        if outcome.error is not None:
            return JobStatus("failed", error=outcome.error, owner=job.owner)
        done, total = self._board.get(f"progress:{job.id}", (0, 0))
        return JobStatus("done", done, total, result=outcome.value, owner=job.owner)

    def cancel(self, key: Hashable, owner: str = "") -> bool:
        """Cancel the job ``key`` of ``owner``: a queued job never starts, a running one stops
        at its next progress report. False when there is no such unfinished job of ``owner``."""
        with self._lock:
            job = self._jobs.get(key)
            if job is None or job.owner != owner or job.future.done():
                return False
            self._board[f"cancel:{job.id}"] = True
            job.future.cancel()
            return True

    def shutdown(self) -> None:
        """Stop taking jobs, cancel the queued ones, stop the running ones at their next
        progress report and wait for them; then the worker processes and the manager have
        ended. Calling it again does nothing more."""
        with self._lock:
            for job in self._jobs.values():
                with contextlib.suppress(Exception):  # the manager may be gone already
                    self._board[f"cancel:{job.id}"] = True
        self._executor.shutdown(wait=True, cancel_futures=True)
        if self.mode == "process":
            with contextlib.suppress(Exception):
                self._manager.shutdown()


_RUNNERS: weakref.WeakSet[JobRunner] = weakref.WeakSet()


def _stop_every_runner_at_exit(runner: JobRunner) -> None:
    """Remember a process runner for :func:`_stop_at_exit`, hooked to the interpreter's exit
    once (one handler for every runner: it must stop all of them before the tracker)."""
    if not _RUNNERS:
        atexit.unregister(_stop_at_exit)
        atexit.register(_stop_at_exit)
    _RUNNERS.add(runner)


def _stop_at_exit() -> None:
    """At the interpreter's exit: every process runner shut down (its workers and manager
    joined), then multiprocessing's resource tracker, which would otherwise outlive the server
    as a process of its group (a zombie where nothing reaps orphans).

    The order matters. The tracker ends when every holder of its pipe has closed it, and every
    worker and manager holds it: stopping it while one runner's processes live makes the exit
    wait for them forever (two runners in one interpreter hung so, the first runner's exit
    handler waiting on the second's manager). So the tracker is stopped last, only when no
    child process of multiprocessing is left, and waited for at most :data:`TRACKER_WAIT`
    seconds."""
    for runner in list(_RUNNERS):
        try:
            runner.shutdown()
        except Exception:  # an exit handler never raises; the next runner still stops
            LOG.exception("a job runner did not stop cleanly at exit")
    _RUNNERS.clear()
    stop_resource_tracker(TRACKER_WAIT)


def stop_resource_tracker(wait: float) -> bool:
    """End multiprocessing's resource tracker of this process when no child process of
    multiprocessing is left (each holds the tracker's pipe open); True when it has ended or
    none runs. Closing the pipe ends it; its end is awaited at most ``wait`` seconds."""
    from multiprocessing import resource_tracker

    if multiprocessing.active_children():
        LOG.warning("resource tracker left running: child processes of multiprocessing remain")
        return False
    tracker = resource_tracker._resource_tracker
    lock = getattr(tracker, "_lock", None)
    if lock is None or not hasattr(tracker, "_fd") or not hasattr(tracker, "_pid"):
        return False  # an interpreter whose tracker is built otherwise
    with lock:
        if tracker._fd is None or tracker._pid is None:
            return True
        os.close(tracker._fd)
        pid, tracker._fd, tracker._pid = tracker._pid, None, None
    deadline = time.monotonic() + wait
    while True:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:  # reaped elsewhere
            return True
        if time.monotonic() >= deadline:
            LOG.warning("the resource tracker (process %d) did not end at exit", pid)
            return False
        time.sleep(0.02)
