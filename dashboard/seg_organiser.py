"""The organiser's side of a SEG-method survey (see :mod:`ranking_core.surveys.seg_method`):
creating one on the Surveys page, its scenarios (shown, and editable until the first answer),
per rater and scenario what is done (thresholds, matrix) and the consistency flags raised,
missing values as "—" with the reason, inviting raters, closing, and the two export tables.
Names and descriptions are user text: shown in tables and text elements, never as markup.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from dashboard.common import plain
from dashboard.survey_invite import close_survey, invite_raters
from ranking_core.inputs.units import MGDL_PER_MMOLL
from ranking_core.storage import StorageError
from ranking_core.surveys import SurveySettings, SurveyStore
from ranking_core.surveys.design import UNITS
from ranking_core.surveys.seg_method import (
    ACTIONS,
    CUT_ACTIONS,
    DEFAULT_SCENARIOS,
    MAX_SCENARIOS,
    Scenario,
    flag_sentence,
)
from ranking_core.surveys.seg_storage import (
    SegRow,
    create_seg_survey,
    seg_answers,
    seg_export,
    set_scenarios,
    stored_scenarios,
)
from ranking_core.surveys.storage import Survey

MISSING = "—"


def _scenario_table(scenarios: list[Scenario]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "name": [s.name for s in scenarios],
            "description": [s.description for s in scenarios],
            "insulin": [s.insulin for s in scenarios],
        }
    )


def _scenarios_from(table: pd.DataFrame) -> list[Scenario]:
    rows = table.fillna({"name": "", "description": "", "insulin": True})
    return [
        Scenario(str(r.name), str(r.description), bool(r.insulin))
        for r in rows.itertuples(index=False)
        if str(r.name).strip() or str(r.description).strip()
    ]


def _scenario_editor(key: str, scenarios: list[Scenario]) -> pd.DataFrame:
    return st.data_editor(
        _scenario_table(scenarios),
        num_rows="dynamic",
        hide_index=True,
        key=key,
        column_config={
            "name": st.column_config.TextColumn("Scenario", max_chars=80, required=True),
            "description": st.column_config.TextColumn("Description", max_chars=1000),
            "insulin": st.column_config.CheckboxColumn(
                "Takes insulin", help="Unticked: action D is 'exercise and eat less'"
            ),
        },
    )


def seg_create_form(surveys: SurveyStore) -> None:
    """The form that creates a SEG-method survey (the SEG's four scenarios, editable)."""
    with st.form("seg_create"):
        name = st.text_input("Name (shown to raters, part of the links)", key="seg_new_name")
        c = st.columns(2)
        unit = c[0].selectbox("Unit shown", UNITS, key="seg_new_unit")
        base_url = c[1].text_input(
            "Address of this dashboard (for the links)", "http://127.0.0.1:8501", key="seg_new_url"
        )
        st.caption(f"Scenarios (at most {MAX_SCENARIOS}; the SEG's four to start with)")
        table = _scenario_editor("seg_new_scenarios", list(DEFAULT_SCENARIOS))
        instructions = st.text_area(
            "Instructions for raters (plain text; empty: the default)", key="seg_new_text"
        )
        if st.form_submit_button("Create"):
            try:
                settings = SurveySettings(
                    unit=unit, checks=0, repeats=0.0, base_url=base_url.strip()
                )
                survey, token = create_seg_survey(
                    surveys, name, _scenarios_from(table), settings, instructions
                )
            except (StorageError, ValueError) as exc:
                st.error(f"Not created: {plain(exc)}")
            else:
                st.success("Created. The organiser's link (shown once; keep it private):")
                st.code(survey.organiser_link(token), language=None)


def _cuts_text(cuts: tuple[int, ...], unit: str) -> str:
    def value(mg: int) -> str:
        return f"{mg / MGDL_PER_MMOLL:.1f}" if unit == "mmol/L" else f"{mg}"

    return " · ".join(f"{a} ≤ {value(c)}" for a, c in zip(CUT_ACTIONS, cuts, strict=True)) + (
        f" {unit}"
    )


def progress_table(answers: list[SegRow], unit: str) -> pd.DataFrame:
    """Per rater and scenario: thresholds (in ``unit``), matrix, flags; missing values as "—"
    with the reason (never None or nan)."""
    rows = []
    for r in answers:
        a = r.answer
        if a.thresholds is None:
            thresholds = f"{MISSING} not answered yet"
        else:
            thresholds = _cuts_text(a.thresholds, unit)
        if a.matrix is not None:
            matrix = "saved"
        elif a.thresholds is None:
            matrix = f"{MISSING} waits for the thresholds"
        else:
            matrix = f"{MISSING} not answered yet"
        flags = f"{MISSING} no matrix yet" if r.flags is None else str(len(r.flags))
        rows.append(
            (r.rater, r.scenario, thresholds, matrix, flags, "revoked" if r.revoked else "open")
        )
    return pd.DataFrame(
        rows, columns=["Rater", "Scenario", "Thresholds", "Matrix", "Flags", "Link"]
    )


def seg_organiser_page(surveys: SurveyStore, survey: Survey) -> None:
    """Scenarios, progress per rater and scenario, flags, raters, close and export."""
    unit = survey.settings.unit
    scenarios = stored_scenarios(surveys, survey)
    answers = seg_answers(surveys, survey.name)
    complete = sum(r.answer.done for r in answers)
    answered = sum(r.answer.thresholds is not None or r.answer.matrix is not None for r in answers)
    st.title(f"Survey “{plain(survey.name)}”")
    st.caption(
        f"{'Open' if survey.is_open else 'Closed'} · SEG method · {len(scenarios)} scenarios · "
        f"shown in {unit} · {complete} of {len(answers)} scenario answers complete"
    )
    st.subheader("Scenarios")
    if answered or not survey.is_open:
        st.dataframe(
            _scenario_table([s.scenario for s in scenarios]).rename(
                columns={"name": "Scenario", "description": "Description", "insulin": "Insulin"}
            ),
            hide_index=True,
        )
        if answered:
            st.caption("Answers are in: the scenarios stay as they were answered.")
    else:
        with st.form("seg_edit_scenarios"):
            table = _scenario_editor(f"seg_scenarios_{survey.id}", [s.scenario for s in scenarios])
            if st.form_submit_button("Save the scenarios"):
                try:
                    set_scenarios(surveys, survey.name, _scenarios_from(table))
                except StorageError as exc:
                    st.error(f"Not saved: {plain(exc)}")
                else:
                    st.success("Scenarios saved.")
    st.subheader("Raters")
    if not answers:
        st.info("No raters yet: invite them below.")
    else:
        st.dataframe(progress_table(answers, unit), hide_index=True)
        flagged = [(r.rater, r.scenario, flag_sentence(f)) for r in answers for f in r.flags or ()]
        if flagged:
            st.markdown("**Flags** (risk falls as the ranges move apart; a note, not an error)")
            st.dataframe(
                pd.DataFrame(flagged, columns=["Rater", "Scenario", "Flag"]), hide_index=True
            )
    from dashboard.seg_grid import grid_so_far

    stamp = tuple(
        (r.rater, r.scenario, r.answer.thresholds_at, r.answer.matrix_at) for r in answers
    )
    grid_so_far(surveys, survey, (complete, hash(stamp)))
    if survey.is_open:
        _invite_and_close(surveys, survey)
    _export(surveys, survey)


def _invite_and_close(surveys: SurveyStore, survey: Survey) -> None:
    st.subheader("Invite raters")
    invite_raters(surveys, survey, "seg")
    close_survey(surveys, survey, "seg")


def _export(surveys: SurveyStore, survey: Survey) -> None:
    from ranking_core.inputs.text import safe_csv

    st.caption(
        "Export: thresholds.csv (rater, scenario, action, max in mg/dL) and matrix.csv (rater, "
        f"scenario, measured, actual, score; actions {', '.join(ACTIONS)}), the input of "
        "riskgrid elicit."
    )
    c = st.columns(2)

    def table(part: int) -> Callable[[], str]:
        return lambda: safe_csv(seg_export(surveys, survey.name)[part])

    for column, (file, part) in zip(c, (("thresholds.csv", 0), ("matrix.csv", 1)), strict=True):
        column.download_button(
            f"Export {file}",
            table(part),
            file,
            "text/csv",
            key=f"seg_export_{part}",
            on_click="ignore",
        )
