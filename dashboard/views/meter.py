"""Meter report: BGM/REF pairs → the SEG tool's tables, the DTS, Clarke, Parkes and learned grids,
ISO 15197:2013 criteria, statistics by range, and the whole report as one PDF on demand."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.common import (
    current_user,
    get_store,
    init_state,
    plain,
    public_mode,
    save_form,
    saved_grid_surface,
    saved_record_picker,
    seg_status,
)
from ranking_core.grids.registry import get_grid
from ranking_core.grids.seg import MISSING_SEG_MESSAGE
from ranking_core.inputs import MGDL_PER_MMOLL, UNITS, InputError, from_mgdl
from ranking_core.inputs.series import SERIES_FORMATS, read_series
from ranking_core.meter import MeterPairs, MeterReport, PairsFileError, meter_report, read_pairs
from ranking_core.meter.document import report_blocks, report_html, report_pdf
from ranking_core.meter.export import figure_html, safe_csv
from ranking_core.meter.figures import bland_altman_figure
from ranking_core.meter.grid_plots import PNG_DPI, figure_png, grid_plot
from ranking_core.meter.pairing import Pairing, pair_series
from ranking_core.panels import simulate_panel

DEMO_PAIRS = 200  # pairs in the built-in demonstration set
SCREEN_DPI = 120  # the error-grid plot on the page: 768 px, half the time of the download (PNG_DPI)

st.title("Meter accuracy report")
seg = seg_status()
store = get_store()
init_state(meter_source="Built-in demo", meter_parkes=1, meter_learned="(none)",
           meter_window=5.0, meter_lag=0.0, meter_format="auto", meter_show_unit=UNITS[0])


@st.cache_data(show_spinner=False, max_entries=4)
def demo_pairs(n: int) -> pd.DataFrame:
    """Simulated meter readings near the diagonal (the panel simulator's near-diagonal design:
    estimate = REF·exp(N(0, 0.25²))), as BGM/REF pairs."""
    panel = simulate_panel(n, design="near-diagonal", outlier_fraction=0.0, random_state=7)
    return pd.DataFrame({"BGM": panel["estimate"], "REF": panel["reference"]})


@st.cache_data(show_spinner="Reading the pairs…", max_entries=8)
def uploaded(content: bytes, name: str, unit: str | None) -> MeterPairs:
    return read_pairs(io.BytesIO(content), name=name, unit=unit)


@st.cache_data(show_spinner="Reading and pairing the series…", max_entries=4)
def paired(sensor: tuple[bytes, str], reference: tuple[bytes, str], format: str,
           unit: str | None, window: float, lag: float) -> Pairing:
    series = [read_series(content, format, unit=unit, name=name, unit_option="the unit")
              for content, name in (sensor, reference)]
    return pair_series(*series, window=window, lag=lag)


def show_reading(messages: list[str] | tuple[str, ...]) -> None:
    """The reader's summary and its refusals and notes, as plain text (never Markdown)."""
    st.text(messages[0])
    if len(messages) > 1:
        with st.expander(f"Refused rows and notes ({len(messages) - 1})"):
            st.text("\n".join(messages[1:]))


TEXT_TYPES = ["csv", "tsv", "txt", "xlsx"]
source = st.radio("Pairs", ("Built-in demo",) if public_mode() else (
    "Built-in demo", "Upload", "Sensor + reference", "Saved"), horizontal=True, key="meter_source")
if source in ("Upload", "Sensor + reference"):
    unit = st.radio("glucose unit of the files", UNITS, index=None, horizontal=True,
                    key="meter_unit", help="Not chosen: the unit named in the column headers, "
                    "else mg/dL; values that look like mmol/L are refused until it is chosen. "
                    f"mmol/L is converted with {MGDL_PER_MMOLL} mg/dL per mmol/L.")
pairs: MeterPairs | pd.DataFrame | None = None
pairs_key: tuple = ()  # what the pairs were read from (a cache key)
if source == "Built-in demo":
    pairs, dataset = demo_pairs(DEMO_PAIRS), "built-in demo (simulated)"
    pairs_key = ("demo", DEMO_PAIRS)
    st.caption(f"{DEMO_PAIRS} simulated meter readings (not real data): REF log-uniform on "
               "20..600 mg/dL, BGM = REF·exp(N(0, 0.25²)).")
elif source == "Sensor + reference":
    c = st.columns(2)
    sensor = c[0].file_uploader("Sensor series (timestamp, glucose; or a Dexcom Clarity / "
                                "LibreView export)", type=TEXT_TYPES, key="meter_sensor")
    reference = c[1].file_uploader("Reference series (finger-stick or lab: timestamp, "
                                   "glucose)", type=TEXT_TYPES, key="meter_reference")
    c = st.columns(3)
    window = c[0].number_input("window ± minutes", 0.5, 60.0, step=0.5, key="meter_window")
    lag = c[1].number_input("sensor lag (minutes added to sensor times)", -60.0, 60.0,
                            step=0.5, key="meter_lag")
    series_format = c[2].selectbox("format", SERIES_FORMATS, key="meter_format")
    if sensor is not None and reference is not None:
        try:
            pairing = paired((sensor.getvalue(), sensor.name),
                             (reference.getvalue(), reference.name), series_format, unit,
                             float(window), float(lag))
            pairs, dataset = pairing.meter_pairs(), f"{sensor.name} + {reference.name}"
            pairs_key = ("paired", sensor.file_id, reference.file_id, series_format, unit,
                         float(window), float(lag))
        except (InputError, ValueError) as exc:
            st.error("Not usable:")
            st.text(str(exc))
        else:
            show_reading(pairing.messages)
            st.download_button("Paired readings as CSV", safe_csv(pairing.pairs),
                               "pairs.csv", "text/csv", key="meter_download_paired")
elif source == "Upload":
    upload = st.file_uploader("BGM and REF columns (CSV, TSV or XLSX)", type=TEXT_TYPES,
                              key="meter_upload")
    if upload is not None:
        try:
            pairs, dataset = uploaded(upload.getvalue(), upload.name, unit), upload.name
            pairs_key = ("upload", upload.file_id, unit)
        except PairsFileError as exc:
            st.error("Not usable:")
            st.text(str(exc))
        else:
            show_reading(pairs.messages)
            save_form("save_meter", "Save these pairs as", upload.name, "Save meter data",
                      "meter data", lambda name: store.save_meter_data(name, pairs.frame, {
                          "source": upload.name, "unit": pairs.glucose_unit,
                          "messages": list(pairs.messages)}, saved_by=current_user()))
else:
    info = saved_record_picker(store, "meter_data", "Saved meter data", "meter_saved",
                               "No saved meter data yet: upload a file and save it.")
    if info is not None:
        pairs, dataset = store.load_meter_data(info.name).frame[["BGM", "REF"]], info.name
        pairs_key = ("saved", store.url, info.version)

if pairs is None:
    st.stop()

c = st.columns(2)
parkes_type = c[0].radio("Parkes grid", (1, 2), format_func=lambda t: f"type {t} diabetes",
                         horizontal=True, key="meter_parkes")
learned_versions = {r.name: r.version for r in store.list_records("learned_grid")}
learned_names = ["(none)", *learned_versions]
learned_choice = c[1].selectbox("Also place the pairs on a saved learned grid", learned_names,
                                key="meter_learned")
learned = None if learned_choice == "(none)" else saved_grid_surface(learned_choice)



@st.cache_data(show_spinner="Computing the report…", max_entries=8)
def cached_report(key: tuple, _pairs: MeterPairs | pd.DataFrame, _seg: object,
                  _learned: object, parkes_type: int) -> MeterReport:
    """The report, computed once per (pairs, SEG table, learned grid, Parkes type)."""
    del key  # cache key only
    return meter_report(_pairs, _seg, _learned, parkes_type=parkes_type)


try:
    report = cached_report(
        (pairs_key, seg.table.fingerprint if seg.available else "",
         learned_choice, learned_versions.get(learned_choice, "")),
        pairs, seg.table, learned, parkes_type)
except (PairsFileError, ValueError) as exc:
    st.error(f"No report: {plain(exc)}")
    st.stop()
if not seg.available:
    st.info("The SEG tables need the SEG risk table (see the sidebar); Clarke, Parkes, ISO and "
            "accuracy tables are shown without it.")

accuracy = report.accuracy.iloc[0]
binomial = report.binomial.iloc[0]
c = st.columns(4)
c[0].metric("pairs analysed", f"{int(binomial['n'])}")
c[1].metric("MARD", f"{accuracy['mard_percent']:.2f} %")
c[2].metric("bias", f"{accuracy['bias_percent']:+.2f} %")
c[3].metric("within ISO 15 mg/dL / 15 %", f"{binomial['compliant_percent']:.1f} %",
            "meets the binomial test" if binomial["meets"] else "fails the binomial test",
            delta_color="normal" if binomial["meets"] else "inverse")
c = st.columns(2)
for number, (column, criterion) in enumerate(zip(c, report.iso_criteria.itertuples(),
                                                  strict=True), start=1):
    column.metric(f"ISO 15197:2013 criterion {number} (≥ {criterion.required_percent:.0f} %)",
                  f"{criterion.percent:.2f} %", "passes" if criterion.passes else "fails",
                  delta_color="normal" if criterion.passes else "inverse",
                  help=plain(f"{criterion.criterion}; 95 % interval (Wilson) "
                             f"{criterion.ci_lower_percent:.2f}–"
                             f"{criterion.ci_upper_percent:.2f} %"))
for caveat in report.caveats:
    st.warning(plain(caveat))

notes = [m for m in report.messages if m != MISSING_SEG_MESSAGE]
if notes:
    with st.expander(f"Notes on the data ({len(notes)})"):
        st.text("\n".join(notes))

included = report.pairs[report.pairs["included"]]
ref, bgm = included["REF"].to_numpy(), included["BGM"].to_numpy()
surfaces = {"seg": seg.table} if seg.available else {}
surfaces.update(dict.fromkeys(report.zone_grids.values()))
if learned is not None:
    surfaces["learned"] = learned


@st.cache_data(show_spinner="Drawing the error grid…", max_entries=16)
def grid_png(name: str, ref: np.ndarray, bgm: np.ndarray, surface_key: str,
             _surface: object, dpi: int = PNG_DPI) -> bytes:
    """The report's plot of one grid (the same figure as in the PDF and HTML report)."""
    return figure_png(grid_plot(name, ref, bgm, surface=_surface), dpi=dpi)


surface_keys = {"seg": seg.table.fingerprint if seg.available else "",
                "learned": f"{learned_choice} {learned_versions.get(learned_choice, '')}"}
c = st.columns(2)
shown_grid = c[0].radio("error grid", list(surfaces), format_func=lambda n: get_grid(n).title,
                        horizontal=True, key="meter_grid")
c[0].caption(plain(get_grid(shown_grid).purpose))
c[0].image(grid_png(shown_grid, ref, bgm, surface_keys.get(shown_grid, ""),
                    surfaces[shown_grid], SCREEN_DPI), width="stretch")
bland_altman = bland_altman_figure(report)
c[1].plotly_chart(bland_altman, key="meter_fig_bland_altman")

tables = report.tables()
titles = report.titles()
left, right = st.columns(2)
for i, (name, table) in enumerate(tables.items()):
    column = left if i % 2 == 0 else right
    column.subheader(titles[name])
    if name in report.zone_grids:
        column.caption(plain(get_grid(report.zone_grids[name]).purpose))
    column.dataframe(table, hide_index=True, key=f"meter_table_{name}")
every_pair = st.expander(f"Every pair ({len(report.pairs)})", key="meter_pairs_open",
                         on_change="rerun")  # the table is sent only while open
if every_pair.open:
    show_unit = every_pair.radio("show glucose in", UNITS, horizontal=True, key="meter_show_unit")
    shown = report.pairs.assign(**{column: from_mgdl(report.pairs[column].to_numpy(float),
                                                     show_unit) for column in ("BGM", "REF")})
    every_pair.caption(f"BGM and REF in {show_unit}; the tables above are computed in whole "
                       f"mg/dL (1 mmol/L = {MGDL_PER_MMOLL} mg/dL).")
    every_pair.dataframe(shown, hide_index=True, key="meter_pairs")

st.subheader("Report and downloads")
# the report and every download are built when asked for, never on a rerun
report_key = (dataset, parkes_type, learned_choice, surface_keys["seg"],
              hash(report.pairs[["REF", "BGM"]].to_numpy().tobytes()))
c = st.columns(3)
if c[0].button("Build the report (PDF)", type="primary", key="meter_build_report"):
    with st.spinner("Building the report: tables, error-grid plots, PDF…"):
        document = report_blocks(report, seg.table, learned, name=dataset)
        st.session_state["meter_report_pdf"] = (report_key, report_pdf(document))
built = st.session_state.get("meter_report_pdf")
if built is not None and built[0] == report_key:
    c[0].download_button("Download the report (PDF)", built[1], "meter-report.pdf",
                         "application/pdf", key="meter_download_report")
c[0].download_button(
    "Report as HTML", lambda: report_html(report_blocks(report, seg.table, learned,
                                                        name=dataset)),
    "meter-report.html", "text/html", key="meter_download_report_html")
table_name = c[1].selectbox("table", list(tables), format_func=titles.get,
                            key="meter_download_table")
c[1].download_button("Table as CSV", lambda: safe_csv(tables[table_name]), f"{table_name}.csv",
                     "text/csv", key="meter_download_csv")
c[1].download_button("Every pair as CSV", lambda: safe_csv(report.pairs), "pairs.csv",
                     "text/csv", key="meter_download_pairs")
c[1].download_button("All as JSON", lambda: json.dumps(report.to_dict(), indent=2),
                     "meter-report.json", "application/json", key="meter_download_json")
c[2].download_button(f"{get_grid(shown_grid).title} plot as PNG",
                     lambda: grid_png(shown_grid, ref, bgm, surface_keys.get(shown_grid, ""),
                                      surfaces[shown_grid]),
                     f"{shown_grid}.png", "image/png", key="meter_download_grid_png")
c[2].download_button("Bland–Altman plot as HTML", lambda: figure_html(bland_altman, "cdn"),
                     "bland_altman.html", "text/html", key="meter_download_bland_altman_html")
