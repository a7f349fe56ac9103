"""The shared sidebar: SEG table status, an upload stored for later sessions, a way to forget it.

The stored table (the uploaded file's checked bytes, never a server path) is the one SEG table
record, used by every page and report of this server, so replacing or forgetting it asks for a
confirmation first; with a login only the one who stored it may replace or forget it (an upload
by anyone else, under any file name, is refused with a sentence); the public demo offers
neither.
"""

from __future__ import annotations

import streamlit as st

from dashboard.common import current_user, get_store, plain, public_mode, seg_status, shown
from ranking_core.grids.seg import SEG_TABLE_SUFFIXES
from ranking_core.storage import StorageError, owner_label


def seg_sidebar() -> None:
    """SEG table status, an upload stored for later sessions, and a way to forget it."""
    status = seg_status()
    st.sidebar.subheader("SEG risk table")
    if public_mode():  # no server paths or stored records in the public demo
        st.sidebar.info(
            "SEG table loaded. SEG features are on."
            if status.available
            else "No SEG table: pages use the built-in reference surface and grids."
        )
        return
    if status.available:
        st.sidebar.success(f"SEG table loaded ({plain(status.source)}). SEG features are on.")
        st.sidebar.caption(f"In use: {plain(status.used)}")
    else:
        st.sidebar.warning(
            "No SEG table: pages use the built-in reference surface and grids. "
            + (f"Source tried: {plain(status.source)}. " if status.source != "none" else "")
        )
        with st.sidebar.expander("How to provide the SEG table", expanded=False):
            st.text(status.problem)
    store = get_store()
    stored = store.list_records("seg_table")
    user = current_user()
    with st.sidebar.expander("Upload a SEG table (kept for later sessions)"):
        if stored and user is not None and stored[0].saved_by != user:
            st.caption(
                f"The stored table was stored by {shown(owner_label(stored[0].saved_by))}: "
                "only they may replace or forget it."
            )
        upload = st.file_uploader(
            "RiskPairData (CSV, CSV.gz or XLSX)",
            type=[suffix.removeprefix(".") for suffix in SEG_TABLE_SUFFIXES],
            key="seg_upload",
        )
        if upload is not None:
            confirmed = not stored or st.checkbox(
                "Replace the stored table for everyone who uses this server",
                key="seg_replace_confirm",
            )
            if st.button("Check and store", key="seg_store", disabled=not confirmed):
                try:
                    store.save_seg_table(
                        upload.name,
                        content=upload.getvalue(),
                        file_name=upload.name,
                        replace=True,
                        saved_by=user,
                    )
                except StorageError as exc:
                    st.error(f"Not stored: {plain(exc)}")
                else:
                    st.success(f"Stored {plain(upload.name)}; it is used from now on.")
                    st.rerun()
        if stored:
            confirmed = st.checkbox(
                f"Forget the stored table “{shown(stored[0].name)}” for "
                "everyone who uses this server",
                key="seg_forget_confirm",
            )
            if st.button("Forget it", key="seg_forget", disabled=not confirmed):
                try:
                    store.delete("seg_table", stored[0].name, by=user)
                except StorageError as exc:
                    st.error(f"Not forgotten: {plain(exc)}")
                else:
                    st.rerun()
