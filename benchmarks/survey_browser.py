"""Rating surveys through the browser: raters answer at once through their links in headless
Chromium, against ``riskgrid dashboard`` on this machine. Prints JSON, one line per result.

Sections (``--sections``, comma-separated):

* ``latency``: ``--raters`` raters answer ``--pairs`` pairs each at once (no adaptive batches),
  each pausing ``--think`` seconds on average before answering (0: none; the browsers run on
  the server's machine); the seconds from pressing ``Save and next`` to the next pair shown:
  median, 95th percentile.
* ``kill``: the same, with the server killed (SIGKILL) after half the answers and restarted;
  the raters open their links again and finish. Counts the acknowledged answers missing from
  ``riskgrid survey export`` (lost) and the answers stored twice (doubled).
* ``panel``: a simulated panel (answers: the SEG risk of the pair from ``$SEG_TABLE`` plus each
  rater's offset and noise, on the 0.5 answer scale) answers a survey with adaptive batches
  through the pages until ``--m`` answers; the grid learned from the export (robust learning,
  as ``riskgrid learn --robust huber``) against the same panel rating ``plan-panel``'s planned
  design (start design, then the planner's batches, computed here without the browser) and a
  uniform random design of the same size: misranking against the SEG on 1,000 uniform pairs
  (Kriukova et al. 2014, eq. (1)).

``--database postgresql`` runs against a throw-away PostgreSQL server (as the tests do).

    python benchmarks/survey_browser.py --sections latency,kill --raters 8 --pairs 15
    SEG_TABLE=... python benchmarks/survey_browser.py --sections panel --m 100
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from scripts.screenshots import ROOT, free_port, launch, stop
from scripts.survey_raters import answer_survey, open_chromium

N_TEST = 1000


@contextlib.contextmanager
def database(kind: str, folder: Path):
    """A fresh database URL: SQLite in ``folder`` or a throw-away PostgreSQL server."""
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'survey.sqlite3'}"
        return
    from postgres_server import fresh_database, throwaway_postgresql

    with throwaway_postgresql() as server:
        yield fresh_database(server, "survey_benchmark")


def simple_rating(reference: float, estimate: float) -> float:
    return min(4.0, round(abs(reference - estimate) / 40) / 2)


async def drive(
    links,
    port: int,
    env: dict,
    rating,
    kill_after: int | None = None,
    until_answers: int | None = None,
    think: float = 0.0,
):
    """Raters answer at once; with ``kill_after`` the server is SIGKILLed after that many
    acknowledged answers and restarted; with ``until_answers`` raters wait for new batches
    until that many answers were acknowledged. Returns (answers, seconds)."""
    from playwright.async_api import async_playwright

    answers: list = []
    server_up, finished = asyncio.Event(), asyncio.Event()
    server = await asyncio.to_thread(launch, port, env)
    server_up.set()
    start = time.perf_counter()
    try:
        async with async_playwright() as playwright:
            browser = await open_chromium(playwright)
            raters = [
                asyncio.create_task(
                    answer_survey(
                        browser,
                        rater,
                        link,
                        rating(rater),
                        answers,
                        server_up,
                        timeout_ms=30_000,
                        finished=finished if until_answers else None,
                        think=think,
                    )
                )
                for rater, link in links
            ]

            def acknowledged() -> int:
                return sum(a.acknowledged for a in answers)

            while not all(task.done() for task in raters):
                failed = [t for t in raters if t.done() and t.exception() is not None]
                if failed:
                    raise failed[0].exception()
                if kill_after is not None and acknowledged() >= kill_after:
                    kill_after = None
                    server_up.clear()
                    await asyncio.to_thread(stop, server, signal.SIGKILL)
                    server = await asyncio.to_thread(launch, port, env)
                    server_up.set()
                if until_answers is not None and acknowledged() >= until_answers:
                    finished.set()
                await asyncio.sleep(0.05)
            await asyncio.gather(*raters)
            await browser.close()
    finally:
        stop(server)
    return answers, time.perf_counter() - start


def export(name: str, env: dict, folder: Path) -> pd.DataFrame:
    out = folder / f"{name}.csv"
    subprocess.run(
        [sys.executable, "-m", "ranking_core.cli", "survey", "export", name, "-o", str(out)],
        check=True,
        cwd=ROOT,
        env=env,
        capture_output=True,
    )
    return pd.read_csv(out)


def server_env(url: str) -> dict:
    env = {**os.environ, "RISKGRID_DATABASE_URL": url}
    env.pop("SEG_TABLE", None)
    return env


def answering(kind: str, raters: int, pairs: int, folder: Path, kill: bool, think: float) -> dict:
    from ranking_core.panels import start_design
    from ranking_core.surveys import SurveySettings, SurveyStore

    with database(kind, folder) as url:
        port = free_port()
        surveys = SurveyStore(url)
        settings = SurveySettings(
            per_rater=pairs,
            overlap=2,
            repeats=0.0,
            checks=0,
            batch=0,
            base_url=f"http://127.0.0.1:{port}",
        )
        surveys.create("bench", start_design(pairs * raters // 2, seed=1), settings, "")
        links = surveys.invite("bench", raters)
        queued = len(surveys.answers("bench"))
        env = server_env(url)
        answers, seconds = asyncio.run(
            drive(
                links,
                port,
                env,
                lambda _rater: simple_rating,
                kill_after=queued // 2 if kill else None,
                think=think,
            )
        )
        exported = export("bench", env, folder)
        surveys.store.dispose()
    ack = [a for a in answers if a.acknowledged]
    latencies = np.array([a.seconds for a in ack])
    stored = exported.groupby(["rater", "reference", "estimate"]).size()
    lost = sum((a.rater, a.reference, a.estimate) not in stored.index for a in ack)
    row = {
        "section": "kill" if kill else "latency",
        "database": kind,
        "raters": raters,
        "pairs_per_rater": pairs,
        "think_s": think,
        "presses": len(answers),
        "acknowledged": len(ack),
        "queued": queued,
        "exported": len(exported),
        "lost": int(lost),
        "doubled": int((stored > 1).sum()),
        "latency_median_s": float(np.median(latencies)),
        "latency_p95_s": float(np.percentile(latencies, 95)),
        "latency_max_s": float(latencies.max()),
        "wall_s": seconds,
        "cpus": os.cpu_count(),
        "load_average_1min": os.getloadavg()[0],
    }
    return row


def panel(m: int, raters: int, start_pairs: int, batch: int, seed: int, folder: Path) -> dict:
    """The ``panel`` section (see the module docstring)."""
    from ranking_core.experiments.seg import draw_seg_ratings
    from ranking_core.grids.seg import find_seg_table
    from ranking_core.learn import learn_panel
    from ranking_core.metrics import pairwise_misranking
    from ranking_core.panels import start_design
    from ranking_core.surveys import SurveySettings, SurveyStore
    from ranking_core.surveys.design import batch_chunk
    from ranking_core.surveys.results import fit_answers, propose_batch

    table = find_seg_table()
    rng = np.random.default_rng(seed)
    names = [f"rater-{i + 1}" for i in range(raters)]
    offsets = dict(zip(names, rng.normal(0, 0.2, raters), strict=True))
    noise = 0.35

    def answer(rater: str, reference: float, estimate: float) -> float:
        """The rater's answer: SEG risk + the rater's offset + noise, on the 0.5 scale, 0..4."""
        local = np.random.default_rng([seed, names.index(rater), int(reference), int(estimate)])
        value = table.risk(np.array([reference]), np.array([estimate]))[0]
        value += offsets[rater] + local.normal(0, noise)
        return float(np.clip(np.round(2 * value) / 2, 0, 4))

    X_test, y_test = draw_seg_ratings(table, N_TEST, np.random.default_rng([seed, 1]))
    per_rater = start_pairs * 2 // raters
    with database("sqlite", folder) as url:
        port = free_port()
        surveys = SurveyStore(url)
        settings = SurveySettings(
            per_rater=per_rater,
            overlap=2,
            repeats=0.0,
            checks=0,
            batch=batch,
            base_url=f"http://127.0.0.1:{port}",
            seed=seed,
        )
        design = start_design(start_pairs, seed=seed, glucose_range=settings.glucose_range)
        surveys.create("panel", design, settings, "")
        links = surveys.invite("panel", names)
        env = server_env(url)
        _, seconds = asyncio.run(
            drive(links, port, env, lambda rater: lambda r, e: answer(rater, r, e), until_answers=m)
        )
        exported = export("panel", env, folder)
        batches = surveys.get("panel").batches
        # the same panel rating plan-panel's planned design (same start, same batches), offline
        frame = surveys.answers("panel")
        offline = frame[frame["batch"] == 0].copy()
        offline["rating"] = [
            answer(r, x, e)
            for r, x, e in zip(
                offline["rater"], offline["reference"], offline["estimate"], strict=True
            )
        ]
        active = len(names)
        b = 1
        while offline["rating"].notna().sum() < m:
            pairs = propose_batch(
                offline, batch, settings.glucose_range, seed=seed + b, fit=fit_answers(offline)
            )
            rows = []
            for i, rater in enumerate(names):
                for j in batch_chunk(len(pairs), 2, active, i):
                    r, e = pairs.iloc[j]
                    rows.append(
                        {
                            "rater": rater,
                            "reference": r,
                            "estimate": e,
                            "batch": b,
                            "role": "pair",
                            "rating": answer(rater, r, e),
                        }
                    )
            offline = pd.concat([offline, pd.DataFrame(rows)], ignore_index=True)
            b += 1
        surveys.store.dispose()

    def misranking(ratings: pd.DataFrame) -> float:
        fit = learn_panel(
            ratings[["reference", "estimate", "rating", "rater"]].reset_index(drop=True)
        )
        return float(pairwise_misranking(y_test, fit.model.predict(X_test)))

    survey_m = len(exported)
    planned = offline[offline["rating"].notna()].head(survey_m)
    X = rng.uniform(*settings.glucose_range, size=(survey_m, 2)).round()
    random = pd.DataFrame(
        {
            "reference": X[:, 0],
            "estimate": X[:, 1],
            "rater": [names[i % raters] for i in range(survey_m)],
        }
    )
    random["rating"] = [
        answer(r, x, e)
        for r, x, e in zip(random["rater"], random["reference"], random["estimate"], strict=True)
    ]
    return {
        "section": "panel",
        "m": survey_m,
        "raters": raters,
        "start_pairs": start_pairs,
        "batch": batch,
        "batches": batches,
        "noise_sd": noise,
        "rater_offset_sd": 0.2,
        "seed": seed,
        "survey_misranking": misranking(exported),
        "planned_design_misranking": misranking(planned),
        "random_design_misranking": misranking(random),
        "wall_s": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", default="latency")
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--raters", type=int, default=8)
    parser.add_argument("--pairs", type=int, default=15, help="pairs per rater")
    parser.add_argument("--m", type=int, default=100, help="answers of the panel section")
    parser.add_argument("--start", type=int, default=40, help="start design of the panel")
    parser.add_argument("--batch", type=int, default=10, help="adaptive batch of the panel")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="mean seconds a rater looks at a pair before answering",
    )
    args = parser.parse_args()
    for section in args.sections.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            if section in ("latency", "kill"):
                row = answering(
                    args.database,
                    args.raters,
                    args.pairs,
                    Path(tmp),
                    kill=section == "kill",
                    think=args.think,
                )
            elif section == "panel":
                row = panel(args.m, 4, args.start, args.batch, args.seed, Path(tmp))
            else:
                raise SystemExit(f"unknown section {section!r}")
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
