"""What every page shares: the database, the SEG table status, the server's safety settings
(public demo mode, data folder, signed-in user), and small Streamlit helpers.

Caching follows Streamlit's split: ``st.cache_resource`` for shared read-only objects (the database
engine and the SEG table here, the fitted ranker's spectral state on the Learn page; these can be
filled before the server starts, see :mod:`dashboard.server`), ``st.cache_data`` for values
(tables, grids), keyed by hashable ids.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from dashboard import DATA_DIR_ENV, public_mode
from ranking_core.grids.seg import (
    MISSING_SEG_MESSAGE,
    SEG_TABLE_ENV,
    SEGTable,
    SEGTableError,
    SEGTableMissing,
    load_seg_table,
)
from ranking_core.ratings import RatingSet, RatingSetError, read_rating_set
from ranking_core.storage import (
    RecordInfo,
    StorageError,
    Store,
    default_database_url,
    display_name,
    owner_label,
)

T = TypeVar("T")
PUBLIC_MESSAGE = "This is a read-only public demo: nothing is stored here."
ERROR_SENTENCE = (
    "Something went wrong on this page. Please try again; if it keeps happening, "
    "tell the person who runs this server (the details are in its log)."
)
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&])")


# The largest job a visitor of the public demo may start, per count widget (its key): at these
# sizes each page's slowest job took at most 2.1 CPU seconds on one core of the project's test
# machine (a few seconds of wall time on a busy server); above them a server's own users would
# wait on an anonymous visitor's fits.
PUBLIC_LIMITS = {
    "learn_m": 300,  # Learn page: simulated ratings (robust learning is the slowest fit)
    "curve_repeats": 1,  # Compare page: learning curves (every filter, m up to 400)
    "learners_m": 60,  # Compare page: every learner of the papers (DORM, SVRank the slowest)
    "learners_reps": 1,
    "cf_users": 300,  # CF page: synthetic users × items, per-user experiment (all learners)
    "cf_items": 400,
    "cf_test_users": 5,
    "cf_repeats": 1,
    "plan_demo_m": 150,  # Plan page: robust fit, uncertainty band and proposal
    "plan_k": 50,
}


def size_limit(key: str, limit: int) -> int:
    """The largest value of the count widget ``key``: ``limit``, or in the public demo the
    smaller cap of :data:`PUBLIC_LIMITS`."""
    return min(limit, PUBLIC_LIMITS.get(key, limit)) if public_mode() else limit


def data_dir() -> Path | None:
    """The folder whose files the pages may open (``--data-dir`` / ``RISKGRID_DATA_DIR``), or None
    (always None in public mode)."""
    folder = os.environ.get(DATA_DIR_ENV)
    if public_mode() or not folder or not Path(folder).is_dir():
        return None
    return Path(folder).resolve()


def plain(text: object) -> str:
    """``text`` with every Markdown / HTML special character escaped, for user-supplied text
    (file and column names, record names, messages quoting them) shown inside Markdown elements
    (``st.error``, ``st.caption``, labels). Line breaks become spaces."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def shown(name: object) -> str:
    """A stored name (a record's, a saver's) for Markdown elements: control characters escaped
    (:func:`~ranking_core.storage.display_name`), Markdown and HTML neutralised (:func:`plain`)."""
    return plain(display_name(str(name)))


def auth_configured() -> bool:
    """An operator configured a login (an ``[auth]`` section in ``.streamlit/secrets.toml``)."""
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets file at all
        return False


def current_user() -> str | None:
    """The signed-in user's e-mail (or name), or None without a login."""
    if not auth_configured() or not st.user.get("is_logged_in", False):
        return None
    return str(st.user.get("email") or st.user.get("name") or "") or None


class _PublicStore:
    """The store of the public demo: no records are listed, every write is refused."""

    url = "public-demo"

    def list_records(self, kind: str) -> list[RecordInfo]:
        return []

    def latest_seg_table(self) -> None:
        return None

    def __getattr__(self, name: str) -> Callable[..., object]:
        def refuse(*args: object, **kwargs: object) -> object:
            raise StorageError(PUBLIC_MESSAGE)

        return refuse


@st.cache_resource(show_spinner=False)
def _store(url: str) -> Store:
    return Store(url)


def get_store() -> Store:
    """The database of this user (``RISKGRID_DATABASE_URL`` or SQLite in the user data dir); in
    public mode a stand-in that lists nothing and stores nothing."""
    if public_mode():
        return _PublicStore()  # type: ignore[return-value]
    return _store(default_database_url())


@dataclass(frozen=True)
class SEGStatus:
    """Where the SEG table comes from, the table itself, or why there is none; ``used`` names
    the table for a report's provenance (file name, SHA-256 prefix, who provided it)."""

    table: SEGTable | None
    source: str
    problem: str | None = None
    used: str = "none"

    @property
    def available(self) -> bool:
        return self.table is not None


@st.cache_resource(show_spinner="Reading the SEG table…", max_entries=2)
def _seg_from_path(path: str, mtime: float) -> tuple[SEGTable, str]:
    """The table in the server's file and the file's SHA-256 (hex)."""
    del mtime  # part of the cache key: a replaced file is read again
    return load_seg_table(path), hashlib.sha256(Path(path).read_bytes()).hexdigest()


@st.cache_resource(show_spinner="Reading the stored SEG table…", max_entries=2)
def _seg_from_record(url: str, name: str, version: str) -> tuple[SEGTable, str]:
    """The stored table and which it is (:meth:`StoredSEGTable.describe`)."""
    del version  # part of the cache key: a re-upload under the same name is read again
    stored = _store(url).load_seg_table_record(name)
    return stored.load(), stored.describe()


def seg_status() -> SEGStatus:
    """The SEG table from ``$SEG_TABLE`` (also set by ``riskgrid dashboard --seg-table``), else the
    one stored from an earlier upload, else none (with the guidance of ``MISSING_SEG_MESSAGE``)."""
    path = os.environ.get(SEG_TABLE_ENV)
    if path:  # the page names the file, never the server's folders
        name = Path(path).name
        source = f"{SEG_TABLE_ENV} / --seg-table: {name}"
        try:
            table, digest = _seg_from_path(path, Path(path).stat().st_mtime)
            used = f"{name} (sha256 {digest[:12]}, the server's file: {SEG_TABLE_ENV})"
            return SEGStatus(table, source, used=used)
        except FileNotFoundError:
            return SEGStatus(
                None, source, f"SEG table file not found: {name}. {MISSING_SEG_MESSAGE}"
            )
        except (SEGTableError, SEGTableMissing) as exc:
            return SEGStatus(None, source, str(exc).replace(path, name))
    store = get_store()
    saved = store.list_records("seg_table")
    if saved:
        info = saved[0]
        source = (
            f"stored upload “{display_name(info.name)}”, stored by {owner_label(info.saved_by)}"
        )
        try:
            table, used = _seg_from_record(store.url, info.name, info.version)
            return SEGStatus(table, source, used=display_name(used))
        except StorageError as exc:
            return SEGStatus(None, source, str(exc))
    return SEGStatus(None, "none", MISSING_SEG_MESSAGE)


@st.cache_data(show_spinner="Reading the saved grid…", max_entries=8)
def _saved_surface(url: str, name: str, version: str) -> NDArray[np.float64]:
    del version  # cache key only: a grid saved again under the same name is read again
    return _store(url).load_learned_grid(name).grid


def saved_grid_surface(name: str) -> NDArray[np.float64]:
    """The (601, 601) risk grid of a saved learned grid, exactly as it was shown when saved."""
    store = get_store()
    info = next(r for r in store.list_records("learned_grid") if r.name == name)
    return _saved_surface(store.url, name, info.version)


def init_state(**defaults: object) -> None:
    """Set session-state keys only if they are absent (never overwrite a user's choice); in the
    public demo, a count above its cap (:data:`PUBLIC_LIMITS`) is lowered to it."""
    for key, value in defaults.items():
        if key not in st.session_state:
            st.session_state[key] = value
    if public_mode():
        for key, cap in PUBLIC_LIMITS.items():
            if key in st.session_state and st.session_state[key] > cap:
                st.session_state[key] = cap


def show_problems(
    problems: list[str] | tuple[str, ...],
    warnings: list[str] | tuple[str, ...] = (),
    kept: int | None = None,
) -> None:
    """Row-level messages of a validated upload; says how many valid rows were kept."""
    if problems:
        head = f"{len(problems)} problem(s) found" + (
            f"; the {kept} valid rows are kept" if kept is not None else ""
        )
        st.warning(head + ":\n\n" + "\n".join(f"- {plain(p)}" for p in problems))
    for message in warnings:
        st.info(plain(message))


def save_form(
    key: str,
    label: str,
    default: str,
    button: str,
    what: str,
    save: Callable[[str], object],
    next_step: str = "",
) -> None:
    """A form with a name field and a button that calls ``save(name)``; says whether ``what``
    (e.g. "rating set") was saved or why not, and after a save ``next_step`` (a clause)."""
    with st.form(key):
        name = st.text_input(label, value=default)
        if st.form_submit_button(button):
            try:
                save(name)
            except StorageError as exc:
                st.error(f"Not saved: {plain(exc)}")
            else:
                st.success(f"Saved {what} “{plain(name)}”{'; ' + next_step if next_step else ''}.")


def saved_record_picker(
    store: Store, kind: str, label: str, key: str, empty: str
) -> RecordInfo | None:
    """A select box of the records of ``kind`` saved in ``store`` and the one chosen; with none
    saved, the message ``empty`` and ``None``."""
    stored = store.list_records(kind)
    if not stored:
        st.info(empty)
        return None
    chosen = st.selectbox(label, [r.name for r in stored], key=key)
    return next(r for r in stored if r.name == chosen)


@st.cache_data(show_spinner="Checking the upload…", max_entries=8)
def uploaded_ratings(content: bytes, name: str, unit: str | None) -> RatingSet:
    """The rating set of an uploaded file (``content``, its ``name``, the glucose ``unit``
    chosen or None), read once per content for every page that takes rating uploads."""
    return read_rating_set(io.BytesIO(content), unit=unit, name=name)


def read_upload(read: Callable[[], RatingSet]) -> RatingSet | None:
    """``read()`` an uploaded rating set: a refusal becomes one error message (None), row-level
    problems are listed and the valid rows kept."""
    try:
        ratings = read()
    except RatingSetError as exc:
        st.error(f"Not usable: {plain(exc)}")
        return None
    show_problems([p.message for p in ratings.problems], ratings.warnings, kept=len(ratings.frame))
    return ratings


class _SharedResults:
    """A small LRU of computed results shared by every session (a ``cache_resource``)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.values: OrderedDict[Hashable, object] = OrderedDict()


@st.cache_resource(show_spinner=False)
def _shared_results(name: str) -> _SharedResults:
    return _SharedResults()


def shared_result(name: str, key: Hashable, compute: Callable[[], T], max_entries: int = 6) -> T:
    """``compute()`` once per ``key`` across sessions, kept in a shared cache resource.

    Unlike ``st.cache_resource`` on ``compute`` itself, this lets ``compute`` drive a progress
    bar created by the page (Streamlit cannot replay elements updated inside cached functions).
    The results are read-only afterwards (e.g. a fitted ranker whose decomposition is re-solved
    at other λ with ``resolve``)."""
    cache = _shared_results(name)
    with cache.lock:
        if key in cache.values:
            cache.values.move_to_end(key)
            return cache.values[key]  # type: ignore[return-value]
    value = compute()
    with cache.lock:
        cache.values[key] = value
        while len(cache.values) > max_entries:
            cache.values.popitem(last=False)
    return value
