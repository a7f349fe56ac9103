"""How many threads BLAS/LAPACK calls use for a fit (threadpoolctl).

A BLAS that spreads every call over every core competes for them with whatever else runs (the
dashboard's other sessions and the browser showing them, other jobs on a shared machine), and
OpenBLAS's waiting threads make that ruinous. Measured on the 2-core development machine,
``learn_grid`` with the default settings on a rating file (``library_fit_seconds`` of
``benchmarks/dashboard_browser.py`` under ``threadpool_limits(1 or 2)``, one-off runs):

============  ===================  ===================  ===================
ratings       idle, one thread     idle, two threads    load 4, one / two
============  ===================  ===================  ===================
300           0.12–0.15 s          0.14–0.25 s          0.12–0.16 / 7.1 s
1,000         0.98–1.16 s          1.09–1.42 s
2,000         6.0–7.1 s            4.1–4.5 s            6.5–7.0 / 87–94 s
============  ===================  ===================  ===================

So a fit of ``PARALLEL_FIT_FROM`` ratings or more takes every core while the machine has cores to
spare, and smaller ones or fits on a busy machine one (:func:`fit_threads`; ``riskgrid learn``,
``riskgrid plan-panel`` and the dashboard's fits). The dashboard's server runs everything else on
one thread (:func:`one_blas_thread`).
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from threadpoolctl import ThreadpoolController, threadpool_limits

__all__ = [
    "PARALLEL_FIT_FROM",
    "blas_on_one_thread",
    "fit_threads",
    "machine_load",
    "one_blas_thread",
    "one_malloc_arena",
    "reuse_freed_memory",
]

PARALLEL_FIT_FROM = 1500  # ratings: from here on a fit on a free machine uses every core


def one_blas_thread() -> None:
    """Every BLAS/LAPACK call of this process on one thread (NumPy's and SciPy's libraries are
    loaded first: threadpoolctl limits the loaded ones)."""
    import numpy  # noqa: F401
    import scipy.linalg  # noqa: F401

    threadpool_limits(limits=1, user_api="blas")


def fit_threads(n_ratings: int) -> AbstractContextManager:
    """A context in which a fit of ``n_ratings`` ratings runs: every core when there are at
    least ``PARALLEL_FIT_FROM`` ratings and the machine's load (:func:`machine_load`) is below
    the number of cores, else one thread."""
    cores = os.cpu_count() or 1
    threads = cores if n_ratings >= PARALLEL_FIT_FROM and machine_load() < cores else 1
    return threadpool_limits(limits=threads, user_api="blas")


LOAD_STATUS = "/proc/loadavg"  # Linux: load averages, then "runnable/all" threads
LOAD_READINGS = 3  # readings of the runnable count, LOAD_GAP seconds apart
LOAD_GAP = 0.01


def machine_load() -> float:
    """The cores other work takes: the 1-minute load average, or fewer when fewer threads of
    other processes are running or waiting for a core now.

    The average lags: a minute after two busy cores fall idle it still reads about 1.3, so a
    fit started right after other work (a benchmark's reference, the user's previous command)
    took one core on an idle machine. Linux's /proc/loadavg also gives the threads runnable at
    this moment (its fourth field, this process's reading thread among them); the largest of
    ``LOAD_READINGS`` readings, less the reader, is the load now. A load that is there now, or
    that comes and goes within the readings, still counts."""
    average = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    try:
        readings = []
        for reading in range(LOAD_READINGS):
            if reading:
                time.sleep(LOAD_GAP)
            with open(LOAD_STATUS, encoding="ascii") as status:
                readings.append(int(status.read().split()[3].split("/")[0]) - 1)
    except (OSError, ValueError, IndexError):  # not Linux: the average alone
        return average
    return min(average, float(max(readings)))


_ONE_THREAD_LOCK = threading.Lock()


@contextmanager
def blas_on_one_thread() -> Iterator[int]:
    """BLAS on one thread inside the block, yielding how many threads it had before (the
    lattice factorisation's small fronts: ``learners/lattice_cholesky.py``, whose own workers
    then take the cores BLAS had).

    threadpoolctl's limits are per process: two threads limiting and restoring at once could
    restore out of order. The lock makes these blocks take turns (a factorisation spreads itself
    over its workers, so nothing is lost by queueing another behind it)."""
    with _ONE_THREAD_LOCK:
        controller = ThreadpoolController().select(user_api="blas")
        threads = max((info["num_threads"] for info in controller.info()), default=1)
        with controller.limit(limits=1):
            yield threads


M_ARENA_MAX = -8  # glibc's mallopt parameters: the number of malloc arenas,
M_MMAP_THRESHOLD = -3  # the size from which a block is mapped on its own (returned when freed)
M_TRIM_THRESHOLD = -1  # and the free memory at the heap's top that is returned to the system
REUSED_BLOCKS = 64 << 20  # bytes: blocks below this come from the heap and stay there when freed
KEPT_FREE = 1 << 30  # bytes of free memory at the heap's top kept (mallopt takes a C int)


def one_malloc_arena() -> bool:
    """Let every thread of this process allocate from one glibc malloc arena; True if set.

    A fit's worker threads (the lattice factorisation's, ``learners/lattice_cholesky.py``) each
    get an arena of their own by default, and an arena keeps what was freed in it for its own
    thread: with two workers ``riskgrid learn`` on 20,000 ratings peaked at 483–487 MiB against
    448 MiB with one, and at 457–459 MiB with one arena (``ru_maxrss``, same run). For a
    command's process, called before its threads start; not for the dashboard's server, whose
    many threads would then queue on one allocator. No effect beyond glibc (Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return bool(ctypes.CDLL(None).mallopt(M_ARENA_MAX, 1))
    except (OSError, AttributeError):  # another C library, without mallopt
        return False


def reuse_freed_memory() -> bool:
    """Keep the memory a command frees for its next allocations (glibc); True if set.

    A lattice fit allocates and frees a factor's worth of blocks (about 150 MB, none over
    16 MB) for each λ it tries. glibc maps large blocks on their own and returns them when
    freed, and returns free memory at the top of its heap, so each factorisation faulted its
    pages in again: 1.2–1.5 s of system time in ``riskgrid learn`` on 20,000 ratings. With
    blocks under ``REUSED_BLOCKS`` taken from the heap and nothing returned before the command
    ends: 0.8–0.9 s, 0.2–0.5 s less wall time, the peak 5 MiB higher (docs/SCALE.md). For a
    command's process, which ends with its fit; not for a server. No effect beyond glibc."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
        return bool(mallopt(M_MMAP_THRESHOLD, REUSED_BLOCKS)) and bool(
            mallopt(M_TRIM_THRESHOLD, KEPT_FREE)
        )
    except (OSError, AttributeError):  # another C library, without mallopt
        return False
