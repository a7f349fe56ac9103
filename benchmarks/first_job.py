"""How long a fresh server waits for its first long job's result. Prints JSON.

In a fresh interpreter, what ``riskgrid dashboard`` does for long jobs: the server's runner
(``JobRunner(JobLimits())``, ``RISKGRID_SCHEDULER`` unset: a local cluster), its warm-up (one job
per worker importing what the pages' jobs import, submitted from a thread as the server's warm-up
does), then the first visitor's job: the Learn page's background fit (``_fit_in_worker``, the
default recipe) of a simulated panel of ``--ratings`` ratings, run by name as the pages run it.
Seconds are counted from the interpreter's start (its imports included): ``warm_up_s`` until the
warm-up jobs are done, ``first_result_s`` until the fit's result is here (``fit_job_s`` after the
warm-up); ``round_trip_s`` is then a job doing nothing (imports already done) from submit to
result, the engine's own cost; ``fit_s`` is the same fit in this process afterwards (the work
itself, for reference; ``same_grid``: the job's grid equals it).

    python benchmarks/first_job.py [--ratings 2500]

Run from a checkout; the same script runs against an older checkout of the same interface (its
runner on a process pool) to compare.
"""

from __future__ import annotations

import argparse
import json
import threading
import time

import psutil


def _wait(runner, key) -> object:
    while not (status := runner.status(key)).finished:
        time.sleep(0.02)
    assert status.state == "done", status
    return status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ratings", type=int, default=2500)
    args = parser.parse_args()
    started = psutil.Process().create_time()

    # the server imports the pages' modules before its warm-up starts the jobs' thread
    from dashboard.job_worker import call_by_name, function_name, warm_worker
    from dashboard.learn_data import _fit_in_worker
    from ranking_core.jobs import JobLimits, JobRunner
    from ranking_core.learn import PRESETS, default_recipe
    from ranking_core.panels import simulate_panel
    from ranking_core.ratings import read_rating_set

    runner = JobRunner(JobLimits())
    workers = runner.limits.workers
    if hasattr(runner, "_engine"):  # as the server's warm-up: imported before the thread
        import distributed  # noqa: F401

    def warm() -> None:
        for worker in range(workers):
            runner.submit(("warm-up", worker), warm_worker, owner=f"warm-up {worker}")

    warming = threading.Thread(target=warm)
    warming.start()
    ratings = read_rating_set(simulate_panel(args.ratings, random_state=0), name="panel")
    settings = PRESETS[default_recipe(ratings)[0]]
    warming.join()
    for worker in range(workers):
        _wait(runner, ("warm-up", worker))
    warm_up = time.time() - started
    runner.submit("fit", call_by_name, function_name(_fit_in_worker), ratings, settings, owner="v")
    result = _wait(runner, "fit").result
    first_result = time.time() - started
    clock = time.perf_counter()
    runner.submit("nothing", call_by_name, function_name(warm_worker), owner="v")
    _wait(runner, "nothing")
    round_trip = time.perf_counter() - clock
    runner.shutdown()
    clock = time.perf_counter()
    here = _fit_in_worker(ratings, settings, progress=lambda done, total: None)
    fit = time.perf_counter() - clock
    same = bool((here.learned.grid == result.learned.grid).all())
    print(
        json.dumps(
            {
                "engine": type(
                    getattr(runner, "_engine", getattr(runner, "_executor", None))
                ).__name__,
                "workers": workers,
                "ratings": args.ratings,
                "warm_up_s": round(warm_up, 2),
                "first_result_s": round(first_result, 2),
                "fit_job_s": round(first_result - warm_up, 2),
                "fit_s": round(fit, 2),
                "round_trip_s": round(round_trip, 3),
                "same_grid": same,
            }
        )
    )


if __name__ == "__main__":
    main()
