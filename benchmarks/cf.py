"""Per-user CF protocol throughput: one process vs a local Dask cluster, and the full protocol.

Prints JSON. Usage (from the repository root)::

    python benchmarks/cf.py [--users 60] [--workers N] [--full]

* ``throughput``: test reviewers per second on MovieLens 100K (``MOVIELENS_100K``) or, when it is
  unset, on the synthetic generator, group 40-60, all five learners; single process vs a local Dask
  cluster of ``--workers`` processes (all cores by default) in the same run; the cluster's start-up
  time is reported separately and not counted. Both runs must give identical numbers.
* ``--full`` adds the wall time of the paper's full protocol (300 test reviewers × 10 repetitions,
  iterated Lavrentiev, group 40-60) on MovieLens 100K on the local cluster.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from distributed import Client, LocalCluster

from ranking_core.cf import read_movielens_100k, synthetic_ratings
from ranking_core.cf.parallel import SYNCHRONOUS, run_per_user
from ranking_core.cf.per_user import PROTOCOL_LEARNERS, PerUserConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=60, help="test reviewers (one repetition)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--full", action="store_true", help="also time the full protocol")
    args = parser.parse_args()

    root = os.environ.get("MOVIELENS_100K")
    data = read_movielens_100k(root) if root else synthetic_ratings(seed=0)
    config = PerUserConfig(
        group=(40, 60), learners=tuple(PROTOCOL_LEARNERS), n_test_users=args.users, repeats=1
    )
    report: dict = {
        "data": data.source,
        "learners": list(PROTOCOL_LEARNERS),
        "test_users": args.users,
        "workers": args.workers,
        "cpu_count": os.cpu_count(),
    }

    start = time.perf_counter()
    single = run_per_user(data, config, scheduler=SYNCHRONOUS)
    single_s = time.perf_counter() - start

    start = time.perf_counter()
    with (
        LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):
        startup_s = time.perf_counter() - start
        start = time.perf_counter()
        parallel = run_per_user(data, config, scheduler=client)
        dask_s = time.perf_counter() - start
        if args.full and root:
            full = PerUserConfig(group=(40, 60), learners=("iterated-lavrentiev",))
            start = time.perf_counter()
            result = run_per_user(data, full, scheduler=client)
            report["full_protocol"] = {
                "learner": "iterated-lavrentiev",
                "group": "40-60",
                "test_users": 300,
                "repeats": 10,
                "wall_s": round(time.perf_counter() - start, 2),
                "pairwise_misranking": result["learners"]["iterated-lavrentiev"][
                    "pairwise_misranking"
                ]["mean"],
            }
    report.update(
        {
            "single_process_s": round(single_s, 3),
            "single_process_users_per_s": round(args.users / single_s, 2),
            "dask_startup_s": round(startup_s, 3),
            "dask_s": round(dask_s, 3),
            "dask_users_per_s": round(args.users / dask_s, 2),
            "speedup": round(single_s / dask_s, 2),
            "identical_results": single == parallel,
        }
    )
    if args.full and not root:
        report["full_protocol"] = "skipped: MOVIELENS_100K is not set"
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
