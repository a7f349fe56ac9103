"""Meter report: BGM/REF pairs → the SEG tool's tables, the DTS, Clarke, Parkes and learned grids,
ISO 15197:2013 criteria, statistics by range, and the whole report as one PDF on demand."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from hashlib import sha256

import numpy as np
import pandas as pd
import streamlit as st
from numpy.typing import NDArray
from streamlit.delta_generator import DeltaGenerator

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
from dashboard.jobs import follow_job, run_job
from dashboard.meter_inputs import (
    ALL_DEVICES,
    DEMO_PAIRS,
    ORDERS,
    demo_pairs,
    paired,
    series,
    show_reading,
    unit_choice,
    uploaded,
)
from dashboard.meter_pairs import show_pairs
from dashboard.study_plan import show_study_plan
from ranking_core.grids.seg import SEGTable
from ranking_core.inputs import InputError, format_names, upload_types
from ranking_core.inputs.series import SERIES_FORMATS
from ranking_core.meter import MeterPairs, MeterReport, PairsFileError, meter_report
from ranking_core.meter.comparison.decision_levels import default_levels, parse_levels
from ranking_core.meter.comparison.summary import ComparisonSettings
from ranking_core.meter.documents.document import (
    VERDICT_COLOURS,
    report_blocks,
    report_html,
    report_pdf_file,
)
from ranking_core.meter.documents.export import safe_csv
from ranking_core.meter.drawing.display import (
    FAILS,
    NO_PAIRS,
    PASSES,
    VERDICT,
    value_text,
)
from ranking_core.meter.drawing.grid_plots import (
    figure_pdf,
    figure_png,
)
from ranking_core.meter.report import device_of
from ranking_core.meter.sections import ReportFigure, ReportTable
from ranking_core.meter.sections.verdicts import standard_verdicts
from ranking_core.meter.standards.acceptance import JudgeSettings, default_standards
from ranking_core.meter.standards.bounds import BOUNDS
from ranking_core.meter.standards.registry import DEVICES, STANDARDS

SCREEN_DPI = 120  # the error-grid plot on the page: 768 px, half the time of the download (PNG_DPI)

st.title("Meter accuracy report")
seg = seg_status()
store = get_store()
init_state(
    meter_source="Built-in demo",
    meter_parkes=1,
    meter_learned="(none)",
    meter_window=5.0,
    meter_lag=0.0,
    meter_format="auto",
)

TEXT_TYPES = upload_types()  # the formats of the input layer (READERS)
source = st.radio(
    "Pairs",
    ("Built-in demo",)
    if public_mode()
    else ("Built-in demo", "Upload", "Sensor + reference", "Saved"),
    horizontal=True,
    key="meter_source",
)


c: Sequence[DeltaGenerator]  # the columns of the row being laid out (2, 3 or 4 of them)
pairs: MeterPairs | pd.DataFrame | None = None
pairs_key: tuple = ()  # what the pairs were read from (a cache key)
given: dict[str, str] = {}  # what the report states it was made from (its provenance)
if source == "Built-in demo":
    pairs, dataset = demo_pairs(DEMO_PAIRS), "built-in demo (simulated)"
    pairs_key = ("demo", DEMO_PAIRS)
    given = {"input": f"built-in demonstration set ({DEMO_PAIRS} simulated pairs)"}
    st.caption(
        f"{DEMO_PAIRS} simulated meter readings (not real data): REF log-uniform on "
        "20..600 mg/dL, BGM = REF·exp(N(0, 0.25²))."
    )
elif source == "Sensor + reference":
    c = st.columns(2)
    sensor = c[0].file_uploader(
        "Sensor series (timestamp, glucose; or a Dexcom Clarity / LibreView export)",
        type=TEXT_TYPES,
        key="meter_sensor",
    )
    reference = c[1].file_uploader(
        "Reference series (finger-stick or lab: timestamp, glucose)",
        type=TEXT_TYPES,
        key="meter_reference",
    )
    c = st.columns(3)
    window = c[0].number_input("window ± minutes", 0.5, 60.0, step=0.5, key="meter_window")
    lag = c[1].number_input(
        "sensor lag (minutes added to sensor times)", -60.0, 60.0, step=0.5, key="meter_lag"
    )
    series_format = c[2].selectbox("format", SERIES_FORMATS, key="meter_format")
    if sensor is not None and reference is not None:
        files = f"{sensor.file_id} {reference.file_id}"
        file_unit = unit_choice(files)
        order = st.radio(
            "day/month order of the dates",
            list(ORDERS),
            horizontal=True,
            key=f"meter_order {files}",
            help="For dates written with the year "
            "last (05-04-2024). Automatic: decided from the whole file (a number "
            "above 12 can only be a day); refused when nothing decides it.",
        )
        try:
            files_read = ((sensor.getvalue(), sensor.name), (reference.getvalue(), reference.name))
            devices = series(*files_read[0], series_format, file_unit, ORDERS[order]).devices
            names = [] if devices is None else list(np.unique(devices.astype(str)))
            device = None
            if len(names) > 1:  # a Dexcom export from several sensors (Source Device ID)
                chosen = st.selectbox(
                    "sensor device",
                    [ALL_DEVICES, *names],
                    key=f"meter_device {sensor.file_id}",
                    help="The sensor "
                    "file's Source Device IDs: readings of devices that "
                    "overlap in time are paired one device at a time.",
                )
                device = None if chosen == ALL_DEVICES else str(chosen)
            pairing, pairs = paired(
                *files_read,
                series_format,
                file_unit,
                ORDERS[order],
                float(window),
                float(lag),
                device,
            )
            dataset = f"{sensor.name} + {reference.name}"
            pairs_key = (
                "paired",
                sensor.file_id,
                reference.file_id,
                series_format,
                file_unit,
                order,
                float(window),
                float(lag),
                device,
            )
            given = {
                "sensor file": sensor.name,
                "sensor file sha256": sha256(sensor.getvalue()).hexdigest(),
                "reference file": reference.name,
                "reference file sha256": sha256(reference.getvalue()).hexdigest(),
            }
        except (InputError, ValueError) as exc:
            st.error("Not usable:")
            st.text(str(exc))
        else:
            show_reading(pairing.messages)
            st.download_button(
                "Paired readings as CSV",
                safe_csv(pairing.pairs),
                "pairs.csv",
                "text/csv",
                key="meter_download_paired",
            )
elif source == "Upload":
    upload = st.file_uploader(
        f"BGM and REF columns ({format_names()})", type=TEXT_TYPES, key="meter_upload"
    )
    if upload is not None:
        file_unit = unit_choice(upload.file_id)
        upload_name = upload.name
        try:
            upload_pairs = uploaded(upload.getvalue(), upload_name, file_unit)
            pairs, dataset = upload_pairs, upload_name
            pairs_key = ("upload", upload.file_id, file_unit)
            given = {
                "input file": upload.name,
                "input file sha256": sha256(upload.getvalue()).hexdigest(),
            }
        except PairsFileError as exc:
            st.error("Not usable:")
            st.text(str(exc))
        else:
            show_reading(upload_pairs.messages)
            save_form(
                "save_meter",
                "Save these pairs as",
                upload_name,
                "Save meter data",
                "meter data",
                lambda name: store.save_meter_data(
                    name,
                    upload_pairs.frame,
                    {
                        "source": upload_name,
                        "unit": upload_pairs.glucose_unit,
                        "messages": list(upload_pairs.messages),
                    },
                    saved_by=current_user(),
                ),
            )
else:
    info = saved_record_picker(
        store,
        "meter_data",
        "Saved meter data",
        "meter_saved",
        "No saved meter data yet: upload a file and save it.",
    )
    if info is not None:
        pairs, dataset = store.load_meter_data(info.name).frame[["BGM", "REF"]], info.name
        pairs_key = ("saved", store.url, info.version)
        given = {"input": f"saved meter data {info.name} (version {info.version})"}

if pairs is None:
    st.stop()

c = st.columns(2)
parkes_type = c[0].radio(
    "Parkes grid",
    (1, 2),
    format_func=lambda t: f"type {t} diabetes",
    horizontal=True,
    key="meter_parkes",
)
learned_versions = {r.name: r.version for r in store.list_records("learned_grid")}
learned_names = ["(none)", *learned_versions]
learned_choice = c[1].selectbox(
    "Also place the pairs on a saved learned grid", learned_names, key="meter_learned"
)
learned = None if learned_choice == "(none)" else saved_grid_surface(learned_choice)
if learned is not None:
    given["learned grid"] = (
        f"saved learned grid {learned_choice} (version {learned_versions[learned_choice]})"
    )


given["SEG table"] = seg.used  # which table: file name, sha256 prefix, who provided it

# the standards: the device picks the default (ISO 15197 for a meter, iCGM for a CGM); both
# choices belong to this data (a new file starts from its own device)
detected = device_of(pairs) if isinstance(pairs, MeterPairs) else "bgm"
data_key = sha256(repr(pairs_key).encode()).hexdigest()[:12]
c = st.columns([1, 2, 1])
device_type = c[0].radio(
    "Device",
    tuple(DEVICES),
    index=tuple(DEVICES).index(detected),
    format_func=lambda d: DEVICES[d],
    key=f"meter_device_{data_key}",
    help="Detected from the file: a sensor column or sensor times mean a CGM.",
)
standards_chosen = c[1].multiselect(
    "Standards to judge by",
    tuple(STANDARDS),
    default=list(default_standards(device_type)),
    format_func=lambda n: STANDARDS[n].title,
    key=f"meter_standards_{data_key}_{device_type}",
)
bound_choice = c[2].selectbox(
    "Lower bound (A–G)",
    ("default", *BOUNDS),
    format_func=lambda b: "automatic" if b == "default" else BOUNDS[b].label,
    key="meter_bound",
    help="automatic: Korn–Graubard when the pairs have a sensor or subject column, else "
    "Clopper–Pearson",
)
range_choice = st.radio(
    "Measuring range",
    ("own", "none"),
    format_func=lambda r: (
        "each standard's own (iCGM: 40–400 mg/dL by the sensor's reading)"
        if r == "own"
        else "judge every pair"
    ),
    horizontal=True,
    key="meter_range",
)
pairs_unit = pairs.glucose_unit if isinstance(pairs, MeterPairs) else "mg/dL"
c = st.columns(2)
deming_ratio = c[0].number_input(
    "Deming error ratio λ",
    min_value=1e-3,
    max_value=1e3,
    value=1.0,
    key="meter_deming_ratio",
    help="Method comparison: σ²(reference) / σ²(device), the reference's error variance over "
    "the device's.",
)
levels_text = c[1].text_input(
    f"Decision levels ({pairs_unit}, comma-separated)",
    value=", ".join(f"{v:g}" for v in default_levels(pairs_unit)),
    key=f"meter_decision_levels_{pairs_unit}",
    help="Method comparison: the medical decision levels at which each regression's bias is "
    "given, in the file's unit.",
)
try:
    comparison = ComparisonSettings(float(deming_ratio), parse_levels(levels_text))
    comparison.levels_in(pairs_unit)
except ValueError as exc:
    st.error(f"Decision levels: {plain(exc)}; the default levels are used.")
    comparison = ComparisonSettings(float(deming_ratio))
judge = JudgeSettings(
    tuple(standards_chosen),
    measuring_range="default" if range_choice == "own" else None,
    bound=None if bound_choice == "default" else bound_choice,
)


@st.cache_data(show_spinner="Computing the report…", max_entries=8)
def cached_report(
    key: tuple,
    _pairs: MeterPairs | pd.DataFrame,
    _seg: SEGTable | None,
    _learned: NDArray[np.float64] | None,
    parkes_type: int,
    given: dict[str, str],
    judge: JudgeSettings,
    device: str,
    comparison: ComparisonSettings,
) -> MeterReport:
    """The report, computed once per (pairs, SEG table, learned grid, Parkes type, standards,
    method comparison settings)."""
    del key  # cache key only
    return meter_report(
        _pairs,
        _seg,
        _learned,
        parkes_type=parkes_type,
        provenance=given,
        judge=judge,
        device=device,
        comparison=comparison,
    )


try:
    report = cached_report(
        (
            pairs_key,
            seg.table.fingerprint if seg.table is not None else "",
            learned_choice,
            learned_versions.get(learned_choice, ""),
        ),
        pairs,
        seg.table,
        learned,
        parkes_type,
        given,
        judge,
        device_type,
        comparison,
    )
except (PairsFileError, ValueError) as exc:
    st.error(f"No report: {plain(exc)}")
    st.stop()
if not seg.available:
    st.info(
        "The SEG tables need the SEG risk table (see the sidebar); Clarke, Parkes, ISO and "
        "accuracy tables are shown without it."
    )

unit = report.glucose_unit
accuracy = report.accuracy.iloc[0]
binomial = report.binomial.iloc[0]
st.caption(
    plain(
        f"{dataset}: glucose read in {unit}"
        + (
            ""
            if unit == "mg/dL"
            else " (converted to mg/dL for the SEG tool's tables; values shown in "
            "mmol/L with mg/dL beside them)"
        )
        + "."
    )
)


def verdict(passes: object, met: str = PASSES) -> str:
    """A verdict in words, green when met and red when not (Markdown of fixed words only)."""
    if passes is None:
        return f"**{NO_PAIRS}**"
    return f":green[**{met}**]" if passes else f":red[**{FAILS}**]"


views = report.views()  # every section of the report, in order (the same as every output)
c = st.columns(4)
c[0].metric("pairs analysed", f"{int(accuracy['n']):,}")
c[1].metric("MARD", f"{accuracy['mard_percent']:.1f} %")
c[2].metric("bias", f"{accuracy['bias_percent']:+.1f} %")
# the headline follows the standards chosen: their verdicts first (ISO 15197's binomial test
# only when ISO 15197 is judged, as its own section)
c[3].markdown(
    "  \n".join(
        f"{plain(title)}: " + verdict(None if text == NO_PAIRS else not text.startswith(FAILS))
        for title, text in standard_verdicts(report.acceptance)
    )
    or "no standard chosen"
)
for caveat in report.caveats:
    st.warning(plain(caveat))


def show_table(table: ReportTable) -> None:
    """A section's table as the reader's text (human names, rounding, verdicts in colour) in a
    static table across the page: every column shown, long texts wrapped. st.table reads
    Markdown: every cell and header is escaped, so that "> 180 mg/dL" stays text."""
    text = table.reader(unit)
    colours = (
        {i: VERDICT_COLOURS.get(v, "inherit") for i, v in enumerate(text[VERDICT])}
        if VERDICT in text.columns
        else {}
    )
    text = text.map(plain)
    text.columns = [plain(c) for c in text.columns]
    styled = text.style.hide(axis="index")
    if colours:
        styled = styled.apply(
            lambda column: [f"color: {colours[i]}; font-weight: bold" for i in range(len(column))],
            subset=[VERDICT],
        )
    st.table(styled)


with st.expander("Provenance: what this report was made from"):
    st.text("\n".join(f"{item}: {value_text(value)}" for item, value in report.provenance.items()))


@st.cache_data(show_spinner="Drawing the figure…", max_entries=32)
def screen_png(key: tuple, name: str, _draw) -> bytes:
    """A section's figure as PNG for the page (the same figure as in the PDF and HTML report;
    its PNG and PDF downloads are drawn when asked for)."""
    del key, name  # cache key only
    return figure_png(_draw(), SCREEN_DPI)


report_key = (  # what the report and its downloads were made from
    dataset,
    parkes_type,
    learned_choice,
    seg.table.fingerprint if seg.table is not None else "",
    hash(report.pairs[["REF", "BGM"]].to_numpy().tobytes()),
    repr(judge),
    device_type,
)


def label_of(named: dict[str, ReportFigure]) -> Callable[[str], str]:
    """A figure's label by its name (a radio's or a select box's format_func)."""
    return lambda name: named[name].label


figures = {}  # every figure of the report, by name (for the downloads)
for view in views:  # every section in the report's order, the same as every output
    st.subheader(view.title)
    st.caption(plain(view.summary))
    for caution in view.cautions:
        st.warning(plain(caution))
    if view.about:
        with st.expander("About this section"):
            st.text("\n".join(view.about))
    for table in view.tables:
        st.markdown(f"**{plain(table.title)}**")
        show_table(table)
        if table.caption:
            st.caption(plain(table.caption))
    shown_figures = {f.name: f for f in view.figures}
    figures.update(shown_figures)
    if len(shown_figures) > 1:
        picked = st.radio(
            "figure",
            list(shown_figures),
            format_func=label_of(shown_figures),
            horizontal=True,
            key=f"meter_figure_{view.key}",
        )
        shown_figures = {picked: shown_figures[picked]}
    for figure in shown_figures.values():
        screen = screen_png(report_key, figure.name, figure.draw)
        st.image(screen, width="stretch", caption=figure.caption)

show_study_plan(report)
show_pairs(report)

st.subheader("Report and downloads")
# the report and every download are built when asked for, never on a rerun
c = st.columns(3)
if c[0].button("Build the report (PDF)", type="primary", key="meter_build_report"):
    st.session_state["meter_report_job"] = run_job(
        ("meter-report-pdf", report_key), report_pdf_file, report, seg.table, learned, name=dataset
    )
with c[0]:
    building = follow_job("meter_report_job", "Building the report")
if building is not None and building.state == "done":
    st.session_state["meter_report_pdf"] = (report_key, building.result)
built = st.session_state.get("meter_report_pdf")
if built is not None and built[0] == report_key:
    c[0].download_button(
        "Download the report (PDF)",
        built[1],
        "meter-report.pdf",
        "application/pdf",
        key="meter_download_report",
    )
c[0].download_button(
    "Report as HTML",
    lambda: report_html(report_blocks(report, seg.table, learned, name=dataset)),
    "meter-report.html",
    "text/html",
    key="meter_download_report_html",
)
tables = report.tables()
table_name = c[1].selectbox(
    "table", list(tables), format_func=lambda n: n.replace("_", " "), key="meter_download_table"
)
c[1].download_button(
    "Table as CSV",
    lambda: safe_csv(tables[table_name]),
    f"{table_name}.csv",
    "text/csv",
    key="meter_download_csv",
)
c[1].download_button(
    "All as JSON",
    lambda: json.dumps(report.to_dict(), indent=2),
    "meter-report.json",
    "application/json",
    key="meter_download_json",
)
figure_name = c[2].selectbox(
    "figure", list(figures), format_func=label_of(figures), key="meter_download_figure"
)
if figure_name is not None:
    draw = figures[figure_name].draw
    for data, suffix, mime in (  # drawn on a click, never on a rerun
        (lambda: figure_png(draw()), "png", "image/png"),
        (lambda: figure_pdf(draw()), "pdf", "application/pdf"),
    ):
        c[2].download_button(
            f"Figure as {suffix.upper()}",
            data,
            f"{figure_name}.{suffix}",
            mime,
            key=f"meter_download_figure_{suffix}",
        )
