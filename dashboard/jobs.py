"""Long jobs of the dashboard's pages, on one runner (:class:`ranking_core.jobs.JobRunner`) shared
by every session of the server: on a local dask.distributed cluster it starts (its workers on
this machine), or on the team's scheduler named by ``RISKGRID_SCHEDULER`` (``riskgrid dashboard
--scheduler``; docs/OPERATIONS.md).

A page starts a job with :func:`start_job` (the function and its arguments, a key naming the data
and settings it is computed from) and follows it with :func:`follow_job`: while the job is queued
or running, a fragment polls it every second and draws its progress bar and a Cancel button, and
reruns the page once the job has finished. The page itself never waits: the job runs in a worker
process of the cluster, so other sessions (and the rest of this page) stay responsive. A job
refused by a bound, a failed job and a cancelled job are each shown as one sentence.

Usage, for a button that starts a job whose result the page keeps::

    if st.button("Run", key="x_run"):
        st.session_state["x_job"] = run_job(("x", settings), run_x, data, settings)
    status = follow_job("x_job", "Running x")
    if status is not None and status.state == "done":
        st.session_state["x_result"] = status.result
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from dashboard.common import plain
from dashboard.job_worker import call_by_name, function_name, warm_worker
from ranking_core.job_cluster import scheduler_address
from ranking_core.jobs import JobLimits, JobRefused, JobRunner, JobStatus

LOG = logging.getLogger("riskgrid.dashboard")
POLL_SECONDS = 1.0  # how often a page asks a running job for its progress


@st.cache_resource(show_spinner=False)
def job_runner() -> JobRunner:
    """The server's one runner of long jobs (its local cluster starts on the first job; none
    with a team's scheduler)."""
    return JobRunner(JobLimits(), scheduler=scheduler_address())


def warm_workers() -> threading.Thread:
    """Start the runner's cluster and its workers' imports now (the server's warm-up), one job
    per worker, in a thread of their own: nothing waits for them (a page's first job waits for
    the cluster if it is not up yet)."""
    # imported here, not in the thread: a package imported by two threads at once may be seen
    # half done by one of them (the cluster's start imports these)
    import distributed  # noqa: F401
    import pandas  # noqa: F401

    runner = job_runner()

    def warm() -> None:
        try:
            for worker in range(runner.limits.workers):
                runner.submit(("warm-up", worker), warm_worker, owner=f"warm-up {worker}")
        except JobRefused:  # the server is stopping already
            pass
        except Exception:  # never keep the server from starting; the first job says why
            LOG.exception("the long jobs' cluster did not start at warm-up")

    thread = threading.Thread(target=warm, name="warm-up jobs", daemon=True)
    thread.start()
    return thread


def session_owner() -> str:
    """This browser session, as the owner of the jobs it starts (bounded per owner)."""
    ctx = get_script_run_ctx()
    return "" if ctx is None else ctx.session_id


def start_job(
    key: Hashable, function: Callable[..., Any], *args: Any, again: bool = False, **kwargs: Any
) -> Hashable | None:
    """Submit ``function(*args, progress=…, **kwargs)`` as the job ``key`` (or attach to the job
    ``key`` already there; ``again`` restarts a finished one). ``key`` on success; None after
    showing why it was refused."""
    try:
        job_runner().submit(
            key,
            call_by_name,
            function_name(function),
            *args,
            owner=session_owner(),
            again=again,
            **kwargs,
        )
    except JobRefused as exc:
        st.error(f"Not started: {sentence(exc)}")
        return None
    return key


def sentence(text: object) -> str:
    """A job's error as one sentence for a Markdown element: escaped, one final full stop."""
    return plain(text).rstrip(".") + "."


def run_job(
    key: Hashable, function: Callable[..., Any], *args: Any, **kwargs: Any
) -> Hashable | None:
    """:func:`start_job` for a button press: attaches to the job ``key`` when it is running or
    done, starts it again when it was cancelled or failed."""
    status = job_runner().status(key)
    again = status is not None and status.state in ("cancelled", "failed")
    return start_job(key, function, *args, again=again, **kwargs)


def _progress_text(label: str, status: JobStatus) -> str:
    if status.state == "queued":
        return f"{label}: waiting for a free worker"
    if status.total <= 0:
        return f"{label}: starting"
    return f"{label}: step {status.done:,} of {status.total:,}"


@st.fragment(run_every=POLL_SECONDS)
def _poll(key: Hashable, label: str, widget: str) -> None:
    status = job_runner().status(key)
    if status is None or status.finished:
        st.rerun()  # the whole page, which now shows the result
        return
    left, right = st.columns([5, 1], vertical_alignment="center")
    left.progress(status.fraction, text=_progress_text(label, status))
    if status.owner == session_owner() and right.button("Cancel", key=f"{widget}_cancel"):
        job_runner().cancel(key, owner=session_owner())
        st.rerun()


def job_status(key: Hashable) -> JobStatus | None:
    """The status of the job ``key`` (None when it is unknown to the runner)."""
    return job_runner().status(key)


def follow_job(state_key: str, label: str) -> JobStatus | None:
    """Follow the job whose key is in ``st.session_state[state_key]``: while it runs, draw its
    progress and Cancel button (polled by a fragment) and return its status; once it has
    finished, forget it, show its error or that it was cancelled, and return its status (the
    result in ``status.result`` when done). None when this session follows no job."""
    key = st.session_state.get(state_key)
    if key is None:
        return None
    status = job_runner().status(key)
    if status is None:  # dropped by the runner (or the server restarted)
        del st.session_state[state_key]
        return None
    if not status.finished:
        _poll(key, label, state_key)
        return status
    del st.session_state[state_key]
    if status.state == "failed":
        st.error(f"{label} failed: {sentence(status.error)}")
    elif status.state == "cancelled":
        st.info(f"{label}: cancelled.")
    return status


def show_job_progress(key: Hashable, label: str, widget: str) -> None:
    """Draw the progress and Cancel button of the running job ``key`` (polled by a fragment that
    reruns the page when the job has finished); ``widget`` prefixes the widgets' keys."""
    _poll(key, label, widget)
