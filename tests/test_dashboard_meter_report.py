"""The Meter page: the error-grid plots of the report, and the report built only when asked."""

from __future__ import annotations

import io

from pypdf import PdfReader

from tests.dashboard_support import fresh_machine, open_app


def test_report_is_built_on_request_and_names_every_grid_shown(tmp_path, monkeypatch):
    fresh_machine(tmp_path, monkeypatch)
    at = open_app("meter")
    assert "meter_report_pdf" not in at.session_state  # nothing built on a plain run
    criteria = next(t.value for t in at.table if "What is counted" in t.value.columns)
    assert list(criteria["Criterion"]) == [*"12ABCDEFGHI"]
    assert set(criteria["Verdict"]) <= {"passes", "fails", "no pairs in range"}
    assert at.radio(key="meter_grid").options == [
        "DTS Error Grid",
        "Clarke Error Grid",
        "Parkes Error Grid, type 1",
    ]
    meanings = [list(t.value["Meaning"]) for t in at.table if "Meaning" in t.value.columns]
    assert ["no risk", "mild risk", "moderate risk", "high risk", "extreme risk"] in meanings
    at.radio(key="meter_grid").set_value("clarke").run()
    assert not at.exception
    next(b for b in at.button if b.label == "Build the report (PDF)").click().run()
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
    assert at.radio(key="meter_grid").options[-1] == "Parkes Error Grid, type 2"


def test_page_names_the_profiles_and_offers_the_bland_altman_plot(tmp_path, monkeypatch):
    fresh_machine(tmp_path, monkeypatch)
    at = open_app("meter")
    assert not at.exception
    assert "Acceptance criteria (ISO 15197:2013, FDA iCGM)" in [h.value for h in at.subheader]
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"Bland–Altman plot as PNG", "Bland–Altman plot as PDF"} <= labels
    captions = [i.proto.imgs[0].caption for i in at.get("image")]
    assert any(c.startswith("Modified Bland–Altman plot: 200 analysed pairs") for c in captions)
    pairs = next(d for d in at.dataframe if "seg_risk_category_id" not in d.value.columns)
    assert "error_direction" not in pairs.value.columns  # in the download only
