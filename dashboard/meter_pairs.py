"""The Meter page's per-pair results: one row per valid pair with its zones and risks
(:func:`ranking_core.meter.documents.export.pair_results`), filtered by zone, ISO ±15 and missed
hypoglycaemia, in a table that fits the page at 1280 px, and downloadable as CSV."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ranking_core.grids.registry import get_grid
from ranking_core.meter import MeterReport
from ranking_core.meter.documents.export import pair_results, safe_csv
from ranking_core.meter.report import HYPO_MISSED_RULE

__all__ = ["PAGE_WIDTH", "PAIRS_SHOWN", "page_columns", "show_pairs"]

PAIRS_SHOWN = 5_000  # rows of the per-pair table sent to the browser (the download has all)
# px for the table: the page's main column at a 1280 px window with the sidebar open is 818 px
PAGE_WIDTH = 800
# column → (header, width in px); the caption spells out the short headers and the units
HEADERS = {
    "line": ("Line", 50),
    "BGM": ("BGM", 55),
    "REF": ("REF", 55),
    "BGM_mmol_L": ("BGM", 55),
    "REF_mmol_L": ("REF", 55),
    "included": ("Analysed", 70),
    "seg_risk": ("SEG risk", 65),
    "seg_risk_category": ("SEG category", 115),
    "learned_risk": ("Learned", 65),
    "iso_within_15": ("ISO ±15", 65),
    "hypoglycaemia_missed": ("Hypo missed", 90),
}
ZONE_WIDTH = 55
# in the download only: the category's number repeats its label, the direction is read off
# BGM and REF, and mmol/L input shows glucose in mmol/L only
DOWNLOAD_ONLY = ("seg_risk_category_id", "error_direction")


def page_columns(report: MeterReport, columns: list[str]) -> dict[str, tuple[str, int]]:
    """The per-pair columns shown on the page, in order, with their header and width in px
    (zone columns: the grid's first word, "DTS", "Clarke", "Parkes"); together at most
    :data:`PAGE_WIDTH` px whatever the report holds."""
    hidden = set(DOWNLOAD_ONLY)
    if report.glucose_unit == "mmol/L":
        hidden |= {"BGM", "REF"}
    zones = {
        f"{family}_zone": (get_grid(grid).title.split(" ")[0], ZONE_WIDTH)
        for family, grid in report.zone_grids.items()
    }
    return {c: {**HEADERS, **zones}[c] for c in columns if c not in hidden}


def show_pairs(report: MeterReport) -> None:
    """The "Every pair" section of the Meter page."""
    st.subheader("Every pair")
    results = pair_results(report)
    if results["included"].all():
        results = results.drop(columns="included")
    unit = report.glucose_unit
    st.caption(
        f"One row per valid pair of the input; BGM and REF in {unit}. Analysed: in the "
        "analysis (not above 600 mg/dL nor below 0). SEG risk: 0 none … 4 extreme. DTS, "
        "Clarke, Parkes: the pair's zone on each grid. ISO ±15: within ±15 mg/dL below "
        "100 mg/dL, ±15 % from 100 mg/dL on. Hypo missed (hypoglycaemia missed): "
        f"{HYPO_MISSED_RULE}. The download adds the error's direction, the category's number "
        "(0–7)" + (" and glucose in mg/dL." if unit == "mmol/L" else ".")
    )
    c = st.columns(4)
    zone_family = c[0].selectbox(
        "filter by zone of",
        list(report.zone_grids),
        key="meter_filter_grid",
        format_func=lambda f: get_grid(report.zone_grids[f]).title,
    )
    zones = c[1].multiselect(
        "zones",
        list(get_grid(report.zone_grids[zone_family]).zones),
        key="meter_filter_zones",
        placeholder="every zone",
    )
    outside = c[2].checkbox("only outside ISO ±15", key="meter_filter_outside")
    missed = c[3].checkbox("only hypoglycaemia missed", key="meter_filter_missed")
    shown: pd.DataFrame = results
    if zones:
        shown = shown[shown[f"{zone_family}_zone"].isin(zones)]
    if outside:
        shown = shown[shown["iso_within_15"].eq(False)]
    if missed:
        shown = shown[shown["hypoglycaemia_missed"]]
    st.caption(f"{len(shown):,} of {len(results):,} pairs shown")
    columns = page_columns(report, list(shown.columns))
    st.dataframe(
        shown[list(columns)].head(PAIRS_SHOWN),
        hide_index=True,
        key="meter_pairs",
        width="stretch",
        column_config={
            column: st.column_config.Column(label, width=width)
            for column, (label, width) in columns.items()
        },
    )
    if len(shown) > PAIRS_SHOWN:
        st.caption(f"The first {PAIRS_SHOWN:,} shown; the download has every one.")
    st.download_button(
        "These pairs as CSV",
        lambda: safe_csv(shown),
        "pairs.csv",
        "text/csv",
        key="meter_download_pairs",
    )
