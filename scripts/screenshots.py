"""Screenshots of every dashboard page, taken in headless Chromium (generated, not drawn).

Starts the app with the README's command (``python -m ranking_core.cli dashboard --headless
--port N``) on a free local port, with a throw-away database, opens each page in Debian's
``/usr/bin/chromium`` through Playwright (no browser is downloaded) and writes
``docs/screenshots/<name>.png`` for every page of ``dashboard.pages.PAGES`` that names a
screenshot::

    python scripts/screenshots.py [--out docs/screenshots] [--seg-table PATH] [--width 1280]

Without ``--seg-table`` (and with ``SEG_TABLE`` unset) the pages show the built-in data of a
fresh machine. The browser test imports :func:`serve` and :func:`open_browser` from here.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal as signals
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as `python scripts/screenshots.py` from a checkout
from dashboard.pages import screenshot_pages  # noqa: E402

# url path (the default page is "/", the others are named after their file) → screenshot name,
# from the dashboard's page registry
PAGES = screenshot_pages()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(
    port: int,
    env: dict[str, str],
    timeout: float = 90.0,
    headless: bool = True,
    options: Sequence[str] = (),
) -> subprocess.Popen:
    """Start ``riskgrid dashboard [--headless] --port PORT [OPTIONS]`` in its own process group
    and return the process once ``/_stcore/health`` answers. Standard input is closed, so a
    prompt would fail, not wait; standard output and error are one pipe (read it once the
    server has stopped)."""
    command = [
        sys.executable,
        "-m",
        "ranking_core.cli",
        "dashboard",
        "--port",
        str(port),
        *(["--headless"] if headless else []),
        *options,
    ]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                output = process.stdout.read().decode(errors="replace") if process.stdout else ""
                raise RuntimeError(f"the dashboard exited with {process.returncode}:\n{output}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                    if answer.status == 200:
                        return process
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"the dashboard did not answer on {url} in {timeout:.0f} s")
            time.sleep(0.5)
    except BaseException:
        stop(process)
        raise


def stop(process: subprocess.Popen, signal: int = signals.SIGTERM, timeout: float = 20.0) -> None:
    """Stop a server started by :func:`launch` and wait for it: ``signal`` SIGTERM (the default)
    goes to the server process itself, as ``kill PID`` sends it, and the server closes its job
    workers on its way out; SIGKILL goes to its whole process group (the server and its workers
    die at once, as in a crash), and the named semaphores its processes leave in /dev/shm are
    removed. Anything of the group still there afterwards (nothing, after a clean exit) is
    killed, also when the server does not end in ``timeout`` seconds (then TimeoutExpired is
    raised)."""
    killed = _processes_of(process.pid) if signal == signals.SIGKILL else set()
    with contextlib.suppress(ProcessLookupError):
        if signal == signals.SIGTERM:
            os.kill(process.pid, signal)
        else:
            os.killpg(process.pid, signal)
    try:
        process.wait(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signals.SIGKILL)
        process.wait(timeout=timeout)
        _remove_semaphores_of(killed)


def _processes_of(pid: int) -> set[int]:
    """The process ``pid`` and its descendants (their ids)."""
    import psutil

    try:
        return {pid, *(child.pid for child in psutil.Process(pid).children(recursive=True))}
    except psutil.NoSuchProcess:
        return set()


def _remove_semaphores_of(pids: set[int]) -> None:
    """Remove the named semaphores that joblib's loky made in the processes ``pids``
    (``/dev/shm/sem.loky-PID-…``): a process killed by SIGKILL never unlinks them, nor does its
    resource tracker, killed with it."""
    for pid in pids:
        for semaphore in Path("/dev/shm").glob(f"sem.loky-{pid}-*"):
            semaphore.unlink(missing_ok=True)


@contextlib.contextmanager
def serve(
    port: int,
    env: dict[str, str],
    timeout: float = 90.0,
    headless: bool = True,
    options: Sequence[str] = (),
) -> Iterator[str]:
    """Run ``riskgrid dashboard [--headless] --port PORT [OPTIONS]`` (:func:`launch`) until the
    block ends; yield its URL once it answers."""
    process = launch(port, env, timeout, headless, options)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


@contextlib.contextmanager
def open_browser(width: int = 1600, height: int = 1200):
    """A Playwright page in headless Debian Chromium (never downloads a browser)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()


RENDERED_JS = """() => {
  const q = (s) => document.querySelectorAll(s).length;
  return q("[data-testid='stMain'] [data-testid='stElementContainer']") > 0
    && q("[data-testid='stStatusWidget']") === 0
    && q("[data-testid='stSkeleton'], [data-testid='stSkeletonElement'], "
         + "[data-testid='stAppSkeleton'], [data-testid='stSpinner']") === 0
    && q("[data-testid='stPlotlyChart']") === q("[data-testid='stPlotlyChart'] .js-plotly-plot")
    && Array.from(document.querySelectorAll("[data-testid='stImage'] img")).every(
         (img) => img.complete && img.naturalWidth > 0);
}"""


def wait_until_rendered(page, timeout_ms: float = 180_000) -> None:
    """Wait until Streamlit's script run is over and every element (Plotly charts and pictures
    included) is drawn, twice in a row one second apart (a rerun may start right after the
    first run)."""
    page.wait_for_selector("[data-testid='stApp']", timeout=timeout_ms)
    for _ in range(2):
        page.wait_for_timeout(1000)
        page.wait_for_function(RENDERED_JS, timeout=timeout_ms, polling=500)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--seg-table", type=Path, default=None)
    parser.add_argument(
        "--width",
        type=int,
        default=1280,
        help="browser width in px (the pages are checked at 1280 × 800)",
    )
    parser.add_argument("--height", type=int, default=1400, help="browser height in px")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "RISKGRID_DATABASE_URL": f"sqlite:///{Path(tmp) / 'db.sqlite3'}"}
        env.pop("SEG_TABLE", None)
        if args.seg_table is not None:
            env["SEG_TABLE"] = str(args.seg_table.resolve())
        with serve(free_port(), env) as url, open_browser(args.width, args.height) as page:
            for path, name in PAGES.items():
                page.goto(f"{url}/{path}")
                wait_until_rendered(page)
                target = args.out / f"{name}.png"
                page.screenshot(path=str(target), full_page=True)
                print(target)


if __name__ == "__main__":
    main()
