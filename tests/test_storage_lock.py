"""Reads never wait for writers, on SQLite and on PostgreSQL: while another connection holds the
write lock (an uncommitted write), opening the database and reading records and surveys returns
at once and sees only committed data; a write waits at most the store's timeout and is then
refused with a sentence. The schema is upgraded once, not on open; SQLite is in WAL mode; a big
invitation is written in short transactions. Bad databases (read-only, another kind, no driver)
are one sentence, exit 1; ``learn --save`` into one is refused before the fit."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import make_url

from ranking_core.panels import start_design
from ranking_core.storage import BUSY_TIMEOUT, StorageError, Store
from ranking_core.storage.engine import lock_key
from ranking_core.surveys import InviteInterrupted, SurveySettings, SurveyStore
from ranking_core.surveys import storage as survey_storage

ROOT = Path(__file__).resolve().parents[1]
INVITE = [sys.executable, "-m", "ranking_core.cli", "survey", "invite", "ward", "--raters", "400"]


def _ratings(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ref, est = rng.integers(20, 580, (2, n)).astype(float)
    return pd.DataFrame({"reference": ref, "estimate": est, "rating": rng.integers(0, 5, n) * 1.0})


@contextmanager
def write_lock_held(url: str, *names: tuple[str, str]):
    """Another connection in the middle of a write: SQLite's write lock (``BEGIN IMMEDIATE``,
    a row inserted), or on PostgreSQL the advisory locks of ``names`` (kind, name) a riskgrid
    write takes, with a row inserted; rolled back at the end."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        holder = sqlite3.connect(parsed.database, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        holder.execute(
            "insert into records (kind, name, created_at, meta) values "
            "('rating_set', 'uncommitted', '2026-01-01 00:00:00', '{}')"
        )
        try:
            yield
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        return
    engine = create_engine(url)
    with engine.connect() as conn:
        transaction = conn.begin()
        for kind, name in names:
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": lock_key(kind, name)})
        conn.execute(
            text(
                "insert into records (kind, name, created_at, meta) values "
                "('rating_set', 'uncommitted', now(), '{}')"
            )
        )
        try:
            yield
        finally:
            transaction.rollback()
    engine.dispose()


def _survey(store: Store, name: str = "ward", pairs: int = 6) -> SurveyStore:
    surveys = SurveyStore(store)
    surveys.create(name, start_design(pairs, seed=1), SurveySettings(checks=1, repeats=0.0))
    return surveys


def test_reads_take_no_lock_and_a_busy_write_is_a_sentence(database_url):
    store = Store(database_url, timeout=1.0)
    store.save_rating_set("a", _ratings(20, 1))
    _survey(store).invite("ward", 2)
    with write_lock_held(database_url, ("rating_set", "a"), ("survey", "ward")):
        began = time.perf_counter()
        reader = Store(database_url)  # a fresh open: no schema upgrade, no lock
        names = [r.name for r in reader.list_records("rating_set")]
        assert len(reader.load_rating_set("a").frame) == 20
        surveys = SurveyStore(reader)
        assert surveys.raters("ward")["rater"].tolist() == ["rater-1", "rater-2"]
        assert len(surveys.answers("ward")) > 0
        read_seconds = time.perf_counter() - began
        assert names == ["a"]  # the uncommitted record is not seen
        assert read_seconds < 1.0, read_seconds
        for write in (
            lambda: store.save_rating_set("a", _ratings(5, 2), replace=True),
            lambda: SurveyStore(store).close("ward"),
        ):
            began = time.perf_counter()
            with pytest.raises(StorageError, match=r"is busy \(another riskgrid process kept it"):
                write()
            assert 0.9 < time.perf_counter() - began < 4.0
    assert len(store.load_rating_set("a").frame) == 20  # nothing changed
    assert SurveyStore(store).get("ward").is_open
    reader.dispose()
    store.dispose()


def test_the_schema_is_made_once_and_sqlite_runs_in_wal_mode(tmp_path):
    path = tmp_path / "new" / "riskgrid.sqlite3"
    store = Store(f"sqlite:///{path}")
    assert not path.exists()  # opening creates nothing
    assert store.list_records("rating_set") == []  # a new database is created by its first use
    assert store.journal_mode() == "wal" and store.schema() == "current"
    with sqlite3.connect(path) as conn:  # WAL is a property of the file, for every connection
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert store.upgrade() == "current"


def _as_previous_release(conn: sqlite3.Connection) -> None:
    """The schema the previous release left (revision ``survey_owner``: no SEG-method tables,
    no survey method)."""
    for table in ("seg_matrices", "seg_thresholds", "seg_scenarios"):
        conn.execute(f"drop table {table}")
    conn.execute("alter table surveys drop column method")
    conn.execute("update alembic_version set version_num = 'survey_owner'")


def test_an_older_schema_is_named_on_read_and_upgraded_by_the_first_write(tmp_path):
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    Store(url).save_rating_set("kept", _ratings(10, 3))
    with sqlite3.connect(tmp_path / "db.sqlite3") as conn:  # as the previous release left it
        _as_previous_release(conn)
    store = Store(url)
    for read in (lambda: store.list_records("rating_set"), lambda: SurveyStore(store).get("x")):
        with pytest.raises(StorageError, match=r"older schema than this riskgrid; run `riskgrid"):
            read()
    store.save_rating_set("new", _ratings(5, 4))
    assert [r.name for r in store.list_records("rating_set")] == ["new", "kept"]
    assert store.schema() == "current"


def test_a_read_only_database_is_reported_as_read_only(tmp_path):
    path = tmp_path / "db.sqlite3"
    Store(f"sqlite:///{path}").save_rating_set("kept", _ratings(10, 3))
    read_only = Store(f"sqlite:///file:{path}?mode=ro&uri=true")
    assert [r.name for r in read_only.list_records("rating_set")] == ["kept"]  # reads work
    for write in (
        lambda: read_only.save_rating_set("new", _ratings(5, 4)),
        lambda: read_only.delete("rating_set", "kept"),
        lambda: read_only.check_can_save("learned_grid", "grid"),
    ):
        with pytest.raises(StorageError, match=rf"the database file {path} is read-only"):
            write()
    with sqlite3.connect(path) as conn:  # an older schema on a read-only file: not "failed"
        _as_previous_release(conn)
    with pytest.raises(StorageError, match=r"upgrading the database schema failed: .* read-only"):
        Store(f"sqlite:///file:{path}?mode=ro&uri=true").upgrade()


def _read_only_mount(folder: Path, script: str) -> subprocess.CompletedProcess:
    """Run ``script`` (shell) with ``folder`` remounted read-only in a private mount namespace
    (nothing changes outside it); skips when the machine does not allow one."""
    folder = folder.resolve()
    mount = f"mount --bind {folder} {folder} && mount -o remount,bind,ro {folder}"
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"{mount} && ! touch {folder}/probe"],
        capture_output=True,
    )
    if probe.returncode != 0:
        pytest.skip("no private read-only mount here (unshare -m and mount are not permitted)")
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", f"{mount} && {script}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


@pytest.mark.skipif(sys.platform != "linux", reason="read-only mounts of Linux")
def test_a_database_file_on_a_read_only_folder_is_said_read_only_with_what_to_do(tmp_path):
    """SQLite says only "unable to open database file" (in WAL mode it writes beside the file
    even to read); the commands name the file, say it is read-only and what to do."""
    folder = tmp_path / "records"
    path = folder / "db.sqlite3"
    store = Store(f"sqlite:///{path}")
    store.save_rating_set("kept", _ratings(10, 3))  # in WAL mode, as riskgrid makes it
    store.dispose()  # closed: its journal files are gone, as when no riskgrid process runs
    riskgrid = f"{sys.executable} -m ranking_core.cli"
    result = _read_only_mount(
        folder,
        f"RISKGRID_DATABASE_URL=sqlite:///{path} {riskgrid} records list; echo status $?; "
        f"RISKGRID_DATABASE_URL=sqlite:///{folder}/new.sqlite3 {riskgrid} db status",
    )
    first, second = result.stderr.strip().splitlines()
    assert first == (
        f"reading the database schema failed: the database file {path} is read-only; make it "
        f"and its folder {folder} writable (SQLite writes its journal beside it), or set "
        "RISKGRID_DATABASE_URL to a database you may write to"
    )
    assert second.startswith(
        f"reading the database schema failed: the database file {folder}/new.sqlite3 cannot be "
        f"created: its folder {folder} is read-only"
    )
    assert "unable to open" not in result.stderr and "Traceback" not in result.stderr
    assert "status 1" in result.stdout and result.returncode == 1
    assert "kept" not in result.stdout  # nothing listed


def test_a_big_invitation_is_written_in_short_transactions(tmp_path, monkeypatch):
    """Batched or in one transaction, an invitation gives every rater the same queue."""
    queues = {}
    for rows in (10, 10**9):
        monkeypatch.setattr(survey_storage, "INVITE_ROWS", rows)
        store = Store(f"sqlite:///{tmp_path / f'{rows}.sqlite3'}")
        surveys = _survey(store)
        commits: list[int] = []
        event.listen(store.engine, "commit", lambda conn, made=commits: made.append(1))
        links = surveys.invite("ward", 7)
        assert [r for r, _ in links] == [f"rater-{i}" for i in range(1, 8)]
        frame = surveys.answers("ward")
        queues[rows] = frame[["rater", "position", "reference", "estimate", "role"]]
        per_rater = frame.groupby("rater").size().iloc[0]  # 6 design pairs and 1 check
        assert per_rater == 7
        assert len(commits) == (4 if rows == 10 else 1)  # two raters (14 places) per commit
        for _, link in links:
            assert surveys.rater("ward", link.split("token=")[1]) is not None
    pd.testing.assert_frame_equal(queues[10], queues[10**9])


def test_an_invitation_that_fails_midway_keeps_and_returns_the_links_made(
    tmp_path, monkeypatch, third_invite_batch_fails
):
    monkeypatch.setattr(survey_storage, "INVITE_ROWS", 7)  # one rater per transaction
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    surveys = _survey(store)
    with pytest.raises(
        InviteInterrupted, match="the disk is full; 2 of 5 raters were invited"
    ) as caught:
        surveys.invite("ward", ["A", "B", "C", "D", "E"])
    assert [r for r, _ in caught.value.links] == ["A", "B"]
    for _, link in caught.value.links:  # their links work: they were stored
        assert surveys.rater("ward", link.split("token=")[1]) is not None
    assert surveys.raters("ward")["rater"].tolist() == ["A", "B"]


# -- through the command line ----------------------------------------------------------------------
def riskgrid(
    *args: str, url: str, timeout: float = 300
) -> tuple[subprocess.CompletedProcess, float]:
    """Run ``riskgrid ARGS`` as a user would, on the database ``url``; returns the result and
    its wall time in seconds."""
    env = {**os.environ, "RISKGRID_DATABASE_URL": url, "PYTHONPATH": str(ROOT)}
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "ranking_core.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=timeout,
    )
    return done, time.perf_counter() - began


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://user:secret@db.example/riskgrid", "names a mysql database; riskgrid keeps"),
        ("postgresql+psycopg2://user:secret@h/db", "driver 'psycopg2' for postgresql+psycopg2"),
        ("not a url at all", "is not a database URL"),
    ],
)
def test_a_database_url_riskgrid_cannot_use_is_one_sentence(url, message):
    for args in (("records", "list"), ("survey", "status", "ward"), ("db", "upgrade")):
        done, _ = riskgrid(*args, url=url)
        out = " ".join((done.stdout + done.stderr).split())
        assert done.returncode == 1 and message in out, (args, out)
        assert "Traceback" not in out and "secret" not in out


def test_learn_save_into_an_unusable_database_is_refused_before_the_fit(tmp_path):
    ratings = tmp_path / "ratings.csv"
    _ratings(40, 5).to_csv(ratings, index=False)
    path = tmp_path / "db.sqlite3"
    Store(f"sqlite:///{path}").upgrade()
    for url, message in (
        ("mysql://u@h/db", "names a mysql database"),
        (f"sqlite:///file:{path}?mode=ro&uri=true", "is read-only"),
    ):
        done, _ = riskgrid("learn", str(ratings), "--save", "g", url=url)
        out = " ".join((done.stdout + done.stderr).split())
        assert done.returncode == 1 and message in out and "not learned" in out, out
        assert "recipe:" not in out and "Traceback" not in out  # no fit was started


TIMED = """
import json, sys, time
from typer.testing import CliRunner
from ranking_core.cli import app
args, runs = json.loads(sys.argv[1]), []
for _ in range(2):  # the first call also imports the command's modules
    began = time.perf_counter()
    result = CliRunner().invoke(app, args)
    runs.append([result.exit_code, time.perf_counter() - began, result.output])
print(json.dumps(runs))
"""


def timed_command(args: tuple[str, ...], url: str) -> tuple[list[tuple[int, float, str]], float]:
    """Run ``riskgrid ARGS`` twice in one fresh process (each call parses its arguments, opens the
    database anew, reads and prints; the first also imports the command's modules), each timed
    from its call to its end: [(exit code, seconds, output)] × 2, and the process's wall time."""
    env = {**os.environ, "RISKGRID_DATABASE_URL": url, "PYTHONPATH": str(ROOT)}
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", TIMED, json.dumps(list(args))],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
        check=True,
    )
    runs = json.loads(done.stdout.strip().splitlines()[-1])
    return [tuple(run) for run in runs], time.perf_counter() - began


@pytest.mark.slow
def test_cli_reads_during_a_held_write_lock_and_a_big_invite_do_not_wait(tmp_path):
    """``riskgrid survey status`` and ``riskgrid records list`` while another connection holds
    SQLite's write lock for the whole time: each command (argument parsing, opening the
    database, reading, printing) returns within a second with exit 0 — a read that waited for
    the lock could only fail after the busy timeout. The time is taken inside the command's
    process, on its second call (the first also imports its modules; on a loaded machine that
    and the interpreter's start-up take seconds, printed beside it). A write command is refused
    within the busy timeout; reads during a big ``survey invite`` (another process) return
    within a second."""
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    store = Store(url)
    store.save_rating_set("panel", _ratings(30, 6))
    _survey(store, pairs=200).invite("ward", 3)
    _survey(store, "other")
    reads = (("survey", "status", "ward"), ("records", "list"))
    with write_lock_held(url):
        for args in reads:
            (first, second), wall = timed_command(args, url)
            print(
                f"riskgrid {' '.join(args)} with the write lock held: exit {second[0]}, "
                f"{second[1]:.3f} s (first call, importing its modules: {first[1]:.2f} s; the "
                f"whole process with Python's start-up: {wall:.2f} s)"
            )
            assert first[0] == 0 and second[0] == 0, first[2] + second[2]
            assert second[1] <= 1.0
            assert ("panel" if args[0] == "records" else "rater-3") in second[2]
        done, write_seconds = riskgrid("survey", "close", "ward", url=url)
    out = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 1 and "is busy" in out and "Traceback" not in out, out
    print(f"riskgrid survey close with the write lock held: exit 1 after {write_seconds:.2f} s")
    assert write_seconds < BUSY_TIMEOUT + 30.0  # start-up plus the busy timeout, never a minute
    # a big invitation in another process; reads in this one meanwhile
    env = {**os.environ, "RISKGRID_DATABASE_URL": url, "PYTHONPATH": str(ROOT)}
    invite = subprocess.Popen(
        [*INVITE, "-o", str(tmp_path / "links.csv")],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    slowest, count, close_seconds = 0.0, 0, None
    reader = SurveyStore(Store(url))
    while invite.poll() is None:
        began = time.perf_counter()
        invited = len(reader.raters("ward"))
        reader.store.list_records("rating_set")
        slowest = max(slowest, time.perf_counter() - began)
        count += 1
        if count == 10 and invited < 403:  # an unrelated write waits one batch at most
            began = time.perf_counter()
            reader.close("other")
            close_seconds = time.perf_counter() - began
        time.sleep(0.05)
    assert invite.returncode == 0, invite.stdout.read()
    assert len(reader.raters("ward")) == 403 and invited <= 403
    print(
        f"{count} reads during `riskgrid survey invite ward --raters 400`: slowest {slowest:.3f} s"
    )
    assert slowest <= 1.0
    if close_seconds is not None:
        print(f"closing another survey during that invitation took {close_seconds:.3f} s")
        assert close_seconds <= 1.0


def test_a_save_is_checked_before_long_work_on_both_backends(database_url):
    """``check_can_save`` (what ``learn --save`` asks before the fit): a free name passes, a
    taken one is refused, and a database that refuses writes is reported read-only."""
    store = Store(database_url)
    store.check_can_save("rating_set", "a")  # a new database: created, writable, name free
    store.save_rating_set("a", _ratings(10, 1))
    with pytest.raises(StorageError, match="a rating set named 'a' already exists"):
        store.check_can_save("rating_set", "a")
    store.check_can_save("rating_set", "a", replace=True)
    assert [r.name for r in store.list_records("rating_set")] == ["a"]  # the check wrote nothing
    parsed = make_url(database_url)
    if parsed.get_backend_name() == "sqlite":
        read_only = Store(f"sqlite:///file:{parsed.database}?mode=ro&uri=true")
    else:
        with store.engine.connect() as conn:
            setting = "SET default_transaction_read_only = on"
            conn.execute(text(f"ALTER DATABASE {parsed.database} {setting}"))
            conn.commit()
        read_only = Store(database_url)
    with pytest.raises(StorageError, match=r"accepts writes failed: the database .* is read-only"):
        read_only.check_can_save("rating_set", "b")
    assert [r.name for r in read_only.list_records("rating_set")] == ["a"]
    read_only.dispose()
    store.dispose()
