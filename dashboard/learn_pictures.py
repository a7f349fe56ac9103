"""The Learn page's pictures of a result, each cached per fit (the key of the result shown) and
λ: the heat map of each view (a Plotly figure, or a PNG with one pixel per mg/dL), the λ rule's
curve, the a-priori rule's fit, the uncertainty band and the comparison with the reference."""

from __future__ import annotations

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from dashboard import figures
from dashboard.learn_data import Reference
from ranking_core.grids.compare import compare_grids
from ranking_core.grids.learned import GLUCOSE_AXIS
from ranking_core.grids.raster import grade_lines, grid_image, png_bytes
from ranking_core.learn import LearnedGrid
from ranking_core.panels import risk_band
from ranking_core.selection import AprioriRule

VIEWS = ("Learned", "Difference", "Reference", "Uncertainty")  # the last with robust learning
FIGURE_HEIGHT = 620  # px of the heat map


@st.cache_data(show_spinner=False, max_entries=64)
def comparison_at(
    key: tuple,
    lam: float,
    _grid: NDArray[np.float64],
    _reference: NDArray[np.float64],
    reference_id: str,
):
    """The comparison with the reference of the grid at λ (cached per fit, λ and reference)."""
    del key, lam, reference_id  # cache key only
    return compare_grids(_reference, _grid)


@st.cache_data(show_spinner=False, max_entries=4)
def reference_lines(reference_id: str, _reference: NDArray[np.float64]) -> list:
    """The reference grid's grade boundaries, once per reference."""
    del reference_id  # cache key only
    return grade_lines(_reference)


@st.cache_data(show_spinner="Computing the uncertainty band…", max_entries=16)
def band_at(key: tuple, lam: float, _shown: LearnedGrid):
    """The 95 % band of the robust fit at λ (cached per fit and λ)."""
    del key, lam  # cache key only
    return risk_band(_shown.risk_model)


def grid_figure(shown: LearnedGrid, view: str, points: bool, reference: Reference) -> object:
    """The interactive (Plotly) heat map of ``view`` (one of :data:`VIEWS`) of the grid
    ``shown``, beside ``reference``."""
    if view == VIEWS[0]:
        return figures.risk_heatmap(
            shown.grid,
            GLUCOSE_AXIS,
            "Learned grid",
            contours=reference.surface,
            points=shown.rating_points if points else None,
            flagged=shown.flagged_points,
            height=FIGURE_HEIGHT,
        )
    if view == VIEWS[1]:
        return figures.difference_heatmap(
            shown.grid - reference.surface,
            GLUCOSE_AXIS,
            f"Learned − {reference.name}",
            height=FIGURE_HEIGHT,
        )
    if view == VIEWS[3]:
        band = band_at(st.session_state["learn_result_key"], shown.lam, shown)
        return figures.band_width_heatmap(
            band.width, GLUCOSE_AXIS, f"Width of the {band.level:.0%} band (risk units)"
        )
    return figures.risk_heatmap(
        reference.surface,
        GLUCOSE_AXIS,
        f"Reference: {reference.name}",
        contours=reference.surface,
        height=FIGURE_HEIGHT,
    )


@st.cache_data(show_spinner=False, max_entries=64)
def grid_picture(
    key: tuple,
    lam: float,
    view: str,
    points: bool,
    reference_id: str,
    _shown: LearnedGrid,
    _reference: Reference,
) -> bytes:
    """The heat map of ``view`` as a PNG, one pixel per mg/dL (cached per fit, λ and view;
    ``reference_id``: the key of ``_reference``)."""
    lines = reference_lines(reference_id, _reference.surface)
    if view == VIEWS[0]:
        image = grid_image(
            _shown.grid,
            "Learned grid",
            lines=lines,
            points=_shown.rating_points if points else None,
            flagged=_shown.flagged_points,
        )
    elif view == VIEWS[1]:
        image = grid_image(
            _shown.grid - _reference.surface, f"Learned − {_reference.name}", difference=True
        )
    elif view == VIEWS[3]:
        band = band_at(key, lam, _shown)
        image = grid_image(
            _shown.grid,
            f"Pale: risk category left open by the {band.level:.0%} band",
            pale=band.uncertain,
        )
    else:
        image = grid_image(_reference.surface, f"Reference: {_reference.name}", lines=lines)
    return png_bytes(image, small=False)


@st.cache_data(show_spinner=False, max_entries=8)
def curve_picture(
    key: tuple, _result: LearnedGrid, ylabel: str, _values: NDArray[np.float64]
) -> bytes:
    """The λ rule's curve (``ylabel``, ``_values``: its ``curve_in_words``) as a PNG (cached
    per fit)."""
    del key  # cache key only
    return figures.lambda_curve_picture(_result.lams, _values, _result.lam_chosen, ylabel)


@st.cache_data(show_spinner=False, max_entries=8)
def apriori_picture(key: tuple, _rule: AprioriRule, n: int) -> bytes:
    """The a-priori rule's fit to ``n`` training points as a PNG (cached per fit)."""
    del key  # cache key only
    return figures.apriori_picture(_rule.sizes, _rule.lam_plus, _rule.alpha, _rule.beta, n)
