"""Collaborative filtering: the ranking learners on MovieLens / Jester files or built-in synthetic
ratings; one reviewer's learned ranking against their ratings, and a small per-user experiment."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard.common import (
    data_dir,
    init_state,
    plain,
    public_mode,
    size_limit,
)
from dashboard.jobs import follow_job, run_job
from ranking_core.cf import FORMATS, RatingMatrix, read_ratings, synthetic_ratings
from ranking_core.cf.parallel import SYNCHRONOUS, run_per_user
from ranking_core.cf.per_user import (
    JESTER_SHIFT,
    LEARNERS,
    METRIC_LABELS,
    METRICS,
    PerUserConfig,
)
from ranking_core.cf.published import KRIUKOVA_2014_TABLE2
from ranking_core.experiments.cf_user import user_ranking
from ranking_core.filters import FILTERS
from ranking_core.selection import PROTOCOLS

GROUPS = {"20-40": (20, 40), "40-60": (40, 60), "60-80": (60, 80)}

st.title("Collaborative filtering")
st.caption(
    "The same spectral ranking learners on movie and joke ratings, as in the papers' "
    "per-user experiment (Kriukova et al. 2014, §4.2, Cortes et al. 2007, §4.1): a "
    "reviewer's items are described "
    "by how 300 reference reviewers rated them."
)
init_state(
    cf_protocol="refit",
    cf_source="Synthetic (built-in)",
    cf_users=300,
    cf_items=400,
    cf_seed=0,
    cf_format=FORMATS[0],
    cf_group="40-60",
    cf_filter="iterated-lavrentiev",
    cf_user_index=0,
    cf_test_users=10,
    cf_repeats=2,
    cf_learners=["iterated-lavrentiev", "lavrentiev"],
)
# the choices survive runs in which their widgets are not drawn (an upload still being read, a
# page stopped early): Streamlit forgets a widget's value when a run does not draw it
for _key in ("cf_group", "cf_filter", "cf_test_users", "cf_repeats", "cf_learners"):
    st.session_state[_key] = st.session_state[_key]


@st.cache_data(show_spinner="Generating ratings…", max_entries=4)
def synthetic(n_users: int, n_items: int, seed: int) -> RatingMatrix:
    return synthetic_ratings(n_users=n_users, n_items=n_items, seed=seed)


def read_valid_lines(
    source: str | bytes, format: str, name: str | None = None
) -> tuple[RatingMatrix, list[str]]:
    """The valid lines of a ratings file or upload, and the reader's report of the skipped ones."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = read_ratings(source, format, errors="skip", name=name)
    return data, [str(w.message) for w in caught]


@st.cache_data(show_spinner="Reading the ratings…", max_entries=4)
def from_path(path: str, format: str, mtime: float, name: str) -> tuple[RatingMatrix, list[str]]:
    """The data set at ``path``, named ``name`` in messages (never the server's folders)."""
    del mtime  # cache key only
    return read_valid_lines(path, format, name=name)


@st.cache_data(show_spinner="Reading the upload…", max_entries=2)
def from_upload(content: bytes, name: str, format: str) -> tuple[RatingMatrix, list[str]]:
    return read_valid_lines(content, format, name=Path(name).name)


folder = data_dir()
sources = (
    ("Synthetic (built-in)",)
    if public_mode()
    else ("Synthetic (built-in)", *(("Data folder",) if folder else ()), "Upload")
)
source = st.radio("Ratings", sources, horizontal=True, key="cf_source")
data: RatingMatrix | None = None
notes: list[str] = []
try:
    if source == "Synthetic (built-in)":
        c = st.columns(3)
        n_users = c[0].number_input(
            "users", 100, size_limit("cf_users", 2000), step=50, key="cf_users"
        )
        n_items = c[1].number_input(
            "items", 200, size_limit("cf_items", 2000), step=50, key="cf_items"
        )
        seed = c[2].number_input("seed", 0, 10_000, key="cf_seed")
        data = synthetic(int(n_users), int(n_items), int(seed))
    else:
        fmt = st.selectbox(
            "format",
            FORMATS,
            key="cf_format",
            help="ml-100k: u.data; ml-1m: ratings.dat; jester: jester-data-N "
            "(CSV/XLS); jester-long: user_id,joke_id,rating",
        )
        if source == "Data folder" and folder is not None:  # put there by the operator
            entries = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
            chosen = st.selectbox(
                "data set",
                entries,
                key="cf_data_set",
                help="files and folders in the server's data folder "
                "(riskgrid dashboard --data-dir)",
            )
            path = (folder / chosen).resolve() if chosen else None
            if path is not None and path.is_relative_to(folder) and path.exists():
                data, notes = from_path(str(path), fmt, path.stat().st_mtime, chosen)
        else:
            upload = st.file_uploader("ratings file", key="cf_upload")
            if upload is not None:
                data, notes = from_upload(upload.getvalue(), upload.name, fmt)
except (ValueError, FileNotFoundError) as exc:
    st.error(f"Not usable: {plain(exc)}")
for note in notes:
    st.warning(plain(note))
if data is None:
    st.stop()

jester = data.scale[0] < 0
protocol = st.radio(
    "protocol",
    tuple(PROTOCOLS),
    key="cf_protocol",
    horizontal=True,
    format_func=lambda name: f"{name}: {PROTOCOLS[name]}",
    help="Half of a reviewer's rated items train: a quarter fits, a quarter "
    "chooses λ. The papers do not say which function is then tested.",
)
rating_shift = JESTER_SHIFT if jester else 0.0
c = st.columns(3)
c[0].metric("users", f"{data.n_users:,}")
c[1].metric("items", f"{data.n_items:,}")
c[2].metric("ratings", f"{data.n_ratings:,}")
st.caption(
    f"{plain(data.source)}; ratings {data.scale[0]:g}..{data.scale[1]:g}"
    + (f", shifted by +{JESTER_SHIFT:g} as in Kriukova et al. 2014" if jester else "")
)

# -- one reviewer ---------------------------------------------------------------------------------
st.header("One reviewer's learned ranking")
c = st.columns(3)
group = c[0].selectbox(
    "reference reviewers: users who rated",
    list(GROUPS),
    key="cf_group",
    format_func=lambda g: f"{g} items",
)
chosen_filter = c[1].selectbox("learner", sorted(FILTERS), key="cf_filter")
config = PerUserConfig(group=GROUPS[group], shift=rating_shift, protocol=protocol)
candidates = data.users_in(*config.test_range)
if candidates.size == 0:
    st.warning(f"No user has {config.test_range[0]}–{config.test_range[1]} ratings.")
    st.stop()
index = int(
    c[2].number_input(
        f"test reviewer (0..{candidates.size - 1} of the users with "
        f"{config.test_range[0]}–{config.test_range[1]} ratings)",
        0,
        int(candidates.size - 1),
        key="cf_user_index",
    )
)
try:
    result = user_ranking(data, int(candidates[index]), config, filter=chosen_filter)
except ValueError as exc:
    st.error(plain(exc))
else:
    user_stats = st.columns(4)
    user_stats[0].metric("user id", str(result.user))
    user_stats[1].metric("held-out items", str(result.true.size))
    user_stats[2].metric("pairwise misranking", f"{100 * result.misranking:.1f} %")
    user_stats[3].metric("NDCG@10", f"{result.ndcg10:.3f}")
    fig = go.Figure(
        go.Box(
            x=result.true, y=result.predicted, boxpoints="all", jitter=0.4, name="held-out items"
        )
    )
    fig.update_layout(
        title=f"learned score by the reviewer's rating (λ = {result.lam:.3g}, "
        f"{result.n_reference} reference reviewers)",
        xaxis_title="reviewer's rating",
        yaxis_title="learned score",
        height=380,
    )
    st.plotly_chart(fig, key="cf_fig_user")
    top = pd.DataFrame({"item": result.items, "rating": result.true, "score": result.predicted})
    st.dataframe(
        top.sort_values("score", ascending=False).head(10), hide_index=True, key="cf_top10"
    )

# -- small per-user experiment ------------------------------------------------------------------
st.header("Per-user experiment (small)")
st.caption(
    "The protocol of Kriukova et al. 2014, §4.2 on a few test reviewers (the papers use "
    "300 reviewers "
    "and 10 repetitions: `riskgrid cf per-user`). Runs in a worker process of the server."
)
c = st.columns(3)
test_users = c[0].number_input(
    "test reviewers", 2, size_limit("cf_test_users", 100), key="cf_test_users"
)
repeats = c[1].number_input("repetitions", 1, size_limit("cf_repeats", 10), key="cf_repeats")
learners = c[2].multiselect("learners", LEARNERS, key="cf_learners")
if not learners:
    st.caption("Choose at least one learner to run the experiment.")
if st.button("Run the experiment", key="cf_run", disabled=not learners):
    experiment = PerUserConfig(
        group=GROUPS[group],
        n_test_users=int(test_users),
        repeats=int(repeats),
        learners=tuple(learners),
        shift=rating_shift,
        protocol=protocol,
    )
    key = ("cf-experiment", data.source, data.n_ratings, repr(experiment))
    matrix = data  # a RatingMatrix here (the page stopped above without one)
    st.session_state["cf_job"] = run_job(
        key, run_per_user, matrix, experiment, scheduler=SYNCHRONOUS
    )
cf_job = follow_job("cf_job", "Test reviewers")
if cf_job is not None and cf_job.state == "done":
    st.session_state["cf_results"] = cf_job.result
summary = st.session_state.get("cf_results")
if summary:
    dataset = "jester" if jester else "movielens"
    published = KRIUKOVA_2014_TABLE2.get((dataset, group), {})
    rows = []
    for name, values in summary["learners"].items():
        row = {"Learner": name}
        for metric in METRICS:
            scale = 100 if metric == "pairwise_misranking" else 1
            mean, sd = scale * values[metric]["mean"], scale * values[metric]["sd"]
            row[METRIC_LABELS[metric]] = f"{mean:.2f} ± {sd:.2f}"
        paper = published.get(name)
        is_synthetic = "synthetic" in data.source
        row["Kriukova et al. 2014, Table 2 misranking"] = (
            "—" if paper is None or is_synthetic else f"{100 * paper[0]:.2f} ± {100 * paper[1]:.2f}"
        )
        rows.append(row)
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="cf_results_table")
    st.caption(
        f"Protocol {summary['config']['protocol']}: "
        f"{summary['test_users_per_repeat']} test reviewers × "
        f"{summary['config']['repeats']} repetitions; pairwise misranking in %, MSD and "
        "M1D in squared / absolute rating units, NDCG@10 in 0..1 "
        f"({summary['skipped_test_users']} reviewers skipped)."
    )
