"""How fast the dashboard answers in a real browser (headless Chromium), as JSON on stdout.

Starts the app as a user would (``riskgrid dashboard --headless``, a throw-away database) and
drives Debian's ``/usr/bin/chromium`` through Playwright:

* ``cold_load_s``: a fresh browser opens the Learn page of a freshly started server, until the
  first figure is drawn, an interactive chart or a picture (goal ≤ 3 s);
  ``cold_load_rendered_s`` until every element is drawn;
* ``second_session_load_s``: a second browser session on the now warm server, to the first
  figure (imports done, the default fit cached);
* ``lambda_step_s``: one step of the λ slider (arrow key) until the λ shown changed, a
  figure was redrawn (new chart data or a new picture loaded) and the run is over (median of
  ``--steps``; goal ≤ 0.3 s); ``interactive_on_s``: the page's "Interactive figures" toggle
  switched on until its Plotly charts are drawn, and ``interactive_lambda_step_s`` a λ step
  then (the toggle is switched off again before the uploads);
* ``upload_to_grid_s[m]``: a rating file of m ratings is uploaded until the grid of those
  ratings is shown, against ``learn_grid`` on the same file timed in this process with the
  BLAS's own threads (``library_fit_s[m]``) and with one BLAS thread, as the server runs it
  (``library_fit_one_blas_thread_s[m]``); ``upload_over_library[m]`` divides by the faster of the
  two (goal: ratio ≤ 1.5); ``progress_values[m]``: the distinct values of the progress bar
  seen during that fit (it should advance); the page is read every 25 ms during the first
  second of an upload, then every 100 ms;
* ``meter_10k_s``: the Meter page with 10,000 uploaded pairs until its report is drawn
  (goal ≤ 2 s).

The machine may be shared: the figures are wall-clock seconds of one run; the upload ratio is
measured against a reference fit timed in the same run. ``cpu_s`` gives, per stage, the CPU
seconds the browser (every Chromium process) and the server used: what the stage costs, less
dependent on how busy the machine is than the wall clock.

    python benchmarks/dashboard_browser.py [--m 250 --m 2000] [--steps 5] [--seg-table PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.screenshots import (  # noqa: E402
    CHROMIUM,
    RENDERED_JS,
    free_port,
    serve,
    wait_until_rendered,
)

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
TIMEOUT_MS = 600_000.0  # per stage (ms); --timeout sets it
UPLOAD_INPUT = "[data-testid='stMain'] [data-testid='stFileUploaderDropzoneInput']"
# the first figure: an interactive (Plotly) chart drawn, or a picture loaded
PLOTLY_DRAWN_JS = """() => document.querySelector(
  "[data-testid='stMain'] [data-testid='stPlotlyChart'] .js-plotly-plot .main-svg") !== null"""
PICTURES_JS = """() => Array.from(document.querySelectorAll(
  "[data-testid='stMain'] [data-testid='stImage'] img")).map(
  (img) => img.complete && img.naturalWidth > 0 ? img.currentSrc : null)"""
FIRST_FIGURE_JS = (
    "() => (" + PLOTLY_DRAWN_JS + ")() || (" + PICTURES_JS + ")().some((src) => src !== null)"
)
# the value of the metric labelled `label` (Streamlit's stMetric), or null
METRIC_JS = """(label) => {
  for (const m of document.querySelectorAll("[data-testid='stMetric']")) {
    const l = m.querySelector("[data-testid='stMetricLabel']");
    if (l && l.innerText.trim() === label)
      return m.querySelector("[data-testid='stMetricValue']").innerText.trim();
  }
  return null;
}"""
CHART_DATA_JS = """() => Array.from(document.querySelectorAll(
  "[data-testid='stMain'] .js-plotly-plot")).map((gd) => gd.data)"""
IDLE_JS = """() => document.querySelectorAll("[data-testid='stStatusWidget']").length === 0"""


def rating_file(path: Path, m: int, seed: int) -> Path:
    """m simulated ratings (the panel simulator around the built-in surface)."""
    from ranking_core.panels import simulate_panel

    simulate_panel(m, random_state=seed).to_csv(path, index=False)
    return path


def pairs_file(path: Path, n: int, seed: int = 0) -> Path:
    """n meter pairs: REF log-uniform on 20..500 mg/dL, BGM = REF·(1 + N(0, 0.08²))."""
    rng = np.random.default_rng(seed)
    ref = np.exp(rng.uniform(np.log(20), np.log(500), n))
    bgm = np.clip(ref * (1 + rng.normal(0, 0.08, n)), 1, 600)
    pd.DataFrame({"BGM": bgm.round(1), "REF": ref.round(1)}).to_csv(path, index=False)
    return path


def library_fit_seconds(path: Path) -> float:
    """``learn_grid`` with the default settings on the file, including its 601 × 601 grid."""
    from ranking_core.learn import learn_grid
    from ranking_core.ratings import read_rating_set

    start = time.perf_counter()
    result = learn_grid(read_rating_set(path))
    result.grid  # noqa: B018 - evaluated, as the page does
    return time.perf_counter() - start


def cpu_seconds() -> dict[int, tuple[str, float]]:
    """CPU seconds used so far by each child of this process that is the browser (a Chromium
    process) or the server (the Python dashboard process): pid → (kind, seconds)."""
    used = {}
    for child in psutil.Process().children(recursive=True):
        try:
            name, times = child.name(), child.cpu_times()
        except psutil.Error:  # ended meanwhile
            continue
        kind = "browser" if "chrom" in name else "server" if "python" in name else None
        if kind is not None:
            used[child.pid] = (kind, times.user + times.system)
    return used


def cpu_since(before: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU seconds per kind since ``before`` of the processes alive now (a process that ended
    meanwhile, such as a closed tab's renderer, is left out)."""
    spent = {"browser": 0.0, "server": 0.0}
    for pid, (kind, seconds) in cpu_seconds().items():
        spent[kind] += seconds - before.get(pid, (kind, 0.0))[1]
    return {kind: round(seconds, 2) for kind, seconds in spent.items()}


def wait_rendered(page) -> None:
    page.wait_for_function(RENDERED_JS, timeout=TIMEOUT_MS, polling=50)


def choose_upload(page) -> None:
    """Select the Learn page's upload source (radio option "Upload…")."""
    page.locator("[data-testid='stRadio'] label").filter(has_text="Upload").first.click()
    page.locator(UPLOAD_INPUT).first.wait_for(state="attached", timeout=TIMEOUT_MS)
    # the simulated panel's result is gone before any upload is timed
    page.wait_for_function(
        f"() => ({METRIC_JS})('Points fitted') === null && ({METRIC_JS})('points fitted') === null",
        timeout=TIMEOUT_MS,
        polling=100,
    )


def upload(
    page, path: Path, expected_points: str, sample_ms: int = 25, slow_sample_ms: int = 100
) -> tuple[float, list]:
    """Upload ``path``; seconds until 'Points fitted' starts with ``expected_points`` and the run
    is over; the progress-bar values seen meanwhile. The page is read every ``sample_ms`` during
    the first second, then every ``slow_sample_ms``: each reading runs script in the page, which
    would otherwise take the browser's share of the two cores from a long fit."""
    seen: list[float] = []
    start = time.perf_counter()
    page.locator(UPLOAD_INPUT).first.set_input_files(str(path))
    while True:
        value = page.evaluate("""() => {
          const p = document.querySelector("[data-testid='stProgress'] [role='progressbar']");
          return p ? Number(p.getAttribute('aria-valuenow')) : null; }""")
        if value is not None and (not seen or seen[-1] != value):
            seen.append(value)
        shown = page.evaluate(METRIC_JS, "Points fitted") or page.evaluate(
            METRIC_JS, "points fitted"
        )
        if shown and shown.startswith(expected_points) and page.evaluate(IDLE_JS):
            break
        if time.perf_counter() - start > TIMEOUT_MS / 1000:
            raise TimeoutError(f"no grid of {expected_points} points after the upload")
        page.wait_for_timeout(sample_ms if time.perf_counter() - start < 1 else slow_sample_ms)
    wait_rendered(page)
    return time.perf_counter() - start, seen


def lambda_step(page, key: str) -> float:
    """Press ``key`` on the λ slider; seconds until λ shown changed, a figure got new data and
    the run is over."""
    before = page.evaluate(METRIC_JS, "λ")
    page.evaluate(
        "() => { window.__charts = "
        + CHART_DATA_JS[6:]
        + "; window.__pictures = ("
        + PICTURES_JS
        + ")(); }"
    )
    slider = (
        page.locator("[data-testid='stSlider']")
        .filter(has_text="λ")
        .locator("input[type='range']")
        .first
    )
    slider.focus()
    start = time.perf_counter()
    slider.press(key)
    page.wait_for_function(
        """(before) => {
          const now = ("""
        + METRIC_JS
        + """)("λ");
          const charts = ("""
        + CHART_DATA_JS
        + """)();
          const pictures = ("""
        + PICTURES_JS
        + """)();
          const redrawn = charts.some((d, i) => d !== window.__charts[i])
            || (pictures.every((src) => src !== null)
                && pictures.some((src, i) => src !== window.__pictures[i]));
          const idle = document.querySelectorAll("[data-testid='stStatusWidget']").length === 0;
          return now !== null && now !== before && redrawn && idle;
        }""",
        arg=before,
        timeout=TIMEOUT_MS,
        polling="raf",
    )
    return time.perf_counter() - start


def interactive_toggle(page):
    """The Learn page's "Interactive figures" toggle (a locator; count 0 if absent)."""
    return (
        page.locator("[data-testid='stCheckbox']")
        .filter(has_text="Interactive figures")
        .locator("label")
    )


def toggle_interactive(page, done_js: str) -> float:
    """Flip the Learn page's "Interactive figures" toggle; seconds until ``done_js`` holds (e.g.
    a Plotly chart is drawn) and the run is over."""
    start = time.perf_counter()
    interactive_toggle(page).first.click()
    page.wait_for_function(
        "() => (" + done_js + ")() && (" + IDLE_JS + ")()", timeout=TIMEOUT_MS, polling="raf"
    )
    wait_rendered(page)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, action="append", help="upload sizes (default 300, 2000)")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--seg-table", type=Path, default=None)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per stage")
    args = parser.parse_args()
    global TIMEOUT_MS
    TIMEOUT_MS = args.timeout * 1000
    sizes = args.m or [250, 2000]  # not 300: the simulated panel shown first has 300
    from playwright.sync_api import sync_playwright

    from ranking_core.learn import PRESETS

    out: dict = {
        "chromium": str(CHROMIUM),
        "load_average": os.getloadavg(),
        "cpus": os.cpu_count(),
        "cpu_s": {},
    }
    try:
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            env = {**os.environ, "RISKGRID_DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}"}
            env.pop("SEG_TABLE", None)
            if args.seg_table is not None:
                env["SEG_TABLE"] = str(args.seg_table.resolve())
            files = {m: rating_file(tmp / f"ratings_{m}.csv", m, seed=m) for m in sizes}
            out["library_fit_s"] = {m: round(library_fit_seconds(p), 3) for m, p in files.items()}
            with threadpool_limits(limits=1, user_api="blas"):  # as the server runs it
                out["library_fit_one_blas_thread_s"] = {
                    m: round(library_fit_seconds(p), 3) for m, p in files.items()
                }
            print(json.dumps(out), file=sys.stderr)
            with serve(free_port(), env) as url, sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
                )
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                start, cpu = time.perf_counter(), cpu_seconds()
                page.goto(url)
                page.wait_for_function(FIRST_FIGURE_JS, timeout=TIMEOUT_MS, polling="raf")
                out["cold_load_s"] = round(time.perf_counter() - start, 3)
                out["cpu_s"]["cold_load"] = cpu_since(cpu)
                wait_until_rendered(page, TIMEOUT_MS)
                out["cold_load_rendered_s"] = round(time.perf_counter() - start, 3)
                second = browser.new_page(viewport={"width": 1280, "height": 800})
                start = time.perf_counter()
                second.goto(url)
                second.wait_for_function(FIRST_FIGURE_JS, timeout=TIMEOUT_MS, polling="raf")
                out["second_session_load_s"] = round(time.perf_counter() - start, 3)
                second.close()
                print(json.dumps(out), file=sys.stderr)
                cpu = cpu_seconds()
                steps = [
                    lambda_step(page, "ArrowRight" if k % 2 == 0 else "ArrowLeft")
                    for k in range(args.steps)
                ]
                out["cpu_s"]["lambda_step_mean"] = {
                    kind: round(used / args.steps, 2) for kind, used in cpu_since(cpu).items()
                }
                out["lambda_step_s"] = round(statistics.median(steps), 3)
                out["lambda_steps_s"] = [round(s, 3) for s in steps]
                if interactive_toggle(page).count():  # pages before pictures had none
                    out["interactive_on_s"] = round(toggle_interactive(page, PLOTLY_DRAWN_JS), 3)
                    steps = [
                        lambda_step(page, "ArrowRight" if k % 2 == 0 else "ArrowLeft")
                        for k in range(args.steps)
                    ]
                    out["interactive_lambda_step_s"] = round(statistics.median(steps), 3)
                    toggle_interactive(page, "() => !(" + PLOTLY_DRAWN_JS + ")()")
                choose_upload(page)
                out["upload_to_grid_s"], out["progress_values"] = {}, {}
                out["upload_over_library"] = {}
                for m, path in files.items():
                    points = f"{m + PRESETS['best'].anchors}"
                    cpu = cpu_seconds()
                    try:
                        seconds, seen = upload(page, path, points)
                    except TimeoutError:
                        out["upload_to_grid_s"][m] = f"no grid after {TIMEOUT_MS / 1000:.0f} s"
                        break
                    out["upload_to_grid_s"][m] = round(seconds, 3)
                    out["cpu_s"][f"upload_{m}"] = cpu_since(cpu)
                    out["progress_values"][m] = seen
                    fastest = min(out["library_fit_s"][m], out["library_fit_one_blas_thread_s"][m])
                    out["upload_over_library"][m] = round(seconds / fastest, 2)
                    print(json.dumps({m: out["upload_to_grid_s"][m]}), file=sys.stderr)
                meter = pairs_file(tmp / "pairs.csv", args.pairs)
                page.goto(f"{url}/meter")
                wait_until_rendered(page, TIMEOUT_MS)
                page.locator("[data-testid='stRadio'] label").filter(
                    has_text="Upload"
                ).first.click()
                page.locator(UPLOAD_INPUT).first.wait_for(state="attached", timeout=TIMEOUT_MS)
                start, cpu = time.perf_counter(), cpu_seconds()
                page.locator(UPLOAD_INPUT).first.set_input_files(str(meter))
                page.wait_for_function(
                    f"() => ({METRIC_JS})('pairs analysed') === '{args.pairs:,}'"
                    f" || ({METRIC_JS})('pairs analysed') === '{args.pairs}'",
                    timeout=TIMEOUT_MS,
                    polling=50,
                )
                wait_rendered(page)
                out["meter_10k_s"] = round(time.perf_counter() - start, 3)
                out["cpu_s"]["meter_10k"] = cpu_since(cpu)
                out["deploy_button_shown"] = (
                    page.locator("[data-testid='stAppDeployButton']").count() > 0
                )
                browser.close()
    except Exception as exc:  # report what was measured before the failure
        out["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    finally:
        out["load_average_after"] = os.getloadavg()
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
