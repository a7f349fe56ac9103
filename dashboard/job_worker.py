"""What runs first in a long job's worker process: Streamlit's notices of running bare turned
off, then the job's function imported by name and called (``call_by_name``), so that a page
module imported there (its ``@st.cache_data`` would log "No runtime found, using
MemoryCacheStorageManager") writes nothing on the server's standard error. No Streamlit is
imported by this module itself: unpickling a job imports it before anything else."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from typing import Any

__all__ = ["call_by_name", "function_name", "warm_worker"]


def function_name(function: Callable[..., Any]) -> str:
    """``module:qualified name`` of a module-level function, for :func:`call_by_name`."""
    return f"{function.__module__}:{function.__qualname__}"


def _quiet_streamlit() -> None:
    import streamlit.runtime.caching.cache_data_api as cache_data_api
    import streamlit.runtime.scriptrunner_utils.script_run_context as script_run_context

    for module in (cache_data_api, script_run_context):  # Streamlit sets their level on import
        logging.getLogger(module.__name__).setLevel(logging.ERROR)


def call_by_name(target: str, /, *args: Any, **kwargs: Any) -> Any:
    """Runs in a worker: the function ``target`` (``module:qualified name``) imported after
    Streamlit's notices are turned off, called with ``*args, **kwargs`` (any keyword, ``name``
    included, is the function's)."""
    _quiet_streamlit()
    module, _, qualified = target.partition(":")
    function: Any = importlib.import_module(module)
    for part in qualified.split("."):
        function = getattr(function, part)
    return function(*args, **kwargs)


WARM_MODULES = (
    "dashboard.learn_data",  # the Learn page's fit (ranking_core.learn)
    "ranking_core.cf.parallel",
    "ranking_core.experiments.learners",
    "ranking_core.experiments.seg",
    "ranking_core.meter.documents.document",  # the Meter page's report (matplotlib)
)


def warm_worker(*, progress: Callable[[int, int], None]) -> None:
    """Runs in a worker: import what the pages' jobs import (:data:`WARM_MODULES`), so that the
    first job a visitor starts does not wait for a fresh interpreter's imports (several
    seconds); one progress step per module, so that a server stopping meanwhile ends it at the
    next module."""
    _quiet_streamlit()
    for done, module in enumerate(WARM_MODULES):
        progress(done, len(WARM_MODULES))
        importlib.import_module(module)
    progress(len(WARM_MODULES), len(WARM_MODULES))
