"""The job runner's exit path: an interpreter that ran jobs on two runners (two local
dask.distributed clusters) ends at once and leaves no worker, fork-server or resource-tracker
process behind (two runners in one interpreter once hung at exit, the first runner's handler
waiting for the second's processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXIT_WAIT = 120  # seconds at most for the whole script on a busy machine (it takes ~2 s)

SCRIPT = textwrap.dedent(
    """
    import json, time
    import psutil
    from ranking_core.jobs import JobLimits, JobRunner
    from tests.test_jobs import squares

    runners = [JobRunner(JobLimits(workers=w, jobs=4, per_owner=4)) for w in (2, 1)]
    for runner in runners:
        runner.submit("sum", squares, 5, 0.01)
    results = []
    for runner in runners:
        while not (status := runner.status("sum")).finished:
            time.sleep(0.02)
        results.append(status.result)
    children = psutil.Process().children(recursive=True)
    for runner in runners:
        cluster = runner._engine._cluster
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
    print(json.dumps({
        "results": results,
        "children": [[c.pid, c.create_time(), " ".join(c.cmdline())] for c in children],
    }), flush=True)
    """
)


def _alive(pid: int, created: float) -> bool:
    """The process ``pid`` started at ``created`` still exists, a zombie included (a later
    process that took its number does not count)."""
    try:
        process = psutil.Process(pid)
        return abs(process.create_time() - created) < 1e-3
    except psutil.NoSuchProcess:
        return False


@pytest.mark.skipif(sys.platform != "linux", reason="process groups as on the servers (Linux)")
def test_an_interpreter_with_two_cluster_runners_exits_and_leaves_no_process():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    script = subprocess.Popen(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # every process it starts is in the session numbered by its pid
    )
    session = script.pid
    try:
        out, _ = script.communicate(timeout=EXIT_WAIT)
    except subprocess.TimeoutExpired:
        os.killpg(session, 9)
        script.communicate()
        pytest.fail(f"the interpreter did not exit within {EXIT_WAIT} s after its jobs were done")
    assert script.returncode == 0
    report = json.loads(out.strip().splitlines()[-1])
    assert report["results"] == [sum(k * k for k in range(5))] * 2  # both runners ran their job
    commands = [command for _, _, command in report["children"]]
    # what the runners started: their three workers, forked by one fork server, and the tracker
    assert sum("forkserver" in command for command in commands) == 1 + 3
    assert sum("resource_tracker" in command for command in commands) == 1
    deadline = time.monotonic() + 10  # an orphan is reaped by init a moment after the exit
    while True:
        left = [c for c in report["children"] if _alive(c[0], c[1])]
        in_session = []
        for process in psutil.process_iter(["pid", "cmdline"]):
            try:
                if os.getsid(process.pid) == session:
                    in_session.append(process.info["cmdline"])
            except (ProcessLookupError, PermissionError):
                pass
        if not (left or in_session) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert left == [] and in_session == []


LEFT_WORKER_SCRIPT = textwrap.dedent(
    """
    import multiprocessing, signal, time
    from ranking_core.jobs import JobLimits, JobRunner

    def worker(ready):  # a job worker ignores SIGTERM, as ranking_core.job_fork_server sets it
        signal.signal(signal.SIGTERM, lambda *_: None)
        ready.set()
        time.sleep(600)

    if __name__ == "__main__":
        runner = JobRunner(JobLimits(workers=1))  # hooks the exit handler of the job engines
        context = multiprocessing.get_context("fork")
        ready = context.Event()
        left = context.Process(target=worker, args=(ready,), daemon=True)
        left.start()
        assert ready.wait(60)
        print(left.pid, flush=True)
    """
)


@pytest.mark.skipif(sys.platform != "linux", reason="process groups as on the servers (Linux)")
def test_a_worker_left_running_at_exit_does_not_hold_the_exit(tmp_path):
    # multiprocessing's own exit handler sends a daemonic child SIGTERM, then waits for it
    # without end; a worker ignores SIGTERM, so the exit kills a worker its cluster left
    script_file = tmp_path / "left_worker.py"
    script_file.write_text(LEFT_WORKER_SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    script = subprocess.Popen(
        [sys.executable, str(script_file)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = script.communicate(timeout=EXIT_WAIT)
    except subprocess.TimeoutExpired:
        os.killpg(script.pid, 9)
        script.communicate()
        pytest.fail(f"the interpreter did not exit within {EXIT_WAIT} s: it waited for its worker")
    assert script.returncode == 0, err
    pid = int(out.split()[0])
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
