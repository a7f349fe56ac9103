"""Plan a survey: the pairs a panel should rate next (a space-filling start, or the pairs that
most reduce the learned grid's uncertainty), with the panel report and the uncertainty map of the
ratings so far, and the rating form to download."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import figures
from dashboard.common import (
    init_state,
    plain,
    public_mode,
    read_upload,
    size_limit,
    uploaded_ratings,
)
from ranking_core.grids.learned import GLUCOSE_AXIS
from ranking_core.inputs import format_names, upload_types
from ranking_core.learn import learn_panel
from ranking_core.meter.documents.export import safe_csv
from ranking_core.panels import (
    PANEL_MODELS,
    panel_report,
    parkes_surface,
    plan_pairs,
    risk_band,
    simulate_panel,
)
from ranking_core.panels.design import (
    DEFAULT_PLAN_METHOD,
    MIN_RATINGS,
    PLAN_METHOD_LABELS,
    PLAN_METHODS,
    rating_form_csv,
    rating_form_html,
)
from ranking_core.panels.missing import MISSING, REASONS, reason_note, shown
from ranking_core.panels.report import LOW_WEIGHT
from ranking_core.ratings import UNITS, RatingSet, read_rating_set

SOURCES = ("No ratings yet", "Upload ratings so far", "Simulated panel (demonstration)")

st.title("Plan a survey")
st.caption(
    "Which (reference, estimate) pairs should the panel rate next? Without ratings the "
    "start is spread evenly over 0–600 mg/dL; with ratings, the pairs that most reduce "
    "the learned grid's uncertainty are proposed."
)
init_state(plan_k=20, plan_seed=0, plan_method=DEFAULT_PLAN_METHOD)


@st.cache_data(show_spinner="Simulating the panel…", max_entries=4)
def demonstration(m: int, seed: int) -> RatingSet:
    frame = simulate_panel(
        m, reference=parkes_surface(), random_state=seed, n_raters=8, **PANEL_MODELS["hard"]
    )
    return read_rating_set(frame.drop(columns="outlier"), name="simulated panel")


sources = SOURCES[::2] if public_mode() else SOURCES
source = st.radio("Ratings so far", sources, horizontal=True, key="plan_source")
ratings: RatingSet | None = None
data_key = "none"
if source == SOURCES[1]:
    c = st.columns([3, 1])
    upload = c[0].file_uploader(
        f"Ratings: columns reference, estimate, rating (0..4), optional rater; {format_names()}",
        type=upload_types(),
        key="plan_upload",
    )
    unit = c[1].radio(
        "Glucose unit",
        UNITS,
        index=None,
        key="plan_unit",
        help="Not chosen: named in the headers, else mg/dL.",
    )
    if upload is not None:
        content, upload_name = upload.getvalue(), upload.name
        ratings = read_upload(lambda: uploaded_ratings(content, upload_name, unit))
        if ratings is not None:
            data_key = f"upload:{upload.file_id}:{unit}"
elif source == SOURCES[2]:
    demo_inputs = st.columns(2)
    m = demo_inputs[0].number_input(
        "Number of ratings",
        40,
        size_limit("plan_demo_m", 600),
        value=150,
        step=10,
        key="plan_demo_m",
    )
    demo_seed = demo_inputs[1].number_input(
        "Simulation draw",
        0,
        10_000,
        value=0,
        key="plan_demo_seed",
        help="another number draws another panel",
    )
    ratings = demonstration(int(m), int(demo_seed))
    st.caption(
        "A simulated panel of 8 raters around the built-in surface: raters differ in "
        "offset and scale, answers in steps of 0.5, 6.6 % outlying answers and one "
        "careless rater."
    )
    data_key = f"demo:{m}:{demo_seed}"

c = st.columns([1, 1, 2.4])  # room for the longest "how" option at 1280 px
k = c[0].number_input("Pairs to propose", 1, size_limit("plan_k", 500), step=5, key="plan_k")
seed = c[1].number_input(
    "Candidate draw",
    0,
    10_000,
    key="plan_seed",
    help="the random candidate pairs the proposal is chosen from",
)
method = c[2].selectbox(
    "How the pairs are chosen",
    PLAN_METHODS,
    format_func=PLAN_METHOD_LABELS.__getitem__,
    key="plan_method",
)
enough = ratings is not None and len(ratings.frame) >= MIN_RATINGS
if ratings is not None and not enough:
    st.info(f"Fewer than {MIN_RATINGS} ratings: the proposal is a space-filling start.")

fit = None
if ratings is not None and enough:
    fit_key = ("plan_fit", data_key)
    if st.session_state.get("plan_fit_key") != fit_key:
        bar = st.progress(0.0, text="Learning the grid from the ratings so far…")

        def report_fit(done: int, total: int) -> None:
            bar.progress(
                min(done / max(total, 1), 1.0), text="Learning the grid from the ratings so far…"
            )

        fit = learn_panel(ratings, progress=report_fit)
        band = risk_band(fit.model)
        bar.empty()
        st.session_state.update(plan_fit_key=fit_key, plan_fit=fit, plan_band=band)
    fit, band = st.session_state["plan_fit"], st.session_state["plan_band"]

pairs = plan_pairs(
    ratings if enough else None,
    int(k),
    seed=int(seed),
    method=method,
    model=None if fit is None else fit.model,
)

if fit is not None:
    report = panel_report(fit)
    left, right = st.columns(2)
    left.plotly_chart(
        figures.risk_heatmap(
            band.risk,
            GLUCOSE_AXIS,
            "Learned risk so far",
            points=(fit.ratings["reference"], fit.ratings["estimate"], fit.ratings["rating"]),
        ),
        key="plan_fig_risk",
    )
    right.plotly_chart(
        figures.band_width_heatmap(
            band.width,
            GLUCOSE_AXIS,
            f"Uncertainty: width of the {band.level:.0%} band",
            points=(pairs["reference"], pairs["estimate"]),
        ),
        key="plan_fig_band",
    )
    st.metric("Share of the grid whose risk category is uncertain", f"{band.uncertain_share:.1%}")
    st.subheader("Panel report")
    alpha = (
        f"{MISSING} ({REASONS['alpha']})"
        if report.alpha is None
        else f"{report.alpha:.3f} over {report.shared_scenarios} shared scenarios"
    )
    st.write(
        f"Krippendorff's α (agreement between raters): {alpha}. The consensus explains "
        f"{report.consensus_r2:.1%} of the ratings' variance; {len(report.flagged)} of "
        f"{report.n_ratings} ratings are flagged as outlying."
    )
    if report.low_weight_raters:
        st.warning(
            f"Ratings of {plain(', '.join(report.low_weight_raters))} weigh less than "
            f"{LOW_WEIGHT:g} on average: their answers lie far from the consensus "
            "throughout. Check them before the next round."
        )
    figures_shown = {  # text, so that a figure that cannot be measured reads "—", not None
        figure: [shown(v, fmt, figure, reason=False) for v in report.raters[figure]]
        for figure, fmt in (
            ("bias", "{:+.2f}"),
            ("scale", "{:.2f}"),
            ("noise_sd", "{:.2f}"),
            ("agreement", "{:.2f}"),
        )
    }
    st.dataframe(
        report.raters.assign(
            flagged_share=100 * report.raters["flagged_share"], **figures_shown
        ).rename(
            columns={
                "rater": "Rater",
                "ratings": "Ratings",
                "bias": "Offset",
                "scale": "Scale",
                "noise_sd": "Noise sd",
                "agreement": "Agreement with consensus",
                "flagged_share": "Share flagged",
                "mean_weight": "Mean weight",
            }
        ),
        hide_index=True,
        column_config={
            "Share flagged": st.column_config.NumberColumn(format="%.1f %%"),
            "Mean weight": st.column_config.NumberColumn(format="%.2f"),
        },
    )
    note = reason_note(
        {"bias": "Offset, scale and noise sd", "agreement": "Agreement with consensus"},
        {k: report.raters[k].tolist() for k in ("bias", "agreement")},
    )
    if note:
        st.caption(note)
    st.download_button(
        "Every rating with its weight and flag (CSV)",
        safe_csv(fit.ratings),
        file_name="panel_ratings.csv",
        mime="text/csv",
        key="plan_ratings_csv",
    )
    if len(report.flagged):
        st.caption("Flagged ratings (largest residual first)")
        st.dataframe(
            report.flagged.rename_axis("Line").rename(
                columns={
                    "reference": "Reference (mg/dL)",
                    "estimate": "Estimate (mg/dL)",
                    "rating": "Rating",
                    "rater": "Rater",
                    "consensus": "Consensus risk",
                    "residual": "Residual (sd)",
                    "weight": "Weight",
                }
            ),
            column_config={
                "Reference (mg/dL)": st.column_config.NumberColumn(format="%.0f"),
                "Estimate (mg/dL)": st.column_config.NumberColumn(format="%.0f"),
                "Consensus risk": st.column_config.NumberColumn(format="%.2f"),
                "Residual (sd)": st.column_config.NumberColumn(format="%+.1f"),
                "Weight": st.column_config.NumberColumn(format="%.2f"),
            },
        )

st.subheader(f"Next {len(pairs)} pairs to rate")
table = pd.DataFrame(
    {
        "Pair": pairs["pair"],
        "Reference (mg/dL)": pairs["reference"],
        "Estimate (mg/dL)": pairs["estimate"],
    }
)
if fit is None:  # with ratings, the uncertainty map above shows the pairs
    left, right = st.columns(2)
    right.plotly_chart(
        figures.proposed_pairs(
            (pairs["reference"], pairs["estimate"]), GLUCOSE_AXIS, "Where the pairs lie"
        ),
        key="plan_fig_pairs",
    )
else:
    left = st.container()
left.dataframe(table, hide_index=True, height=min(480, 36 + 35 * len(pairs)))
downloads = st.columns(2)
downloads[0].download_button(
    "Rating form (CSV)",
    rating_form_csv(pairs),
    file_name="next_pairs.csv",
    mime="text/csv",
    key="plan_csv",
)
downloads[1].download_button(
    "Printable sheet (HTML)",
    rating_form_html(pairs),
    file_name="next_pairs.html",
    mime="text/html",
    key="plan_html",
)
st.caption(
    "Fill in the rating (0 to 4) and the rater, add the rows to the ratings so far and "
    "upload them here or on the Learn page."
)
