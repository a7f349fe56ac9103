"""The shared sidebar: SEG table status, an upload stored for later sessions, a way to forget it."""

from __future__ import annotations

import streamlit as st

from dashboard.common import get_store, seg_status
from ranking_core.grids.seg import SEGTableError, SEGTableMissing
from ranking_core.storage import StorageError


def seg_sidebar() -> None:
    """SEG table status, an upload stored for later sessions, and a way to forget it."""
    status = seg_status()
    st.sidebar.subheader("SEG risk table")
    if status.available:
        st.sidebar.success(f"SEG table loaded ({status.source}). SEG features are on.")
    else:
        st.sidebar.warning(
            "No SEG table: pages use the built-in reference surface and grids. "
            + (f"Source tried: {status.source}. " if status.source != "none" else "")
        )
        with st.sidebar.expander("How to provide the SEG table", expanded=False):
            st.write(status.problem)
    with st.sidebar.expander("Upload a SEG table (kept for later sessions)"):
        upload = st.file_uploader(
            "RiskPairData (CSV, CSV.gz or XLSX)", type=["csv", "gz", "xlsx"], key="seg_upload"
        )
        if upload is not None and st.button("Check and store", key="seg_store"):
            try:
                get_store().save_seg_table(upload.name, content=upload.getvalue(),
                                           file_name=upload.name, replace=True)
            except (SEGTableError, SEGTableMissing, StorageError) as exc:
                st.error(f"Not stored: {exc}")
            else:
                st.success(f"Stored {upload.name}; it is used from now on.")
                st.rerun()
        stored = get_store().list_records("seg_table")
        if stored and st.button(f"Forget the stored table “{stored[0].name}”", key="seg_forget"):
            get_store().delete("seg_table", stored[0].name)
            st.rerun()
