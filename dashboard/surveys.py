"""Survey pages, reached by a link: ``?survey=NAME&token=…`` (a rater) or
``?survey=NAME&organiser=…`` (the organiser).

:func:`survey_link_page` runs before the app draws its navigation or sidebar, so a rater sees
their survey and nothing else: the instructions, one pair at a time, the answer scale and their
progress. A wrong, revoked or closed link shows one sentence. Every answer is committed by the
``Save and next`` callback before the page draws the next pair; saving the same place again
(double click, going back) updates the one stored answer.

The organiser's page (reached by the organiser's link, or by the survey's owner signed in on the
Surveys page; never by another signed-in user) shows progress per rater, test-retest and check
answers, the panel report and the grid learned from the answers so far with its uncertainty band
(one fit per new batch of answers, shared by every session), and adds raters, batches, exports
and closes the survey.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st
from streamlit.logger import get_logger

from dashboard.common import get_store, plain, public_mode, shared_result
from dashboard.job_worker import call_by_name, function_name
from dashboard.jobs import (
    follow_job,
    job_runner,
    job_status,
    sentence,
    show_job_progress,
    start_job,
)
from dashboard.survey_invite import close_survey, invite_raters
from ranking_core.jobs import JobRefused
from ranking_core.panels.missing import REASONS, reason_note, shown
from ranking_core.storage import StorageError
from ranking_core.surveys import RISK_OPTIONS, SurveyStore, risk_label
from ranking_core.surveys.design import shown_value
from ranking_core.surveys.storage import RaterAccess, Survey

LOG = get_logger("riskgrid.dashboard")
LINK_SENTENCE = "This survey link is not valid: it is wrong, was revoked, or the survey is closed."
PUBLIC_SENTENCE = "There are no surveys in the public demo."
SAVE_FAILED = "Your answer was not saved; please press Save and next again."
QUESTION = (
    "What risk would a patient face if they acted on this meter reading when the "
    "reference glucose is as shown?"
)


@st.cache_resource(show_spinner=False)
def _surveys(url: str) -> SurveyStore:
    return SurveyStore(get_store())


def survey_store() -> SurveyStore:
    """The surveys of this server's database."""
    return _surveys(get_store().url)


def survey_link_page() -> None:
    """The page of a survey link (query parameters survey and token or organiser)."""
    if public_mode():
        st.error(PUBLIC_SENTENCE)
        return
    params = st.query_params
    name = params.get("survey", "")
    surveys = survey_store()
    if params.get("organiser"):
        survey = surveys.organiser(name, params["organiser"])
        if survey is not None:
            organiser_page(surveys, survey)
            return
    elif params.get("token"):
        access = surveys.rater(name, params["token"])
        if access is not None:
            rater_page(surveys, access)
            return
    st.error(LINK_SENTENCE)


# -- the rater ---------------------------------------------------------------------------------
def _back_key(access: RaterAccess) -> str:
    return f"survey_back_{access.rater_id}"


def _save(surveys: SurveyStore, access: RaterAccess, position: int, last: bool) -> None:
    """``Save and next``: commit the answer shown at ``position`` (before the page is drawn)."""
    rating = st.session_state.get(f"survey_risk_{access.rater_id}_{position}")
    if rating is None:
        st.session_state["survey_message"] = "Choose a risk first, then press Save and next."
        return
    try:
        surveys.answer(access, position, rating)
    except StorageError as exc:
        LOG.warning("an answer was not saved: %s", exc)
        st.session_state["survey_message"] = SAVE_FAILED
        return
    st.session_state.pop(_back_key(access), None)
    if last and access.survey.settings.batch:
        _advance_in_background(surveys, access.survey.name)


def rater_page(surveys: SurveyStore, access: RaterAccess) -> None:
    """Instructions, then the first pair not answered yet (or the one before, after Back)."""
    if access.survey.method == "seg":  # scenarios, thresholds and risk matrices
        from dashboard.seg_rater import seg_rater_page

        seg_rater_page(surveys, access)
        return
    survey = access.survey
    queue = surveys.queue(access.rater_id)
    open_places = [item.position for item in queue if item.rating is None]
    back = st.session_state.get(_back_key(access))
    st.title(plain(survey.name))
    if survey.instructions:
        st.text(survey.instructions)
    message = st.session_state.pop("survey_message", None)
    if message:
        st.warning(message)
    n = len(queue)
    answered = n - len(open_places)
    if back is not None and 0 <= back < n:
        index = back
    elif open_places:
        index = next(i for i, item in enumerate(queue) if item.rating is None)
    else:
        st.progress(1.0, text=f"{n} of {n}")
        st.success("All pairs rated. Thank you! Your answers are saved.")
        if n:
            st.button(
                "Back to the previous pair",
                key="survey_back",
                on_click=st.session_state.__setitem__,
                args=(_back_key(access), n - 1),
            )
        return
    item = queue[index]
    st.progress(answered / max(n, 1), text=f"{index + 1} of {n}")
    unit = survey.settings.unit
    left, right, _ = st.columns([1, 1, 2])
    left.metric("Reference", f"{shown_value(item.reference, unit)} {unit}")
    right.metric("Meter", f"{shown_value(item.estimate, unit)} {unit}")
    with st.form(f"survey_form_{access.rater_id}_{item.position}", border=False):
        st.radio(
            "Risk",
            RISK_OPTIONS,
            format_func=risk_label,
            horizontal=True,
            index=None if item.rating is None else RISK_OPTIONS.index(item.rating),
            key=f"survey_risk_{access.rater_id}_{item.position}",
            help=QUESTION,
        )
        st.caption(QUESTION)
        last = item.position == queue[-1].position
        st.form_submit_button(
            "Save and next",
            type="primary",
            on_click=_save,
            args=(surveys, access, item.position, last),
        )
    if index > 0 and back is None:
        st.button(
            "Back to the previous pair",
            key="survey_back",
            on_click=st.session_state.__setitem__,
            args=(_back_key(access), index - 1),
        )


# -- adaptive batches --------------------------------------------------------------------------
def _plan_next_batch(
    url: str,
    name: str,
    k: int | None = None,
    *,
    by: str | None = None,
    force: bool = False,
    progress: Callable[[int, int], None],
) -> int | None:
    """Runs in a worker process (a job of :mod:`dashboard.jobs`): plan and add the next batch of
    the survey ``name`` in the database ``url`` (``next_batch``, which adds a batch once however
    many callers race)."""
    from ranking_core.surveys.results import next_batch

    return next_batch(SurveyStore(url, by=by), name, k, force=force, progress=progress)


def _batch_job(surveys: SurveyStore, name: str) -> tuple[str, str, str]:
    return ("survey-batch", surveys.store.url, name)


def _advance_in_background(surveys: SurveyStore, name: str) -> None:
    """Plan the next batch as a job in a worker process when the last one is answered (checked
    there), so that no rater waits for the fit and the server stays free; one job per survey at a
    time, started again once the last one has finished."""
    try:
        job_runner().submit(
            _batch_job(surveys, name),
            call_by_name,
            function_name(_plan_next_batch),
            surveys.store.url,
            name,
            owner=f"survey batches of {name}",
            again=True,
        )
    except JobRefused as exc:  # the organiser's page starts it again, or adds the batch by hand
        LOG.warning("planning the next batch of survey %r not started: %s", name, exc)


# -- the organiser -----------------------------------------------------------------------------
def _fit_result(frame: pd.DataFrame):
    """The robust fit of the answers, its panel report and 95 % band (None with too few)."""
    from ranking_core.panels import panel_report, risk_band
    from ranking_core.surveys.results import fit_answers

    fit = fit_answers(frame)
    if fit is None:
        return None
    return fit, panel_report(fit), risk_band(fit.model)


def _refit_step(survey: Survey) -> int:
    """Answers between two fits on the organiser's page: one fit per new batch of answers."""
    return max(10, survey.settings.batch or 20)


def organiser_page(surveys: SurveyStore, survey: Survey) -> None:
    """Progress, reliability, the grid so far, and the organiser's actions."""
    from ranking_core.surveys.results import batch_answered, rater_progress

    if survey.method == "seg":  # per rater and scenario: thresholds, matrix, flags
        from dashboard.seg_organiser import seg_organiser_page

        seg_organiser_page(surveys, survey)
        return
    frame = surveys.answers(survey.name)
    st.title(f"Survey “{plain(survey.name)}”")
    answered = int(frame["rating"].notna().sum())
    low, high = survey.settings.glucose_range
    st.caption(
        f"{'Open' if survey.is_open else 'Closed'} · {survey.batches} batch(es) · range "
        f"{low:g}-{high:g} mg/dL · shown in {survey.settings.unit} · {answered} of "
        f"{len(frame)} answers"
    )
    if (
        survey.is_open
        and survey.settings.batch
        and (~frame["revoked"]).any()
        and batch_answered(frame, survey.batches - 1)
    ):
        _advance_in_background(surveys, survey.name)
        planning = job_status(_batch_job(surveys, survey.name))
        if planning is not None and planning.state == "failed":
            st.warning(f"Planning the next batch failed: {sentence(planning.error)}")
        elif planning is not None and not planning.finished:
            st.info("The last batch is answered; the next one is being planned.")
            show_job_progress(
                _batch_job(surveys, survey.name), "Planning the next batch", "survey_planning"
            )
    st.subheader("Raters")
    _overlap_note(surveys, survey)
    progress = rater_progress(frame)
    if progress.empty:
        st.info("No raters yet: invite them below.")
    else:
        st.dataframe(_progress_table(progress), hide_index=True)
        note = reason_note(
            {
                "seconds_per_answer": "Seconds per answer",
                "retest_agreement": "Retest agreement",
            },
            {k: progress[k].tolist() for k in ("seconds_per_answer", "retest_agreement")},
        )
        if note:
            st.caption(note)
    _learned_so_far(survey, frame, answered)
    if survey.is_open:
        _actions(surveys, survey)
    _export(surveys, survey)


def _overlap_note(surveys: SurveyStore, survey: Survey) -> None:
    """How many raters the overlap needs, and a warning when the active raters leave start
    pairs short of it (:mod:`ranking_core.surveys.coverage`)."""
    from ranking_core.surveys.admin import survey_coverage
    from ranking_core.surveys.coverage import batch_warning, coverage_warning, overlap_needs

    state = survey_coverage(surveys, survey.name)
    st.caption(plain(overlap_needs(state.n_pairs, survey.settings, "pairs per rater")))
    warnings = [coverage_warning(state)]
    if survey.settings.batch or survey.batches > 1:  # batches are shared among active raters
        warnings.append(batch_warning(state.raters, survey.settings.overlap))
    for warning in warnings:
        if warning and state.raters:
            st.warning(plain(warning[:1].upper() + warning[1:]))


def _progress_table(progress: pd.DataFrame) -> pd.DataFrame:
    """The raters' progress as text: a figure that cannot be measured shows "—" (the reason is
    in the caption under the table), never None."""

    def column(name: str, fmt: str, unit: str = "") -> list[str]:
        return [shown(v, fmt, name, unit, reason=False) for v in progress[name]]

    return pd.DataFrame(
        {
            "Rater": progress["rater"],
            "Answered": progress["answered"],
            "Queued": progress["queued"],
            "Seconds per answer (median)": column("seconds_per_answer", "{:.1f}", " s"),
            "Repeats answered": progress["repeats"],
            "Retest agreement (within 0.5)": column("retest_agreement", "{:.0%}"),
            "Retest mean |difference|": column("retest_difference", "{:.2f}", " risk units"),
            "Check pairs as expected": [
                f"{p} of {a}"
                for p, a in zip(progress["checks_passed"], progress["checks_answered"], strict=True)
            ],
            "Link": progress["revoked"].map({True: "revoked", False: "open"}),
        }
    )


def _learned_so_far(survey: Survey, frame: pd.DataFrame, answered: int) -> None:
    from ranking_core.grids.raster import grid_image, png_bytes

    st.subheader("The grid learned so far")
    step = _refit_step(survey)
    if answered < 10:
        st.info("The grid is learned once at least 10 answers are in.")
        return
    key = (get_store().url, survey.id, answered // step)
    with st.spinner("Learning the grid from the answers so far…"):
        result = shared_result("survey_fit", key, lambda: _fit_result(frame), max_entries=4)
    if result is None:
        st.info("The answers so far do not vary enough to learn a grid.")
        return
    fit, report, band = result
    n_fit = len(fit.ratings)
    alpha = shown(report.alpha, "{:.2f}", "alpha", reason=False)
    c = st.columns(4)
    c[0].metric("Answers learned from", f"{n_fit}")
    c[1].metric("Krippendorff's α", alpha)
    c[2].metric("Still uncertain", f"{band.uncertain_share:.1%}")
    c[3].metric("Flagged ratings", f"{len(report.flagged)}")
    st.caption(
        f"Learned from the first {n_fit} answers; refitted after every {step} new "
        f"answers. Pale: the risk category the {band.level:.0%} band leaves open."
        + ("" if report.alpha is not None else f" Krippendorff's α: {REASONS['alpha']}.")
    )
    image = grid_image(fit.learned.grid, f"Learned from {n_fit} answers", pale=band.uncertain)
    st.image(png_bytes(image, small=False), width=640)
    st.markdown("**Panel report** (bias and scale per rater, relative to the consensus)")
    table = report.raters
    st.dataframe(
        pd.DataFrame(
            {
                "Rater": table["rater"],
                "Ratings": table["ratings"],
                "Offset (risk units)": [
                    shown(v, "{:+.2f}", "bias", reason=False) for v in table["bias"]
                ],
                "Scale": [shown(v, "{:.2f}", "scale", reason=False) for v in table["scale"]],
                "Noise sd (risk units)": [
                    shown(v, "{:.2f}", "noise_sd", reason=False) for v in table["noise_sd"]
                ],
                "Agreement": [
                    shown(v, "{:.2f}", "agreement", reason=False) for v in table["agreement"]
                ],
                "Flagged %": (100 * table["flagged_share"]).round(1),
                "Mean weight": table["mean_weight"].round(2),
            }
        ),
        hide_index=True,
    )
    note = reason_note(
        {"bias": "Offset", "agreement": "Agreement"},
        {k: table[k].tolist() for k in ("bias", "agreement")},
    )
    if note:
        st.caption(note)
    if len(report.flagged):
        flagged = report.flagged
        st.dataframe(
            pd.DataFrame(
                {
                    "Reference mg/dL": flagged["reference"].round(0),
                    "Meter mg/dL": flagged["estimate"].round(0),
                    "Rating": flagged["rating"],
                    "Rater": flagged["rater"],
                    "Consensus": flagged["consensus"].round(2),
                    "Residual": flagged["residual"].round(1),
                }
            ).head(50),
            hide_index=True,
        )


def _actions(surveys: SurveyStore, survey: Survey) -> None:

    st.subheader("Raters and batches")
    invite_raters(surveys, survey, "survey")
    raters = surveys.raters(survey.name)
    active = raters.loc[~raters["revoked"], "rater"].tolist()
    if active:
        c = st.columns([2, 1])
        rater = c[0].selectbox("Revoke the link of", active, key="survey_revoke_who")
        if c[1].button("Revoke", key="survey_revoke"):
            surveys.revoke(survey.name, rater)
            st.rerun()
    c = st.columns([2, 1])
    k = c[0].number_input(
        "Pairs in a batch added now", 1, 500, survey.settings.batch or 20, key="survey_batch_k"
    )
    if c[1].button("Add a batch now", key="survey_add_batch", disabled=not active):
        st.session_state["survey_add_job"] = start_job(
            ("survey-add", surveys.store.url, survey.name, survey.batches, int(k)),
            _plan_next_batch,
            surveys.store.url,
            survey.name,
            int(k),
            by=surveys.by,
            force=True,
        )
    added = follow_job("survey_add_job", "Planning the next pairs from the answers so far")
    if added is not None and added.state == "done":
        st.rerun()
    close_survey(surveys, survey, "survey")


def _export(surveys: SurveyStore, survey: Survey) -> None:
    from ranking_core.meter.documents.export import safe_csv
    from ranking_core.surveys.results import export_frame

    st.download_button(
        "Export the answers (CSV, for riskgrid learn)",
        lambda: safe_csv(export_frame(surveys.answers(survey.name))),
        "ratings.csv",
        "text/csv",
        key="survey_export",
        on_click="ignore",
    )
