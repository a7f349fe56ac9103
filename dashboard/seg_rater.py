"""The rater's page of a SEG-method survey (reached by the rater's link; see
:mod:`ranking_core.surveys.seg_method`): one scenario at a time with its place ("Scenario k of
n"), (a) the four action thresholds in the survey's unit, then (b) the 5 × 5 risk matrix on the
1..9 scale, rows the meter's action (measured), columns the truth's (actual), each labelled with
the rater's own ranges; the diagonal is 1. Each part is committed by its button's callback
before the page is drawn again; the rater comes back through the link and continues where they
stopped. A matrix whose risk falls as the ranges move apart gets a visible note (never refused).
User text (survey and scenario names, descriptions, instructions) is shown as text, never markup.
"""

from __future__ import annotations

import streamlit as st
from streamlit.logger import get_logger

from dashboard.common import plain
from ranking_core.inputs.units import MGDL_PER_MMOLL
from ranking_core.storage import StorageError
from ranking_core.surveys.seg_method import (
    ACTIONS,
    CUT_ACTIONS,
    GLUCOSE_TOP,
    SCORE_RANGE,
    action_label,
    action_ranges,
    consistency_flags,
    flag_sentence,
)
from ranking_core.surveys.seg_storage import (
    StoredScenario,
    rater_answers,
    save_matrix,
    save_thresholds,
    stored_scenarios,
)
from ranking_core.surveys.storage import RaterAccess, SurveyStore

LOG = get_logger("riskgrid.dashboard")
SAVE_FAILED = "Your answer was not saved; please press the button again."


def _current_key(access: RaterAccess) -> str:
    return f"seg_current_{access.rater_id}"


def _cut_key(access: RaterAccess, scenario: StoredScenario, letter: str) -> str:
    return f"seg_cut_{access.rater_id}_{scenario.id}_{letter}"


def _cell_key(access: RaterAccess, scenario: StoredScenario, i: int, j: int) -> str:
    return f"seg_cell_{access.rater_id}_{scenario.id}_{i}{j}"


def cell_label(i: int, j: int) -> str:
    """The accessible name of a matrix cell: ``"Meter says B, truth is A"``."""
    return f"Meter says {ACTIONS[i]}, truth is {ACTIONS[j]}"


def threshold_label(letter: str, insulin: bool, unit: str) -> str:
    """The label of a threshold input: ``"A: emergency treatment of a low, up to (mg/dL)"``."""
    return f"{action_label(letter, insulin)}, up to ({unit})"


def _save_thresholds(surveys: SurveyStore, access: RaterAccess, scenario: StoredScenario) -> None:
    values = [st.session_state.get(_cut_key(access, scenario, a)) for a in CUT_ACTIONS]
    try:
        save_thresholds(surveys, access, scenario.id, values)
    except StorageError as exc:
        LOG.warning("thresholds were not saved: %s", exc)
        st.session_state["seg_message"] = f"{SAVE_FAILED} ({exc})"
    except ValueError as exc:
        st.session_state["seg_message"] = f"Not saved: {exc}."


def _save_matrix(
    surveys: SurveyStore, access: RaterAccess, scenario: StoredScenario, index: int
) -> None:
    scores = [
        [
            None if i == j else st.session_state.get(_cell_key(access, scenario, i, j))
            for j in range(5)
        ]
        for i in range(5)
    ]
    try:
        matrix = save_matrix(surveys, access, scenario.id, scores)
    except StorageError as exc:
        LOG.warning("a matrix was not saved: %s", exc)
        st.session_state["seg_message"] = f"{SAVE_FAILED} ({exc})"
        return
    except ValueError as exc:
        st.session_state["seg_message"] = f"Not saved: {exc}."
        return
    if consistency_flags(matrix):  # stay: the note is shown with this scenario
        st.session_state[_current_key(access)] = index
    else:  # on to the first scenario not answered yet
        st.session_state.pop(_current_key(access), None)


def _go(access: RaterAccess, index: int) -> None:
    st.session_state[_current_key(access)] = index


def seg_rater_page(surveys: SurveyStore, access: RaterAccess) -> None:
    """The scenario the rater is at: the first not answered yet, or the one they went to."""
    survey = access.survey
    unit = survey.settings.unit
    scenarios = stored_scenarios(surveys, survey)
    answers = rater_answers(surveys, access)
    done = [answers[s.id].done for s in scenarios]
    n = len(scenarios)
    st.title(plain(survey.name))
    if survey.instructions:
        st.text(survey.instructions)
    message = st.session_state.pop("seg_message", None)
    if message:
        st.error(plain(message))
    index = st.session_state.get(_current_key(access))
    if index is None or not 0 <= index < n:
        index = next((i for i, d in enumerate(done) if not d), None)
    if index is None:
        st.progress(1.0, text=f"{n} of {n} scenarios")
        st.success("All scenarios answered. Thank you! Your answers are saved.")
        choice = st.selectbox(
            "Look at a scenario again",
            range(n),
            index=None,
            format_func=lambda i: scenarios[i].name,
            key="seg_review",
        )
        if choice is not None:
            st.button("Open it", key="seg_review_open", on_click=_go, args=(access, choice))
        return
    scenario = scenarios[index]
    answer = answers[scenario.id]
    st.progress(sum(done) / max(n, 1), text=f"Scenario {index + 1} of {n}")
    st.subheader(plain(scenario.name))
    if scenario.description:
        st.text(scenario.description)
    _thresholds_form(surveys, access, scenario, answer.thresholds, unit)
    if answer.thresholds is None:
        st.info("Save the thresholds first; the risk matrix comes next, labelled with them.")
    else:
        _matrix_form(surveys, access, scenario, index, answer, unit)
    previous, following, _ = st.columns([1, 1, 3])
    if index > 0:
        previous.button(
            "Previous scenario", key="seg_previous", on_click=_go, args=(access, index - 1)
        )
    if answer.done and index < n - 1:
        following.button("Next scenario", key="seg_next", on_click=_go, args=(access, index + 1))


def _shown_cut(mg_dl: int, unit: str) -> float | int:
    return round(mg_dl / MGDL_PER_MMOLL, 1) if unit == "mmol/L" else int(mg_dl)


def _thresholds_form(
    surveys: SurveyStore,
    access: RaterAccess,
    scenario: StoredScenario,
    cuts: tuple[int, ...] | None,
    unit: str,
) -> None:
    st.markdown("**(a) Actions.** The highest glucose at which you would take each action:")
    mmol = unit == "mmol/L"
    with st.form(f"seg_thresholds_{access.rater_id}_{scenario.id}", border=False):
        columns = st.columns(5)
        for k, letter in enumerate(CUT_ACTIONS):
            columns[k].number_input(
                threshold_label(letter, scenario.insulin, unit),
                value=None if cuts is None else _shown_cut(cuts[k], unit),
                step=0.1 if mmol else 1,
                format="%.1f" if mmol else "%d",
                key=_cut_key(access, scenario, letter),
            )
        top = f"{GLUCOSE_TOP / MGDL_PER_MMOLL:.1f} mmol/L" if mmol else f"{GLUCOSE_TOP} mg/dL"
        columns[4].caption(f"{action_label('E', scenario.insulin)}: above D, up to {top}")
        st.caption(
            f"Each higher than the one before, below {top}"
            + (" (one decimal)." if mmol else " (whole numbers).")
        )
        st.form_submit_button(
            "Save thresholds", on_click=_save_thresholds, args=(surveys, access, scenario)
        )


def _matrix_form(
    surveys: SurveyStore, access: RaterAccess, scenario: StoredScenario, index: int, answer, unit
) -> None:
    low, high = SCORE_RANGE
    ranges = action_ranges(answer.thresholds, unit)
    st.markdown(
        f"**(b) Risk.** A patient acts on the meter (rows: the action its reading calls for); "
        f"the truth lies in another action's range (columns). Score the risk from {low} (none) "
        f"to {high} (extreme); the diagonal is {low}."
    )
    stored = answer.matrix
    with st.form(f"seg_matrix_{access.rater_id}_{scenario.id}", border=False):
        widths = [2, 1, 1, 1, 1, 1]
        head = st.columns(widths)
        head[0].caption("Meter says ↓ · truth is →")
        for j, letter in enumerate(ACTIONS):
            head[j + 1].caption(f"**{action_label(letter, scenario.insulin)}** ({ranges[letter]})")
        for i, letter in enumerate(ACTIONS):
            row = st.columns(widths)
            row[0].caption(f"**{action_label(letter, scenario.insulin)}** ({ranges[letter]})")
            for j in range(5):
                if i == j:
                    row[j + 1].markdown(f"{low} (no risk)")
                    continue
                row[j + 1].number_input(
                    cell_label(i, j),
                    min_value=low,
                    max_value=high,
                    step=1,
                    value=None if stored is None else int(stored[i, j]),
                    key=_cell_key(access, scenario, i, j),
                    label_visibility="collapsed",
                )
        st.form_submit_button(
            "Save matrix",
            type="primary",
            on_click=_save_matrix,
            args=(surveys, access, scenario, index),
        )
    if stored is not None:
        flags = consistency_flags(stored)
        if flags:
            st.warning(
                "Saved. Please check: risk usually does not fall as the two ranges move apart, "
                "but here " + "; ".join(flag_sentence(f) for f in flags) + ". Change the "
                "matrix and save it again, or go on if you meant it."
            )
        else:
            st.success("Saved.")
