"""The least a Streamlit page costs to show its first figure in headless Chromium, as JSON.

The cold-load goal of the Learn page (first figure ≤ 3 s) is measured by
``benchmarks/dashboard_browser.py``. This script measures what no page content can go below on
the same machine: a bare Streamlit page (a title and one figure, no riskgrid code) served by
``streamlit run`` and opened by a fresh headless Debian Chromium, until the figure is drawn —
once with the figure as an image (``st.image``) and once as a Plotly heat map
(``st.plotly_chart``, which loads Streamlit's Plotly bundle). Each page is opened ``--runs``
times, each time by a new browser on the same server.

``upload_floor_s``: the least an upload costs. A bare page with a file uploader reads the
uploaded CSV with pandas and shows its row count and a small picture; the time is taken from
choosing the file until the count is shown, the picture loaded and the run over, as
``benchmarks/dashboard_browser.py`` times the Learn page's upload (median of ``--runs``
uploads of different files in one browser). The Learn page's upload goal (upload → grid within
1.5 × the library's fit) leaves this floor at most half the fit time.

    python benchmarks/browser_floor.py [--runs 3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.screenshots import CHROMIUM, CHROMIUM_ARGS, free_port  # noqa: E402

PAGES = {
    "image": (
        "import numpy as np\nimport streamlit as st\n"
        "st.title('Floor')\n"
        "st.image((np.random.default_rng(0).random((300, 300)) * 255).astype(np.uint8))\n",
        "[data-testid='stImage'] img",
    ),
    "plotly": (
        "import numpy as np\nimport plotly.graph_objects as go\nimport streamlit as st\n"
        "st.title('Floor')\n"
        "z = np.random.default_rng(0).random((200, 200)).astype(np.float32)\n"
        "st.plotly_chart(go.Figure(go.Heatmap(z=z)))\n",
        ".js-plotly-plot .main-svg",
    ),
}
UPLOAD_PAGE = (
    "import numpy as np\nimport pandas as pd\nimport streamlit as st\n"
    "st.title('Floor')\n"
    "upload = st.file_uploader('Rating set', type=['csv'])\n"
    "if upload is not None:\n"
    "    frame = pd.read_csv(upload)\n"
    "    st.metric('Rows', len(frame))\n"
    "    st.image((np.random.default_rng(len(frame)).random((300, 300)) * 255)"
    ".astype(np.uint8))\n"
)
# the upload's result is on screen: the row count, the picture loaded, the run over
UPLOAD_SHOWN_JS = """(rows) => {
  const value = document.querySelector("[data-testid='stMetricValue']");
  const img = document.querySelector("[data-testid='stImage'] img");
  return value !== null && value.innerText.trim() === String(rows) && img !== null
    && img.complete && img.naturalWidth > 0
    && document.querySelectorAll("[data-testid='stStatusWidget']").length === 0; }"""


@contextlib.contextmanager
def bare_page(source: str) -> Iterator[str]:
    """``streamlit run`` of the page ``source`` on a free local port; yields its URL."""
    with tempfile.TemporaryDirectory() as tmp:
        app = Path(tmp) / "app.py"
        app.write_text(source)
        port = free_port()
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                str(app),
                "--server.port",
                str(port),
                "--server.address",
                "127.0.0.1",
                "--server.headless",
                "true",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"},
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 90
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"streamlit did not answer on {url}") from None
                    time.sleep(0.2)
            yield url
        finally:
            server.terminate()
            server.wait(timeout=20)


def first_figure_seconds(source: str, selector: str, runs: int) -> list[float]:
    """Seconds from navigation to the drawn figure, one per fresh browser."""
    from playwright.sync_api import sync_playwright

    seconds = []
    with bare_page(source) as url, sync_playwright() as playwright:
        for _ in range(runs):
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            start = time.perf_counter()
            page.goto(url)
            page.wait_for_selector(selector, timeout=120_000)
            seconds.append(round(time.perf_counter() - start, 2))
            browser.close()
    return seconds


def upload_seconds(runs: int, rows: int = 300) -> list[float]:
    """Seconds from choosing a CSV file of about ``rows`` rows until the bare upload page shows
    its row count and picture, one per upload, in one browser (25 ms polling)."""
    from playwright.sync_api import sync_playwright

    seconds = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        bare_page(UPLOAD_PAGE) as url,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(url)
        uploader = page.locator("[data-testid='stFileUploaderDropzoneInput']")
        uploader.wait_for(state="attached", timeout=120_000)
        for run in range(runs + 1):  # the first upload warms the page up and is not counted
            n = rows + run  # a new count each time: the page must show this upload's result
            path = Path(tmp) / f"ratings_{run}.csv"
            pd.DataFrame(
                {
                    "reference": np.arange(n) % 600,
                    "estimate": np.arange(n) % 590,
                    "rating": np.arange(n) % 5,
                }
            ).to_csv(path, index=False)
            start = time.perf_counter()
            uploader.set_input_files(str(path))
            page.wait_for_function(UPLOAD_SHOWN_JS, arg=n, timeout=120_000, polling=25)
            if run:
                seconds.append(round(time.perf_counter() - start, 3))
        browser.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    result = {"load_average": os.getloadavg()[0]}
    for name, (source, selector) in PAGES.items():
        seconds = first_figure_seconds(source, selector, args.runs)
        result[f"{name}_first_figure_s"] = seconds
        result[f"{name}_median_s"] = statistics.median(seconds)
    result["upload_floor_s"] = upload_seconds(args.runs)
    result["upload_floor_median_s"] = statistics.median(result["upload_floor_s"])
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
