"""Learn a grid: rating set → regularized ranker (one decomposition) → risk grid beside the
reference, with the λ rule's curve; the λ slider re-solves from the cached decomposition."""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st
from numpy.typing import NDArray
from sklearn.base import clone

from dashboard import figures
from dashboard.common import (
    current_user,
    get_store,
    init_state,
    plain,
    public_mode,
    seg_status,
    shared_result,
    show_problems,
)
from ranking_core import IteratedLavrentiev, SpectralRanker
from ranking_core.experiments.seg import BEST_RECIPE, SEGRecipe, with_diagonal_anchors
from ranking_core.filters import FILTERS
from ranking_core.grids.compare import DIFFERENCE_BINS, RISK_CATEGORIES, compare_grids
from ranking_core.grids.coordinates import GlucoseTransform
from ranking_core.grids.learned import GLUCOSE_AXIS, learned_grid
from ranking_core.grids.signed import AbsoluteRisk, signed_ratings
from ranking_core.panels import DESIGNS, SEG_OUTLIER_FRACTION, parkes_surface, simulate_panel
from ranking_core.ratings import UNITS, RatingSet, RatingSetError, read_rating_set
from ranking_core.selection import (
    AprioriRule,
    fit_apriori_lambda,
    holdout_lambda,
    kfold_lambda,
)
from ranking_core.storage import StorageError

DEFAULT_M = 300  # ratings in the default simulated panel (the paper uses 100..400)
RULES = ("hold-out", "k-fold", "a-priori λ(m)", "manual")
LOG_SCALE = GlucoseTransform("log", offset=50.0)
SCALES = {"log": f"log scale (g₀ = {LOG_SCALE.offset:g} mg/dL)", "linear": "mg/dL"}
KERNELS = {"gaussian": "Gaussian exp(−‖Δ‖²/γ)", "laplacian": "Laplacian exp(−‖Δ‖₁/γ)"}
# defaults: the project's best SEG recipe (docs/RESULTS.md), γ = its first candidate, λ on its grid
_BEST_FILTER = BEST_RECIPE.filter
DEFAULTS = {
    "learn_filter": _BEST_FILTER if isinstance(_BEST_FILTER, str) else _BEST_FILTER.name,
    "learn_k": int(getattr(_BEST_FILTER, "k", 2)),
    "learn_kernel": BEST_RECIPE.kernel,
    "learn_scale": "linear" if BEST_RECIPE.transform is None else BEST_RECIPE.transform.scale,
    "learn_gamma": float(BEST_RECIPE.gammas[0]),
    "learn_signed": BEST_RECIPE.signed,
    "learn_anchors": BEST_RECIPE.diagonal_anchors,
    "learn_rule": "k-fold" if BEST_RECIPE.selection == "kfold" else "hold-out",
}
# γ in squared units of the (possibly warped) glucose scale for the Gaussian (the paper: 10⁴
# (mg/dL)²), in plain units for the Laplacian (the best recipe: 10³)
GAMMAS = tuple(sorted({1e3, 2e3, 4e3, 8e3, 1e4, 1.6e4, 2e4, 4e4, 8e4, DEFAULTS["learn_gamma"]}))
# the recipe's geometric grid λ_j = λ₀·q^j (the form of Kriukova et al. 2014, §4.1)
LAMS = BEST_RECIPE.lams()
APRIORI_DRAWS = 5  # random subsets per size m = 20, 30, 40, 50 for λ₊ (Kriukova et al. 2014, §4.4)

st.title("Learn a risk grid")
seg = seg_status()
store = get_store()
init_state(learn_source="Simulated panel", learn_m=DEFAULT_M, learn_design=DESIGNS[0],
           learn_noise=0.25, learn_outliers=SEG_OUTLIER_FRACTION, learn_raters=10, learn_seed=0,
           learn_unit=UNITS[0], **DEFAULTS)


# -- data -----------------------------------------------------------------------------------------
@st.cache_data(show_spinner="Simulating the panel…", max_entries=8)
def simulated(m: int, design: str, noise: float, outliers: float, raters: int, seed: int,
              reference_key: str, _reference: object) -> RatingSet:
    frame = simulate_panel(m, design=design, reference=_reference, n_raters=raters, noise=noise,
                           outlier_fraction=outliers, random_state=seed)
    return read_rating_set(frame, name=f"simulated panel ({reference_key})")


@st.cache_data(show_spinner="Checking the upload…", max_entries=8)
def uploaded(content: bytes, name: str, unit: str) -> RatingSet:
    return read_rating_set(io.BytesIO(content), unit=unit, name=name)


@st.cache_data(show_spinner=False, max_entries=8)
def saved(url: str, name: str, record_id: int) -> RatingSet:
    del record_id  # cache key only
    return read_rating_set(store.load_rating_set(name).frame, name=name)


reference_name = "SEG" if seg.available else "built-in surface (smoothed Parkes type-1 zones)"
reference = seg.table.absolute if seg.available else parkes_surface()

source = st.radio("Rating set", ("Simulated panel",) if public_mode() else (
    "Simulated panel", "Upload", "Saved"), horizontal=True, key="learn_source")
ratings: RatingSet | None = None
data_key = ""
if source == "Simulated panel":
    c = st.columns(6)
    m = c[0].number_input("ratings m", 20, 2000, step=50, key="learn_m")
    design = c[1].selectbox("design", DESIGNS, key="learn_design")
    noise = c[2].slider("rater noise sd", 0.0, 1.0, step=0.05, key="learn_noise")
    outliers = c[3].slider("outlier share", 0.0, 0.3, step=0.002, format="%.3f",
                           key="learn_outliers")
    raters = c[4].number_input("raters", 1, 50, key="learn_raters")
    seed = c[5].number_input("seed", 0, 10_000, key="learn_seed")
    st.caption(f"Ratings are simulated around the {reference_name}; "
               f"{outliers:.1%} of them are replaced by uniform 0..4 outliers.")
    # the key names the table by content: an uploaded test table and the official one are both "SEG"
    reference_key = f"SEG {seg.table.fingerprint}" if seg.available else reference_name
    ratings = simulated(int(m), design, float(noise), float(outliers), int(raters), int(seed),
                        reference_key, None if not seg.available else seg.table)
    data_key = f"sim:{m}:{design}:{noise}:{outliers}:{raters}:{seed}:{reference_key}"
elif source == "Upload":
    c = st.columns([3, 1])
    upload = c[0].file_uploader("Rating set: columns reference, estimate, rating (0..4), "
                                "optional rater; CSV, TSV or XLSX", type=["csv", "tsv", "txt",
                                                                          "xlsx"],
                                key="learn_upload")
    unit = c[1].radio("glucose unit", UNITS, key="learn_unit")
    if upload is not None:
        try:
            ratings = uploaded(upload.getvalue(), upload.name, unit)
        except RatingSetError as exc:
            st.error(f"Not usable: {plain(exc)}")
        else:
            show_problems([p.message for p in ratings.problems], ratings.warnings,
                          kept=len(ratings.frame))
            data_key = f"upload:{upload.file_id}:{unit}"
            with st.form("save_rating_set"):
                name = st.text_input("Save this rating set as", value=upload.name)
                if st.form_submit_button("Save rating set"):
                    try:
                        store.save_rating_set(name, ratings.frame, {
                            "unit": unit, "source": upload.name,
                            "problems": [p.message for p in ratings.problems]},
                            saved_by=current_user())
                    except StorageError as exc:
                        st.error(f"Not saved: {plain(exc)}")
                    else:
                        st.success(f"Saved rating set “{plain(name)}”.")
else:
    stored = store.list_records("rating_set")
    if not stored:
        st.info("No saved rating set yet: upload one and save it.")
    else:
        chosen = st.selectbox("Saved rating set", [r.name for r in stored], key="learn_saved")
        info = next(r for r in stored if r.name == chosen)
        ratings = saved(store.url, chosen, info.id)
        data_key = f"saved:{info.id}"

if ratings is None:
    st.stop()
st.caption(f"{len(ratings.frame)} ratings from {plain(ratings.name)}")

# -- learner --------------------------------------------------------------------------------------
c = st.columns(8)
filter_name = c[0].selectbox("spectral filter", sorted(FILTERS), key="learn_filter")
k = int(c[1].number_input("order k (iterated Lavrentiev)", 1, 6, key="learn_k",
                          disabled=filter_name != "iterated-lavrentiev"))
scale = c[2].radio("glucose coordinates", list(SCALES), format_func=SCALES.get,
                   key="learn_scale")
gamma = c[3].select_slider("kernel width γ", GAMMAS, key="learn_gamma",
                           format_func=lambda g: f"{g:,.0f}",
                           help="Gaussian: squared units of the glucose coordinates, (mg/dL)² "
                                "or the log scale's warped mg/dL²; Laplacian: plain units")
rule = c[4].radio("λ rule", RULES, key="learn_rule")
signed = c[5].toggle("signed surface", key="learn_signed",
                     help="learn sign(REF − estimate)·rating, a surface without the kink along "
                          "the diagonal, and show its absolute value (the project's best "
                          "recipe; the paper learns the ratings as they are)")
anchors = int(c[6].number_input("zero-risk diagonal anchors", 0, 200, key="learn_anchors",
                                help="points (g, g) with risk 0, g evenly spaced on 0..600 "
                                     "mg/dL, added to the ratings: an exact reading carries no "
                                     "risk (the project's best recipe; not in the paper)"))
kernel = c[7].radio("kernel", list(KERNELS), format_func=KERNELS.get, key="learn_kernel",
                    help="the paper uses the Gaussian; the project's best SEG recipe the "
                         "Laplacian (L1) kernel")


@dataclass(frozen=True)
class Fit:
    """A fitted ranker (holding its spectral decomposition), what the λ rule found, and the
    training set it learned from (ratings plus anchors, signed if asked)."""

    model: SpectralRanker
    lam: float
    curve: NDArray[np.float64] | None
    apriori: AprioriRule | None
    X: NDArray[np.float64]
    y: NDArray[np.float64]


def fit(recipe: SEGRecipe, rule: str, X: NDArray, y: NDArray, progress) -> Fit:
    """One decomposition per fit (hold-out: first half; k-fold: one per fold then all points).
    Kept in a shared cache, read-only afterwards: the slider only calls ``model.resolve(λ)``.
    The recipe adds its diagonal anchors and, if ``signed``, learns sign(REF − estimate)·y."""
    X, y = with_diagonal_anchors(recipe, X, y)
    if recipe.signed:
        y = signed_ratings(X, y)
    ranker = recipe.ranker(recipe.gammas[0])
    if rule in ("hold-out", "k-fold"):
        select = holdout_lambda if rule == "hold-out" else kfold_lambda
        choice = select(ranker, X, y, LAMS)
        return Fit(choice.model, choice.lam, choice.curve, None, X, y)
    if rule == "a-priori λ(m)":
        apriori = fit_apriori_lambda(ranker, X, y, draws=APRIORI_DRAWS, lams=LAMS,
                                     progress=progress)
        lam = float(apriori(len(y)))
        return Fit(clone(ranker).fit(X, y).resolve(lam), lam, None, apriori, X, y)
    model = clone(ranker).fit(X, y)
    return Fit(model, model.lam, None, None, X, y)


X, y = ratings.X, ratings.y
bar = st.progress(0.0, text="Fitting the ranker…")
try:
    recipe = SEGRecipe(
        "dashboard", kernel=kernel, gammas=(float(gamma),),
        transform=LOG_SCALE if scale == "log" else None,
        filter=IteratedLavrentiev(k=k) if filter_name == "iterated-lavrentiev" else filter_name,
        lam0=BEST_RECIPE.lam0, q=BEST_RECIPE.q, n_lams=BEST_RECIPE.n_lams, signed=bool(signed),
        diagonal_anchors=anchors)
    fit_key = (data_key, rule, repr(recipe))
    result = shared_result("learn-fit", fit_key, lambda: fit(
        recipe, rule, X, y,
        lambda done, total: bar.progress(done / total, text=f"λ₊ on subsets: {done}/{total}")))
except ValueError as exc:
    bar.empty()
    st.error(f"Cannot learn from this rating set: {plain(exc)}")
    st.stop()
bar.empty()

# -- λ slider: re-solve from the cached decomposition ---------------------------------------------
options = np.unique(np.r_[LAMS, result.lam])[::-1]
lam_key = "learn_lam:" + ":".join(map(str, fit_key))
init_state(**{lam_key: float(result.lam)})
lam = st.select_slider("λ (moving it re-solves from the cached decomposition, no refit)",
                       options=[float(v) for v in options], key=lam_key,
                       format_func=lambda v: f"{v:.3g}")
model = result.model.resolve(lam)
grid = learned_grid(AbsoluteRisk(model) if signed else model)
comparison = compare_grids(reference, grid)

c = st.columns(5)
c[0].metric("λ", f"{lam:.3g}", help=f"rule ({rule}) chose {result.lam:.3g}")
c[1].metric("misranking vs reference", f"{100 * comparison.misranking:.2f} %",
            help=f"pairwise misranking (Kriukova et al. 2014, eq. 1) on "
                 f"{comparison.n_points:,} random "
                 f"lattice points against the {reference_name}")
c[2].metric("|Δ| ≤ 0.5", f"{100 * comparison.difference_shares[0]:.1f} %")
c[3].metric("risk category agreement", f"{100 * comparison.category_agreement:.1f} %")
c[4].metric("points fitted", f"{len(model.X_fit_)} / {len(result.y)}",
            help=f"of {len(y)} ratings + {anchors} diagonal anchors")
if result.apriori is not None:
    a = result.apriori
    st.caption(f"A-priori rule λ(m) = α·m^(−β/2): α = {a.alpha:.4g} ± {a.alpha_sd:.2g}, "
               f"β = {a.beta:.3f} ± {a.beta_sd:.2g}; λ({len(y)}) = {result.lam:.4g}")

c = st.columns(3)
c[0].plotly_chart(figures.risk_heatmap(grid, GLUCOSE_AXIS, "learned grid", contours=reference,
                                       points=(X[:, 0], X[:, 1], y)), key="learn_fig_learned")
c[1].plotly_chart(figures.risk_heatmap(reference, GLUCOSE_AXIS, f"reference: {reference_name}",
                                       contours=reference), key="learn_fig_reference")
c[2].plotly_chart(figures.difference_heatmap(grid - reference, GLUCOSE_AXIS,
                                             "learned − reference"), key="learn_fig_difference")

c = st.columns(2)
if result.curve is not None:
    c[0].plotly_chart(figures.lambda_curve(LAMS, 100 * result.curve, result.lam, lam,
                                           f"{rule} misranking (%)"), key="learn_fig_curve")
elif result.apriori is not None:
    c[0].plotly_chart(figures.apriori_plot(result.apriori.sizes, result.apriori.lam_plus,
                                           result.apriori.alpha, result.apriori.beta, len(y)),
                      key="learn_fig_apriori")
else:
    c[0].info("Manual λ: the ranker is fitted on all ratings and no validation curve is drawn; "
              "the misranking against the reference above follows the slider.")
c[1].plotly_chart(figures.shares_bar(DIFFERENCE_BINS, comparison.difference_shares,
                                     "|learned − reference| (Kriukova et al. 2014, Table 3 bins)",
                                     "|Δ risk|"), key="learn_fig_shares")
with st.expander("Risk-category confusion (rows: reference, columns: learned)"):
    st.dataframe(pd.DataFrame(comparison.category_confusion, index=list(RISK_CATEGORIES),
                              columns=list(RISK_CATEGORIES)), key="learn_confusion")

with st.form("save_grid"):
    name = st.text_input("Save this learned grid as",
                         value=f"{filter_name} {scale} γ={gamma:,.0f} m={len(y)}")
    if st.form_submit_button("Save learned grid"):
        metrics = {"rule": rule, "rule_lambda": result.lam, "reference": reference_name,
                   "diagonal_anchors": anchors,
                   "rating_set": ratings.name, **comparison.to_dict()}
        try:
            store.save_learned_grid(name, model, result.X, result.y, metrics, signed=signed,
                                    saved_by=current_user())
        except StorageError as exc:
            st.error(f"Not saved: {plain(exc)}")
        else:
            st.success(f"Saved learned grid “{plain(name)}”; compare it on the Compare grids "
                       "page.")
