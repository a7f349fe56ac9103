"""Check a running dashboard the way a user would: ``/_stcore/health`` answers ``ok`` and the Learn
page (the default page, built-in simulated panel) draws its figures (pictures, or interactive Plotly
charts) in headless Chromium.

    python scripts/check_dashboard.py http://127.0.0.1:8501 [--timeout 180]

Prints one JSON line ({"health": ..., "figures": n, "seconds": t}); exits 1 if a check fails.
Used by ``scripts/build-image.sh`` on the freshly built image.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scripts.screenshots import open_browser, wait_until_rendered


def wait_for_health(url: str, timeout: float) -> str:
    """The body of ``/_stcore/health`` once it answers (or the last error after ``timeout``)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as answer:
                return answer.read().decode(errors="replace")
        except OSError as exc:
            if time.monotonic() > deadline:
                return f"no answer: {exc}"
            time.sleep(1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--timeout", type=float, default=180.0)
    args = parser.parse_args()
    start = time.monotonic()
    health = wait_for_health(args.url.rstrip("/"), args.timeout)
    figures = 0
    if health == "ok":
        with open_browser(1280, 800) as page:
            page.goto(args.url)
            wait_until_rendered(page, timeout_ms=args.timeout * 1000)
            figures = page.locator(
                "[data-testid='stMain'] [data-testid='stImage'] img, "
                "[data-testid='stPlotlyChart'] .js-plotly-plot"
            ).count()
    result = {"health": health, "figures": figures, "seconds": round(time.monotonic() - start, 1)}
    print(json.dumps(result))
    return 0 if health == "ok" and figures > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
