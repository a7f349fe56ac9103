"""The Meter page's "Plan a study" section: the probability that a device passes the chosen
standard's criteria for S sensors × M pairs, expected agreement and intra-class correlation, and
the sensors needed for a target probability (:func:`ranking_core.meter.standards.study_plan.plan`,
the computation of ``riskgrid plan-study``). It starts from the report above it: the agreement
observed in each criterion, the intra-class correlation the report estimated and the bound it
judged by (:func:`ranking_core.meter.standards.study_plan.plan_start`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.common import plain
from ranking_core.meter import MeterReport
from ranking_core.meter.standards.bounds import BOUNDS
from ranking_core.meter.standards.registry import STANDARDS
from ranking_core.meter.standards.study_plan import (
    MAX_PAIRS,
    MAX_SENSORS,
    PLAN_BOUNDS,
    PlanStart,
    plan,
    plan_start,
)

__all__ = ["show_study_plan"]

# agreement offered for a criterion the report could not judge: a little above its requirement
_SUGGESTED = 0.03


@st.cache_data(show_spinner="Computing the plan…", max_entries=16)
def _planned(
    profile: str,
    sensors: int,
    pairs: int,
    agreement: tuple[tuple[str, float], ...],
    icc: float,
    bound: str,
    target: float | None,
) -> dict:
    return plan(profile, sensors, pairs, dict(agreement), icc, bound, target).to_dict()


def _start_again_from(start: PlanStart, name: str) -> None:
    """Forget the settings typed for another file's findings, so that the widgets start from
    ``start`` (the first time, and whenever the report's findings change)."""
    seen = (name, start.icc, start.bound, tuple(start.agreement.items()))
    if st.session_state.get("plan_study_start") == seen:
        return
    st.session_state["plan_study_start"] = seen
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith("plan_study_")]:
        if key not in (
            "plan_study_start",
            "plan_study_standard",
            "plan_study_sensors",
            "plan_study_pairs",
            "plan_study_target",
        ):
            del st.session_state[key]


def show_study_plan(report: MeterReport) -> None:
    """The section, for one of the standards ``report`` judged, starting from its findings."""
    standards = report.standards
    with st.expander("Plan a study: the chance of passing, and the sensors needed"):
        if not standards:
            st.info("Choose a standard above to plan a study for it.")
            return
        name = st.selectbox(
            "Standard",
            standards,
            format_func=lambda n: STANDARDS[n].title,
            key="plan_study_standard",
        )
        standard = STANDARDS[name]
        start = plan_start(report, name)
        _start_again_from(start, name)
        st.caption(
            f"Starting from this file: the agreement observed in each criterion, intra-class "
            f"correlation {start.icc:g} (as the report estimated it), bound {start.bound} (as the "
            "report judged). " + " ".join(start.notes)
        )
        c = st.columns(4)
        sensors = int(c[0].number_input("Sensors", 1, MAX_SENSORS, 20, key="plan_study_sensors"))
        pairs = int(
            c[1].number_input(
                "Pairs per sensor in each range", 1, MAX_PAIRS, 30, key="plan_study_pairs"
            )
        )
        icc = float(
            c[2].number_input(
                "Intra-class correlation", 0.0, 0.99, start.icc, 0.01, key="plan_study_icc"
            )
        )
        bound = str(
            c[3].selectbox(
                "Bound",
                list(PLAN_BOUNDS),
                index=PLAN_BOUNDS.index(start.bound),
                format_func=lambda b: BOUNDS[b].label,
                key="plan_study_bound",
            )
        )
        judged = [k for k in standard.criteria if k.rule in ("lower-bound", "share")]
        chosen = st.multiselect(
            "Criteria",
            [k.id for k in judged],
            default=[k.id for k in judged],
            key=f"plan_study_ids_{name}",
        )
        agreement = []
        cols = st.columns(max(1, min(len(chosen), 7)))
        for i, key in enumerate(chosen):
            criterion = next(k for k in judged if k.id == key)
            default = start.agreement.get(
                key, min(0.999, criterion.required_percent / 100 + _SUGGESTED)
            )
            share = cols[i % len(cols)].number_input(
                f"{key}: expected share",
                0.001,
                0.999,
                round(default, 3),
                0.005,
                key=f"plan_study_{name}_{key}",
                help=criterion.label,
            )
            agreement.append((key, float(share)))
        target = st.slider(
            "Target probability of passing all", 0.5, 0.99, 0.8, 0.01, key="plan_study_target"
        )
        if not agreement:
            return
        try:
            result = _planned(name, sensors, pairs, tuple(agreement), icc, bound, target)
        except ValueError as exc:
            st.error(plain(str(exc)))
            return
        for note in result["notes"]:
            st.warning(plain(note))
        rows = [
            {
                "Criterion": c["id"],
                "What is counted": c["criterion"],
                "Expected share": f"{c['agreement']:.3f}",
                "P(pass)": f"{c['probability_pass']:.3f}",
                "How": c["method"],
            }
            for c in result["criteria"]
        ]
        rows.append(
            {
                "Criterion": "all",
                "What is counted": "every criterion above",
                "Expected share": "",
                "P(pass)": f"{result['all']:.3f}",
                "How": result["all_method"],
            }
        )
        st.table(pd.DataFrame(rows).style.hide(axis="index"))
        needed = result["sensors_needed"]
        st.caption(
            f"Sensors needed for P(pass all) ≥ {target:g}: "
            + (
                f"{needed}"
                if needed is not None
                else "not reached by any study up to the planner's limit"
            )
            + f". Bound: {BOUNDS[bound].label}. Model: {result['model']}. The same plan: "
            f"riskgrid plan-study --profile {name} "
            f"--sensors {sensors} --pairs-per-sensor {pairs} --icc {icc:g} --bound {bound} "
            "--agreement " + ",".join(f"{k}={v:g}" for k, v in agreement) + f" --target {target:g}"
        )
