"""Compare grids: any two of SEG, the built-in surface, every zone grid of the registry (DTS,
Clarke, Parkes 1/2) and saved learned grids; learning curves (misranking vs m per filter, the
a-priori λ(m) rule); and every learner of the source papers side by side
(``ranking_core.experiments.learners.compare_learners``)."""

from __future__ import annotations

import html
import textwrap

import numpy as np
import pandas as pd
import streamlit as st
from numpy.typing import NDArray

from dashboard import figures
from dashboard.common import (
    get_store,
    init_state,
    plain,
    public_mode,
    saved_grid_surface,
    seg_status,
    size_limit,
)
from dashboard.jobs import follow_job, run_job
from ranking_core.experiments.learners import compare_learners
from ranking_core.experiments.seg import learning_curves
from ranking_core.filters import FILTERS
from ranking_core.grids.compare import DIFFERENCE_BINS, RISK_CATEGORIES, compare_grids
from ranking_core.grids.files import GRID_FILE_SUFFIXES, GridFileError, read_grid_file
from ranking_core.grids.learned import GLUCOSE_AXIS
from ranking_core.grids.registry import get_grid
from ranking_core.grids.seg import SEGTable
from ranking_core.grids.zone_codes import zone_grid, zone_grid_names
from ranking_core.learners import LEARNERS
from ranking_core.panels import parkes_surface

BUILT_IN = "built-in surface (smoothed Parkes type 1)"
# every zone grid of the registry, its zones A–E drawn as risks 0–4
ZONE_GRIDS = {f"{get_grid(name).title} zones (A–E = 0–4)": name for name in zone_grid_names()}
HEATMAP_HEIGHT = 560  # px: a square plot of about 465 px, its colour bar as tall


def title_lines(text: str) -> str:
    """A figure title that fits its figure: escaped (Plotly titles read HTML), wrapped at 60
    characters."""
    return "<br>".join(html.escape(line) for line in textwrap.wrap(text, 60))


LEARNER_DEFAULTS = ["spectral-lavrentiev", "spectral-iterated-lavrentiev", "regressor", "nystrom"]

st.title("Compare grids")
seg = seg_status()
store = get_store()


@st.cache_data(show_spinner="Checking the grid file…", max_entries=4)
def grid_file(content: bytes, name: str) -> NDArray:
    return read_grid_file(content, name)


upload = None
if not public_mode():  # the public demo takes no uploads
    with st.expander(
        "Add a grid file (grid.npy or grid.csv, as written by the Learn page, riskgrid learn "
        "or riskgrid elicit)"
    ):
        upload = st.file_uploader(
            "Grid file: 601 × 601 risks, rows = reference, columns = measured 0–600 mg/dL",
            type=[suffix.removeprefix(".") for suffix in GRID_FILE_SUFFIXES],
            key="compare_upload",
        )
uploaded_grids: dict[str, NDArray] = {}
if upload is not None:
    try:
        uploaded_grids[f"file: {upload.name}"] = grid_file(upload.getvalue(), upload.name)
    except GridFileError as exc:
        st.error(f"Not usable: {plain(exc)}")


def grid_by_name(name: str) -> NDArray:
    if name in uploaded_grids:
        return uploaded_grids[name]
    if name == "SEG" and seg.table is not None:  # offered only with a table
        return seg.table.absolute
    if name == BUILT_IN:
        return parkes_surface()
    if name in ZONE_GRIDS:
        return zone_grid(ZONE_GRIDS[name])
    return saved_grid_surface(name.removeprefix("learned: "))


names = (
    (["SEG"] if seg.available else [])
    + [BUILT_IN, *ZONE_GRIDS]
    + [f"learned: {r.name}" for r in store.list_records("learned_grid")]
    + list(uploaded_grids)
)
# by default the built-in surface (or SEG) against the zones it was smoothed from
init_state(
    compare_a=names[0],
    compare_b=next(label for label, grid in ZONE_GRIDS.items() if grid == "parkes-type1"),
)
for state_key in ("compare_a", "compare_b"):  # a deleted grid or a removed SEG table
    if st.session_state[state_key] not in names:
        st.session_state[state_key] = names[0]

picks = st.columns(2)
name_a = picks[0].selectbox("reference grid", names, key="compare_a")
name_b = picks[1].selectbox("other grid", names, key="compare_b")
grid_a, grid_b = grid_by_name(name_a), grid_by_name(name_b)
title_a, title_b = title_lines(f"reference: {name_a}"), title_lines(f"other: {name_b}")
comparison = compare_grids(grid_a, grid_b)

stats = st.columns(4)
stats[0].metric(
    "misranking",
    f"{100 * comparison.misranking:.2f} %",
    help=f"pairwise misranking of the other grid against the reference on "
    f"{comparison.n_points:,} random lattice points (Kriukova et al. 2014, eq. 1)",
)
stats[1].metric("risk category agreement", f"{100 * comparison.category_agreement:.1f} %")
stats[2].metric("mean |Δ|", f"{comparison.mean_abs_difference:.3f}")
stats[3].metric("max |Δ|", f"{comparison.max_abs_difference:.3f}")

# one grid per row, the width of the page: each plot at least 400 px wide at 1280 px
st.plotly_chart(
    figures.risk_heatmap(grid_a, GLUCOSE_AXIS, title_a, height=HEATMAP_HEIGHT), key="compare_fig_a"
)
st.plotly_chart(
    figures.risk_heatmap(grid_b, GLUCOSE_AXIS, title_b, contours=grid_a, height=HEATMAP_HEIGHT),
    key="compare_fig_b",
)
st.caption(
    "Black lines on the other grid: the reference grid's risk grade borders (risk 0.5, "
    "1.5, 2.5 and 3.5)."
)
st.plotly_chart(
    figures.difference_heatmap(
        grid_b - grid_a, GLUCOSE_AXIS, "other − reference", height=HEATMAP_HEIGHT
    ),
    key="compare_fig_difference",
)
charts = st.columns(2)
charts[0].plotly_chart(
    figures.shares_bar(
        DIFFERENCE_BINS,
        comparison.difference_shares,
        "|other − reference| (Kriukova et al. 2014, Table 3 bins)",
        "|Δ risk|",
    ),
    key="compare_fig_shares",
)
charts[1].plotly_chart(
    figures.confusion_heatmap(
        comparison.category_confusion, RISK_CATEGORIES, "risk categories", title_a, title_b
    ),
    key="compare_fig_confusion",
)
st.dataframe(
    pd.DataFrame(
        {"|Δ| bin": DIFFERENCE_BINS, "% of lattice points": 100 * comparison.difference_shares}
    ),
    hide_index=True,
    key="compare_shares_table",
)

# -- learning curves ------------------------------------------------------------------------------
st.header("Learning curves")
curve_reference = "SEG" if seg.available else BUILT_IN
st.caption(
    f"Ratings drawn uniformly on [0, 600]² with their {curve_reference} risk; half fit, "
    "half choose λ (Kriukova et al. 2014, §4.3); misranking measured on new points. "
    "The a-priori rule "
    "λ(m) = α·m^(−β/2) is fitted on subsets of m = 20..50 (Kriukova et al. 2014, §4.4)."
)
init_state(
    curve_filters=["lavrentiev", "iterated-lavrentiev"], curve_sizes=[50, 100, 200], curve_repeats=3
)
curve_inputs = st.columns(3)
chosen_filters = curve_inputs[0].multiselect("filters", sorted(FILTERS), key="curve_filters")
sizes = curve_inputs[1].multiselect("m", [50, 100, 200, 300, 400], key="curve_sizes")
repeats = curve_inputs[2].number_input(
    "repetitions", 1, size_limit("curve_repeats", 20), key="curve_repeats"
)


if st.button("Run learning curves", key="curve_run", disabled=not (chosen_filters and sizes)):
    table = seg.table if seg.table is not None else SEGTable(np.asarray(parkes_surface()), BUILT_IN)
    curve_key = (curve_reference, tuple(chosen_filters), tuple(sorted(sizes)), int(repeats))
    st.session_state["curve_job"] = run_job(
        ("learning-curves", *curve_key), learning_curves, table, *curve_key[1:]
    )
curve_job = follow_job("curve_job", "Learning curves")
if curve_job is not None and curve_job.state == "done":
    st.session_state["curve_results"] = curve_job.result

results = st.session_state.get("curve_results")
if results:
    curves = results["curves"]
    m_values = sorted({int(m) for v in curves.values() for m in v["sizes"]})
    series = {
        k: [100 * v["sizes"][str(m)]["misranking_mean"] for m in m_values]
        for k, v in curves.items()
    }
    errors = {
        k: [100 * v["sizes"][str(m)]["misranking_sd"] for m in m_values] for k, v in curves.items()
    }
    curve_charts = st.columns(2)
    curve_charts[0].plotly_chart(
        figures.line_chart(
            m_values, series, "misranking vs m (mean ± sd)", "m", "misranking (%)", errors=errors
        ),
        key="curve_fig",
    )
    rule, m_max = results["apriori"], max(m_values)
    curve_charts[1].plotly_chart(
        figures.apriori_plot(rule.sizes, rule.lam_plus, rule.alpha, rule.beta, m_max),
        key="curve_fig_apriori",
    )
    applied = results["apriori_applied"]["sizes"][str(m_max)]
    rows = [
        {
            "learner": k,
            **{f"m = {m}": f"{s[i]:.2f} ± {errors[k][i]:.2f} %" for i, m in enumerate(m_values)},
        }
        for k, s in series.items()
    ]
    rows.append(
        {
            "learner": f"a-priori λ(m), lavrentiev, at m = {m_max}",
            f"m = {m_max}": f"{100 * applied['misranking_mean']:.2f} ± "
            f"{100 * applied['misranking_sd']:.2f} %",
        }
    )
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="curve_table")
    st.caption(
        f"A-priori rule on one draw of m = {m_max}: α = {rule.alpha:.4g} ± "
        f"{rule.alpha_sd:.2g}, β = {rule.beta:.3f} ± {rule.beta_sd:.2g}."
    )

# -- learners of the source papers ----------------------------------------------------------------
st.header("Learners of the source papers")
st.caption(
    f"Every learner of the shared registry on the same draws of m ratings with their "
    f"{curve_reference} risk: half fit, half choose the learner's parameter by misranking "
    "(Kriukova et al. 2014, §4.3); misranking measured on 1,000 new points. "
    "Learners with a memory "
    "limit use at most their largest m. The CLI runs the same: "
    "`riskgrid learners compare`."
)
init_state(learners_chosen=LEARNER_DEFAULTS, learners_m=100, learners_reps=1)
learner_inputs = st.columns([3, 1, 1])
chosen_learners = learner_inputs[0].multiselect(
    "learners",
    list(LEARNERS),
    key="learners_chosen",
    format_func=lambda name: f"{name}: {LEARNERS[name].description}",
)
learners_m = learner_inputs[1].number_input(
    "ratings m", 20, size_limit("learners_m", 2000), step=20, key="learners_m"
)
learners_reps = learner_inputs[2].number_input(
    "repetitions", 1, size_limit("learners_reps", 20), key="learners_reps"
)

if st.button("Run learners", key="learners_run", disabled=not chosen_learners):
    reference = seg.table if seg.table is not None else parkes_surface()
    learners_key = (
        curve_reference,
        seg.table.fingerprint if seg.table is not None else "",
        tuple(chosen_learners),
        int(learners_m),
        int(learners_reps),
    )
    st.session_state["learners_job"] = run_job(
        ("learners", *learners_key), compare_learners, reference, *learners_key[2:]
    )
learners_job = follow_job("learners_job", "Learners")
if learners_job is not None and learners_job.state == "done":
    st.session_state["learner_results"] = learners_job.result

learner_rows = st.session_state.get("learner_results")
if learner_rows:
    frame = pd.DataFrame(
        {
            "learner": [r["learner"] for r in learner_rows],
            "m": [r["m"] for r in learner_rows],
            "misranking %": [100 * r["misranking_mean"] for r in learner_rows],
            "sd %": [100 * r["misranking_sd"] for r in learner_rows],
            "parameter": [f"{r['param']} ≈ {r['value_median']:.3g}" for r in learner_rows],
            "fit s": [r["seconds_per_fit"] for r in learner_rows],
            "note": [f"capped at m = {r['m']}" if r["capped"] else "" for r in learner_rows],
        }
    )
    learner_charts = st.columns(2)
    learner_charts[0].plotly_chart(
        figures.error_bars(
            frame["learner"],
            frame["misranking %"],
            frame["sd %"],
            "misranking per learner (mean ± sd)",
            "misranking (%)",
        ),
        key="learners_fig",
    )
    learner_charts[1].dataframe(
        frame,
        hide_index=True,
        key="learners_table",
        column_config={
            "misranking %": st.column_config.NumberColumn(format="%.2f"),
            "sd %": st.column_config.NumberColumn(format="%.2f"),
            "fit s": st.column_config.NumberColumn(format="%.2f"),
        },
    )
