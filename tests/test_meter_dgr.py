"""Dynamic Glucose Regions: each region's rule at and beside its borders (the values written out
from the IfDTUlm reference code's rules, DGR_plot.py at commit 1627801c), the 7.5 % requirement,
and the exclusion ellipse on readings whose outcome follows from its definition by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ranking_core.meter.cgm.dgr import dgr, dgr_plot, region_counts


@pytest.mark.parametrize(
    ("bg", "roc", "regions"),
    [
        (69.9, 0.0, {"low"}),
        (70.0, 0.0, {"stable"}),  # 70 ≤ BG ≤ 180, −1 ≤ ROC ≤ 1
        (180.0, 1.0, {"stable"}),
        (180.1, 1.0, set()),
        (300.0, 0.0, set()),
        (300.1, 0.0, {"high"}),
        (100.0, -1.0, {"stable"}),  # ROC < −1 needed for alert low
        (100.0, -1.01, {"alert_low"}),  # BGP = 69.7 < 80, ROC < −1
        (100.0, -1.5, {"alert_low"}),  # BGP = 55 < 80
        (150.0, -2.3, set()),  # BGP = 150 − 69 = 81, not below 80
        (70.0, -5.0, {"alert_low"}),  # BG ≥ 70
        (69.0, -5.0, {"low"}),
        (160.0, 1.6, {"alert_high"}),  # BGP = 208 > 200, ROC > 1.5
        (160.0, 1.5, set()),  # ROC must exceed 1.5
        (300.0, 3.0, {"alert_high"}),  # BG ≤ 300
        (140.0, 2.0, set()),  # BGP = 200, not above
    ],
)
def test_each_region_at_its_borders(bg, roc, regions):
    counts = region_counts([bg], [roc])
    found = {k for k in ("low", "high", "alert_low", "alert_high", "stable") if getattr(counts, k)}
    assert found == regions
    assert counts.total == 1


def test_readings_without_a_rate_are_left_out():
    counts = region_counts([50.0, 100.0, math.nan], [0.0, math.nan, 0.0])
    assert counts.total == 1 and counts.low == 1


def balanced(n_each=20):
    """n_each readings in each critical region and in the stable one, none elsewhere."""
    bg = [50.0] * n_each + [350.0] * n_each + [100.0] * n_each + [250.0] * n_each
    roc = [0.0] * n_each + [0.0] * n_each + [-2.0] * n_each + [2.0] * n_each
    bg += [150.0] * n_each
    roc += [0.0] * n_each
    return bg, roc


def test_requirement_fulfilled_needs_no_exclusion():
    bg, roc = balanced()
    result = dgr(bg, roc)
    assert result.counts.meets() and result.status == "fulfilled"
    assert result.to_dict()["ellipse"]["readings_removed"] == 0


def test_the_ellipse_removes_the_readings_nearest_its_centre():
    bg, roc = balanced()
    bg, roc = bg[10:], roc[10:]  # BG low: 10 readings; the others 20
    near = [185.0 + 0.5 * k for k in range(100)]  # neutral readings, D = k/230
    result = dgr(bg + near, roc + [0.0] * 100)
    assert result.counts.total == 190
    assert not result.counts.meets()  # 10 < ⌈0.075 · 190⌉ = 15
    assert result.to_exclude == math.ceil(190 - 10 / 0.075) == 57
    # the 57 smallest D: neutral k = 0 … 56 (the stable readings lie at D = 70/230)
    assert result.status == "excluded"
    assert result.exclusion_distance == pytest.approx(56 / 230)
    removed = np.flatnonzero(result.excluded)
    assert removed.tolist() == list(range(90, 90 + 57))
    assert result.after.total == 133 and result.after.low == 10 and result.after.meets()
    data = result.to_dict()
    assert data["ellipse"]["readings_removed"] == 57
    assert data["counts"] == {
        "low": 10,
        "high": 20,
        "alert_low": 20,
        "alert_high": 20,
        "stable": 20,
        "total": 190,
    }


def test_cannot_be_fulfilled_when_the_ellipse_reaches_the_critical_regions():
    bg = [50.0] * 100 + [350.0] * 100 + [100.0] * 100 + [250.0] * 100 + [150.0] * 1
    roc = [0.0] * 200 + [-2.0] * 100 + [2.0] * 100 + [0.0]
    result = dgr(bg, roc)
    assert result.status == "cannot be fulfilled"
    assert result.exclusion_distance > 1
    assert not result.excluded.any() and result.after == result.counts


def test_plot_draws_the_regions_and_the_shares():
    bg, roc = balanced()
    fig = dgr_plot(dgr(bg, roc))
    assert len(fig.axes) == 2
    labels = [t.get_text() for t in fig.axes[1].texts]
    assert labels.count("20.0 %") == 5
