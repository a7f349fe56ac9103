"""``riskgrid dashboard``: the streamlit command line and the child's environment."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ranking_core
from dashboard import APP_PATH
from ranking_core.cli import app
from ranking_core.cli.dashboard import streamlit_command, streamlit_environment
from scripts.screenshots import (
    CHROMIUM,
    free_port,
    launch,
    open_browser,
    stop,
    wait_until_rendered,
)

STOP_CEILING = 15.0  # seconds: a stop taking longer has hung (it takes a few; not a benchmark)
GROUP_GONE_WAIT = 10.0  # seconds at most for the last process of a stopped server's group to end
# what a stopped server's log must not hold: a traceback, a warning (dask.distributed's, of a
# worker closed while a job ran), a job's failure, a page script run bare by a job worker
STOP_NOISE = ("Traceback", "WARNING", "a job failed", "Error", "ScriptRunContext")


def test_command_runs_streamlit_on_the_app_with_safe_defaults():
    command = streamlit_command(APP_PATH, 8765, True)
    assert command == [
        sys.executable,
        "-m",
        "dashboard.server",
        "run",
        str(APP_PATH),
        "--server.port",
        "8765",
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
        "--client.showErrorDetails",
        "none",
    ]
    assert streamlit_command(APP_PATH, 1, False, "0.0.0.0", development=True)[-8:] == [
        "--server.address",
        "0.0.0.0",
        "--server.headless",
        "false",
        "--client.showErrorDetails",
        "full",
        "--server.fileWatcherType",
        "auto",
    ]
    assert APP_PATH.is_file() and (APP_PATH.parent / ".streamlit" / "config.toml").is_file()


def test_dashboard_opens_no_browser_unless_asked(monkeypatch):
    """No browser by default (on a server, Streamlit would try xdg-open); --browser asks."""
    started = []
    monkeypatch.setattr(os, "execvpe", lambda file, command, env: started.append(command))
    monkeypatch.setattr(os, "chdir", lambda path: None)
    for options, headless in (([], "true"), (["--browser"], "false"), (["--headless"], "true")):
        result = CliRunner().invoke(app, ["dashboard", "--port", "9124", *options])
        assert result.exit_code == 0, result.output
        command = started.pop()
        assert command[command.index("--server.headless") + 1] == headless


def test_app_config_limits_uploads_hides_errors_and_the_deploy_button():
    config = tomllib.loads((APP_PATH.parent / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == 50  # MB: a plain-CSV SEG table is about 9 MB
    assert config["server"]["address"] == "127.0.0.1"
    assert config["client"] == {"showErrorDetails": "none", "toolbarMode": "viewer"}
    assert config["browser"]["gatherUsageStats"] is False


def test_environment_passes_an_absolute_seg_path_and_this_checkout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = streamlit_environment(Path("seg.csv"), {"PYTHONPATH": "/elsewhere", "KEEP": "1"})
    assert env["SEG_TABLE"] == str(tmp_path / "seg.csv")
    root = str(Path(ranking_core.__file__).resolve().parents[1])
    assert env["PYTHONPATH"].split(":") == [root, "/elsewhere"] and env["KEEP"] == "1"
    assert "SEG_TABLE" not in streamlit_environment(None, {})


def test_missing_seg_table_file_is_refused_with_guidance(tmp_path):
    result = CliRunner().invoke(app, ["dashboard", "--seg-table", str(tmp_path / "nope.csv")])
    assert result.exit_code == 2
    assert "SEG table file not found" in result.output and "SEG_TABLE" in result.output


def test_cli_replaces_itself_with_streamlit_with_the_chosen_options(tmp_path, monkeypatch):
    seg = tmp_path / "seg.csv"
    seg.write_text("x")
    calls = []
    monkeypatch.setattr("ranking_core.cli.dashboard.os.chdir", lambda folder: calls.append(folder))
    monkeypatch.setattr(
        "ranking_core.cli.dashboard.os.execvpe",
        lambda file, args, env: calls.append((file, args, env)),
    )
    result = CliRunner().invoke(
        app,
        [
            "dashboard",
            "--port",
            "9123",
            "--headless",
            "--public",
            "--seg-table",
            str(seg),
            "--data-dir",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    cwd, (file, command, env) = calls
    assert cwd == APP_PATH.parent and file == sys.executable and command[0] == sys.executable
    assert command[-8:] == streamlit_command(APP_PATH, 9123, True)[-8:]
    assert env["SEG_TABLE"] == str(seg.resolve()) and env["RISKGRID_PUBLIC"] == "1"
    assert env["RISKGRID_DATA_DIR"] == str(tmp_path.resolve())


def _listening_addresses(port: int) -> set[str]:
    """Local addresses of the TCP sockets listening on ``port`` (from /proc/net/tcp, tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(FileNotFoundError), open(table) as lines:
            next(lines)
            for line in lines:
                local, state = line.split()[1], line.split()[3]
                address, hex_port = local.split(":")
                if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                    raw = bytes.fromhex(address)
                    if len(raw) == 4:
                        found.add(str(ipaddress.IPv4Address(raw[::-1])))
                    else:  # four little-endian 32-bit words
                        words = [raw[i : i + 4][::-1] for i in range(0, 16, 4)]
                        found.add(str(ipaddress.IPv6Address(b"".join(words))))
    return found


def _printed_so_far(process: subprocess.Popen) -> str:
    """What ``process`` (started by :func:`launch`: output and errors on one pipe) has printed
    so far, read without waiting for more."""
    assert process.stdout is not None
    os.set_blocking(process.stdout.fileno(), False)
    return (process.stdout.read() or b"").decode(errors="replace")


def _group_alive(group: int) -> bool:
    """A process of the process group ``group`` exists."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def _port_takes_a_server(port: int) -> bool:
    """A new server can listen on ``port`` of 127.0.0.1 at once (as servers do, with
    SO_REUSEADDR, past the health checks' TIME_WAIT)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            s.listen()
        except OSError:
            return False
    return True


@dataclass(frozen=True)
class ServerLife:
    """What one server's life showed: started with the README's command on a fresh machine,
    asked for its health, looked at while it listened, stopped by SIGTERM to its one process."""

    health: bytes  # what /_stcore/health answered
    listening: set[str]  # local addresses listening on its port while it ran
    returncode: int  # its exit status after SIGTERM
    group_left: bool  # a process of its process group outlived it
    listening_after: set[str]  # local addresses listening on its port once it had ended
    port_free: bool  # a new server could take the port at once
    start_log: str  # its standard output and error until it was sent SIGTERM
    stop_log: str  # what it printed from SIGTERM on, until its process group had ended
    stop_seconds: float  # from SIGTERM to its exit


@pytest.fixture(scope="module")
def server_life(tmp_path_factory) -> ServerLife:
    """One ``riskgrid dashboard`` as the README gives it (no option: not headless), with a HOME
    holding no Streamlit credentials, stdin closed (Streamlit's first-run e-mail question would
    otherwise stop the start), run once for the tests of this module (a start costs seconds of
    two cores): asked for its health, its listening sockets read, then SIGTERM to that one
    process (``riskgrid dashboard`` is the server itself, no child) and its group and port
    checked once it has ended."""
    folder = tmp_path_factory.mktemp("server_life")
    port = free_port()
    process = launch(port, _fresh_machine(folder), headless=False)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=5) as ok:
            health = ok.read()
        listening = _listening_addresses(port)
        start_log = _printed_so_far(process)
        # the one process, not its group; its warm-up jobs are still running on its workers
        sent = time.monotonic()
        os.kill(process.pid, signal.SIGTERM)
        returncode = process.wait(timeout=30)
        stop_seconds = time.monotonic() - sent
        group_left = _group_alive(process.pid)
        listening_after = _listening_addresses(port)
        port_free = _port_takes_a_server(port)
        _wait_until_gone(process.pid)
        stop_log = _printed_so_far(process)
    finally:
        stop(process, signal.SIGKILL)  # whatever is left of it
    return ServerLife(
        health,
        listening,
        returncode,
        group_left,
        listening_after,
        port_free,
        start_log,
        stop_log,
        stop_seconds,
    )


def _fresh_machine(folder: Path) -> dict[str, str]:
    """The environment of a server on a fresh machine: a HOME holding no Streamlit credentials
    and no browser to open, an empty database in ``folder``, no SEG table."""
    env = {
        **os.environ,
        "HOME": str(folder),
        "BROWSER": "true",
        "RISKGRID_DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
    }
    env.pop("SEG_TABLE", None)
    return env


def _wait_until_gone(group: int) -> None:
    """Wait at most :data:`GROUP_GONE_WAIT` seconds for every process of ``group`` to end."""
    deadline = time.monotonic() + GROUP_GONE_WAIT
    while _group_alive(group) and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.mark.slow
def test_readme_command_starts_on_a_fresh_machine_without_prompting(server_life):
    """`riskgrid dashboard` as the README gives it answers its health check."""
    assert server_life.health == b"ok", server_life.start_log


@pytest.mark.slow
def test_the_start_log_holds_only_riskgrid_and_server_lines(server_life):
    """Started as a user starts it, the server logs what it does (preparing, ready, where it
    listens) and no warning: Streamlit's "No runtime found" notice came from a module of the
    pages imported before the runtime existed."""
    log = server_life.start_log
    assert "riskgrid dashboard: ready after" in log, log
    for noise in ("WARNING", "No runtime found", "Traceback"):
        assert noise not in log, log


@pytest.mark.slow
def test_the_server_listens_on_loopback_only_and_stops_cleanly_on_sigterm(server_life):
    """`riskgrid dashboard` is the server itself (no child): it listens on 127.0.0.1 only, and
    SIGTERM to that one process stops it, frees the port and leaves no process of its group."""
    assert server_life.listening == {"127.0.0.1"}
    assert server_life.returncode in (0, -signal.SIGTERM)
    assert not server_life.group_left  # nothing of its process group is left
    assert server_life.listening_after == set()
    assert server_life.port_free


@pytest.mark.slow
def test_a_sigterm_while_jobs_run_stops_the_server_quickly_and_quietly(server_life):
    """SIGTERM while the warm-up jobs run on the workers: the server cancels them and closes its
    cluster in order (a job cut short is cancelled, not failed), and logs nothing but Streamlit's
    "Stopping..."."""
    assert "Stopping..." in server_life.stop_log, server_life.stop_log
    for noise in STOP_NOISE:
        assert noise not in server_life.stop_log, server_life.stop_log
    assert server_life.stop_seconds < STOP_CEILING, server_life.stop_log


@pytest.mark.slow
@pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is absent (apt-get install chromium)"
)
@pytest.mark.skipif(sys.platform != "linux", reason="process groups as on the servers (Linux)")
def test_a_signal_to_the_process_group_after_a_page_ran_stops_the_server_quietly(tmp_path):
    """Ctrl-C in a terminal or a service manager's stop signals the server's whole process group
    (its job workers too) after a page has run: the workers are not restarted (a restarted one
    ran the last page script bare and filled the log with its errors), the stop is quick, and
    the log holds nothing but Streamlit's "Stopping..."."""
    port = free_port()
    process = launch(port, _fresh_machine(tmp_path))
    try:
        with open_browser() as page:
            page.goto(f"http://127.0.0.1:{port}/")
            wait_until_rendered(page)
        start_log = _printed_so_far(process)
        sent = time.monotonic()
        os.killpg(process.pid, signal.SIGTERM)
        returncode = process.wait(timeout=30)
        seconds = time.monotonic() - sent
        _wait_until_gone(process.pid)
        group_left = _group_alive(process.pid)
        stop_log = _printed_so_far(process)
    finally:
        stop(process, signal.SIGKILL)
    assert returncode in (0, -signal.SIGTERM)
    assert "Stopping..." in stop_log, start_log + stop_log
    for noise in STOP_NOISE:
        assert noise not in stop_log, stop_log
    assert seconds < STOP_CEILING and not group_left, stop_log
