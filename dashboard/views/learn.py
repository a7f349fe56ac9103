"""Learn a grid: a rating set and one settings object → the library's checked fit
(``ranking_core.learn.pipeline.fit_checked``, as ``riskgrid learn`` runs it) → a grid, shown with
the exact settings it was learned with. The λ slider re-solves from the cached decomposition
inside a fragment that redraws one figure; the grid at the λ shown is checked as the command
checks it, and downloaded and saved clipped to the risk scale, as the command writes it.

State: ``learn_settings`` (a frozen ``LearnSettings``) is the one source of truth for the settings;
the widgets write to it through their callbacks and are refilled from it when Streamlit forgets
them (:mod:`dashboard.learn_settings`). ``learn_result`` is the result shown, with the key (data,
settings) it was computed for.
"""

from __future__ import annotations

import dataclasses
import json

import pandas as pd
import streamlit as st

from dashboard import figures
from dashboard.common import (
    current_user,
    get_store,
    init_state,
    public_mode,
    read_upload,
    save_form,
    saved_record_picker,
    seg_status,
    size_limit,
    uploaded_ratings,
)
from dashboard.jobs import job_status, sentence, show_job_progress
from dashboard.learn_data import (
    BACKGROUND_FROM,
    PanelChoice,
    at_lambda,
    fit_job,
    fitted,
    learn_reference,
    simulated_panel,
)
from dashboard.learn_pictures import (
    VIEWS,
    apriori_picture,
    band_at,
    comparison_at,
    curve_picture,
    grid_figure,
    grid_picture,
)
from dashboard.learn_settings import (
    FIELDS,
    fill_widgets,
    refit_on_all,
    settings_panel,
    use_robust_recipe,
)
from ranking_core.grids.compare import RISK_CATEGORIES
from ranking_core.grids.files import grid_csv, grid_npy, grid_png
from ranking_core.grids.learned import GLUCOSE_AXIS
from ranking_core.inputs import format_names, upload_types
from ranking_core.learn import (
    PRESET_LABELS,
    PRESETS,
    LearnedGrid,
    LearnSettings,
    default_recipe,
    describe_settings,
    grid_metadata,
    settings_advice,
)
from ranking_core.learn.pipeline import GridOffScale, OnScale, check_grid, on_scale
from ranking_core.panels import DESIGNS
from ranking_core.panels.uncertainty import band_csv
from ranking_core.ratings import UNITS, RatingSet, read_rating_set

SOURCES = ("Simulated panel", "Upload a file", "Saved rating set")
DESIGN_LABELS = {
    "uniform": "spread evenly",
    "log-uniform": "more at low glucose",
    "near-diagonal": "near the diagonal",
}

st.title("Learn a risk grid")
st.caption(
    "Clinicians rate the risk (0 none … 4 extreme) of (reference, measured) glucose pairs; "
    "regularized ranking turns a few hundred ratings into a full risk grid."
)
seg = seg_status()
store = get_store()
init_state(
    learn_source=SOURCES[0],
    learn_settings=LearnSettings(),
    learn_own_settings=False,
    learn_view=VIEWS[0],
    learn_points=False,
    learn_interactive=False,
    **{f"learn_{name}": value for name, value in dataclasses.asdict(PanelChoice()).items()},
)
settings: LearnSettings = st.session_state["learn_settings"]


# refill the widgets Streamlit dropped (never the reverse)
fill_widgets(settings, [widget for widget in FIELDS if widget not in st.session_state])


# -- data -----------------------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=8)
def saved(url: str, name: str, version: str) -> RatingSet:
    del version  # cache key only
    return read_rating_set(store.load_rating_set(name).frame, name=name)


def save_rating_set_form(ratings: RatingSet, source: str) -> None:
    """A form that saves the uploaded ``ratings`` (read from the file ``source``) by name."""
    with st.expander("Save this rating set"):
        save_form(
            "save_rating_set",
            "Name",
            source,
            "Save rating set",
            "rating set",
            lambda name: store.save_rating_set(
                name,
                ratings.frame,
                {
                    "unit": ratings.unit,
                    "source": source,
                    "problems": [p.message for p in ratings.problems],
                },
                saved_by=current_user(),
            ),
        )


learn_ref = learn_reference(seg)
reference_name, reference = learn_ref.name, learn_ref.surface

source = st.radio(
    "Rating set", SOURCES[:1] if public_mode() else SOURCES, horizontal=True, key="learn_source"
)
ratings: RatingSet | None = None
data_key: object = ""
if source == SOURCES[0]:
    c = st.columns([1, 1.7, 1, 1, 1, 1])  # room for the longest "where" option at 1280 px
    m = c[0].number_input(
        "Number of ratings", 20, size_limit("learn_m", 2000), step=50, key="learn_m"
    )
    design = c[1].selectbox(
        "Where the rated pairs lie",
        DESIGNS,
        key="learn_design",
        format_func=DESIGN_LABELS.__getitem__,
    )
    noise = c[2].slider("Rater noise (risk units)", 0.0, 1.0, step=0.05, key="learn_noise")
    outliers = c[3].slider(
        "Share of outlier ratings", 0.0, 0.3, step=0.002, format="%.3f", key="learn_outliers"
    )
    raters = c[4].number_input("Raters", 1, 50, key="learn_raters")
    draw = c[5].number_input(
        "Simulation draw", 0, 10_000, key="learn_draw", help="another number draws another panel"
    )
    st.caption(
        f"Ratings are simulated around the {reference_name}; {outliers:.1%} of them are "
        "replaced by random ratings, as outliers."
    )
    data_key, ratings = simulated_panel(
        PanelChoice(int(m), design, float(noise), float(outliers), int(raters), int(draw)),
        learn_ref,
    )
elif source == SOURCES[1]:
    c = st.columns([4, 1])
    upload = c[0].file_uploader(
        "Rating set: columns reference, estimate, rating (0–4), optionally rater; "
        f"{format_names()}",
        type=upload_types(),
        key="learn_upload",
    )
    unit = c[1].radio(
        "Glucose unit",
        UNITS,
        index=None,
        key="learn_unit",
        help="Not chosen: named in the headers, else mg/dL; values that look "
        "like mmol/L are refused until it is chosen.",
    )
    if upload is not None:
        content, upload_name = upload.getvalue(), upload.name
        ratings = read_upload(lambda: uploaded_ratings(content, upload_name, unit))
        if ratings is not None:
            data_key = f"upload:{upload.file_id}:{unit}"
            save_rating_set_form(ratings, upload_name)
else:
    info = saved_record_picker(
        store,
        "rating_set",
        "Saved rating set",
        "learn_saved",
        "No saved rating set yet: upload one and save it.",
    )
    if info is not None:
        ratings = saved(store.url, info.name, info.version)
        data_key = f"saved:{store.url}:{info.version}"

# -- the recipe: the ratings' default until a setting is changed by hand ------------------------
recipe_line = "Recipe: your own settings (changed by hand)"
if ratings is not None and not st.session_state["learn_own_settings"]:
    recipe, why = default_recipe(ratings)
    recipe_line = f"Recipe: {recipe}, {PRESET_LABELS[recipe]}: {why}"
    if settings != PRESETS[recipe]:
        settings = st.session_state["learn_settings"] = PRESETS[recipe]
        fill_widgets(settings)

# -- settings (always drawn, so an upload never resets them) --------------------------------------
left, right = st.columns([1, 2.6], gap="large")
with left:
    settings_panel(settings)

if ratings is None:
    right.info("Choose a rating set to learn a grid.")
    st.stop()

# -- the fit: recomputed whenever the data or the settings differ from the result shown -----------
key = (data_key, settings)


def show_fit_error(message: object) -> None:
    st.session_state.pop("learn_result", None)
    st.session_state.pop("learn_result_key", None)
    st.error(f"Cannot learn from this rating set: {sentence(message)}")
    st.stop()


if st.session_state.get("learn_result_key") != key:
    with right:
        if len(ratings.frame) > BACKGROUND_FROM:  # a job in a worker process, polled
            job = fit_job(data_key, ratings, settings)
            status = None if job is None else job_status(job)
            if job is None or status is None:
                st.stop()  # refused: the reason is shown
            if status.state == "failed":
                show_fit_error(status.error)
            elif status.state == "cancelled":
                st.info("The fit was cancelled.")
                if st.button("Fit again", key="learn_fit_again"):
                    fit_job(data_key, ratings, settings, again=True)
                    st.rerun()
                st.stop()
            elif status.state != "done":
                show_job_progress(
                    job, f"Fitting {len(ratings.frame):,} ratings in a background process", "learn"
                )
                st.stop()
            outcome = status.result
        else:
            bar = st.progress(0.0, text="Fitting the ranker…")

            def report_fit(done: int, total: int) -> None:
                bar.progress(
                    min(done / total, 1.0), text=f"Fitting the ranker: step {done} of {total}"
                )

            try:
                outcome = fitted(data_key, ratings, settings, progress=report_fit)
            except ValueError as exc:
                bar.empty()
                show_fit_error(exc)
            bar.empty()
    st.session_state["learn_result"] = outcome.learned
    st.session_state["learn_result_key"] = key
    st.session_state["learn_lam"] = outcome.learned.lam
result = st.session_state["learn_result"]


@st.fragment
def result_view(reference_id: str, rating_set_name: str, rating_spread: float) -> None:
    """λ slider, figures of merit, the heat map and the downloads: a λ step reruns only this.
    ``rating_spread``: the span of the ratings, for the one check of the grid shown."""
    result: LearnedGrid = st.session_state["learn_result"]
    options = sorted({*map(float, result.lams), float(result.lam_chosen)})
    if st.session_state.get("learn_lam") not in options:
        st.session_state["learn_lam"] = result.lam_chosen
    lam = st.select_slider(
        "λ: left follows the ratings closely, right smooths more",
        options=options,
        key="learn_lam",
        format_func=lambda v: f"{v:.3g}",
    )
    shown = at_lambda(st.session_state["learn_result_key"], result, lam)
    comparison = comparison_at(
        st.session_state["learn_result_key"], lam, shown.grid, reference, reference_id
    )
    c = st.columns(3)
    c[0].metric("λ", f"{lam:.3g}", help=f"the rule chose {result.lam_chosen:.3g}")
    c[1].metric(
        "Points fitted",
        f"{shown.points_fitted} / {len(result.y)}",
        help=f"{result.n_ratings} ratings and {result.settings.anchors} zero-risk diagonal points",
    )
    c[2].metric(
        "Misranking vs reference",
        f"{100 * comparison.misranking:.2f} %",
        help=f"share of {comparison.n_points:,} random pairs of grid points that the "
        f"learned grid orders differently from the {reference_name}",
    )
    c = st.columns(3)
    c[0].metric(
        "Within 0.5 of reference",
        f"{100 * comparison.difference_shares[0]:.1f} %",
        help="share of the grid where learned and reference risk differ by 0.5 or less",
    )
    c[1].metric(
        "Same risk category",
        f"{100 * comparison.category_agreement:.1f} %",
        help="share of the grid in the same of the 8 SEG risk categories",
    )
    if shown.n_flagged is not None:
        c[2].metric(
            "Ratings flagged as outlying",
            f"{shown.n_flagged} / {shown.n_ratings}",
            help="ratings more than 3 noise sd from the consensus, after the rater "
            "correction; the Plan a survey page lists them with every rater",
        )
    views = VIEWS if shown.settings.has_band else VIEWS[:3]
    if st.session_state.get("learn_view") not in views:
        st.session_state["learn_view"] = VIEWS[0]
    # the views on a row of their own: every label whole at 1280 px
    view = (
        st.segmented_control(
            "Show",
            views,
            key="learn_view",
            help=(
                "Uncertainty: where the 95 % band of the learned risk leaves the risk category "
                "open "
                "(with robust learning, which measures the ratings' noise)"
            ),
        )
        or VIEWS[0]
    )
    points = st.toggle("Show the rating points", key="learn_points")
    if st.session_state["learn_interactive"]:
        st.plotly_chart(
            grid_figure(shown, view, points, learn_ref), key="learn_fig_grid", width="stretch"
        )
    else:
        st.image(
            grid_picture(
                st.session_state["learn_result_key"],
                lam,
                view,
                points,
                reference_id,
                shown,
                learn_ref,
            ),
            output_format="PNG",
        )
    if view in (VIEWS[0], VIEWS[2]):
        st.caption(
            f"Black step lines: the borders of the {reference_name}'s risk grades (risk "
            "0.5, 1.5, 2.5 and 3.5), drawn cell by cell on the lattice."
        )
    if points and view == VIEWS[0] and shown.n_flagged:
        st.caption("× marks a rating flagged as outlying.")
    if view == VIEWS[3]:
        band = band_at(st.session_state["learn_result_key"], lam, shown)
        st.caption(
            f"The {band.level:.0%} band leaves the risk category open on "
            f"{band.uncertain_share:.1%} of the grid: there the ratings do not settle "
            "which of two or more neighbouring risk categories a reading falls in, so "
            "the learned category is a best guess, not a finding to act on. More "
            "ratings there narrow it (Plan a survey proposes where)."
        )
    categories = st.expander(  # filled only while open: a λ step redraws no table
        "Risk categories: reference (rows) against learned (columns), grid points",
        key="learn_categories_open",
        on_change="rerun",
    )
    if categories.open:
        categories.dataframe(
            pd.DataFrame(
                comparison.category_confusion,
                index=list(RISK_CATEGORIES),
                columns=list(RISK_CATEGORIES),
            ),
            column_config={
                c: st.column_config.NumberColumn(format="localized") for c in RISK_CATEGORIES
            },
            key="learn_confusion",
        )
    try:  # the one check before a grid is written or saved, as riskgrid learn runs it
        for flag in check_grid(shown, rating_spread):
            st.warning(flag)
    except GridOffScale as exc:
        st.error(f"This grid is not downloaded or saved: {sentence(exc)}")
        return
    written = on_scale(shown)  # what is downloaded is what is saved: clipped to 0..4
    downloads(written, rating_set_name)
    if not public_mode():  # the public demo keeps no records
        save_grid_form(written, comparison, rating_set_name)


def downloads(shown: OnScale, name: str) -> None:
    """The grid as files: built when clicked, from the grid on screen (never a previous one);
    ``name``: the rating set's, for ``grid.json``."""
    st.caption(
        "Download the grid shown (rows: reference 0–600 mg/dL, columns: measured "
        "0–600 mg/dL, risk 0–4):"
    )
    c = st.columns(5)
    c[0].download_button(
        "grid.npy",
        lambda: grid_npy(shown.grid),
        "grid.npy",
        "application/octet-stream",
        key="learn_dl_npy",
        on_click="ignore",
    )
    c[1].download_button(
        "grid.csv",
        lambda: grid_csv(shown.grid),
        "grid.csv",
        "text/csv",
        key="learn_dl_csv",
        on_click="ignore",
    )
    c[2].download_button(
        "grid.png",
        lambda: grid_png(shown.grid),
        "grid.png",
        "image/png",
        key="learn_dl_png",
        on_click="ignore",
    )
    c[3].download_button(
        "grid.json",
        lambda: json.dumps(grid_metadata(shown, name), indent=2),
        "grid.json",
        "application/json",
        key="learn_dl_json",
        on_click="ignore",
    )
    c[4].download_button(
        "figure.html",
        lambda: figures.risk_heatmap(
            shown.grid, GLUCOSE_AXIS, "Learned grid", contours=reference
        ).to_html(),
        "learned_grid.html",
        "text/html",
        key="learn_dl_html",
        on_click="ignore",
    )
    if shown.settings.has_band:
        key = st.session_state["learn_result_key"]
        c = st.columns(5)
        c[0].download_button(
            "band.csv",
            lambda: band_csv(band_at(key, shown.lam, shown.fitted)),
            "band.csv",
            "text/csv",
            key="learn_dl_band",
            on_click="ignore",
            help="the 95 % band: REF, BGM, lower, upper, uncertain (1 where "
            "the risk category is left open)",
        )


def save_grid_form(shown: OnScale, comparison, rating_set_name: str) -> None:
    """Save the grid shown, with its comparison with the reference, for the Compare page
    (``grid.json`` names the rating set ``rating_set_name``)."""
    metrics = {"reference": reference_name, **comparison.to_dict()}
    with st.expander("Save this grid for the Compare page"):
        save_form(
            "save_grid",
            "Name",
            f"{shown.settings.kernel} λ={shown.lam:.3g} m={shown.n_ratings}",
            "Save learned grid",
            "learned grid",
            lambda name: store.save_learned_grid(
                name,
                shown.grid,
                grid_metadata(shown, rating_set_name),
                metrics,
                saved_by=current_user(),
            ),
            next_step="compare it on the Compare grids page",
        )


with right:
    st.subheader("Result")
    st.caption(recipe_line)
    st.caption(
        "Computed with: "
        + " · ".join(
            f"{label.lower()} {value}"
            for label, value in describe_settings(result.settings).items()
        )
        + f" · λ chosen {result.lam_chosen:.3g} · {result.n_ratings:,} ratings"
    )
    for advice in settings_advice(result):
        st.warning(advice)
    if result.settings.rule == "holdout" and not result.settings.refit_all:
        st.button(
            "Refit on all ratings at the chosen λ", on_click=refit_on_all, key="learn_refit_button"
        )
    if result.settings.robust is None and result.from_a_panel:
        st.button(
            "Learn robustly (the robust recipe)",
            on_click=use_robust_recipe,
            key="learn_robust_button",
        )
    interactive = st.toggle(
        "Interactive figures: zoom, and values under the pointer",
        key="learn_interactive",
        help="slower to open and to redraw than the pictures shown otherwise",
    )
    curve = result.curve_in_words
    if curve is not None:
        ylabel, values = curve
        if interactive:
            st.plotly_chart(
                figures.lambda_curve(result.lams, values, result.lam_chosen, ylabel),
                key="learn_fig_curve",
                width="stretch",
            )
        else:
            st.image(
                curve_picture(st.session_state["learn_result_key"], result, ylabel, values),
                output_format="PNG",
            )
    elif result.apriori is not None:
        a = result.apriori
        if interactive:
            st.plotly_chart(
                figures.apriori_plot(a.sizes, a.lam_plus, a.alpha, a.beta, len(result.y)),
                key="learn_fig_apriori",
                width="stretch",
            )
        else:
            st.image(
                apriori_picture(st.session_state["learn_result_key"], a, len(result.y)),
                output_format="PNG",
            )
        st.caption(
            f"λ(m) = α·m^(−β/2) with α = {a.alpha:.4g} ± {a.alpha_sd:.2g}, "
            f"β = {a.beta:.3f} ± {a.beta_sd:.2g}; λ({len(result.y)}) = "
            f"{result.lam_chosen:.4g}"
        )
    else:
        st.info("λ set by hand: move the slider; no validation curve is drawn.")
    result_view(learn_ref.key, ratings.name, float(ratings.y.max() - ratings.y.min()))
    with st.expander("All settings and data of this result"):
        words = describe_settings(result.settings)
        words |= {
            "λ chosen": f"{result.lam_chosen:.4g}",
            "Ratings": f"{result.n_ratings:,}",
            "Rating set": ratings.name,
            "Data checksum": result.checksum,
        }
        st.dataframe(
            pd.DataFrame({"setting": list(words), "value": list(words.values())}),
            hide_index=True,
            key="learn_settings_table",
            width="stretch",
        )
