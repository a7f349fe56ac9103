"""Where the long jobs of :class:`ranking_core.jobs.JobRunner` run: a ``dask.distributed`` cluster,
the engine the collaborative-filtering experiments already use (:mod:`ranking_core.cf.parallel`).

- **A local cluster by default**: started on the first job (not before), one single-threaded
  worker process per :attr:`~ranking_core.jobs.JobLimits.workers`, its scheduler and workers
  listening on 127.0.0.1 only, no diagnostics web page; closed when the runner shuts down or the
  interpreter exits.
- **A team's scheduler through one setting**: the address ``tcp://HOST:PORT`` in the
  environment variable :data:`SCHEDULER_ENV` (``riskgrid dashboard --scheduler ADDR`` sets it),
  read by :func:`scheduler_address` and nowhere else. Its workers must run the same riskgrid
  (docs/OPERATIONS.md); the cluster's size, not this process, then bounds how many jobs run at
  once, while the runner's bounds on queued jobs, in all and per owner, still hold.
- **Progress and cancel across machines**: each job has a ``distributed.Variable`` holding
  ``[started, done, total]`` and a ``distributed.Event`` its owner sets to cancel it. A worker
  writes the progress and reads the cancel flag at most every :data:`REPORT_SECONDS` (and at the
  last step), so a job reporting 10⁵ steps sends a few messages a second to the scheduler, not
  10⁵; a cancelled job stops at its first report after the flag is set.

Worker processes of the local cluster are forked by multiprocessing's fork server, which imports
:mod:`ranking_core.job_fork_server` first: no worker, started with the cluster or restarted
later by its nanny, runs the server's ``__main__`` (under Streamlit, the last page script run),
and the SIGINT or SIGTERM sent to the server's whole process group (Ctrl-C, a service manager)
leaves the workers to the server, which closes the cluster in order as it stops
(:meth:`Engine.shutdown`: no new job, every job cancelled, the running ones awaited a moment,
then the client and the cluster closed), so that no nanny restarts a worker meanwhile.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import multiprocessing
import os
import sys
import threading
import time
import types
import urllib.parse
import uuid
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

LOG = logging.getLogger("riskgrid.jobs")


class JobRefused(ValueError):
    """A job past a bound of :class:`~ranking_core.jobs.JobLimits`, or one submitted while the
    server stops, refused before it starts (raised by both; :mod:`ranking_core.jobs` exports
    it)."""


SCHEDULER_ENV = "RISKGRID_SCHEDULER"
REPORT_SECONDS = 0.2  # at most one progress message (and cancel check) per job this often
CONNECT_SECONDS = 30.0  # seconds at most to reach a team's scheduler
CLOSE_SECONDS = 30.0  # seconds at most to close the local cluster
STOP_JOBS_SECONDS = 1.0  # seconds at most a shutdown waits for running jobs to see their cancel
TRACKER_WAIT = 10.0  # seconds the exit waits for multiprocessing's resource tracker to end
SCHEMES = ("tcp", "tls")


def check_scheduler_address(text: str) -> str:
    """``text`` as a scheduler address ``tcp://HOST:PORT`` (or ``tls://``), stripped; a
    ValueError naming the rule otherwise."""
    address = text.strip()
    rule = f"the scheduler address must be tcp://HOST:PORT (or tls://HOST:PORT); got {text!r}"
    try:
        parts = urllib.parse.urlsplit(address)
        port = parts.port
    except ValueError:
        raise ValueError(rule) from None
    if parts.scheme not in SCHEMES or not parts.hostname or port is None:
        raise ValueError(rule)
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        raise ValueError(rule)
    return address


def scheduler_address(environ: Mapping[str, str] | None = None) -> str | None:
    """The team's scheduler named by :data:`SCHEDULER_ENV` (checked), or None for a local
    cluster: the one place this setting is read."""
    text = (os.environ if environ is None else environ).get(SCHEDULER_ENV, "")
    return check_scheduler_address(text) if text.strip() else None


@contextmanager
def no_main_script() -> Iterator[None]:
    """Start processes with an empty ``__main__``. A spawned process first runs the parent's
    ``__main__`` file again; a server that runs scripts as ``__main__`` (Streamlit runs each
    page script so) would have the worker re-run a page script, or fail on one that is gone.
    (Where a fork server forks the workers, :mod:`ranking_core.job_fork_server` also covers the
    workers restarted later.)"""
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def _names(job_id: str) -> tuple[str, str]:
    return f"{job_id}-progress", f"{job_id}-cancel"


@dataclass
class ClusterChannel:
    """A job's progress and cancel flag on the scheduler (pickled to the worker by its id only).
    ``interval``: seconds between two messages of the worker, the last step always sent."""

    job_id: str
    interval: float = REPORT_SECONDS
    _open: Any = field(default=None, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        return {"job_id": self.job_id, "interval": self.interval, "_open": None}

    def open(self) -> None:
        """In the worker: mark the job started."""
        from distributed import Event, Variable, get_client

        client = get_client()
        progress, cancel = _names(self.job_id)
        self._open = Variable(progress, client), Event(cancel, client)
        self._open[0].set([1, 0, 0])

    def cancelled(self) -> bool:
        """The job's cancel flag is set, or its worker is closing (the cluster shuts down: the
        worker's client is closed and the job's outcome would reach no one)."""
        flag = self._open[1]
        if _client_closing(flag.client):
            return True
        try:
            return bool(flag.is_set())
        except Exception:
            if _client_closing(flag.client):  # closed while asking
                return True
            raise

    def report(self, done: int, total: int) -> None:
        """Write the job's progress (nothing once its worker is closing)."""
        progress = self._open[0]
        try:
            progress.set([1, done, total])
        except Exception:
            if not _client_closing(progress.client):
                raise


def _client_closing(client: Any) -> bool:
    """A ``distributed.Client`` that is closing or closed (its scheduler gone)."""
    return getattr(client, "status", "closed") in ("closing", "closed") or client.scheduler is None


class Engine:
    """One ``distributed.Client``: to a local cluster it starts on first use (``scheduler``
    None) or to the scheduler at ``scheduler``; the jobs' side of :class:`~ranking_core.jobs.
    JobRunner` (submit, progress, cancel, forget, shutdown)."""

    def __init__(self, workers: int, scheduler: str | None = None) -> None:
        self.workers = int(workers)
        self.scheduler = None if scheduler is None else check_scheduler_address(scheduler)
        self._lock = threading.Lock()
        self._client: Any = None
        self._cluster: Any = None
        self._closed = False
        self._futures: dict[str, Any] = {}  # the jobs not yet forgotten, by id
        _close_every_engine_at_exit(self)

    @property
    def client(self) -> Any:
        """The client, connected (and the local cluster started) on first use."""
        with self._lock:
            if self._closed:
                raise JobRefused("the server is stopping; no new long job starts")
            if self._client is None:
                self._client, self._cluster = _connect(self.workers, self.scheduler)
            return self._client

    def submit(
        self, run: Callable[..., Any], function: Callable[..., Any], args: tuple, kwargs: dict
    ) -> tuple[str, Any]:
        """``run(function, args, kwargs, channel)`` as a new task: its id and future."""
        from distributed import Variable

        client = self.client
        job_id = f"riskgrid-job-{uuid.uuid4().hex}"  # unique on a scheduler shared by servers
        Variable(_names(job_id)[0], client).set([0, 0, 0])
        future = client.submit(
            run, function, args, kwargs, ClusterChannel(job_id), key=job_id, pure=False
        )
        self._futures[job_id] = future
        return job_id, future

    def progress(self, job_id: str) -> tuple[bool, int, int]:
        """``(started, done, total)`` of a job as its worker last wrote it."""
        from distributed import Variable

        try:
            started, done, total = Variable(_names(job_id)[0], self.client).get(timeout=5)
        except Exception:  # not written yet, or the scheduler is unreachable: shown as queued
            return False, 0, 0
        return bool(started), int(done), int(total)

    def cancel(self, job_id: str, future: Any) -> None:
        """Raise the job's cancel flag; a job not yet started is also taken off the queue."""
        from distributed import Event

        Event(_names(job_id)[1], self.client).set()
        if not self.progress(job_id)[0]:
            future.cancel()

    def forget(self, job_id: str, future: Any) -> None:
        """Drop a finished job's progress, cancel flag and result from the cluster."""
        from distributed import Event, Variable

        self._futures.pop(job_id, None)
        progress, cancel = _names(job_id)
        with contextlib.suppress(Exception):  # a cluster already gone keeps nothing
            future.release()
        with contextlib.suppress(Exception):
            Variable(progress, self._client).delete()
            Event(cancel, self._client).clear()

    def shutdown(self) -> None:
        """Stop the engine, in this order: no new job (:class:`~ranking_core.jobs.JobRefused`);
        every job's cancel flag raised (a queued job ends as it starts, a running one at its
        next progress report) and the jobs awaited at most :data:`STOP_JOBS_SECONDS`, those
        left taken off the cluster; then the client closed, then the local cluster (never a
        team's scheduler), whose workers so close with no job running, or cut one a job still
        runs in short. Calling it again does nothing more."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            client, cluster = self._client, self._cluster
        if client is None:
            return
        with contextlib.suppress(Exception):  # a cluster already gone has no job to stop
            self._stop_jobs(client)
        with contextlib.suppress(Exception):
            client.close(timeout=CLOSE_SECONDS)
        if cluster is not None:
            try:
                cluster.close(timeout=CLOSE_SECONDS)
            except Exception:
                LOG.exception("the local cluster of the job engine did not close cleanly")

    def _stop_jobs(self, client: Any) -> None:
        """Raise every job's cancel flag (a queued job then ends as soon as it starts, a running
        one at its next progress report), wait at most :data:`STOP_JOBS_SECONDS` for all of them
        to end, and take those left off the cluster."""
        from distributed import Event

        futures = list(self._futures.items())
        for job_id, _ in futures:
            Event(_names(job_id)[1], client).set()
        deadline = time.monotonic() + STOP_JOBS_SECONDS
        while time.monotonic() < deadline and not all(future.done() for _, future in futures):
            time.sleep(0.02)
        client.cancel([future for _, future in futures if not future.done()])


def _quiet_distributed() -> None:
    """dask.distributed's loggers in this process write warnings and errors only (the nannies,
    errors only), so that a local cluster logs no line per worker started and closed in the
    server's log. Done before the cluster starts: its own silencing gives back, as it closes,
    the levels it found."""
    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] == "distributed"]
    for name in ["distributed", *names]:
        logger = logging.getLogger(name)
        logger.setLevel(max(logger.level, logging.WARNING))
    # a server stopped by a signal to its process group (Ctrl-C, systemd) stops its local workers
    # with it, and each nanny warns that it restarts one as the cluster closes; a worker lost
    # while a job runs is said by the job's own one-sentence error
    nanny = logging.getLogger("distributed.nanny")
    nanny.setLevel(max(nanny.level, logging.ERROR))


def _connect(workers: int, scheduler: str | None) -> tuple[Any, Any]:
    """A client to ``scheduler``, or to a new local cluster of ``workers`` processes."""
    from distributed import Client, LocalCluster

    if scheduler is not None:
        return Client(scheduler, timeout=CONNECT_SECONDS, set_as_default=False), None
    _configure_local_workers()
    _quiet_distributed()
    with no_main_script():
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            scheduler_port=0,
            dashboard_address=None,  # no diagnostics pages
            # its health endpoint on a free port of this machine (not 8787, maybe taken)
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        )
    try:
        return Client(cluster, set_as_default=False), cluster
    except Exception:
        cluster.close()
        raise


# what dask.distributed sets in a local worker's environment (and in this process's) by default
# and the local workers must not have: a fit in a worker then ran 1.6-2 times as long as in the
# server (benchmarks/first_job.py; one BLAS thread, and glibc returning freed memory at once)
WORKER_ENVIRON_UNSET = (
    "MALLOC_TRIM_THRESHOLD_",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
)


def _configure_local_workers() -> None:
    """Settings of dask for the local cluster's workers, for this process: forked by
    multiprocessing's fork server (where the platform has one), which imports
    :data:`FORK_SERVER_MODULE` first, so that no worker, started now or restarted later, runs
    ``__main__`` or dies of a signal sent to the server's process group; and the BLAS threads
    and memory handling of a plain process (:data:`WORKER_ENVIRON_UNSET`; a job's fit sets its
    own BLAS threads, :func:`ranking_core.blas_threads.fit_threads`)."""
    import dask

    settings: dict[str, Any] = {
        f"distributed.nanny.pre-spawn-environ.{name}": None for name in WORKER_ENVIRON_UNSET
    }
    if "forkserver" in multiprocessing.get_all_start_methods():
        settings["distributed.worker.multiprocessing-method"] = "forkserver"
    dask.config.set(settings)
    if "forkserver" in multiprocessing.get_all_start_methods():
        _preload_fork_server()


FORK_SERVER_MODULE = "ranking_core.job_fork_server"


def _preload_fork_server() -> None:
    """Add :data:`FORK_SERVER_MODULE` to the modules multiprocessing's fork server imports when
    it starts, after those dask.distributed puts there (set by it once, on its first use of the
    fork server's context)."""
    from multiprocessing import forkserver

    from distributed.utils import get_mp_context

    context = get_mp_context()
    preload = list(getattr(forkserver._forkserver, "_preload_modules", ["distributed"]))
    if FORK_SERVER_MODULE not in preload:
        context.set_forkserver_preload([*preload, FORK_SERVER_MODULE])


_ENGINES: weakref.WeakSet[Engine] = weakref.WeakSet()


def _close_every_engine_at_exit(engine: Engine) -> None:
    """Remember an engine for :func:`_stop_at_exit`, hooked to the interpreter's exit once,
    after multiprocessing's own exit handler (registered as its ``util`` is first imported), so
    that it runs before that one (:func:`kill_left_workers`)."""
    import multiprocessing.util  # noqa: F401 - registers multiprocessing's exit handler

    if not _ENGINES:
        atexit.unregister(_stop_at_exit)
        atexit.register(_stop_at_exit)
    _ENGINES.add(engine)


def _stop_at_exit() -> None:
    """At the interpreter's exit: every engine shut down (its local cluster's workers joined),
    any worker left killed, then multiprocessing's fork server, then its resource tracker,
    which would otherwise
    outlive the server as processes of its group (zombies where nothing reaps orphans).

    The order matters: the fork server ends when every holder of its "alive" pipe (this
    process and every worker it forked) has closed it, and the tracker when every holder of its
    pipe has; stopping either while a worker lives would make the exit wait for that worker."""
    for engine in list(_ENGINES):
        try:
            engine.shutdown()
        except Exception:  # an exit handler never raises; the next engine still stops
            LOG.exception("a job engine did not stop cleanly at exit")
    _ENGINES.clear()
    kill_left_workers(TRACKER_WAIT)
    stop_fork_server()
    stop_resource_tracker(TRACKER_WAIT)


def kill_left_workers(wait: float) -> list[int]:
    """Kill (SIGKILL) the daemonic child processes of multiprocessing still alive: workers of a
    local cluster that did not close (the engines' shutdown has run and logged why). Their ids.

    multiprocessing's own exit handler, which runs after this one, sends each daemonic child
    SIGTERM and then waits for it without end; a worker ignores SIGTERM
    (:mod:`ranking_core.job_fork_server`), so the exit would wait for ever. Each killed process
    is awaited at most ``wait`` seconds."""
    left = [child for child in multiprocessing.active_children() if child.daemon]
    for child in left:
        LOG.warning("a job worker (process %d) was left running at exit; killed", child.pid)
        child.kill()
    for child in left:
        child.join(wait)
    return [child.pid for child in left if child.pid is not None]


def stop_fork_server() -> bool:
    """End multiprocessing's fork server of this process when no child process of
    multiprocessing is left; True when it has ended or none runs."""
    from multiprocessing import forkserver

    if multiprocessing.active_children():
        LOG.warning("fork server left running: child processes of multiprocessing remain")
        return False
    server = getattr(forkserver, "_forkserver", None)
    if server is None or getattr(server, "_forkserver_pid", None) is None:
        return True
    try:
        server._stop()
    except FileNotFoundError:  # it ended; its socket's folder was removed before
        return True
    except Exception:
        LOG.exception("multiprocessing's fork server did not stop at exit")
        return False
    return True


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
