"""The one way a long job runs beside a server: a bounded runner over a dask.distributed cluster.

A job is a function of picklable arguments that takes a ``progress(done, total)`` keyword, the
callback every long computation of ranking_core already accepts (``learn_grid``, ``choose``,
``next_batch``, the experiments; :mod:`ranking_core.cli.progress` draws the same callback as a
bar in a terminal). :class:`JobRunner` runs it on a worker process of a dask.distributed cluster
(:mod:`ranking_core.job_cluster`: a local cluster started on the first job, or a team's
scheduler named by one setting), so that the server's interpreter stays free for every other
session and a team whose jobs outgrow one machine adds workers instead of code. It answers at
any time with a :class:`JobStatus`: queued, running (steps done of total), done (the result),
failed (one sentence, never a traceback) or cancelled.

- **Bounds, checked before any work**: at most :attr:`JobLimits.workers` jobs run at once (the
  local cluster's single-threaded workers; a team's cluster has its own size), at most
  :attr:`JobLimits.jobs` are queued or running in all, at most :attr:`JobLimits.per_owner` of
  them for one owner (a browser session); a job past a bound is refused with
  :class:`JobRefused`.
- **Shared**: jobs are named by a key (e.g. the data and the settings); submitting a key that is
  queued, running or done attaches to that job, so two sessions asking for the same fit share one
  computation and its result. The last :attr:`JobLimits.kept` finished jobs are kept (their
  results in this process; a finished job's result leaves the workers once fetched).
- **Progress and cancel**: a worker reports a job's progress at most every few tenths of a
  second (:data:`ranking_core.job_cluster.REPORT_SECONDS`) and its last step; a queued job
  cancelled never starts; a running job stops at its next report (the callback raises
  :class:`JobCancelled` inside the worker). Only the owner that submitted a job cancels it.
- **Errors**: a ``ValueError`` (every input, storage and survey error of ranking_core is one)
  gives its own sentence; any other exception gives one sentence naming its type, and its
  traceback goes to the log of the worker, not to the page.

``mode="thread"`` runs the same jobs in threads of this process (same bounds, progress, cancel
and errors) for work that needs this process's memory; long numerical jobs use the cluster.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ranking_core.job_cluster import JobRefused

if TYPE_CHECKING:
    from ranking_core.job_cluster import Engine

LOG = logging.getLogger("riskgrid.jobs")

JobState = Literal["queued", "running", "done", "failed", "cancelled"]
STATES: tuple[JobState, ...] = ("queued", "running", "done", "failed", "cancelled")


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
    """What a worker sends back: the value, or the error sentence, or that it was cancelled;
    and the last progress it reported."""

    value: Any = None
    error: str | None = None
    cancelled: bool = False
    done: int = 0
    total: int = 0


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


class Channel(Protocol):
    """How a running job tells its progress and learns it was cancelled (its worker's side)."""

    interval: float  # seconds at least between two reports sent (the last step always sent)

    def open(self) -> None: ...  # the job has started

    def cancelled(self) -> bool: ...

    def report(self, done: int, total: int) -> None: ...


def run_in_worker(
    function: Callable[..., Any], args: tuple, kwargs: dict, channel: Channel
) -> _Outcome:
    """Runs in the worker: ``function(*args, progress=…, **kwargs)``, its progress sent through
    ``channel`` and the cancel flag read from it at every report sent."""
    channel.open()
    if channel.cancelled():
        return _Outcome(cancelled=True)
    last = [-math.inf]
    seen = [0, 0]

    def progress(done: int, total: int) -> None:
        seen[:] = int(done), int(total)
        now = time.monotonic()
        if now - last[0] < channel.interval and seen[0] < seen[1]:
            return
        last[0] = now
        if channel.cancelled():
            raise JobCancelled
        channel.report(seen[0], seen[1])

    try:
        value = function(*args, progress=progress, **kwargs)
    except JobCancelled:
        return _Outcome(cancelled=True, done=seen[0], total=seen[1])
    except Exception as exc:
        if not isinstance(exc, ValueError):
            LOG.exception("a job failed")
        return _Outcome(error=error_sentence(exc), done=seen[0], total=seen[1])
    return _Outcome(value=value, done=seen[0], total=seen[1])


@dataclass
class _BoardChannel:
    """A job's progress and cancel flag in a dict of this process (thread mode)."""

    board: dict[str, Any]
    job_id: str
    interval: float = 0.0

    def open(self) -> None:
        self.board[f"progress:{self.job_id}"] = (True, 0, 0)

    def cancelled(self) -> bool:
        return bool(self.board.get(f"cancel:{self.job_id}"))

    def report(self, done: int, total: int) -> None:
        self.board[f"progress:{self.job_id}"] = (True, done, total)


class _Threads:
    """Jobs in threads of this process: the engine's interface (:class:`~ranking_core.
    job_cluster.Engine`) over a thread pool."""

    def __init__(self, workers: int) -> None:
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix="job")
        self._board: dict[str, Any] = {}
        self._ids = itertools.count(1)

    def submit(
        self, run: Callable[..., Any], function: Callable[..., Any], args: tuple, kwargs: dict
    ) -> tuple[str, Future]:
        job_id = f"job-{next(self._ids)}"
        self._board[f"progress:{job_id}"] = (False, 0, 0)
        channel = _BoardChannel(self._board, job_id)
        return job_id, self._executor.submit(run, function, args, kwargs, channel)

    def progress(self, job_id: str) -> tuple[bool, int, int]:
        started, done, total = self._board.get(f"progress:{job_id}", (False, 0, 0))
        return started, done, total

    def cancel(self, job_id: str, future: Future) -> None:
        self._board[f"cancel:{job_id}"] = True
        future.cancel()

    def forget(self, job_id: str, future: Future) -> None:
        for name in (f"progress:{job_id}", f"cancel:{job_id}"):
            self._board.pop(name, None)

    def shutdown(self) -> None:
        for name in [name for name in self._board if name.startswith("progress:")]:
            self._board["cancel:" + name.partition(":")[2]] = True
        self._executor.shutdown(wait=True, cancel_futures=True)


@dataclass
class _Job:
    id: str
    owner: str
    future: Any  # a concurrent.futures or a distributed Future; None once its outcome is kept
    outcome: _Outcome | None = None

    @property
    def finished(self) -> bool:
        return self.outcome is not None or self.future.done()


class JobRunner:
    """Long jobs with bounds, progress, cancel and sharing (module docstring).

    Parameters
    ----------
    limits : the bounds of :class:`JobLimits`.
    mode : ``"cluster"`` (worker processes of a dask.distributed cluster, no server state) or
        ``"thread"`` (threads of this process).
    scheduler : in cluster mode, the address ``tcp://HOST:PORT`` of a team's scheduler; None
        starts a local cluster of ``limits.workers`` processes on the first job.
    """

    def __init__(
        self,
        limits: JobLimits | None = None,
        *,
        mode: Literal["cluster", "thread"] = "cluster",
        scheduler: str | None = None,
    ) -> None:
        if mode not in ("cluster", "thread"):
            raise ValueError(f"mode must be 'cluster' or 'thread'; got {mode!r}")
        self.limits = limits or JobLimits()
        self.mode = mode
        self._lock = threading.Lock()
        self._jobs: dict[Hashable, _Job] = {}
        self._engine: Engine | _Threads
        if mode == "thread":
            self._engine = _Threads(self.limits.workers)
        else:
            from ranking_core.job_cluster import Engine

            self._engine = Engine(self.limits.workers, scheduler)

    @property
    def scheduler(self) -> str | None:
        """The team's scheduler the jobs run on (None: a local cluster, or threads)."""
        return getattr(self._engine, "scheduler", None)

    def _active(self) -> list[_Job]:
        return [job for job in self._jobs.values() if not job.finished]

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
        finished job anew). In cluster mode ``function`` and the arguments must pickle and
        ``function`` must be importable on the workers (a module-level function). Raises
        :class:`JobRefused` past a bound. The first job of a local cluster waits for its start
        (a few seconds)."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and not (again and job.finished):
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
            job_id, future = self._engine.submit(run_in_worker, function, args, kwargs)
            old = self._jobs.pop(key, None)
            if old is not None:
                self._drop(old)
            self._jobs[key] = job = _Job(job_id, owner, future)
            self._forget_old()
            return self._status(job)

    def _drop(self, job: _Job) -> None:
        """Forget a job on the engine (its progress, cancel flag and result there), once."""
        if job.future is not None:
            self._engine.forget(job.id, job.future)
            job.future = None

    def _forget_old(self) -> None:
        finished = [key for key, job in self._jobs.items() if job.finished]
        for key in finished[: max(len(finished) - self.limits.kept, 0)]:
            self._drop(self._jobs.pop(key))

    def status(self, key: Hashable) -> JobStatus | None:
        """The status of the job ``key``, or None when there is none (never submitted, or
        dropped after :attr:`JobLimits.kept` newer jobs finished)."""
        with self._lock:
            self._forget_old()
            job = self._jobs.get(key)
            return None if job is None else self._status(job)

    def _status(self, job: _Job) -> JobStatus:
        if job.outcome is None and not job.future.done():
            started, done, total = self._engine.progress(job.id)
            state: JobState = "running" if started else "queued"
            return JobStatus(state, done, total, owner=job.owner)
        outcome = job.outcome = job.outcome or self._outcome(job)
        if outcome.cancelled:
            return JobStatus("cancelled", owner=job.owner)
        if outcome.error is not None:
            return JobStatus("failed", error=outcome.error, owner=job.owner)
        done, total = outcome.done, outcome.total
        return JobStatus("done", done, total, result=outcome.value, owner=job.owner)

    def _outcome(self, job: _Job) -> _Outcome:
        """A finished job's outcome, fetched once (its result then leaves the workers)."""
        future = job.future
        if future.cancelled():
            outcome = _Outcome(cancelled=True)
        else:
            try:
                outcome = future.result()
            except Exception as exc:  # the worker itself died (killed, out of memory, unpicklable)
                outcome = _Outcome(error=error_sentence(exc))
        self._drop(job)
        return outcome

    def cancel(self, key: Hashable, owner: str = "") -> bool:
        """Cancel the job ``key`` of ``owner``: a queued job never starts, a running one stops
        at its next progress report. False when there is no such unfinished job of ``owner``."""
        with self._lock:
            job = self._jobs.get(key)
            if job is None or job.owner != owner or job.finished:
                return False
            self._engine.cancel(job.id, job.future)
            return True

    def shutdown(self) -> None:
        """Stop taking jobs, cancel the queued ones, stop the running ones at their next
        progress report; then the worker threads have ended, or the local cluster is closed
        (a team's scheduler is left running). Calling it again does nothing more."""
        self._engine.shutdown()
