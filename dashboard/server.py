"""The dashboard's server process: ``riskgrid dashboard`` runs ``python -m dashboard.server run
APP [streamlit options]``.

Before Streamlit starts serving (and so before ``/_stcore/health`` answers), this process imports
the libraries the pages use and computes the Learn page's opening result (the default simulated
panel with the default settings, deterministic) into the cache shared by all sessions. The first
visitor's page is then drawn from warm caches instead of waiting for first imports and a fit.
A failure here is logged and the server starts anyway: the pages compute what they need.

Two things are settled before that: the server refuses to start, saying why, when the database
cannot be opened (``RISKGRID_DATABASE_URL`` or the default SQLite file; not in the public demo,
which keeps no records), so that a health check never answers ``ok`` for a server whose pages
would fail; and Streamlit's ``/_stcore/metrics`` endpoint (sessions, caches, per-user counters,
unauthenticated) is not served unless ``riskgrid dashboard --metrics`` asked for it.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import TYPE_CHECKING

from dashboard import METRICS_ENV
from ranking_core.blas_threads import one_blas_thread

if TYPE_CHECKING:
    from streamlit.runtime import Runtime

LOG = logging.getLogger("riskgrid.dashboard")


def warm() -> float:
    """Import what the pages import, start the long jobs' cluster (in the background) and
    compute the Learn page's opening result; the seconds it took."""
    start = time.perf_counter()
    import inspect

    import streamlit.emojis  # noqa: F401 - st.set_page_config's icon check compiles its pattern

    import ranking_core.meter.documents.pdf  # noqa: F401 - matplotlib, reportlab (the Meter page)
    from dashboard.common import seg_status
    from dashboard.figures import lambda_curve, lambda_curve_picture, risk_heatmap
    from dashboard.jobs import warm_workers
    from dashboard.learn_data import warm_opening_result
    from ranking_core.grids.raster import grade_lines, grid_image, png_bytes

    warm_workers()  # the cluster starts and its workers import meanwhile
    result = warm_opening_result(seg_status())
    # Streamlit looks at the call stack before its first element; the first look maps every
    # loaded module to its file (a fraction of a second), later looks reuse that map
    inspect.stack()
    # the first Plotly figure of a process sets up its validators (about half a second)
    risk_heatmap(result.grid).to_json()
    if result.curve is not None:
        lambda_curve(result.lams, result.curve, result.lam_chosen, "curve").to_json()
        # the first matplotlib drawing loads its fonts; the first grid picture its font
        lambda_curve_picture(result.lams, result.curve, result.lam_chosen, "curve")
    png_bytes(grid_image(result.grid, "grid", lines=grade_lines(result.grid)), small=False)
    return time.perf_counter() - start


def database_problem() -> str | None:
    """Why the database the pages use cannot be opened and upgraded to this riskgrid's schema
    (the dashboard's start is where it is upgraded, once; its pages' reads never do), or None
    (also in the public demo, which opens none)."""
    from dashboard import public_mode  # not dashboard.common: see main()
    from ranking_core.storage import StorageError, Store

    if public_mode():
        return None

    try:
        store = Store()
        store.upgrade()
        store.dispose()
    except StorageError as exc:
        return str(exc)
    return None


METRICS_OFF = "Not served: this server's metrics are off (riskgrid dashboard --metrics)."


def without_metrics() -> None:
    """Make Streamlit's ``/_stcore/metrics`` routes answer 404 with :data:`METRICS_OFF` (without
    them, the path would fall through to the app's page)."""
    from starlette.responses import PlainTextResponse
    from starlette.routing import BaseRoute, Route
    from streamlit.web.server.starlette import starlette_app

    metrics_routes = starlette_app.create_metrics_routes

    async def not_served(request: object) -> PlainTextResponse:
        return PlainTextResponse(METRICS_OFF, status_code=404)

    def routes_off(runtime: Runtime, base_url: str | None) -> list[BaseRoute]:
        return [
            Route(route.path, not_served, methods=["GET", "HEAD", "OPTIONS", "POST"])
            for route in metrics_routes(runtime, base_url)
            if isinstance(route, Route)  # every metrics route is one
        ]

    starlette_app.create_metrics_routes = routes_off


def main() -> None:
    """Check the database, warm the caches, then hand over to Streamlit's command line
    (``streamlit run …``)."""
    one_blas_thread()
    problem = database_problem()
    if problem is not None:
        print(
            f"riskgrid dashboard: not started: the database cannot be opened: {problem}",
            file=sys.stderr,
            flush=True,
        )
        sys.exit(2)
    from ranking_core.job_cluster import scheduler_address

    try:
        scheduler_address()  # a team's scheduler for the long jobs, checked before serving
    except ValueError as exc:
        print(f"riskgrid dashboard: not started: {exc}", file=sys.stderr, flush=True)
        sys.exit(2)
    if os.environ.get(METRICS_ENV, "") in ("", "0"):
        without_metrics()
    print("riskgrid dashboard: preparing the pages…", file=sys.stderr, flush=True)
    # before Streamlit's runtime exists, its caches and script context log that they run bare
    # ("No runtime found, using MemoryCacheStorageManager": a module-level @st.cache_data is
    # checked when it is imported); warming up runs them bare on purpose, so those notices are
    # turned off first, and nothing before this point imports a module of the pages
    import streamlit.runtime.caching.cache_data_api as cache_data_api
    import streamlit.runtime.scriptrunner_utils.script_run_context as script_run_context

    for module in (cache_data_api, script_run_context):  # Streamlit sets their level on import
        logging.getLogger(module.__name__).setLevel(logging.ERROR)
    try:
        seconds = warm()
    except Exception:  # never keep the server from starting
        LOG.exception("preparing the pages failed; they compute on first use")
    else:
        print(f"riskgrid dashboard: ready after {seconds:.1f} s", file=sys.stderr, flush=True)
    from streamlit.web import cli

    # the public demo takes no upload: not even a request sent past the page to Streamlit's
    # upload endpoint (it would be kept in the server's memory)
    from dashboard import public_mode

    no_uploads = ["--server.maxUploadSize", "0"] if public_mode() else []
    sys.argv = ["streamlit", *sys.argv[1:], *no_uploads]
    cli.main()


if __name__ == "__main__":
    main()
