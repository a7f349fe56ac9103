"""A throw-away PostgreSQL server for the storage tests (initdb + pg_ctl from the system packages).

The server runs from a fresh folder under the system temp folder on a free loopback port, with
trust authentication, no Unix socket, and is stopped and removed afterwards. PostgreSQL refuses to
run as root (CI runs as root), so there it runs as the unprivileged ``postgres`` user (made by the
Debian package) or ``nobody``. ``.ci/run`` installs the server package.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from scripts.screenshots import free_port

BINARY_GLOB = "/usr/lib/postgresql/*/bin"


def server_binaries() -> Path | None:
    """The folder with ``initdb`` and ``pg_ctl`` (``$PG_BINDIR``, the newest Debian version, or
    the PATH), or None."""
    candidates = [os.environ.get("PG_BINDIR", "")]
    candidates += sorted(
        glob.glob(BINARY_GLOB), key=lambda p: int(Path(p).parent.name), reverse=True
    )
    on_path = shutil.which("initdb")
    candidates.append(str(Path(on_path).parent) if on_path else "")
    for folder in filter(None, candidates):
        if (Path(folder) / "initdb").is_file() and (Path(folder) / "pg_ctl").is_file():
            return Path(folder)
    return None


def _unprivileged_user() -> str | None:
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    return None


@contextlib.contextmanager
def throwaway_postgresql() -> Iterator[str]:
    """Start a server; yield its SQLAlchemy URL (database ``postgres``, user ``postgres``)."""
    binaries = server_binaries()
    if binaries is None:
        raise FileNotFoundError("no PostgreSQL server binaries (initdb, pg_ctl)")
    prefix: list[str] = []
    folder = Path(tempfile.mkdtemp(prefix="riskgrid-postgresql-"))
    if os.geteuid() == 0:
        user = _unprivileged_user()
        if user is None or shutil.which("runuser") is None:
            raise FileNotFoundError("running as root without an unprivileged user and runuser")
        entry = pwd.getpwnam(user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
        prefix = ["runuser", "-u", user, "--"]
    data, log = folder / "data", folder / "server.log"
    port = free_port()
    env = {**os.environ, "LC_ALL": "C", "TZ": "UTC"}
    run = {
        "check": True,
        "env": env,
        "cwd": folder,
        "stdin": subprocess.DEVNULL,
        "capture_output": True,
    }
    try:
        subprocess.run(
            [
                *prefix,
                str(binaries / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
            **run,
            timeout=120,
        )
        options = (
            f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories='' "
            "-c fsync=off -c max_connections=60"
        )
        subprocess.run(
            [
                *prefix,
                str(binaries / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(log),
                "-o",
                options,
                "-w",
                "-t",
                "60",
                "start",
            ],
            **run,
            timeout=120,
        )
    except subprocess.CalledProcessError as exc:
        server_log = log.read_text(errors="replace") if log.exists() else ""
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(
            f"PostgreSQL did not start: {exc.stderr.decode(errors='replace')}\n{server_log}"
        ) from exc
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*prefix, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            env=env,
            cwd=folder,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
            check=False,
        )
        shutil.rmtree(folder, ignore_errors=True)


def fresh_database(server_url: str, name: str) -> str:
    """Create an empty database ``name`` on the server; return its URL."""
    import psycopg

    dsn = server_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return server_url.rsplit("/", 1)[0] + f"/{name}"
