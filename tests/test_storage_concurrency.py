"""The record store under concurrent use and killed writers, on SQLite and on PostgreSQL.

Every version written is a rating set whose rows all carry the version's token (rater column,
reference values) and whose metadata names the same token, so a load that mixed two versions, or
saw a record without its blob, is detected by comparing the frame with the one the token gives.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import random
import signal
import time
import zlib

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import text

from ranking_core.storage import RecordNotFound, Store

WORKERS = 8
OPERATIONS = 40  # per worker
SHARED_NAME = "shared panel"


def version_frame(token: str) -> pd.DataFrame:
    """The rating set a token stands for (its length and values depend on the token)."""
    rng = np.random.default_rng(zlib.crc32(token.encode()))
    n = 20 + int(rng.integers(0, 30))
    return pd.DataFrame(
        {
            "reference": rng.integers(20, 580, n).astype(float),
            "estimate": rng.integers(20, 580, n).astype(float),
            "rating": rng.integers(0, 5, n).astype(float),
            "rater": [f"{token}#{i}" for i in range(n)],
        }
    )


def check_version(stored) -> str | None:
    """None if the loaded record is one complete version, else what is wrong."""
    token = stored.info.meta.get("token")
    frame = stored.frame
    if token is None:
        return "metadata without token"
    want = version_frame(token)
    if list(frame.columns) != list(want.columns) or len(frame) != len(want):
        return f"{token}: {len(frame)} rows, expected {len(want)}"
    if frame["rater"].tolist() != want["rater"].tolist():
        return f"{token}: rows of another version"
    if not np.allclose(
        frame[["reference", "estimate", "rating"]].to_numpy(),
        want[["reference", "estimate", "rating"]].to_numpy(),
    ):
        return f"{token}: values of another version"
    return None


def hammer(url: str, worker: int, start, queue) -> None:
    """Save-with-replace, load and delete one name at random, OPERATIONS times once every worker
    is ready; report counts, the time span worked and every unexpected failure."""
    store = Store(url)
    rng = random.Random(worker)
    counts = {"save": 0, "load": 0, "delete": 0, "absent": 0}
    errors: list[str] = []
    start.wait()
    began = time.monotonic()
    for n in range(OPERATIONS):
        action = rng.choice(("save", "save", "load", "load", "load", "delete"))
        try:
            if action == "save":
                token = f"w{worker}-{n}"
                store.save_rating_set(
                    SHARED_NAME, version_frame(token), {"token": token}, replace=True
                )
            elif action == "load":
                problem = check_version(store.load_rating_set(SHARED_NAME))
                if problem:
                    errors.append(f"mixed load: {problem}")
            else:
                store.delete("rating_set", SHARED_NAME)
            counts[action] += 1
        except RecordNotFound:
            counts["absent"] += 1  # a load or delete right after a delete: legitimate
        except Exception as exc:
            errors.append(f"{action}: {type(exc).__name__}: {exc}")
    span = (began, time.monotonic())
    store.dispose()
    queue.put((counts, errors, span))


def _fork():
    return multiprocessing.get_context("fork")


@pytest.mark.slow
def test_eight_processes_hammering_one_name_see_no_error_and_no_mixed_version(database_url):
    Store(database_url).dispose()  # schema made once, before the workers start
    ctx = _fork()
    queue, start = ctx.Queue(), ctx.Barrier(WORKERS)
    workers = [
        ctx.Process(target=hammer, args=(database_url, w, start, queue)) for w in range(WORKERS)
    ]
    for process in workers:
        process.start()
    results = [queue.get(timeout=300) for _ in workers]
    for process in workers:
        process.join(timeout=30)
    errors = [e for _, errs, _ in results for e in errs]
    totals = {k: sum(c[k] for c, _, _ in results) for k in results[0][0]}
    assert errors == [], f"{len(errors)} failed operations, e.g. {errors[:5]} ({totals})"
    assert sum(totals.values()) == WORKERS * OPERATIONS
    assert totals["save"] > WORKERS * OPERATIONS / 5 and totals["load"] > WORKERS * OPERATIONS / 5
    # the workers really ran at the same time: the last to start began before the first ended
    assert max(b for _, _, (b, _) in results) < min(e for _, _, (_, e) in results)
    store = Store(database_url)
    try:
        listed = store.list_records("rating_set")
        assert len(listed) <= 1  # one name, one record at most
        if listed:
            assert check_version(store.load_rating_set(SHARED_NAME)) is None
        with store.engine.connect() as conn:  # no blob without its record, none missing
            blobs = conn.execute(text("select count(*) from blobs")).scalar()
            assert blobs == len(listed)
    finally:
        store.dispose()


def writer(url: str, worker: int, pipe) -> None:
    """Save new names (never replaced) and replace the shared name, forever; after each
    committed save of a new name, tell the parent its name."""
    store = Store(url)
    n = 0
    while True:
        own = f"w{worker}-{n}"
        store.save_rating_set(own, version_frame(own), {"token": own})
        pipe.send(own)
        shared = f"s{worker}-{n}"
        store.save_rating_set(SHARED_NAME, version_frame(shared), {"token": shared}, replace=True)
        n += 1


def test_writers_killed_mid_way_lose_nothing_committed_and_leave_no_half_record(database_url):
    Store(database_url).dispose()
    ctx = _fork()
    pipes, writers = [], []
    for w in range(4):
        receiver, sender = ctx.Pipe(duplex=False)
        process = ctx.Process(target=writer, args=(database_url, w, sender), daemon=True)
        process.start()
        sender.close()  # the writer holds the only sending end: its death ends the pipe
        pipes.append(receiver)
        writers.append(process)
    committed: set[str] = set()
    deadline = time.monotonic() + 60
    # kill once every writer has committed a few saves (so the kills land mid-way)
    while time.monotonic() < deadline and sum(1 for n in committed if n.endswith("-3")) < 4:
        for receiver in pipes:
            while receiver.poll(0.01):
                committed.add(receiver.recv())
    time.sleep(0.3)
    for process in writers:
        os.kill(process.pid, signal.SIGKILL)
    for process in writers:
        process.join(timeout=30)
        assert process.exitcode == -signal.SIGKILL
    for receiver in pipes:
        with contextlib.suppress(EOFError, OSError):  # a message cut by the kill is no commit
            while receiver.poll(0):
                committed.add(receiver.recv())
    assert len(committed) >= 16
    store = Store(database_url)
    try:
        names = {r.name for r in store.list_records("rating_set")}
        assert committed <= names, f"lost: {sorted(committed - names)[:5]}"
        for name in names:  # every record there is complete, and one version
            assert check_version(store.load_rating_set(name)) is None, name
        with store.engine.connect() as conn:
            assert conn.execute(text("select count(*) from blobs")).scalar() == len(names)
            if store.dialect == "sqlite":
                assert conn.execute(text("pragma integrity_check")).scalar() == "ok"
        # the store is usable after the kills (no lock left behind)
        store.save_rating_set(SHARED_NAME, version_frame("after"), {"token": "after"}, replace=True)
        assert store.load_rating_set(SHARED_NAME).info.meta["token"] == "after"
    finally:
        store.dispose()


def test_rename_and_replace_race_keeps_one_record_per_name(database_url):
    """Four processes rename a record back and forth between two names while four replace the
    first name: each name ends with at most one complete version, no error."""
    store = Store(database_url)
    store.save_rating_set("a", version_frame("start"), {"token": "start"})
    store.dispose()
    ctx = _fork()
    queue = ctx.Queue()
    processes = [
        ctx.Process(target=_rename_or_replace, args=(database_url, w, queue))
        for w in range(WORKERS)
    ]
    for process in processes:
        process.start()
    errors = [e for _ in processes for e in queue.get(timeout=120)]
    for process in processes:
        process.join(timeout=30)
    assert errors == []
    store = Store(database_url)
    try:
        names = [r.name for r in store.list_records("rating_set")]
        assert len(names) == len(set(names)) and set(names) <= {"a", "b"}
        for name in names:
            assert check_version(store.load_rating_set(name)) is None
    finally:
        store.dispose()


def _rename_or_replace(url: str, worker: int, queue) -> None:
    store = Store(url)
    errors: list[str] = []
    for n in range(OPERATIONS // 2):
        try:
            if worker % 2:
                source, target = ("a", "b") if n % 2 else ("b", "a")
                store.rename("rating_set", source, target)
            else:
                token = f"r{worker}-{n}"
                store.save_rating_set("a", version_frame(token), {"token": token}, replace=True)
        except RecordNotFound:
            pass  # the record was under the other name
        except Exception as exc:
            if "already exists" not in str(exc):  # the target name was taken: a refusal
                errors.append(f"{type(exc).__name__}: {exc}")
    store.dispose()
    queue.put(errors)


def _open(url: str, queue) -> None:
    try:
        store = Store(url)
        store.list_records("rating_set")
        store.dispose()
        queue.put("ok")
    except Exception as exc:
        queue.put(f"{type(exc).__name__}: {exc}")


def test_eight_processes_opening_a_new_database_at_once_all_succeed(database_url):
    """The schema is created (migrated) once; the other processes wait for it and find it."""
    ctx = _fork()
    queue = ctx.Queue()
    processes = [ctx.Process(target=_open, args=(database_url, queue)) for _ in range(WORKERS)]
    for process in processes:
        process.start()
    results = [queue.get(timeout=120) for _ in processes]
    for process in processes:
        process.join(timeout=30)
    assert results == ["ok"] * WORKERS
