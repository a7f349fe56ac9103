"""A team's dask cluster for tests, set up as docs/OPERATIONS.md sets one up on its machines: a
``dask scheduler`` and ``dask worker`` processes started here, all on 127.0.0.1, without their
diagnostics pages. Each worker is single-threaded, without a nanny (the worker is the process
started here), and imports this checkout's code. Stopped, the workers before their scheduler,
when the block ends."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START_WAIT = 120  # seconds at most for the scheduler and workers to start on a busy machine


@dataclass(frozen=True)
class Team:
    """A running team: its scheduler's address, the process ids of its workers, its scheduler."""

    address: str
    worker_pids: set[int]
    scheduler: subprocess.Popen


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


@contextlib.contextmanager
def dask_team(folder: Path, names: Sequence[str]) -> Iterator[Team]:
    """A scheduler and one worker per name of ``names``, their files in ``folder``; yielded once
    every worker has joined the scheduler."""
    from distributed import Client

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
        for name in names:
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
            client.wait_for_workers(len(names), timeout=START_WAIT)
        yield Team(address, {worker.pid for worker in started[1:]}, started[0])
    finally:
        _stop(started[::-1])
