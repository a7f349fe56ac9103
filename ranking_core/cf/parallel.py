"""Run the per-user protocol in one process or on Dask (a local cluster or a given scheduler).

The tasks are independent and each draws from its own seed (see :mod:`ranking_core.cf.per_user`),
so the numbers are the same whatever the scheduler, the number of workers or the batch size: the
results are put back in task order before they are summarised.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ranking_core.cf.data import RatingMatrix
from ranking_core.cf.per_user import PerUserConfig, Task, evaluate_tasks, plan_tasks, summarize

__all__ = ["SYNCHRONOUS", "dask_client", "run_per_user"]

SYNCHRONOUS = "synchronous"
Progress = Callable[[int, int], None]


@contextmanager
def dask_client(scheduler: Any = None, n_workers: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client``: ``scheduler`` may be a Client (used as is), an address
    (``tcp://host:port``) or None (a local cluster of ``n_workers`` single-threaded processes,
    all cores by default)."""
    from distributed import Client, LocalCluster

    if scheduler is not None and not isinstance(scheduler, str):
        yield scheduler
        return
    if scheduler is None:
        workers = n_workers or os.cpu_count() or 1
        with (
            LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0"
            ) as cluster,
            Client(cluster) as client,
        ):
            yield client
        return
    with Client(scheduler) as client:
        yield client


def _batches(tasks: Sequence[Task], size: int) -> list[list[Task]]:
    return [list(tasks[i : i + size]) for i in range(0, len(tasks), size)]


def run_per_user(
    data: RatingMatrix,
    config: PerUserConfig,
    *,
    scheduler: Any = None,
    n_workers: int | None = None,
    batch_size: int = 10,
    progress: Progress | None = None,
) -> dict:
    """Run the protocol and summarise it (:func:`~ranking_core.cf.per_user.summarize`).

    Parameters
    ----------
    scheduler : ``"synchronous"`` (this process, no Dask), None (a local Dask cluster with
        ``n_workers`` processes, all cores by default), an address ``tcp://host:port`` of a running
        Dask scheduler whose workers can import ``ranking_core``, or a ``distributed.Client``.
    batch_size : test reviewers per Dask task (amortises the per-task overhead, ≈1 ms).
    progress : ``progress(done, total)`` called as test reviewers finish.
    """
    tasks = plan_tasks(data, config)
    batches = _batches(tasks, max(int(batch_size), 1))
    total = len(tasks)
    if scheduler == SYNCHRONOUS:
        results, done = [], 0
        for batch in batches:
            results.append(evaluate_tasks(data, config, batch))
            done += len(batch)
            if progress is not None:
                progress(done, total)
    else:
        results = _run_on_dask(data, config, batches, scheduler, n_workers, progress)
    values: NDArray[np.float64] = np.concatenate(results)
    return summarize(config, tasks, values)


def _run_on_dask(
    data: RatingMatrix,
    config: PerUserConfig,
    batches: list[list[Task]],
    scheduler: Any,
    n_workers: int | None,
    progress: Progress | None,
) -> list:
    from distributed import as_completed

    total = sum(len(b) for b in batches)
    with dask_client(scheduler, n_workers) as client:
        # hash=False: a fresh key per run, so that a second run on the same client does not race
        # the release of the first run's copy
        shared = client.scatter(data, broadcast=True, hash=False)
        futures = client.map(
            evaluate_tasks, [shared] * len(batches), [config] * len(batches), batches, pure=False
        )
        size = {future.key: len(batch) for future, batch in zip(futures, batches, strict=True)}
        done = 0
        for future in as_completed(futures):
            done += size[future.key]
            if progress is not None:
                progress(done, total)
        return client.gather(futures)
