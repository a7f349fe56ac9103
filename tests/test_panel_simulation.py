"""Rating-panel simulator: designs, rater noise, outliers, reference surfaces."""

from __future__ import annotations

import numpy as np
import pytest

from ranking_core.grids.seg import SEGTable
from ranking_core.panels import simulate_panel
from ranking_core.ratings import read_rating_set

AXIS = np.arange(601.0)
# a synthetic signed risk table: |REF − BGM| / 150, capped at 4 (not the SEG)
SYNTHETIC = np.clip(np.subtract.outer(AXIS, AXIS) / 150.0, -4, 4)


def test_noiseless_panel_reproduces_the_reference_surface():
    table = SEGTable(SYNTHETIC)
    frame = simulate_panel(300, reference=table, noise=0.0, outlier_fraction=0.0, random_state=1)
    ref = np.rint(frame["reference"]).astype(int)
    est = np.rint(frame["estimate"]).astype(int)
    np.testing.assert_allclose(frame["rating"], np.abs(SYNTHETIC[ref, est]))
    assert not frame["outlier"].any()


def test_outlier_count_is_the_rounded_fraction_and_noise_is_bounded():
    frame = simulate_panel(1000, reference=np.abs(SYNTHETIC), noise=0.2, random_state=2)
    assert frame["outlier"].sum() == 66
    ref = np.rint(frame["reference"]).astype(int)
    est = np.rint(frame["estimate"]).astype(int)
    residual = (frame["rating"] - np.abs(SYNTHETIC[ref, est]))[~frame["outlier"]]
    # clipped normal noise with sd ≤ 0.3 and bias ~ N(0, 0.1²): well inside ±1.5 risk units
    assert np.all(np.abs(residual) < 1.5)
    assert 0.1 < residual.std() < 0.4
    assert frame["rating"].between(0, 4).all()


def test_designs_place_scenarios_where_they_say():
    uniform = simulate_panel(4000, "uniform", reference=np.abs(SYNTHETIC), random_state=3)
    assert uniform[["reference", "estimate"]].to_numpy().min() >= 0
    assert uniform["reference"].median() == pytest.approx(300, abs=20)
    log = simulate_panel(4000, "log-uniform", reference=np.abs(SYNTHETIC), random_state=3)
    # log-uniform on [20, 600]: median = sqrt(20·600) ≈ 110 mg/dL
    assert log["reference"].median() == pytest.approx(np.sqrt(20 * 600), rel=0.1)
    near = simulate_panel(4000, "near-diagonal", reference=np.abs(SYNTHETIC), random_state=3)
    ratio = np.log(near["estimate"] / near["reference"])
    assert np.median(np.abs(ratio)) < 0.25
    assert near[["reference", "estimate"]].to_numpy().max() <= 600


def test_raters_are_named_and_the_frame_is_a_valid_rating_set():
    frame = simulate_panel(200, reference=np.abs(SYNTHETIC), n_raters=12, random_state=4)
    assert set(frame["rater"]) <= {f"R{k:02d}" for k in range(1, 13)}
    assert frame["rater"].nunique() > 6
    ratings = read_rating_set(frame)
    assert ratings.problems == () and len(ratings.frame) == 200


def test_same_seed_same_panel():
    a = simulate_panel(50, reference=np.abs(SYNTHETIC), random_state=9)
    b = simulate_panel(50, reference=np.abs(SYNTHETIC), random_state=9)
    assert a.equals(b)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"design": "grid"}, "design"),
        ({"m": 0}, "m must"),
        ({"n_raters": 0}, "n_raters"),
        ({"noise": -1.0}, "noise"),
        ({"outlier_fraction": 1.5}, "outlier_fraction"),
        ({"reference": np.zeros((10, 10))}, "601, 601"),
    ],
)
def test_bad_parameters_are_named(kwargs, message):
    arguments = {"m": 10, "reference": np.abs(SYNTHETIC), **kwargs}
    with pytest.raises(ValueError, match=message):
        simulate_panel(**arguments)


def test_builtin_surface_follows_the_parkes_type1_zones():
    from ranking_core.grids.parkes import parkes_zone
    from ranking_core.panels import parkes_surface

    surface = parkes_surface()
    assert surface.shape == (601, 601)
    assert not surface.flags.writeable
    assert 0 <= surface.min() and surface.max() <= 4
    # far inside a zone (≥ 3 blur sd from any boundary) the surface equals the zone code
    for ref, bgm in [(300, 300), (450, 450)]:
        assert parkes_zone(ref, bgm) == "A" and surface[ref, bgm] == pytest.approx(0, abs=1e-3)
    assert parkes_zone(10, 590) == "E" and surface[10, 590] == pytest.approx(4, abs=1e-3)
    # smooth: one mg/dL never changes the risk by more than a fraction of a zone
    assert np.abs(np.diff(surface, axis=0)).max() < 0.2
    assert np.abs(np.diff(surface, axis=1)).max() < 0.2
    # monotone in severity: mean risk per Parkes zone increases A < B < … < E
    axis = np.arange(601)
    zones = parkes_zone(*np.meshgrid(axis, axis, indexing="ij"))
    means = [surface[zones == z].mean() for z in "ABCDE"]
    assert means == sorted(means)


def test_default_panel_uses_the_builtin_surface():
    from ranking_core.panels import parkes_surface

    frame = simulate_panel(100, noise=0.0, outlier_fraction=0.0, random_state=6)
    ref = np.rint(frame["reference"]).astype(int)
    est = np.rint(frame["estimate"]).astype(int)
    np.testing.assert_allclose(frame["rating"], parkes_surface()[ref, est])


def test_hard_panel_rounds_answers_and_has_a_careless_rater():
    from ranking_core.panels import PANEL_MODELS

    frame = simulate_panel(
        2000, reference=np.abs(SYNTHETIC), n_raters=10, random_state=5, **PANEL_MODELS["hard"]
    )
    np.testing.assert_allclose(frame["rating"] * 2, np.round(frame["rating"] * 2))
    careless = frame["rater"] == "R10"
    assert frame.loc[careless, "outlier"].all()
    ref = np.rint(frame["reference"]).astype(int)
    est = np.rint(frame["estimate"]).astype(int)
    truth = np.abs(SYNTHETIC[ref, est])
    # the careless rater's answers do not follow the scenario; the others' do
    assert abs(np.corrcoef(frame.loc[careless, "rating"], truth[careless])[0, 1]) < 0.2
    others = ~frame["outlier"]
    assert np.corrcoef(frame.loc[others, "rating"], truth[others])[0, 1] > 0.9
    # rater scales 0.8..1.2: per-rater slopes of rating on the reference risk differ
    slopes = [
        np.polyfit(
            truth[(frame["rater"] == r) & others & (truth < 3)],
            frame.loc[(frame["rater"] == r) & others & (truth < 3), "rating"],
            1,
        )[0]
        for r in sorted(set(frame["rater"]) - {"R10"})
    ]
    assert 0.7 < min(slopes) < max(slopes) < 1.3 and max(slopes) - min(slopes) > 0.1


def test_rater_effects_panel_follows_its_model():
    from ranking_core.panels import simulate_rater_effects_panel

    surface = np.abs(SYNTHETIC)
    frame = simulate_rater_effects_panel(
        3000, reference=surface, random_state=3, noise=(0.0, 0.0), reversed_fraction=0.05
    )
    assert set(frame.columns) == {"reference", "estimate", "rating", "rater", "outlier"}
    assert np.allclose(frame["rating"] * 2, np.round(frame["rating"] * 2))  # steps of 0.5
    assert frame["rating"].between(0, 4).all() and frame["rater"].nunique() == 9
    assert 0.035 < frame["outlier"].mean() < 0.065
    risk = surface[np.rint(frame["reference"]).astype(int), np.rint(frame["estimate"]).astype(int)]
    # without noise the compressing rater (the last) answers 2 + 0.5·(r − 2) rounded to 0.5,
    # a reversed answer being 4 minus that
    last = (frame["rater"] == "R09").to_numpy()
    expected = np.round(np.clip(2 + 0.5 * (risk - 2), 0, 4) * 2) / 2
    expected = np.where(frame["outlier"], 4 - expected, expected)
    np.testing.assert_allclose(frame["rating"][last], expected[last])
    # every other rater is an affine map of the risk: answers non-decreasing in it
    for name, group in frame[~frame["outlier"]].groupby("rater"):
        order = np.argsort(risk[group.index])
        assert np.all(np.diff(group["rating"].to_numpy()[order]) >= 0), name
    noise_only = simulate_rater_effects_panel(500, reference=surface, rater_effects=False)
    assert "rater" not in noise_only and not noise_only["outlier"].any()
    assert noise_only["rating"].between(0, 4).all()
