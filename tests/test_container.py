"""The container image end to end, as a user of ``scripts/build-image.sh`` meets it: the script
builds the image (on a Debian base made from Debian's packages, no registry), podman starts it with
a bind-mounted data folder, its HEALTHCHECK passes, Chromium sees the Learn page draw its figures,
a grid saved on that page is found on the Saved records page after a restart; a data folder the
container cannot write is refused at start with a sentence; the CA certificates given to the build
are in no file of the image.

Slow: about 1.5 min with the image's layers cached, 4-8 min from nothing (the base and every
dependency are fetched and installed). Needs podman (runc) and mmdebstrap: ``apt-get install -y
podman mmdebstrap runc``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from scripts.screenshots import CHROMIUM, ROOT, free_port, open_browser, wait_until_rendered

TAG = "localhost/riskgrid:test"
ENV = {**os.environ, "CONTAINERS_CONF": str(ROOT / "scripts" / "containers.conf")}
MISSING = [tool for tool in ("podman", "mmdebstrap") if shutil.which(tool) is None]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(MISSING),
        reason=f"{' and '.join(MISSING)} missing (apt-get install -y podman mmdebstrap runc)",
    ),
]


def podman(*args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["podman", *args],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=check,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def image() -> str:
    """The image built by the script (its own check skipped: the tests below make it)."""
    done = subprocess.run(
        [str(ROOT / "scripts" / "build-image.sh"), "--no-check", "--tag", TAG],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=1800,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["tag"] == TAG and report["size_bytes"] > 0
    return TAG


def wait_until_healthy(name: str, timeout: float = 240) -> None:
    """Run the image's HEALTHCHECK (podman schedules it only with systemd) until it passes."""
    deadline = time.monotonic() + timeout
    while podman("healthcheck", "run", name, check=False).returncode != 0:
        state = podman("inspect", "--format", "{{.State.Status}}", name).stdout.strip()
        assert state == "running", podman("logs", name).stderr[-3000:]
        assert time.monotonic() < deadline, f"not healthy after {timeout:.0f} s"
        time.sleep(1)


@pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is absent (apt-get install chromium)"
)
def test_the_image_serves_the_learn_page_and_keeps_a_saved_grid_across_a_restart(image, tmp_path):
    pytest.importorskip("playwright.sync_api", reason="the playwright Python package is missing")
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    name = f"riskgrid-test-{os.getpid()}"
    podman(
        "run", "-d", "--name", name, "-p", f"127.0.0.1:{port}:8501", "-v", f"{data}:/data:U", image
    )
    try:
        wait_until_healthy(name)
        with open_browser(1280, 900) as page:
            page.goto(url)
            wait_until_rendered(page)
            figures = page.locator("[data-testid='stMain'] [data-testid='stImage'] img")
            assert figures.count() == 2  # the λ curve and the learned grid
            assert page.locator("[data-testid='stException']").count() == 0
            page.get_by_text("Save this grid for the Compare page").click()
            page.get_by_label("Name").fill("grid from the container test")
            page.get_by_role("button", name="Save learned grid").click()
            page.get_by_text("Saved learned grid").wait_for(timeout=60_000)
        assert (data / "riskgrid.sqlite3").stat().st_size > 0  # on the host's folder

        podman("restart", "-t", "20", name)
        wait_until_healthy(name)
        with open_browser(1280, 900) as page:
            page.goto(f"{url}/records")
            wait_until_rendered(page)
            page.get_by_text("Learned grids").click()
            # the newest learned grid is the chosen record, offered for deletion by name
            page.get_by_text("Delete “grid from the container test”").wait_for(timeout=60_000)
    finally:
        podman("rm", "-f", "-t", "5", name, check=False)


def test_a_data_folder_the_container_cannot_write_is_refused_at_start(image, tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o755)  # this user's folder; the container's user (uid 10001) cannot write it
    name = f"riskgrid-test-refused-{os.getpid()}"
    try:  # a container that does start is removed (and the assertions below fail)
        done = podman("run", "--name", name, "-v", f"{data}:/data", image, timeout=60, check=False)
    finally:
        podman("rm", "-f", "-t", "0", name, check=False)
    assert done.returncode == 2
    assert "the data folder /data cannot be written by this container's user" in done.stderr
    assert list(data.iterdir()) == []


def test_the_build_time_ca_certificates_are_in_no_file_of_the_image(image):
    extra = sorted(Path("/usr/local/share/ca-certificates").rglob("*.crt"))
    if not extra:
        pytest.skip("this machine has no extra CA certificates to look for")
    # the first line of each certificate's base64 body names it well enough
    lines = [p.read_text().split("-----BEGIN CERTIFICATE-----")[1].split()[0] for p in extra]
    patterns = [arg for line in lines for arg in ("-e", line)]
    # the certificates themselves, mounted, show that the search finds them where they are
    done = podman(
        "run",
        "--rm",
        "--user",
        "0",
        "-v",
        f"{extra[0].parent}:/mnt/extra:ro",
        "--entrypoint",
        "grep",
        image,
        "-rlsF",
        *patterns,
        "/mnt/extra",
        "/etc",
        "/usr",
        "/opt",
        "/app",
        "/home",
        "/root",
        timeout=300,
        check=False,
    )
    found = sorted(done.stdout.split())
    assert found == sorted(f"/mnt/extra/{p.relative_to(extra[0].parent)}" for p in extra)
