"""The Meter page: the error-grid plots of the report, and the report built only when asked."""

from __future__ import annotations

import io
import time

import pytest
from pypdf import PdfReader

from tests.dashboard_support import fresh_machine, open_app


def test_report_is_built_on_request_and_names_every_grid_shown(tmp_path, monkeypatch):
    fresh_machine(tmp_path, monkeypatch)
    at = open_app("meter")
    assert "meter_report_pdf" not in at.session_state  # nothing built on a plain run
    criteria = next(t.value for t in at.table if "What is counted" in t.value.columns)
    # meter data: judged by ISO 15197 alone, never by the CGM rules
    assert list(criteria["Criterion"]) == [*"12"]
    assert set(criteria["Verdict"]) <= {"passes", "fails", "no pairs in range"}
    assert at.radio(key="meter_figure_zone_grids").options == [
        "DTS Error Grid",
        "Clarke Error Grid",
        "Parkes Error Grid, type 1",
    ]
    meanings = [list(t.value["Meaning"]) for t in at.table if "Meaning" in t.value.columns]
    assert ["no risk", "mild risk", "moderate risk", "high risk", "extreme risk"] in meanings
    at.radio(key="meter_figure_zone_grids").set_value("clarke").run()
    assert not at.exception
    next(b for b in at.button if b.label == "Build the report (PDF)").click().run()
    deadline = time.monotonic() + 300  # built by a job in a worker process: polled
    while "meter_report_pdf" not in at.session_state and time.monotonic() < deadline:
        assert not at.exception, at.exception
        time.sleep(1)
        at.run()
    assert not at.exception
    _, pdf = at.session_state["meter_report_pdf"]
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)
    for title in (
        "DTS Error Grid",
        "Clarke Error Grid",
        "Parkes Error Grid, type 1",
        "Surveillance Error Grid",
        "built-in demo (simulated)",
    ):
        assert title in text
    at.radio(key="meter_parkes").set_value(2).run()
    assert at.radio(key="meter_figure_zone_grids").options[-1] == "Parkes Error Grid, type 2"


def test_the_device_and_the_standards_are_the_users_choice(tmp_path, monkeypatch):
    fresh_machine(tmp_path, monkeypatch)
    at = open_app("meter")
    device = next(r for r in at.radio if r.label == "Device")
    assert device.value == "bgm"
    standards = next(m for m in at.multiselect if m.label == "Standards to judge by")
    assert standards.value == ["iso15197"]
    assert any("ISO 15197:2013" in h.value for h in at.subheader)
    assert not any("iCGM" in h.value for h in at.subheader)
    device.set_value("cgm").run()
    assert not at.exception
    criteria = next(t.value for t in at.table if "What is counted" in t.value.columns)
    assert list(criteria["Criterion"]) == [*"ABCDEFGHI"]
    standards = next(m for m in at.multiselect if m.label == "Standards to judge by")
    standards.set_value(["iso15197", "clsi-poct12"]).run()
    # one table of criteria per standard, in the order chosen (the page escapes Markdown)
    criteria = [t.value for t in at.table if "What is counted" in t.value.columns]
    assert [list(c["Criterion"]) for c in criteria[:2]] == [[*"12"], [*"12"]]
    titles = [m.value.replace("\\", "") for m in at.markdown if "acceptance criteria" in m.value]
    assert titles[:2] == [
        "**ISO 15197:2013 acceptance criteria**",
        "**CLSI POCT12-A3 (hospital meters) acceptance criteria**",
    ]
    assert not any("iCGM" in h.value for h in at.subheader)


def test_pairs_with_sensors_show_cg_diva_on_the_page(tmp_path, monkeypatch):
    import numpy as np

    from tests.dashboard_support import upload_meter_csv

    fresh_machine(tmp_path, monkeypatch)
    rng = np.random.default_rng(4)
    lines = ["REF,BGM,sensor"]
    for s in range(5):
        for ref in rng.uniform(45, 330, 30).round(1):
            lines.append(f"{ref},{ref * (1 + rng.normal(0, 0.1)):.1f},S{s}")
    at = open_app("meter")
    upload_meter_csv(at, "cgm.csv", ("\n".join(lines) + "\n").encode())
    table = next(t.value for t in at.table if "Median deviation" in list(t.value.iloc[:, 0]))
    columns = [c.replace("\\", "") for c in table.columns]  # headers are Markdown-escaped
    assert columns == ["Measure", "<70", "70-180", ">180", "total"]
    assert not at.exception  # the CG-DIVA figure beside the table was drawn without error


def test_page_names_the_profiles_and_offers_the_bland_altman_plot(tmp_path, monkeypatch):
    fresh_machine(tmp_path, monkeypatch)
    at = open_app("meter")
    assert not at.exception
    # a meter by default: ISO 15197 alone, named in the title of the criteria
    assert "Acceptance criteria (ISO 15197:2013)" in [h.value for h in at.subheader]
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"Figure as PNG", "Figure as PDF"} <= labels
    assert "Bland–Altman plot" in at.selectbox(key="meter_download_figure").options
    captions = [i.proto.imgs[0].caption for i in at.get("image")]
    assert any(c.startswith("Bland–Altman plot: BGM − REF against REF") for c in captions)
    pairs = next(d for d in at.dataframe if "seg_risk_category_id" not in d.value.columns)
    assert "error_direction" not in pairs.value.columns  # in the download only


def test_the_per_pair_table_fits_the_page_whatever_the_report_holds():
    import numpy as np
    import pandas as pd

    from dashboard.meter_pairs import PAGE_WIDTH, page_columns
    from ranking_core.grids import SEGTable
    from ranking_core.meter import meter_report
    from ranking_core.meter.documents.export import pair_results
    from ranking_core.meter.pairs.readings import pairs_from_frame

    frame = pd.DataFrame({"BGM": [5.5, 40.0, 8.0], "REF": [6.0, 7.0, 8.1]})  # 40 mmol/L: > 600
    pairs = pairs_from_frame(frame, "pairs", first_row=2, unit="line", glucose_unit="mmol/L")
    zeros = np.zeros((601, 601))
    report = meter_report(pairs, SEGTable(zeros, "flat"), learned_risk=zeros)
    results = pair_results(report)  # every column there is: mmol/L, excluded, SEG, learned
    columns = page_columns(report, list(results.columns))
    assert sum(width for _, width in columns.values()) <= PAGE_WIDTH
    assert {"BGM_mmol_L", "included", "seg_risk_category", "learned_risk"} <= set(columns)


def test_the_meter_page_plans_a_study_from_the_file(tmp_path, monkeypatch):
    """The Plan a study section starts from the uploaded file (its observed agreement, the
    intra-class correlation its report estimated, the report's Korn–Graubard bound on clustered
    pairs) and gives the CLI's numbers for the same plan."""
    import json

    import numpy as np
    from typer.testing import CliRunner

    from ranking_core.cli import app
    from tests.dashboard_support import upload_meter_csv

    fresh_machine(tmp_path, monkeypatch)
    rng = np.random.default_rng(8)
    lines, within = ["REF,BGM,sensor"], []
    for s in range(8):
        spread = rng.uniform(0.05, 0.2)
        for ref in rng.uniform(45, 330, 40).round(1):
            bgm = round(ref * (1 + rng.normal(0, spread)), 1)
            lines.append(f"{ref},{bgm},S{s}")
            if 70 <= bgm <= 180:  # criterion B: iCGM 70–180 mg/dL within ±15 %
                within.append(abs(bgm - ref) <= 0.15 * ref)
    at = open_app("meter")
    upload_meter_csv(at, "cgm.csv", ("\n".join(lines) + "\n").encode())
    assert at.selectbox(key="plan_study_bound").value == "kg"
    icc = at.number_input(key="plan_study_icc").value
    assert 0 < icc < 0.99
    assert at.number_input(key="plan_study_icgm_B").value == pytest.approx(
        round(float(np.mean(within)), 3)
    )
    at.number_input(key="plan_study_sensors").set_value(10).run()
    at.multiselect(key="plan_study_ids_icgm").set_value(["B"]).run()
    assert not at.exception
    table = next(t.value for t in at.table if "P(pass)" in t.value.columns)
    out = tmp_path / "plan.json"
    share = at.number_input(key="plan_study_icgm_B").value
    options = ["--agreement", f"B={share}", "--sensors", "10", "--icc", f"{icc}"]
    result = CliRunner().invoke(
        app, ["plan-study", *options, "--target", "0.8", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    expected = json.loads(out.read_text())["criteria"][0]["probability_pass"]
    assert table["P(pass)"].iloc[0] == f"{expected:.3f}"


def test_the_method_comparison_takes_the_pages_ratio_and_decision_levels(tmp_path, monkeypatch):
    fresh_machine(tmp_path, monkeypatch)
    at = open_app("meter")
    assert at.text_input(key="meter_decision_levels_mg/dL").value == "70, 180, 250"
    at.number_input(key="meter_deming_ratio").set_value(2.0)
    at.text_input(key="meter_decision_levels_mg/dL").set_value("80, 200").run()
    assert not at.exception, at.exception
    # the page's tables are Markdown-escaped text: read back without the escapes
    tables = [t.value.rename(columns=lambda c: c.replace("\\", "")) for t in at.table]
    tables = [t.map(lambda v: v.replace("\\", "")) for t in tables]
    deming = next(t for t in tables if "jackknife SE" in t.columns)
    assert set(deming["error ratio λ"]) == {"2"}
    bias = next(t for t in tables if "decision level (mg/dL)" in t.columns)
    assert list(bias["decision level (mg/dL)"]) == ["80", "200", "80", "200"]
    settings = next(t for t in tables if list(t.columns) == ["Setting", "Value"])
    assert "80, 200 mg/dL" in set(settings["Value"])
    at.text_input(key="meter_decision_levels_mg/dL").set_value("80, x").run()
    errors = [e.value.replace("\\", "") for e in at.error]
    assert any("decision level 2 ('x'): not a number" in e for e in errors), errors
