"""Long jobs on a team's cluster named by the one setting (``RISKGRID_SCHEDULER``): a scheduler and
two workers started here as separate processes (``dask scheduler``, ``dask worker``, all on
127.0.0.1, as docs/OPERATIONS.md sets them up on two machines), the dashboard's runner pointed at
them. The jobs run on those two workers (no local cluster is started), with their progress,
cancel and error sentences; the runner's shutdown leaves the team's scheduler running."""

from __future__ import annotations

import psutil
import pytest
from dask_team import dask_team

from ranking_core.job_cluster import SCHEDULER_ENV, scheduler_address
from tests.test_jobs import divide, forever, wait_until, worker_process


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    """``(address, worker process ids, scheduler process)`` of a scheduler and two
    single-threaded workers (no nanny: each worker is the process started here)."""
    names = ("second-machine-a", "second-machine-b")
    with dask_team(tmp_path_factory.mktemp("team"), names) as started:
        yield started.address, started.worker_pids, started.scheduler


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
