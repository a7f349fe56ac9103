"""The job runner: progress reported, cancel stops a job, a failing job gives its sentence,
bounds refused before any work, one job per key shared by every session; on a local
dask.distributed cluster (one per module: it takes a few seconds to start) and in threads."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field

import psutil
import pytest

from ranking_core.job_cluster import REPORT_SECONDS, WORKER_ENVIRON_UNSET, ClusterChannel
from ranking_core.jobs import JobLimits, JobRefused, JobRunner, JobStatus, run_in_worker

WAIT = 120  # seconds at most for a worker process to start on a busy machine
REPORTS = 100_000  # progress reports of a job that must not flood the scheduler


def squares(n: int, pause: float, *, progress: Callable[[int, int], None]) -> int:
    """Σ k² for k < n, one progress step per term."""
    total = 0
    for k in range(n):
        total += k * k
        progress(k + 1, n)
        time.sleep(pause)
    return total


def forever(*, progress: Callable[[int, int], None]) -> None:
    """Reports progress every 10 ms until cancelled (stops by itself after 10 minutes)."""
    for step in range(60_000):
        progress(step, 60_000)
        time.sleep(0.01)


def refuse(*, progress: Callable[[int, int], None]) -> None:
    raise ValueError("line 3: the rating must be in 0..4; got 7")


def divide(*, progress: Callable[[int, int], None]) -> float:
    return 1 / 0


def wait_until(runner: JobRunner, key, test: Callable[[JobStatus], bool]) -> JobStatus:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        status = runner.status(key)
        assert status is not None
        if test(status):
            return status
        time.sleep(0.05)
    raise AssertionError(f"job {key!r} stayed {runner.status(key)}")


def many_steps(n: int, *, progress: Callable[[int, int], None]) -> int:
    """Reports ``n`` steps as fast as it can; the number of reports it made."""
    for k in range(n):
        progress(k + 1, n)
    return n


def worker_process(pause: float, *, progress: Callable[[int, int], None]) -> int:
    """The process id of the worker that ran the job, after ``pause`` seconds in 10 steps."""
    for step in range(10):
        progress(step + 1, 10)
        time.sleep(pause / 10)
    return os.getpid()


ENVIRON = dict(os.environ)  # this process's environment before any cluster starts


def environment(names: tuple[str, ...], *, progress: Callable[[int, int], None]) -> dict:
    """The worker's values of the environment variables ``names`` (None when unset)."""
    return {name: os.environ.get(name) for name in names}


@pytest.fixture(scope="module")
def processes():
    runner = JobRunner(JobLimits(workers=1, jobs=4, per_owner=4))
    yield runner
    runner.shutdown()


def test_the_local_cluster_listens_on_this_machine_only(processes):
    processes.submit("warm", squares, 1, 0.0, owner="a")
    cluster = processes._engine._cluster
    addresses = [cluster.scheduler_address, *(w.worker_address for w in cluster.workers.values())]
    assert len(addresses) == 2  # a scheduler and the one worker of the limits
    assert all(address.startswith("tcp://127.0.0.1:") for address in addresses)
    assert processes.scheduler is None
    # every port the cluster opened, in this process and its workers, is on 127.0.0.1
    me = psutil.Process()
    listening = [
        c.laddr.ip
        for process in (me, *me.children(recursive=True))
        for c in process.net_connections(kind="inet")
        if c.status == psutil.CONN_LISTEN
    ]
    assert len(listening) >= 3  # the scheduler, its health endpoint, the worker (and nanny)
    assert set(listening) == {"127.0.0.1"}


def test_a_worker_has_the_blas_threads_and_memory_handling_of_a_plain_process(processes):
    # dask would set one BLAS thread and glibc's trimming of freed memory (a fit then ran
    # 1.6-2 times as long as in the server); a job's fit chooses its BLAS threads itself
    names = WORKER_ENVIRON_UNSET
    processes.submit("environment", environment, names, owner="a")
    seen = wait_until(processes, "environment", lambda s: s.finished).result
    assert seen == {name: ENVIRON.get(name) for name in names}


def test_a_job_reports_its_progress_and_returns_its_result_from_a_worker_process(processes):
    n = 40
    first = processes.submit("squares", squares, n, 0.05, owner="a")
    assert first.state in ("queued", "running") and first.result is None  # returned at once
    seen = []
    status = wait_until(processes, "squares", lambda s: (seen.append(s), s.finished)[1])
    reports = [(s.done, s.total) for s in seen if s.state == "running" and s.total]
    assert reports, "no progress was seen while the job ran"
    assert all(total == n and 1 <= done <= n for done, total in reports)
    assert [d for d, _ in reports] == sorted(d for d, _ in reports)
    assert status.state == "done" and (status.done, status.total) == (n, n)
    assert status.result == (n - 1) * n * (2 * n - 1) // 6  # Σ k², k < n


def test_cancel_stops_a_running_job_and_frees_its_worker(processes):
    processes.submit("forever", forever, owner="a")
    wait_until(processes, "forever", lambda s: s.done > 0)
    assert not processes.cancel("forever", owner="someone else")  # only its owner cancels it
    started = time.monotonic()
    assert processes.cancel("forever", owner="a")
    status = wait_until(processes, "forever", lambda s: s.finished)
    assert status.state == "cancelled" and time.monotonic() - started < 10
    processes.submit("after", squares, 5, 0.0, owner="a")  # the one worker is free again
    assert wait_until(processes, "after", lambda s: s.finished).result == 30


def worker_pid(runner: JobRunner, key: str) -> int:
    """The process id of the worker that runs the job ``key`` (submitted now, awaited)."""
    runner.submit(key, worker_process, 0.0, owner="a")
    status = wait_until(runner, key, lambda s: s.finished)
    assert status.state == "done", status
    return status.result


@pytest.mark.skipif(sys.platform != "linux", reason="signals and process groups as on the servers")
def test_a_worker_leaves_the_signals_of_the_servers_process_group_to_the_server(processes):
    # Ctrl-C and a service manager's stop signal the whole group: a worker dying of them would be
    # restarted by its nanny while the server closes the cluster
    pid = worker_pid(processes, "before the signals")
    for number in (signal.SIGINT, signal.SIGTERM):
        os.kill(pid, number)
    time.sleep(0.5)  # a signal's default action (the end of the process) would be over by now
    assert psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    assert worker_pid(processes, "after the signals") == pid  # the same worker, still serving


PAGE_SCRIPT = """from pathlib import Path\nPath({marker!r}).write_text("the page ran")\n"""


def test_a_worker_restarted_by_its_nanny_runs_no_main_script_of_the_server(
    processes, tmp_path, monkeypatch
):
    # under Streamlit, __main__ is the last page script the server ran; a restarted worker that
    # ran it bare filled the log with a page's errors as the server stopped
    marker = tmp_path / "ran"
    script = tmp_path / "page.py"
    script.write_text(PAGE_SCRIPT.format(marker=str(marker)))
    page = types.ModuleType("__main__")
    page.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", page)
    pid = worker_pid(processes, "before the restart")
    os.kill(pid, signal.SIGKILL)  # died (out of memory, say): the nanny starts a new worker
    deadline = time.monotonic() + WAIT
    restarted = pid
    while restarted == pid and time.monotonic() < deadline:
        restarted = worker_pid(processes, f"after the restart {time.monotonic()}")
    assert restarted != pid  # the job ran in the new worker
    assert not marker.exists()


class _ClosedClient:
    """A worker's client once the worker closes (the cluster shuts down)."""

    status = "closed"
    scheduler = None


@dataclass
class _FlagOfAClosedWorker:
    """A job's progress or cancel flag in a worker that closes: asking the scheduler fails as
    dask.distributed fails then."""

    client: object = field(default_factory=_ClosedClient)

    def is_set(self) -> bool:
        raise AttributeError("'NoneType' object has no attribute 'event_is_set'")

    def set(self, value: object = None) -> None:
        raise AttributeError("'NoneType' object has no attribute 'variable_set'")


def test_a_job_whose_worker_closes_ends_cancelled_without_a_traceback(caplog):
    channel = ClusterChannel("job", interval=0.0)
    channel._open = (_FlagOfAClosedWorker(), _FlagOfAClosedWorker())
    channel.report(3, 10)  # no progress written, no error
    with caplog.at_level(logging.DEBUG):
        outcome = run_in_worker(squares, (5, 0.0), {}, AlreadyStarted(channel))
    assert outcome.cancelled and outcome.error is None and outcome.value is None
    assert caplog.records == []  # nothing logged: no "a job failed", no traceback


@dataclass
class AlreadyStarted:
    """A channel whose job is opened already (its flags set by the test)."""

    channel: ClusterChannel
    interval: float = 0.0

    def open(self) -> None:
        pass

    def cancelled(self) -> bool:
        return self.channel.cancelled()

    def report(self, done: int, total: int) -> None:
        self.channel.report(done, total)


def test_a_flag_that_fails_while_the_worker_runs_is_not_taken_for_a_cancel():
    channel = ClusterChannel("job", interval=0.0)
    running = types.SimpleNamespace(status="running", scheduler=object())
    channel._open = (_FlagOfAClosedWorker(running), _FlagOfAClosedWorker(running))
    with pytest.raises(AttributeError):
        channel.cancelled()
    with pytest.raises(AttributeError):
        channel.report(3, 10)


def test_a_runner_shut_down_refuses_new_jobs_with_a_sentence():
    runner = JobRunner(JobLimits(workers=1))
    runner.shutdown()  # before any job: no cluster was started
    with pytest.raises(JobRefused, match="the server is stopping"):
        runner.submit("late", squares, 3, 0.0, owner="a")
    assert runner._engine._cluster is None


@dataclass
class CountingChannel:
    """A channel that counts the reports and cancel checks a job sends."""

    interval: float
    reports: list[tuple[int, int]] = field(default_factory=list)
    checks: int = 0

    def open(self) -> None:
        pass

    def cancelled(self) -> bool:
        self.checks += 1
        return False

    def report(self, done: int, total: int) -> None:
        self.reports.append((done, total))


def test_a_worker_sends_one_report_per_interval_and_the_last_step():
    channel = CountingChannel(interval=REPORT_SECONDS)
    started = time.monotonic()
    outcome = run_in_worker(many_steps, (REPORTS,), {}, channel)
    seconds = time.monotonic() - started
    assert outcome.value == REPORTS and (outcome.done, outcome.total) == (REPORTS, REPORTS)
    assert channel.reports[0] == (1, REPORTS) and channel.reports[-1] == (REPORTS, REPORTS)
    assert len(channel.reports) <= seconds / REPORT_SECONDS + 2  # the first, one per interval, last
    assert channel.checks == len(channel.reports) + 1  # the cancel flag read at each, and at start


def test_a_job_reporting_many_steps_on_the_cluster_ends_with_its_last_step(processes):
    started = time.monotonic()
    processes.submit("many", many_steps, REPORTS, owner="a")
    status = wait_until(processes, "many", lambda s: s.finished)
    assert status.state == "done" and status.result == REPORTS
    assert (status.done, status.total) == (REPORTS, REPORTS)
    # two round trips to the scheduler per report (≈1 ms each) would take minutes
    assert time.monotonic() - started < 60


def touch(path: str, *, progress: Callable[[int, int], None]) -> None:
    """Creates the file ``path``: the job has started."""
    with open(path, "x"):
        pass


def test_a_queued_job_cancelled_on_the_cluster_never_starts(processes, tmp_path):
    processes.submit("blocker", forever, owner="a")
    wait_until(processes, "blocker", lambda s: s.done > 0)  # the one worker is taken
    trace = tmp_path / "started"
    assert processes.submit("queued", touch, str(trace), owner="a").state == "queued"
    assert processes.cancel("queued", owner="a")
    assert processes.cancel("blocker", owner="a")
    assert wait_until(processes, "queued", lambda s: s.finished).state == "cancelled"
    processes.submit("next", squares, 3, 0.0, owner="a")  # the queue has moved past it
    assert wait_until(processes, "next", lambda s: s.finished).result == 5
    assert not trace.exists()


def test_a_failing_job_gives_its_sentence_and_no_traceback(processes):
    processes.submit("refuse", refuse, owner="a")
    processes.submit("divide", divide, owner="a")
    refused = wait_until(processes, "refuse", lambda s: s.finished)
    divided = wait_until(processes, "divide", lambda s: s.finished)
    assert refused.state == "failed"
    assert refused.error == "line 3: the rating must be in 0..4; got 7"
    assert divided.state == "failed" and "ZeroDivisionError" in divided.error
    assert "Traceback" not in divided.error and "\n" not in divided.error


def test_bounds_are_checked_before_any_work():
    gate = threading.Event()
    ran: list[str] = []

    def held(name: str, *, progress: Callable[[int, int], None]) -> str:
        ran.append(name)
        gate.wait(30)
        return name

    runner = JobRunner(JobLimits(workers=1, jobs=3, per_owner=2), mode="thread")
    try:
        runner.submit("a1", held, "a1", owner="a")
        runner.submit("a2", held, "a2", owner="a")
        with pytest.raises(JobRefused, match="this session already has 2 long jobs"):
            runner.submit("a3", held, "a3", owner="a")
        runner.submit("b1", held, "b1", owner="b")
        with pytest.raises(JobRefused, match="the server is running 3 long jobs"):
            runner.submit("c1", held, "c1", owner="c")
        assert runner.status("a3") is None and runner.status("c1") is None
        # a key already submitted attaches to its job, whoever asks, and takes no new place
        assert runner.submit("a1", held, "a1", owner="c").owner == "a"
        time.sleep(0.2)
        assert ran == ["a1"]  # one worker: the others wait in the queue
        assert runner.cancel("a2", owner="a")  # a queued job cancelled never starts
        gate.set()
        assert wait_until(runner, "b1", lambda s: s.finished).result == "b1"
        assert runner.status("a2").state == "cancelled" and "a2" not in ran
        assert sorted(ran) == ["a1", "b1"]
    finally:
        gate.set()
        runner.shutdown()


def test_finished_jobs_are_kept_up_to_the_limit_and_started_again_on_request():
    calls: list[int] = []

    def count(n: int, *, progress: Callable[[int, int], None]) -> int:
        calls.append(n)
        return n

    runner = JobRunner(JobLimits(workers=1, jobs=2, per_owner=2, kept=2), mode="thread")
    try:
        for n in range(3):
            runner.submit(n, count, n, owner="a")
            wait_until(runner, n, lambda s: s.finished)
        assert runner.status(0) is None and runner.status(2).result == 2  # the oldest dropped
        runner.submit(2, count, 2, owner="b")  # done: attached, not run again
        assert calls == [0, 1, 2]
        runner.submit(2, count, 2, owner="b", again=True)
        wait_until(runner, 2, lambda s: s.finished)
        assert calls == [0, 1, 2, 2]
    finally:
        runner.shutdown()


def test_limits_are_checked():
    with pytest.raises(ValueError, match=r"JobLimits\.per_owner must be at least 1"):
        JobLimits(per_owner=0)
    with pytest.raises(ValueError, match=r"JobLimits\.jobs must be at least workers"):
        JobLimits(workers=3, jobs=2)
