"""Saved records: the rating sets, meter data, learned grids and SEG tables stored on this server;
rename or delete one, each after a confirmation (they are shared by everyone using the server)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.common import get_store, plain, public_mode
from ranking_core.storage import StorageError

KINDS = {"rating_set": "Rating sets", "meter_data": "Meter data", "learned_grid": "Learned grids",
         "seg_table": "SEG tables"}

st.title("Saved records")
if public_mode():
    st.info("The public demo stores nothing, so there are no saved records.")
    st.stop()
st.caption("Records are shared by everyone who uses this server: renaming or deleting one "
           "changes it for all of them.")
store = get_store()
kind = st.radio("Kind", list(KINDS), format_func=KINDS.get, horizontal=True, key="records_kind")
saved = store.list_records(kind)
if not saved:
    st.info(f"No {KINDS[kind].lower()} saved yet.")
    st.stop()
st.dataframe(pd.DataFrame({
    "name": [r.name for r in saved],
    "saved (UTC)": [r.created_at.strftime("%Y-%m-%d %H:%M") for r in saved],
    "saved by": [r.saved_by or "—" for r in saved],
    "rows": [r.meta.get("rows", r.meta.get("m", "")) for r in saved],
}), hide_index=True, key="records_table")

names = [r.name for r in saved]
chosen = st.selectbox("Record", names, key="records_chosen")
rename_column, delete_column = st.columns(2)
with rename_column.form("records_rename"):
    new_name = st.text_input("New name", value=chosen, max_chars=200)
    confirm_rename = st.checkbox("Yes, rename it for everyone", key="records_rename_confirm")
    if st.form_submit_button("Rename"):
        if not confirm_rename:
            st.warning("Tick the confirmation first.")
        else:
            try:
                store.rename(kind, chosen, new_name)
            except StorageError as exc:
                st.error(f"Not renamed: {plain(exc)}")
            else:
                st.session_state["records_done"] = f"Renamed to “{plain(new_name.strip())}”."
                st.rerun()
with delete_column.form("records_delete"):
    st.text(f"Delete “{chosen}”")
    confirm_delete = st.checkbox("Yes, delete it for everyone; this cannot be undone",
                                 key="records_delete_confirm")
    if st.form_submit_button("Delete"):
        if not confirm_delete:
            st.warning("Tick the confirmation first.")
        else:
            try:
                store.delete(kind, chosen)
            except StorageError as exc:
                st.error(f"Not deleted: {plain(exc)}")
            else:
                st.session_state["records_done"] = f"Deleted “{plain(chosen)}”."
                st.rerun()
if done := st.session_state.pop("records_done", None):
    st.success(done)
