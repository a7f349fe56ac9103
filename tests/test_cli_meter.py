"""``riskgrid meter-report``: tables printed, JSON with every count, missing SEG table handled."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.grids import MISSING_SEG_MESSAGE
from ranking_core.grids.registry import get_grid, report_grids

runner = CliRunner()
PAIRS = "BGM,REF\n110,100\n40,50\n300,200\n10,0\n700,100\n95.5,abc\n"


@pytest.fixture
def pairs_file(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text(PAIRS)
    return path


def test_report_with_seg_table_writes_every_count(pairs_file, tmp_path):
    seg = os.environ.get("SEG_TABLE")
    if not seg:
        pytest.skip("SEG_TABLE is not set (point it at RiskPairData.csv.gz)")
    out = tmp_path / "report.json"
    result = runner.invoke(
        app, ["meter-report", str(pairs_file), "--seg-table", seg, "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "SEG risk grades" in result.output and "line 7" in result.output
    data = json.loads(out.read_text())
    assert data["seg_table_used"] is True
    counts = {r["pair_type"]: r["count"] for r in data["pair_types"]}
    assert counts["Total"] == 5 and counts["BGM > 600: excluded"] == 1
    assert counts["Total included in SEG analysis"] == 4
    assert sum(r["count"] for r in data["risk_categories"]) == 4
    assert sum(r["count"] for r in data["risk_grades"]) == 4
    assert [r["count"] for r in data["clarke"]] == [3, 1, 0, 0, 0]  # (BGM 300, REF 200) is B
    assert sum(r["count"] for r in data["dts"]) == 4 and "DTS Error Grid: zones" in result.output
    binomial = {k: v for k, v in data["binomial"][0].items() if not k.startswith("ci_")}
    assert binomial == {
        "n": 4,
        "compliant": 3,
        "compliant_percent": 75.0,
        "lower_bound": 3,
        "lower_bound_percent": 75.0,
        "meets": True,
    }
    assert data["accuracy"][0]["ref_zero_left_out"] == 1


def test_report_without_seg_table_explains_and_reports_the_rest(pairs_file, tmp_path, monkeypatch):
    monkeypatch.delenv("SEG_TABLE", raising=False)
    out = tmp_path / "report.json"
    result = runner.invoke(
        app,
        ["meter-report", str(pairs_file), "--json", str(out), "--out-dir", str(tmp_path / "files")],
    )
    assert result.exit_code == 0, result.output
    assert " ".join(MISSING_SEG_MESSAGE.split()[:6]) in " ".join(result.output.split())
    assert "ISO 15197 ranges" in result.output and "SEG risk grades" not in result.output
    data = json.loads(out.read_text())
    assert data["seg_table_used"] is False and "risk_grades" not in data
    # the one Bland–Altman plot is the method comparison's (with the intervals of its limits),
    # PNG and PDF; no second, interactive one of another analysis
    assert not (tmp_path / "files" / "bland_altman.html").exists()
    assert (tmp_path / "files" / "iso_ranges.csv").exists()
    files = {p.name for p in (tmp_path / "files").glob("*.png")}
    # one plot per zone grid of the report (Parkes of the default type 1), the Bland–Altman
    # plot and the regression plot, as PNG and PDF; none of the SEG without its table
    plots = {grid.name for grid in report_grids(1).values()} | {"bland_altman", "regression"}
    assert files == {f"{name}.png" for name in plots}
    assert {p.name for p in (tmp_path / "files").glob("*.pdf")} == {f"{n}.pdf" for n in plots}


def test_unreadable_pairs_exit_with_the_rule(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("glucose,lab value\n1,2\n")
    result = runner.invoke(app, ["meter-report", str(path)])
    assert result.exit_code == 1
    assert "missing column(s) BGM, REF" in " ".join(result.output.split())


def test_pairs_out_has_every_valid_row_with_its_zones(tmp_path):
    # zones by the published definitions, read off the grids' papers by hand
    rows = [  # BGM, REF, Clarke zone (Clarke et al. 1987), hypoglycaemia missed
        (100, 100, "A", False),
        (200, 50, "E", True),  # REF < 70, BGM > 180: Clarke E
        (60, 250, "E", False),  # REF > 180, BGM < 70: Clarke E
        (150, 60, "D", True),  # REF < 70, BGM 70–180: Clarke D (failure to detect)
        (69, 60, "A", False),  # both below 70: Clarke A
    ]
    text = (
        "BGM,REF\n"
        + "".join(f"{b},{r}\n" for b, r, *_ in rows[:3])
        + "oops,1\n"
        + "".join(f"{b},{r}\n" for b, r, *_ in rows[3:])
    )
    source = tmp_path / "pairs.csv"
    source.write_text(text)
    out = tmp_path / "per-pair.csv"
    result = runner.invoke(
        app, ["meter-report", str(source), "--pairs-out", str(out), "--profile", "icgm"]
    )
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out)
    assert table["line"].tolist() == [2, 3, 4, 6, 7]  # line 5 refused
    assert table["BGM"].tolist() == [r[0] for r in rows]
    assert table["REF"].tolist() == [r[1] for r in rows]
    assert table["clarke_zone"].tolist() == [r[2] for r in rows]
    assert table["hypoglycaemia_missed"].tolist() == [r[3] for r in rows]
    # the Parkes and DTS columns are the grids' own rules, pair by pair
    for name, column in (("parkes-type1", "parkes_zone"), ("dts", "dts_zone")):
        zones = get_grid(name).zone(table["REF"].to_numpy(), table["BGM"].to_numpy())
        assert table[column].tolist() == zones.tolist()
    assert table["error_direction"].tolist() == [
        "BGM = REF",
        "BGM > REF",
        "BGM < REF",
        "BGM > REF",
        "BGM > REF",
    ]
    assert table["iso_within_15"].tolist() == [True, False, False, False, True]


def test_profile_is_checked(pairs_file):
    result = runner.invoke(app, ["meter-report", str(pairs_file), "--profile", "fda"])
    assert result.exit_code == 1
    assert "choose from iso15197, fda-otc, fda-poc, clsi-poct12, icgm or all" in " ".join(
        result.output.split()
    )


def test_stated_mmol_on_mg_dl_values_is_refused(tmp_path):
    source = tmp_path / "mg.csv"
    source.write_text("BGM,REF\n120,110\n200,190\n90,95\n300,310\n3,4\n")
    result = runner.invoke(app, ["meter-report", str(source), "--unit", "mmol/L"])
    assert result.exit_code == 1
    assert "look like mg/dL" in " ".join(result.output.split())


def test_file_names_and_cells_with_controls_never_reach_the_terminal_raw(tmp_path, monkeypatch):
    monkeypatch.delenv("SEG_TABLE", raising=False)
    name = "p\x1b[31mred\u202evsc[bold].csv"
    path = tmp_path / name
    path.write_text(
        "BGM,REF,subject\n120,110,a\n200,190,b\x1b[2JX\n90,95,\u202eexe\n"
        "1\x1b]8;;http://x.example\x1b\\,95,c\n300,310,d\n",
        encoding="utf-8",
    )
    out = tmp_path / "o\x1bk.json"
    result = runner.invoke(app, ["meter-report", str(path), "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\u202e" not in result.output
    text = "".join(result.output.split())  # Rich wraps long lines
    # the name escaped, its markup taken literally, each time it is shown
    assert "p\\x1b[31mred\\u202evsc[bold].csv:5rowsread,3refused" in text
    assert "wrote" in text and "o\\x1bk.json" in text
    assert "subjectcontainsacontrolcharacter" in text and "lines3,4" in text
    assert out.exists()


@pytest.mark.parametrize("suffix", [".html", ".pdf"])
def test_reports_never_hold_the_file_names_controls_raw(tmp_path, monkeypatch, suffix):
    monkeypatch.delenv("SEG_TABLE", raising=False)
    path = tmp_path / "p\x1b[31mred\u202evsc.csv"
    path.write_text("BGM,REF\n120,110\n200,190\n90,95\n300,310\n", encoding="utf-8")
    report = tmp_path / f"report{suffix}"
    result = runner.invoke(app, ["meter-report", str(path), "--report", str(report)])
    assert result.exit_code == 0, result.output
    if suffix == ".html":
        text = report.read_text(encoding="utf-8")
    else:
        from pypdf import PdfReader

        text = "".join(page.extract_text() for page in PdfReader(report).pages)
    assert "\x1b" not in text and "\u202e" not in text
    assert "\\x1b" in text and "\\u202e" in text  # shown escaped, not dropped


def _write_pairs(path, pairs):
    path.write_text("BGM,REF\n" + "".join(f"{b},{r}\n" for b, r in pairs))
    return path


def test_fail_on_verdict_exits_3_after_writing_and_names_the_failures(tmp_path, monkeypatch):
    monkeypatch.delenv("SEG_TABLE", raising=False)
    # ISO 15197 criterion 1 by hand: 5 of 10 pairs within ±15 % (50 % < 95 %) fails
    source = _write_pairs(
        tmp_path / "p.csv",
        [(r, r) for r in range(120, 170, 10)] * 1 + [(2 * r, r) for r in range(120, 170, 10)],
    )
    out = tmp_path / "r.json"
    args = ["meter-report", str(source), "--profile", "iso15197", "--json", str(out)]
    result = runner.invoke(app, [*args, "--fail-on-verdict"])
    assert result.exit_code == 3, result.output
    data = json.loads(out.read_text())  # written before the exit
    failed = [f"ISO 15197:2013 {r['id']}" for r in data["acceptance"] if r["passes"] is False]
    assert "ISO 15197:2013 1" in failed
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == [
        f"meter-report: {len(failed)} of 2 acceptance criteria failed: {', '.join(failed)}"
    ]
    assert runner.invoke(app, args).exit_code == 0  # without the option: 0 whatever the verdicts


def test_fail_on_verdict_passes_when_nothing_judged_fails(tmp_path, monkeypatch):
    monkeypatch.delenv("SEG_TABLE", raising=False)
    # 400 exact readings in 70–180 mg/dL: iCGM B, E, G pass (E's 95 % lower bound, 0.05^(1/n),
    # exceeds 99 % from n = 299 on); A, C, D, F, H, I have no pair in range: not judged
    source = _write_pairs(tmp_path / "p.csv", [(r, r) for r in range(80, 180)] * 4)
    out = tmp_path / "r.json"
    result = runner.invoke(
        app,
        ["meter-report", str(source), "--profile", "icgm", "--json", str(out), "--fail-on-verdict"],
    )
    assert result.exit_code == 0, result.output
    verdicts = {r["id"]: r["passes"] for r in json.loads(out.read_text())["acceptance"]}
    assert {k for k, v in verdicts.items() if v is None} == set("ACDFHI")
    assert {k for k, v in verdicts.items() if v is True} == set("BEG")


def test_out_dir_writes_the_bland_altman_plot_without_a_browser(tmp_path, monkeypatch):
    monkeypatch.delenv("SEG_TABLE", raising=False)
    monkeypatch.setenv("BROWSER_PATH", "/nonexistent/chromium")
    source = _write_pairs(tmp_path / "p.csv", [(r + 7, r) for r in range(40, 400, 9)])
    result = runner.invoke(app, ["meter-report", str(source), "--out-dir", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "o" / "bland_altman.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "o" / "bland_altman.pdf").read_bytes()[:5] == b"%PDF-"


def test_fail_on_verdict_names_the_group_of_each_failure(tmp_path, monkeypatch):
    monkeypatch.delenv("SEG_TABLE", raising=False)
    # site A reads exactly; site B reads double on half its pairs: ISO 15197 criterion 1 fails
    rows = [(r, r, "A") for r in range(100, 200, 5)]
    rows += [(r * (2 if i % 2 else 1), r, "B") for i, r in enumerate(range(100, 200, 5))]
    source = tmp_path / "p.csv"
    source.write_text("BGM,REF,site\n" + "".join(f"{b},{r},{s}\n" for b, r, s in rows))
    out = tmp_path / "r.json"
    result = runner.invoke(
        app,
        [
            "meter-report",
            str(source),
            "--by",
            "site",
            "--profile",
            "iso15197",
            "--json",
            str(out),
            "--fail-on-verdict",
        ],
    )
    assert result.exit_code == 3, result.output
    rows_out = json.loads(out.read_text())["acceptance"]
    # the pooled verdict (group null) is named "all pairs"
    failed = [
        f"ISO 15197:2013 {r['id']} ({r['group'] or 'all pairs'})"
        for r in rows_out
        if r["passes"] is False
    ]
    assert "ISO 15197:2013 1 (B)" in failed and not any("(A)" in f for f in failed)
    assert rows_out[0]["group"] is None
    assert result.stderr.strip() == (
        f"meter-report: {len(failed)} of {len(rows_out)} acceptance criteria failed: "
        + ", ".join(failed)
    )


def test_meter_report_leaves_its_objects_to_the_system_at_exit(pairs_file, tmp_path):
    """Once its outputs are written, the command's process freezes its objects at exit (Python's
    last collections skip them); the handler registered before it runs after it and sees them
    frozen. The JSON is whole."""
    script = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count()))\n"
        "from ranking_core.cli import app\n"
        "app(sys.argv[1:], prog_name='riskgrid')\n"
    )
    out = tmp_path / "report.json"
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", script, "meter-report", str(pairs_file), "--json", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    frozen = int(done.stdout.rsplit("frozen at exit:", 1)[1])
    assert frozen > 10_000  # the modules and the report, not a handful
    assert json.loads(out.read_text())["pair_types"]
