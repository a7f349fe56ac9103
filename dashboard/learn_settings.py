"""The Learn page's settings: one frozen ``LearnSettings`` in ``st.session_state["learn_settings"]``
is the source of truth; the widgets of the settings panel write to it through their callbacks
(:func:`apply_setting`) and are refilled from it (:func:`fill_widgets`) when Streamlit forgets
them."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import streamlit as st

from dashboard.common import plain
from ranking_core.filters import FILTERS
from ranking_core.learn import (
    CRITERIA,
    CRITERION_LABELS,
    FILTER_LABELS,
    KERNEL_LABELS,
    ROBUST_LABELS,
    RULE_LABELS,
    RULES,
    VALIDATED_RULES,
    LearnSettings,
    robust_settings,
    with_robust,
)

GAMMAS = (30.0, 100.0, 200.0, 500.0, 1e3, 2e3, 4e3, 1e4, 1.6e4, 4e4, 1e5, 4e5)
SCALE_LABELS = {"log": "log scale (finer at low glucose)", "linear": "mg/dL as measured"}
# widget key → LearnSettings field
FIELDS = {
    "learn_kernel": "kernel",
    "learn_gamma": "gamma",
    "learn_scale": "scale",
    "learn_filter": "filter",
    "learn_order": "order",
    "learn_signed": "signed",
    "learn_anchors": "anchors",
    "learn_rule": "rule",
    "learn_refit_all": "refit_all",
    "learn_criterion": "criterion",
    "learn_robust": "robust",
    "learn_monotone": "monotone",
}
# a widget whose change sets another setting too: the kernel its own width, robust learning the
# shape (ranking_core.learn.with_robust)
DEPENDENT = {"learn_kernel": "learn_gamma", "learn_robust": "learn_monotone"}
NO_ROBUST = "none"  # the robust-learning widget's option for robust=None (a widget value of None
# would read as "nothing chosen")


def widget_value(settings: LearnSettings, widget: str) -> object:
    """The value the widget ``widget`` shows for ``settings``."""
    value = getattr(settings, FIELDS[widget])
    return NO_ROBUST if widget == "learn_robust" and value is None else value


def fill_widgets(settings: LearnSettings, widgets: Iterable[str] = FIELDS) -> None:
    """Show ``settings`` in ``widgets`` (all by default)."""
    for widget in widgets:
        st.session_state[widget] = widget_value(settings, widget)


def apply_setting(widget: str) -> None:
    """Widget callback: the new value goes into the settings object (the source of truth)."""
    value = st.session_state[widget]
    if widget == "learn_robust" and value == NO_ROBUST:
        value = None
    changes = {FIELDS[widget]: value}
    if widget == "learn_kernel":  # another kernel starts from its own width
        changes["gamma"] = None
    if widget == "learn_rule" and value == "manual":  # by hand, from the λ shown
        changes["lam"] = st.session_state.get("learn_lam", 1e-3)
    try:
        current = st.session_state["learn_settings"]
        if widget == "learn_robust":  # the one policy of every front end: robust → monotone
            st.session_state["learn_settings"] = with_robust(current, value)
        else:
            st.session_state["learn_settings"] = dataclasses.replace(current, **changes)
        st.session_state["learn_own_settings"] = True
        if widget in DEPENDENT:
            fill_widgets(st.session_state["learn_settings"], [DEPENDENT[widget]])
    except ValueError as exc:  # keep the last valid settings and say why
        st.session_state["learn_setting_error"] = str(exc)
        fill_widgets(st.session_state["learn_settings"], [widget])


def refit_on_all() -> None:
    st.session_state["learn_refit_all"] = True
    apply_setting("learn_refit_all")


def use_robust_recipe() -> None:
    """Button callback: the settings shown, learning as the robust recipe does."""
    st.session_state["learn_settings"] = robust_settings(st.session_state["learn_settings"])
    st.session_state["learn_own_settings"] = True
    fill_widgets(st.session_state["learn_settings"])


def settings_panel(settings: LearnSettings) -> None:
    """The settings widgets (drawn on every run, so an upload never resets them); the order of
    the iteration, the refit and the validation score only where ``settings`` use them."""
    st.subheader("Settings")
    st.radio(
        "Kernel",
        list(KERNEL_LABELS),
        format_func=KERNEL_LABELS.get,
        key="learn_kernel",
        on_change=apply_setting,
        args=("learn_kernel",),
    )
    st.select_slider(
        "Kernel width γ",
        GAMMAS,
        key="learn_gamma",
        format_func=lambda g: f"{g:,.0f}",
        on_change=apply_setting,
        args=("learn_gamma",),
        help="Laplacian: mg/dL of the glucose coordinates; Gaussian: (mg/dL)²",
    )
    st.radio(
        "Glucose coordinates",
        list(SCALE_LABELS),
        format_func=SCALE_LABELS.get,
        key="learn_scale",
        on_change=apply_setting,
        args=("learn_scale",),
    )
    st.selectbox(
        "Spectral filter",
        sorted(FILTERS),
        format_func=FILTER_LABELS.__getitem__,
        key="learn_filter",
        on_change=apply_setting,
        args=("learn_filter",),
    )
    if settings.filter == "iterated-lavrentiev":
        st.number_input(
            "Order of the iteration",
            1,
            6,
            key="learn_order",
            on_change=apply_setting,
            args=("learn_order",),
        )
    st.toggle(
        "Learn the signed risk",
        key="learn_signed",
        on_change=apply_setting,
        args=("learn_signed",),
        help="learn the risk with the sign of (reference − measured) and show its size: "
        "a surface without a crease along the diagonal",
    )
    st.number_input(
        "Zero-risk points on the diagonal",
        0,
        200,
        key="learn_anchors",
        on_change=apply_setting,
        args=("learn_anchors",),
        help="an exact reading carries no risk: points (g, g) rated 0, spread "
        "evenly over 0–600 mg/dL, are added to the ratings",
    )
    st.selectbox(
        "How λ is chosen",
        list(RULES),
        format_func=RULE_LABELS.__getitem__,
        key="learn_rule",
        on_change=apply_setting,
        args=("learn_rule",),
    )
    if settings.rule == "holdout":
        st.checkbox(
            "Refit on all ratings at the chosen λ",
            key="learn_refit_all",
            on_change=apply_setting,
            args=("learn_refit_all",),
        )
    if settings.rule in VALIDATED_RULES:
        st.radio(
            "Validation score (lowest wins)",
            CRITERIA,
            key="learn_criterion",
            format_func=CRITERION_LABELS.get,
            on_change=apply_setting,
            args=("learn_criterion",),
            help="the mean absolute error is steadier on noisy panels",
        )
    st.selectbox(
        "Robust learning",
        [NO_ROBUST, *(k for k in ROBUST_LABELS if k)],
        key="learn_robust",
        on_change=apply_setting,
        args=("learn_robust",),
        format_func=lambda v: ROBUST_LABELS[None if v == NO_ROBUST else v].capitalize(),
        help="for real panels: outlying ratings weigh less, each rater's offset and "
        "scale are estimated (with a rater column), answers on a scale of 0.5 or 1 "
        "stand for their rounding interval",
    )
    st.toggle(
        "Monotone grid",
        key="learn_monotone",
        on_change=apply_setting,
        args=("learn_monotone",),
        help="the nearest grid that is 0 on the diagonal and rises away from it along "
        "every row and column, as the SEG does",
    )
    problem = st.session_state.pop("learn_setting_error", None)
    if problem:
        st.error(f"Setting not applied: {plain(problem)}")
