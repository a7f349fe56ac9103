"""BLAS threads for fits: one thread by default in the dashboard's server, every core only for a
large fit on a machine with cores to spare."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from threadpoolctl import threadpool_info

from ranking_core.blas_threads import PARALLEL_FIT_FROM, fit_threads

ROOT = Path(__file__).resolve().parents[1]


def test_the_server_runs_every_blas_on_one_thread():
    """In a fresh process (the limit is process-wide): after ``one_blas_thread`` each loaded BLAS
    (NumPy's and SciPy's) uses one thread, and a LAPACK call still works."""
    script = (
        "import json; from ranking_core.blas_threads import one_blas_thread; "
        "one_blas_thread(); import numpy, scipy.linalg; "
        "from threadpoolctl import threadpool_info; "
        "scipy.linalg.eigh(numpy.eye(3)); "
        "print(json.dumps([p['num_threads'] for p in threadpool_info() "
        "if p['user_api'] == 'blas']))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
    )
    threads = json.loads(out.stdout)
    assert threads and all(n == 1 for n in threads)


@pytest.mark.parametrize(
    ("n_ratings", "load", "runnable", "expected"),
    [
        (300, 0.0, "1/80", 1),  # small fits: one thread is as fast
        (PARALLEL_FIT_FROM, 0.0, "1/80", "cores"),  # a large fit on a free machine: every core
        (PARALLEL_FIT_FROM, 2.0, "3/80", 1),  # … but not when the cores are busy
        (PARALLEL_FIT_FROM, 2.0, "1/80", "cores"),  # the average lags: nothing else runs now
        (PARALLEL_FIT_FROM, 0.5, "5/80", "cores"),  # a low average still lets a fit use them
        (PARALLEL_FIT_FROM, 2.0, None, 1),  # no /proc/loadavg: the average alone
    ],
)
def test_a_fit_uses_every_core_only_when_it_is_large_and_the_cores_are_free(
    monkeypatch, tmp_path, n_ratings, load, runnable, expected
):
    from ranking_core import blas_threads

    status = tmp_path / "loadavg"
    if runnable is not None:  # the reading thread is one of the runnable threads
        status.write_text(f"{load} {load} {load} {runnable} 12345\n")
    monkeypatch.setattr(blas_threads, "LOAD_STATUS", str(status))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    import numpy  # noqa: F401 - loads the BLAS whose threads are counted

    with fit_threads(n_ratings):
        threads = {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}
    assert threads == {2 if expected == "cores" else 1}


def test_the_load_now_is_read_from_this_machine():
    """On Linux the runnable count is read (this process's reading thread is one of them), so
    the load now is a whole number of other threads, never more than the average allows."""
    from ranking_core.blas_threads import LOAD_STATUS, machine_load

    if not Path(LOAD_STATUS).exists():
        pytest.skip(f"{LOAD_STATUS} is Linux's; elsewhere the average alone is used")
    before = os.getloadavg()[0]
    load = machine_load()
    after = os.getloadavg()[0]  # the average may be updated meanwhile (every 5 s)
    assert 0.0 <= load <= max(before, after)
    assert load in (before, after) or float(load).is_integer()


ARENAS = """
import ctypes, sys, tempfile, threading
import numpy as np
from ranking_core.blas_threads import one_malloc_arena
if sys.argv[1] == "one":
    assert one_malloc_arena()
held, ready = [], threading.Barrier(4)
def allocate():
    ready.wait()  # the three threads allocate at the same time
    held.append([np.ones(1000) for _ in range(200)])
threads = [threading.Thread(target=allocate) for _ in range(3)]
for t in threads:
    t.start()
ready.wait()
for t in threads:
    t.join()
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
path = tempfile.mktemp()
stream = libc.fopen(path.encode(), b"w")
libc.malloc_info(0, ctypes.c_void_p(stream))
libc.fclose(ctypes.c_void_p(stream))
print(open(path).read().count("<heap nr="))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc arenas")
def test_one_malloc_arena_keeps_every_thread_on_one_heap():
    """glibc's own report (malloc_info): threads allocating at once get heaps of their own by
    default, and share one after ``one_malloc_arena``."""

    def heaps(mode: str) -> int:
        done = subprocess.run(
            [sys.executable, "-c", ARENAS, mode], capture_output=True, text=True, cwd=ROOT
        )
        assert done.returncode == 0, done.stderr
        return int(done.stdout)

    assert heaps("default") > 1
    assert heaps("one") == 1


KEPT = """
import ctypes, json, sys
import numpy as np
from ranking_core.blas_threads import reuse_freed_memory
if sys.argv[1] == "reuse":
    assert reuse_freed_memory()
class MallInfo2(ctypes.Structure):  # glibc's mallinfo2: ten counts of bytes
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2
block = np.ones(5_000_000)  # 40 MB: over the largest block glibc keeps by default (32 MB)
held = libc.mallinfo2()
del block
freed = libc.mallinfo2()
print(json.dumps({"mapped_while_held": held.hblkhd, "free_in_heap_after": freed.fordblks}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_freed_memory_is_kept_for_the_next_block():
    """glibc's own counts (mallinfo2): by default a 40 MB block is mapped on its own and
    returned when freed; after ``reuse_freed_memory`` it comes from the heap and stays there,
    free for the next factorisation's blocks."""

    def counts(mode: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-c", KEPT, mode], capture_output=True, text=True, cwd=ROOT
        )
        if "mallinfo2" in done.stderr:
            pytest.skip("glibc older than 2.33 has no mallinfo2")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    size = 40_000_000
    default, reuse = counts("default"), counts("reuse")
    assert default["mapped_while_held"] >= size and default["free_in_heap_after"] < size
    assert reuse["mapped_while_held"] < size and reuse["free_in_heap_after"] >= size


def test_blas_on_one_thread_limits_inside_and_gives_the_threads_back():
    """threadpoolctl's own reading of every loaded BLAS: one thread inside the block, the count
    the block yielded before and after it."""
    import numpy  # noqa: F401 - the BLAS libraries are loaded before they are read
    import scipy.linalg  # noqa: F401

    from ranking_core.blas_threads import blas_on_one_thread

    def counts() -> set[int]:
        return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}

    before = counts()
    with blas_on_one_thread() as threads:
        assert counts() == {1}
    assert threads == max(before)
    assert counts() == before
