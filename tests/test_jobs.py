"""The job runner: progress reported, cancel stops a job, a failing job gives its sentence,
bounds refused before any work, one job per key shared by every session."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from ranking_core.jobs import JobLimits, JobRefused, JobRunner, JobStatus

WAIT = 120  # seconds at most for a worker process to start on a busy machine


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


@pytest.fixture(scope="module")
def processes():
    runner = JobRunner(JobLimits(workers=1, jobs=4, per_owner=4))
    yield runner
    runner.shutdown()


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
