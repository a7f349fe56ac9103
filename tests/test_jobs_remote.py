"""Long jobs on a team's cluster named by the one setting (``RISKGRID_SCHEDULER``): a scheduler and
two workers started here as separate processes (``dask scheduler``, ``dask worker``, all on
127.0.0.1, as docs/OPERATIONS.md sets them up on two machines), the dashboard's runner pointed at
them. The jobs run on those two workers (no local cluster is started), with their progress,
cancel and error sentences; the runner's shutdown leaves the team's scheduler running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from ranking_core.job_cluster import SCHEDULER_ENV, scheduler_address
from tests.test_jobs import divide, forever, wait_until, worker_process

ROOT = Path(__file__).resolve().parents[1]
START_WAIT = 120  # seconds at most for the scheduler and workers to start on a busy machine


def _stop(processes: list[subprocess.Popen]) -> None:
    """End each process in turn (the workers before their scheduler)."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    """``(address, worker process ids, scheduler process)`` of a scheduler and two
    single-threaded workers (no nanny: each worker is the process started here)."""
    from distributed import Client

    folder = tmp_path_factory.mktemp("team")
    file = folder / "scheduler.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    dask = [sys.executable, "-m", "dask"]
    local = ["--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0", "--no-dashboard"]
    started = [
        subprocess.Popen(
            [*dask, "scheduler", *local, "--port", "0", "--scheduler-file", str(file)],
            cwd=folder,
            env=env,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        deadline = time.monotonic() + START_WAIT
        while not file.exists() or not file.read_text().strip():
            assert time.monotonic() < deadline, "the scheduler did not start"
            assert started[0].poll() is None, "the scheduler stopped"
            time.sleep(0.1)
        time.sleep(0.2)  # the file is written in one go, but give it a moment
        address = json.loads(file.read_text())["address"]
        for name in ("second-machine-a", "second-machine-b"):
            worker = [*dask, "worker", address, *local, "--nthreads", "1", "--no-nanny"]
            started.append(
                subprocess.Popen(
                    [*worker, "--name", name, "--local-directory", str(folder / name)],
                    cwd=folder,
                    env=env,
                    stderr=subprocess.DEVNULL,
                )
            )
        with Client(address, timeout=START_WAIT, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=START_WAIT)
        yield address, {worker.pid for worker in started[1:]}, started[0]
    finally:
        _stop(started[::-1])


def test_jobs_given_the_one_setting_run_on_the_teams_two_workers(team, monkeypatch):
    address, workers, scheduler = team
    assert address.startswith("tcp://127.0.0.1:")
    from dashboard.jobs import job_runner

    monkeypatch.setenv(SCHEDULER_ENV, address)
    assert scheduler_address() == address
    job_runner.clear()
    runner = job_runner()
    mine = set(psutil.Process().children(recursive=True))
    try:
        assert runner.scheduler == address
        for i in range(2):  # two jobs at once on two idle single-threaded workers
            runner.submit(("where", i), worker_process, 2.0, owner=f"session {i}")
        seen = wait_until(runner, ("where", 0), lambda s: s.state == "running" and s.done > 0)
        assert seen.total == 10 and 1 <= seen.done <= 10  # progress reached this process
        ran = [wait_until(runner, ("where", i), lambda s: s.finished) for i in range(2)]
        assert [(s.state, s.done, s.total) for s in ran] == [("done", 10, 10)] * 2
        assert {s.result for s in ran} == workers  # one job on each worker of the team
        runner.submit("forever", forever, owner="a")
        wait_until(runner, "forever", lambda s: s.done > 0)
        assert runner.cancel("forever", owner="a")
        assert wait_until(runner, "forever", lambda s: s.finished).state == "cancelled"
        runner.submit("divide", divide, owner="a")
        failed = wait_until(runner, "divide", lambda s: s.finished)
        assert failed.state == "failed" and "ZeroDivisionError" in failed.error
        assert "\n" not in failed.error
        # the jobs ran on the team's workers: this process started no cluster of its own
        assert set(psutil.Process().children(recursive=True)) == mine
    finally:
        runner.shutdown()
        job_runner.clear()
    assert scheduler.poll() is None  # the team's scheduler is left running


def test_a_malformed_scheduler_address_is_refused_with_its_rule():
    for text in ("127.0.0.1:8786", "http://host:8786", "tcp://host", "tcp://:8786", "tcp://h:x"):
        with pytest.raises(ValueError, match=r"must be tcp://HOST:PORT"):
            scheduler_address({SCHEDULER_ENV: text})
    assert scheduler_address({SCHEDULER_ENV: " tcp://10.0.0.5:8786 "}) == "tcp://10.0.0.5:8786"
    assert scheduler_address({SCHEDULER_ENV: ""}) is None and scheduler_address({}) is None
