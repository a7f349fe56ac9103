"""The organiser's grid so far of a SEG-method survey: computed as a background job with progress
(:func:`ranking_core.surveys.seg_grid.survey_grid`, the pipeline of ``riskgrid elicit``), then
the pooled and per-scenario SEG-style mean grids, the per-cell spread and count, the raters whose
maps stand apart (flagged, never dropped), the learned grid with its band and warning, the
differences from the SEG and DTS grids with the share of pairs whose category changes, a download
of every file ``elicit`` writes, "save as a grid", and the hybrid in one step (a linked rated-pair
survey asking where the raters disagree). Names are user text: shown as text, never markup.
"""

from __future__ import annotations

import io
import zipfile

import pandas as pd
import streamlit as st

from dashboard.common import plain
from dashboard.figures import band_width_heatmap, difference_heatmap, risk_heatmap
from dashboard.jobs import follow_job, run_job
from ranking_core.elicit.pipeline import MAX_PROPOSED
from ranking_core.grids.learned import GLUCOSE_AXIS
from ranking_core.storage import StorageError
from ranking_core.surveys import SurveyStore
from ranking_core.surveys.seg_grid import SurveyGrid, save_learned_grid, survey_grid
from ranking_core.surveys.seg_linked import create_linked_survey, linked_pairs_name
from ranking_core.surveys.storage import Survey
from ranking_core.validation import counted

__all__ = ["grid_so_far"]

JOB_KEY, RESULT_KEY = "seg_grid_job", "seg_grid_result"


def grid_so_far(surveys: SurveyStore, survey: Survey, stamp: tuple) -> None:
    """The section (module notes); ``stamp`` names the answers the grid is computed from (a
    new answer computes a new grid, the same answers share one job)."""
    st.subheader("The grid so far")
    c = st.columns([3, 2])
    learn = c[0].checkbox(
        "Learn the smooth grid and its 95 % band too (about half a minute)", key="seg_grid_learn"
    )
    if c[1].button("Compute the grid so far", key="seg_grid_run"):
        key = ("seg-grid", surveys.store.url, survey.name, surveys.by, bool(learn), stamp)
        st.session_state[JOB_KEY] = run_job(
            key, survey_grid, surveys.store.url, survey.name, surveys.by, bool(learn)
        )
    status = follow_job(JOB_KEY, "Computing the grid so far")
    if status is not None and status.state == "done":
        st.session_state[RESULT_KEY] = (survey.id, status.result)
    kept = st.session_state.get(RESULT_KEY)
    if kept is None or kept[0] != survey.id:
        st.caption("The grid of the complete answers so far: press the button to compute it.")
        return
    done: SurveyGrid = kept[1]
    _grids(done)
    _differences(done)
    _learned(surveys, done)
    _downloads(survey, done)
    if survey.is_open:
        _hybrid(surveys, survey)


def _grids(done: SurveyGrid) -> None:
    grids = done.elicited.grids
    st.caption(
        f"{counted(len(done.elicited.answers.raters), 'rater')}, "
        f"{counted(len(grids.scenarios), 'scenario')}, "
        f"{counted(grids.n_maps, 'rater map')} (answers complete for a scenario); "
        f"{len(done.elicited.answers.exclusions):,} excluded"
    )
    names = ["pooled (mean of the scenarios)", *grids.scenarios]
    shown = st.selectbox(
        "Grid", range(len(names)), format_func=lambda k: names[k], key="seg_grid_which"
    )
    grid = grids.pooled if shown == 0 else list(grids.scenarios.values())[shown - 1]
    title = "Pooled SEG-style mean grid" if shown == 0 else "Scenario mean grid"
    st.plotly_chart(risk_heatmap(grid, GLUCOSE_AXIS, title), key="seg_grid_pooled")
    st.plotly_chart(
        band_width_heatmap(grids.spread, GLUCOSE_AXIS, "Spread of the raters' maps (SD, risk)"),
        key="seg_grid_spread",
    )
    st.caption(f"Every cell holds {int(grids.count.max())} rater maps.")
    table = done.apart.rename(
        columns={"rater": "Rater", "maps": "Maps", "distance": "Distance", "apart": "Stands apart"}
    )
    table["Distance"] = table["Distance"].round(3)
    st.dataframe(table, hide_index=True)
    st.caption(
        "Distance: root-mean-square difference (risk units) of the rater's maps from their "
        "scenarios' mean grids. A rater standing apart is flagged, not dropped."
    )


def _differences(done: SurveyGrid) -> None:
    for diff in done.differences:
        st.plotly_chart(
            difference_heatmap(diff.difference, GLUCOSE_AXIS, f"Elicited − {diff.name}"),
            key=f"seg_grid_diff_{diff.name}",
        )
        st.caption(f"Against {diff.name}: {diff.changed_share:.1%} of pairs change {diff.rule}.")
    if done.seg_note:
        st.info(f"No difference from the SEG: {plain(done.seg_note)}")


def _learned(surveys: SurveyStore, done: SurveyGrid) -> None:
    learned = done.elicited.learned
    if learned is None:
        return
    st.plotly_chart(
        risk_heatmap(learned.grid, GLUCOSE_AXIS, "Learned grid"), key="seg_grid_learned"
    )
    st.caption(
        f"Learned from {learned.ratings:,} ratings ({plain(learned.source)}); the 95 % band "
        f"leaves the risk category open on {learned.open_share:.1%} of the grid."
    )
    if learned.warning:
        st.warning(plain(learned.warning[:1].upper() + learned.warning[1:]))
    with st.form("seg_grid_save"):
        name = st.text_input("Save the learned grid in the grid library as", key="seg_grid_name")
        if st.form_submit_button("Save as a grid"):
            try:
                saved = save_learned_grid(surveys.store.url, surveys.by, name, done)
            except (StorageError, ValueError) as exc:
                st.error(f"Not saved: {plain(exc)}")
            else:
                st.success(f"Saved as {plain(repr(saved))}: shown on the Compare page.")


def _downloads(survey: Survey, done: SurveyGrid) -> None:
    files = done.elicited.files
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    c = st.columns(2)
    c[0].download_button(
        f"Download every file ({len(files)}, zip)",
        buffer.getvalue(),
        "elicited-grid.zip",
        "application/zip",
        key="seg_grid_zip",
        on_click="ignore",
    )
    one = c[1].selectbox("Or one file", list(files), key="seg_grid_file")
    c[1].download_button(
        f"Download {one}", files[one], one.replace("/", "-"), key="seg_grid_one", on_click="ignore"
    )


def _hybrid(surveys: SurveyStore, survey: Survey) -> None:
    st.markdown("**Ask pairs where the raters disagree**")
    st.caption(
        f"Creates the linked rated-pair survey {plain(repr(linked_pairs_name(survey.name)))} "
        "(the same owner) asking the pairs where the raters' maps disagree most; its answers "
        "are learned together with these."
    )
    with st.form("seg_grid_hybrid"):
        n = st.number_input("Pairs", 1, MAX_PROPOSED, 40, key="seg_grid_pairs")
        again = st.checkbox("Invite this survey's raters again", key="seg_grid_again")
        if st.form_submit_button("Propose pairs where raters disagree"):
            try:
                made = create_linked_survey(surveys, survey.name, int(n), bool(again))
            except (StorageError, ValueError) as exc:
                st.error(f"Not created: {plain(exc)}")
            else:
                st.success(
                    f"Created with {len(made.pairs)} pairs. Its organiser's link (shown once):"
                )
                st.code(made.survey.organiser_link(made.token), language=None)
                if made.links:
                    st.dataframe(
                        pd.DataFrame(made.links, columns=["rater", "link"]), hide_index=True
                    )
