"""The Meter page's "Plan a study" section: the probability that a device passes the chosen
standard's criteria for S sensors × M pairs, expected agreement and intra-class correlation, and
the sensors needed for a target probability (:func:`ranking_core.meter.standards.study_plan.plan`,
the computation of ``riskgrid plan-study``)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ranking_core.meter.standards.bounds import BOUNDS
from ranking_core.meter.standards.registry import STANDARDS
from ranking_core.meter.standards.study_plan import MAX_PAIRS, MAX_SENSORS, PLAN_BOUNDS, plan

__all__ = ["show_study_plan"]

# agreement shares offered by default: a little above each criterion's requirement
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


def show_study_plan(standards: tuple[str, ...]) -> None:
    """The section, for one of ``standards`` (the page's choice)."""
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
        c = st.columns(4)
        sensors = int(c[0].number_input("Sensors", 1, MAX_SENSORS, 20, key="plan_study_sensors"))
        pairs = int(
            c[1].number_input(
                "Pairs per sensor in each range", 1, MAX_PAIRS, 30, key="plan_study_pairs"
            )
        )
        icc = float(
            c[2].number_input("Intra-class correlation", 0.0, 0.99, 0.0, 0.01, key="plan_study_icc")
        )
        bound = str(
            c[3].selectbox(
                "Bound",
                list(PLAN_BOUNDS),
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
            default = min(0.999, criterion.required_percent / 100 + _SUGGESTED)
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
            st.error(str(exc))
            return
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
                "How": "product",
            }
        )
        st.table(pd.DataFrame(rows).style.hide(axis="index"))
        needed = result["sensors_needed"]
        st.caption(
            f"Sensors needed for P(pass all) ≥ {target:g}: "
            + (f"{needed}" if needed is not None else "more than the planner's limit")
            + f". {result['model']}. The same plan: riskgrid plan-study --profile {name} "
            f"--sensors {sensors} --pairs-per-sensor {pairs} --icc {icc:g} --bound {bound} "
            "--agreement " + ",".join(f"{k}={v:g}" for k, v in agreement) + f" --target {target:g}"
        )
