"""Saved records: the rating sets, meter data, learned grids and SEG tables stored on this server;
download a saved learned grid as its files (those of ``riskgrid learn --out-dir``), rename or
delete a record, each after a confirmation (records are shared by everyone using the server; with
a login only the one who saved a record may rename or delete it)."""

from __future__ import annotations

import io
import zipfile
from functools import partial

import pandas as pd
import streamlit as st

from dashboard.common import auth_configured, current_user, get_store, public_mode, shown
from ranking_core.grids.files import GRID_FILES, grid_file_contents
from ranking_core.record_kinds import RECORD_KINDS
from ranking_core.storage import StorageError, StoredGrid, display_name

MIME = {
    "grid.npy": "application/octet-stream",
    "grid.csv": "text/csv",
    "grid.png": "image/png",
    "grid.json": "application/json",
}

st.title("Saved records")
if public_mode():
    st.info("The public demo keeps no records.")
    st.stop()
user = current_user()
st.caption(
    "Records are shared by everyone who uses this server"
    + (
        ": everyone sees them, only the one who saved a record may rename or delete it."
        if auth_configured()
        else ": renaming or deleting one changes it for all of them."
    )
)
store = get_store()
kind = st.radio(
    "Kind",
    list(RECORD_KINDS),
    format_func=lambda k: RECORD_KINDS[k].heading,
    horizontal=True,
    key="records_kind",
)
saved = store.list_records(kind)
if not saved:
    st.info(f"No {RECORD_KINDS[kind].label} saved yet.")
    st.stop()
st.dataframe(
    pd.DataFrame(
        {
            "name": [display_name(r.name) for r in saved],
            "saved (UTC)": [r.created_at.strftime("%Y-%m-%d %H:%M") for r in saved],
            "saved by": [display_name(r.saved_by or "—") for r in saved],
            "ratings / rows": [r.meta.get("rows", r.meta.get("m", "")) for r in saved],
        }
    ),
    hide_index=True,
    key="records_table",
)

# chosen by name (unique per kind), never by position: a record saved meanwhile by someone else
# must not move the choice onto another record
by_name = {r.name: r for r in saved}
chosen = st.selectbox("Record", list(by_name), format_func=display_name, key="records_chosen")
info = by_name.get(chosen, saved[0])


@st.cache_data(show_spinner="Reading the saved grid…", max_entries=4)
def saved_grid(url: str, name: str, version: str) -> StoredGrid:
    del url, version  # cache keys only (the store is this server's one database)
    return get_store().load_learned_grid(name)


@st.cache_data(show_spinner=False, max_entries=2)
def grid_files(url: str, name: str, version: str) -> dict[str, bytes]:
    """The files of a saved learned grid (``grid.json``: the metadata stored with it), built
    when a download is first clicked."""
    stored = saved_grid(url, name, version)
    return grid_file_contents(stored.grid, stored.metadata)


def grid_file(key: tuple[str, str, str], name: str) -> bytes:
    """One file of a saved learned grid (:func:`grid_files`), built when its download is clicked."""
    return grid_files(*key)[name]


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for file_name, content in files.items():
            archive.writestr(file_name, content)
    return buffer.getvalue()


def grid_downloads(key: tuple[str, str, str]) -> None:
    """The saved grid's summary and a download button per file, and one for all of them."""
    try:
        stored = saved_grid(*key)
    except StorageError as exc:
        st.error(f"Cannot be read: {shown(exc)}")
        return
    st.caption(
        f"λ {stored.lam:.4g} · {stored.metadata.get('ratings', '?')} ratings · ratings "
        f"checksum {shown(stored.checksum)} · riskgrid {shown(stored.riskgrid_version)}"
    )
    st.caption(
        "Download the grid as saved (rows: reference 0–600 mg/dL, columns: measured "
        "0–600 mg/dL, risk 0–4), the files `riskgrid learn --out-dir` writes:"
    )
    c = st.columns(len(GRID_FILES) + 1)
    for column, file_name in zip(c, GRID_FILES, strict=False):
        column.download_button(
            file_name,
            partial(grid_file, key, file_name),
            file_name,
            MIME[file_name],
            key=f"records_dl_{file_name}",
            on_click="ignore",
        )
    c[-1].download_button(
        "all (zip)",
        lambda: zipped(grid_files(*key)),
        "grid.zip",
        "application/zip",
        key="records_dl_zip",
        on_click="ignore",
    )


if kind == "learned_grid":
    grid_downloads((store.url, info.name, info.version))

if user is not None and info.saved_by != user:
    owner = shown(info.saved_by) if info.saved_by else "someone without a login"
    st.info(f"“{shown(info.name)}” was saved by {owner}: only they can rename or delete it.")
    st.stop()
rename_column, delete_column = st.columns(2)
with rename_column.form("records_rename"):
    new_name = st.text_input("New name", value=display_name(info.name), max_chars=200)
    confirm_rename = st.checkbox("Yes, rename it for everyone", key="records_rename_confirm")
    if st.form_submit_button("Rename"):
        if not confirm_rename:
            st.warning("Tick the confirmation first.")
        else:
            try:
                store.rename(kind, info.name, new_name, by=user)
            except StorageError as exc:
                st.error(f"Not renamed: {shown(exc)}")
            else:
                st.session_state["records_done"] = f"Renamed to “{shown(new_name.strip())}”."
                st.rerun()
with delete_column.form("records_delete"):
    st.text(f"Delete “{display_name(info.name)}”")
    confirm_delete = st.checkbox(
        "Yes, delete it for everyone; this cannot be undone", key="records_delete_confirm"
    )
    if st.form_submit_button("Delete"):
        if not confirm_delete:
            st.warning("Tick the confirmation first.")
        else:
            try:
                store.delete(kind, info.name, by=user)
            except StorageError as exc:
                st.error(f"Not deleted: {shown(exc)}")
            else:
                st.session_state["records_done"] = f"Deleted “{shown(info.name)}”."
                st.rerun()
if done := st.session_state.pop("records_done", None):
    st.success(done)
