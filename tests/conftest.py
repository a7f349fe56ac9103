"""Test configuration: point SEG_TABLE, MOVIELENS_100K, JESTER and RISKGRID_CONFORMANCE at ../shared
when they are unset; databases for the storage tests on SQLite and on a throw-away PostgreSQL
server; one dashboard server of a fresh machine shared by the tests that only look at it, and a
team's scheduler for the long jobs of the other browser tests' servers."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from dask_team import dask_team
from postgres_server import fresh_database, server_binaries, throwaway_postgresql

SHARED = Path(__file__).resolve().parents[1].parent / "shared"

for variable, default in (
    ("SEG_TABLE", SHARED / "data" / "seg" / "RiskPairData.csv.gz"),
    ("MOVIELENS_100K", SHARED / "data" / "cf" / "ml-100k"),
    ("JESTER", SHARED / "data" / "cf" / "jester"),
    ("RISKGRID_CONFORMANCE", SHARED / "data" / "conformance"),
):
    if not os.environ.get(variable) and default.exists():
        os.environ[variable] = str(default)


# -- databases for the storage tests: SQLite in tmp_path and a throw-away PostgreSQL server ------
_database_numbers = itertools.count()


@pytest.fixture(scope="session")
def postgresql_server():
    """The URL of a PostgreSQL server started for this test session (skipped, with the reason,
    only where no server binaries are installed: `.ci/run` installs them)."""
    if server_binaries() is None:
        pytest.skip(
            "PostgreSQL server binaries (initdb, pg_ctl) are not installed; "
            "`apt-get install postgresql` (as .ci/run does) to run these tests"
        )
    with throwaway_postgresql() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path):
    """An empty database on each backend: a SQLite file, or a new database on the server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'db' / 'riskgrid.sqlite3'}"
    server = request.getfixturevalue("postgresql_server")
    return fresh_database(server, f"riskgrid_{os.getpid()}_{next(_database_numbers)}")


@pytest.fixture(scope="session")
def fresh_dashboard(tmp_path_factory):
    """The URL of one ``riskgrid dashboard --headless`` of a fresh machine (an empty database, no
    SEG table, an empty home folder), served for the whole session (in each process of
    ``pytest -n``) to the tests that open its pages without storing anything: a server start
    costs seconds of two cores. Tests that store records, sign in or stop the server start
    their own."""
    from dashboard import DATA_DIR_ENV, METRICS_ENV, PUBLIC_ENV
    from ranking_core.grids.seg_source import SEG_TABLE_ENV
    from ranking_core.job_cluster import SCHEDULER_ENV
    from scripts.screenshots import free_port, serve

    folder = tmp_path_factory.mktemp("fresh_dashboard")
    (folder / "home").mkdir()
    env = {
        **os.environ,
        "HOME": str(folder / "home"),
        "BROWSER": "true",
        "RISKGRID_DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
    }
    # a fresh machine: built-in data only, every setting of the server at its default
    for variable in (SEG_TABLE_ENV, DATA_DIR_ENV, PUBLIC_ENV, METRICS_ENV, SCHEDULER_ENV):
        env.pop(variable, None)
    with serve(free_port(), env) as url:
        yield url


@pytest.fixture(scope="session")
def team_scheduler(tmp_path_factory):
    """The address of a team's scheduler with one worker (tests/dask_team.py), for the session
    (in each process of ``pytest -n``): a dashboard server given it in ``RISKGRID_SCHEDULER``
    (the documented setting) sends its long jobs there and starts no local cluster of two
    worker processes (several seconds of two cores at each start). For the servers of tests
    that do not look at the local cluster; the default set-up is served by
    :func:`fresh_dashboard` and tests/test_cli_dashboard.py."""
    with dask_team(tmp_path_factory.mktemp("team_scheduler"), ["browser-tests"]) as team:
        yield team.address


@pytest.fixture
def downloads(monkeypatch):
    """Deferred download callables by the id the page's buttons carry."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    made: dict[str, object] = {}
    real = MediaFileManager.add_deferred

    def record(self, data_callable, *args, **kwargs):
        file_id = real(self, data_callable, *args, **kwargs)
        made[file_id] = data_callable
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    return made


@pytest.fixture
def third_invite_batch_fails(monkeypatch):
    """The survey store's third invitation transaction fails with a full disk (StorageError);
    the ones before it commit, as on a disk that fills up midway."""
    from ranking_core.storage import StorageError
    from ranking_core.surveys import SurveyStore

    real, calls = SurveyStore._invite_batch, []

    def failing(self, *args):
        calls.append(1)
        if len(calls) == 3:
            raise StorageError("the disk is full")
        return real(self, *args)

    monkeypatch.setattr(SurveyStore, "_invite_batch", failing)
