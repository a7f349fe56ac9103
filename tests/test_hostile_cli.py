"""The command line against hostile use: every count, size and file bounded before work starts,
nothing overwritten or written through a link, every output error one sentence on standard error
(exit 1; usage errors 2), user text never terminal markup, and results that say what happened."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rating_support import continuous_ratings
from typer.testing import CliRunner

from ranking_core.cli import app

SEG_TABLE = os.environ.get("SEG_TABLE")


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def one_sentence(result, *words: str) -> str:
    """The refusal: on standard error, no traceback, naming ``words``; returns it."""
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    text = " ".join(result.stderr.split())
    for word in words:
        assert word in text, (word, result.output)
    return text


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def database(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'db' / 'riskgrid.sqlite3'}"
    monkeypatch.setenv("RISKGRID_DATABASE_URL", url)
    return url


@pytest.fixture
def pairs_csv(tmp_path) -> Path:
    rng = np.random.default_rng(4)
    ref = rng.integers(40, 400, 60)
    path = tmp_path / "pairs.csv"
    pd.DataFrame({"BGM": (ref * rng.uniform(0.8, 1.2, 60)).round(), "REF": ref}).to_csv(
        path, index=False
    )
    return path


# -- bounds, before any work -------------------------------------------------------------------


@pytest.mark.parametrize(
    "args,option",
    [
        (("survey", "create", "s", "--design", "5", "--checks", "1000000000"), "--checks"),
        (("survey", "create", "s", "--design", "1000000000"), "--design"),
        (("survey", "create", "s", "--design", "5", "--seed", "-1"), "--seed"),
        (("survey", "create", "s", "--design", "5", "--batch", "1000000000"), "--batch"),
        (("survey", "create", "s", "--design", "5", "--overlap", "100000"), "--overlap"),
        (("survey", "invite", "s", "--raters", "100000"), "--raters"),
        (("survey", "invite", "s", "--raters", "1000000000"), "--raters"),
        (("survey", "next", "s", "--batch", "1000000000"), "--batch"),
        (("learn", "missing.csv", "--out-dir", "o", "--order", "1000000"), "--order"),
        (("learn", "missing.csv", "--out-dir", "o", "--anchors", "1000000000"), "--anchors"),
        (("plan-panel", "--seed", "-1"), "--seed"),
        (("cf", "per-user", "--format", "synthetic", "--seed", "-1"), "--seed"),
        (("reproduce", "academic", "--seed", "-1"), "--seed"),
    ],
)
def test_counts_and_seeds_are_bounded_before_anything_runs(database, args, option):
    started = time.perf_counter()
    result = run(*args)
    assert result.exit_code == 2, result.output
    text = one_sentence(result, option)
    assert "less than or equal to" in text or "greater than or equal to" in text
    assert "NumPy" not in text and "SeedSequence" not in text
    assert time.perf_counter() - started < 30


@pytest.mark.parametrize("value", ["0", "-1", "1e308", "inf", "nan", "101"])
def test_lambda_is_checked_before_the_ratings_are_read(tmp_path, value):
    # the ratings file does not exist: the refusal must come first, before any reading or fit
    result = run("learn", tmp_path / "none.csv", "--out-dir", tmp_path / "o", "--lambda", value)
    assert result.exit_code == 2
    one_sentence(result, "--lambda must be a number above 0 and at most 100")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("option", ["--instructions", "--names"])
def test_instruction_and_name_files_are_read_up_to_a_cap(database, tmp_path, option):
    assert run("survey", "create", "s", "--design", "5").exit_code == 0
    started = time.perf_counter()
    if option == "--instructions":
        result = run("survey", "create", "t", "--design", "5", option, "/dev/zero")
    else:
        result = run("survey", "invite", "s", option, "/dev/zero", "-o", tmp_path / "l.csv")
    assert result.exit_code == 1
    one_sentence(result, option, "/dev/zero", "larger than")
    assert time.perf_counter() - started < 20
    assert not (tmp_path / "l.csv").exists()


def test_an_invitation_adding_too_many_queue_places_is_refused_whole(database, tmp_path):
    from ranking_core.surveys import SurveyStore
    from ranking_core.surveys.design import MAX_QUEUE_ROWS

    assert run("survey", "create", "big", "--design", "2000", "--checks", "20").exit_code == 0
    result = run("survey", "invite", "big", "--raters", "1000", "-o", tmp_path / "l.csv")
    assert result.exit_code == 1
    one_sentence(result, f"more than {MAX_QUEUE_ROWS:,} at once", "--per-rater")
    assert SurveyStore().raters("big").empty  # nothing stored


# -- survey pairs through the one input layer -----------------------------------------------------


def stored_pairs(name: str) -> pd.DataFrame:
    from sqlalchemy import select

    from ranking_core.surveys import SurveyStore
    from ranking_core.surveys.storage import PAIRS, SURVEYS

    with SurveyStore().engine.connect() as conn:
        rows = conn.execute(
            select(PAIRS.c.reference, PAIRS.c.estimate)
            .join(SURVEYS, SURVEYS.c.id == PAIRS.c.survey_id)
            .where(SURVEYS.c.name == name, PAIRS.c.expected.is_(None))
            .order_by(PAIRS.c.id)
        ).all()
    return pd.DataFrame(rows, columns=["reference", "estimate"])


def test_survey_pairs_in_mmol_per_litre_are_converted_once_and_rounded(database, tmp_path):
    source = tmp_path / "form.csv"
    source.write_text("reference,estimate,rating\n7.5,8.0,\n5.0,12.0,\n7.5,8.01,\n4.0,40,\n")
    result = run(
        "survey", "create", "mm", "--pairs", source, "--unit", "mmol/L", "--range", "40", "400"
    )
    assert result.exit_code == 0, result.output
    expected = [(round(7.5 * 18.016), round(8.0 * 18.016)), (round(5 * 18.016), round(12 * 18.016))]
    assert list(stored_pairs("mm").itertuples(index=False, name=None)) == expected
    assert "2 pairs stored" in result.output
    text = " ".join(result.output.split())
    assert "repeat an earlier pair" in text and "line 4" in text  # 7.5/8.01 → same whole mg/dL
    assert "line 5" in text and "outside the survey's range" in text  # 40 mmol/L = 721 mg/dL


def test_survey_pairs_obey_the_row_limit_and_name_bad_lines(database, tmp_path):
    from ranking_core.surveys.design import MAX_PAIRS

    big = tmp_path / "big.csv"
    big.write_text("reference,estimate\n" + "100,120\n" * (MAX_PAIRS + 1))
    result = run("survey", "create", "big", "--pairs", big)
    assert result.exit_code == 1
    one_sentence(result, f"{MAX_PAIRS:,}")
    bad = tmp_path / "bad.csv"
    bad.write_text("reference,estimate\n100,120\nabc,130\n150,160\n")
    result = run("survey", "create", "ok", "--pairs", bad)
    assert result.exit_code == 0, result.output
    assert "line 3" in result.output and "2 pairs stored" in result.output


def test_a_survey_workbook_that_unpacks_too_large_is_refused_before_parsing(database, tmp_path):
    import zipfile

    small = tmp_path / "small.xlsx"
    pd.DataFrame({"reference": [100, 120], "estimate": [110, 150]}).to_excel(small, index=False)
    bomb = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(small) as source, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as out:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename.startswith("xl/worksheets/"):
                data += b" " * (40 * 2**20)  # 40 MiB of blanks: a few kB packed
            out.writestr(item.filename, data)
    assert bomb.stat().st_size < 200_000
    started = time.perf_counter()
    result = run("survey", "create", "bomb", "--pairs", bomb)
    assert result.exit_code == 1
    one_sentence(result, "bomb.xlsx", "limit")
    assert time.perf_counter() - started < 30


# -- check pairs have a known answer ------------------------------------------------------------


@pytest.mark.parametrize("glucose_range", [(20, 600), (40, 400), (70, 180), (100, 300), (0, 360)])
def test_check_pairs_lie_in_the_range_with_the_answer_the_seg_gives(glucose_range):
    from ranking_core.surveys.design import check_pairs, check_passed

    checks = check_pairs(20, glucose_range)
    low, high = glucose_range
    assert checks[["reference", "estimate"]].stack().between(low, high).all()
    extreme = checks["expected"] == "extreme"
    # the extreme corner (reference ≤ 50 read as ≥ 350 mg/dL) exists only in a wide range
    assert extreme.any() == (low <= 50 and high >= 350)
    if SEG_TABLE is None or not Path(SEG_TABLE).exists():
        pytest.skip("SEG_TABLE is not set: the SEG's own risk of each check pair is not checked")
    from ranking_core.grids.seg import load_seg_table

    seg = load_seg_table(SEG_TABLE)
    risk = seg.risk(checks["reference"].to_numpy(), checks["estimate"].to_numpy())
    for expected, value in zip(checks["expected"], risk, strict=True):
        assert check_passed(expected, value), (glucose_range, expected, value)


# -- survey next says what the database added -------------------------------------------------


def test_two_requests_for_the_next_batch_add_one_and_say_so(database, monkeypatch):
    from ranking_core.surveys import SurveyStore, results

    assert run("survey", "create", "race", "--design", "8").exit_code == 0
    assert run("survey", "invite", "race", "--raters", "2", "-o", os.devnull).exit_code == 0
    real = results.propose_batch

    def another_request_first(frame, k, glucose_range, seed, fit=None):
        pairs = real(frame, k, glucose_range, seed, fit)
        SurveyStore().append_batch("race", pairs, after_batches=1)  # the other request wins
        return pairs

    monkeypatch.setattr(results, "propose_batch", another_request_first)
    late = run("survey", "next", "race", "--batch", "3")
    assert late.exit_code == 0, late.output
    assert "no batch added" in late.output and "batch 2 added" not in late.output
    assert SurveyStore().get("race").batches == 2  # one batch, not two
    monkeypatch.setattr(results, "propose_batch", real)
    first = run("survey", "next", "race", "--batch", "3")
    assert first.exit_code == 0 and "batch 3 added: 3 pairs in 2 raters' queues" in first.output


# -- learned grids: flat refused, off the scale flagged the same way for files and database -------


def test_a_flat_grid_is_refused_for_files_and_database(database, tmp_path):
    source = tmp_path / "ratings.csv"
    continuous_ratings().to_csv(source, index=False)
    out = tmp_path / "grid"
    args = ("learn", source, "--rule", "manual", "--lambda", "100", "--unsigned")
    result = run(*args, "--out-dir", out, "--save", "flat")
    assert result.exit_code == 1
    one_sentence(result, "flat", "nothing was written or saved")
    assert not out.exists()
    assert run("records", "export", "flat", "--out-dir", tmp_path / "x").exit_code == 1


def test_a_grid_off_the_scale_is_written_and_saved_alike_with_a_note(database, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.uniform(100, 140, (40, 2))
    source = tmp_path / "noisy.csv"
    pd.DataFrame(
        {"reference": X[:, 0], "estimate": X[:, 1], "rating": rng.choice([0, 4], 40)}
    ).to_csv(source, index=False)
    out = tmp_path / "grid"
    result = run(
        "learn", source, "--rule", "manual", "--lambda", "1e-9", "--unsigned", "--anchors", "0",
        "--robust", "none", "--out-dir", out, "--save", "noisy",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "leaves the risk scale 0..4 by more than 0.5" in text and "clipped to 0..4" in text
    exported = run("records", "export", "noisy", "--out-dir", tmp_path / "again")
    assert exported.exit_code == 0, exported.output
    written, saved = np.load(out / "grid.npy"), np.load(tmp_path / "again" / "grid.npy")
    np.testing.assert_array_equal(written, saved)
    assert written.min() >= 0 and written.max() <= 4


# -- Low/High sensor readings and cut last lines --------------------------------------------------

DEXCOM_HEADER = (
    "Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type,Event Subtype,Patient Info,Device Info,"
    "Source Device ID,Glucose Value (mg/dL),Insulin Value (u),Carb Value (grams),"
    "Duration (hh:mm:ss),Glucose Rate of Change (mg/dL/min),Transmitter Time (Long Integer),"
    "Transmitter ID\n"
)


def test_a_reference_nearest_to_a_low_or_high_reading_is_left_unpaired_and_counted(tmp_path):
    sensor = tmp_path / "clarity.csv"
    values = ["100", "110", "Low", "High", "120"]
    sensor.write_text(
        DEXCOM_HEADER
        + "".join(
            f"{i + 1},2024-05-01T08:{5 * i:02d}:00,EGV,,,,G6,{v},,,,,,\n"
            for i, v in enumerate(values)
        )
    )
    reference = tmp_path / "ref.csv"
    reference.write_text(
        "timestamp,glucose\n2024-05-01T08:05:00,111\n2024-05-01T08:10:30,39\n"
        "2024-05-01T08:16:00,420\n2024-05-01T08:19:00,118\n"
    )
    out = tmp_path / "pairs.csv"
    result = run("pair", sensor, reference, "-o", out)
    assert result.exit_code == 0, result.output
    pairs = pd.read_csv(out)
    # brute force: each reference with the nearest sensor reading in ±5 min, Low/High included
    assert pairs["REF"].tolist() == [111, 118] and pairs["BGM"].tolist() == [110, 120]
    text = " ".join(result.output.split())
    assert "2 of 4 reference readings paired" in text
    assert "2 left unpaired (Low or High" in text and "lines 3, 4" in text


def test_a_cut_last_line_is_refused_by_line_and_the_rest_kept(tmp_path):
    sensor = tmp_path / "s.csv"
    sensor.write_text("timestamp,glucose\n2024-05-01T08:00:00,100\n2024-05-01T08:05:00,180\n")
    reference = tmp_path / "r.csv"
    reference.write_bytes(
        b"timestamp,glucose\n2024-05-01T08:00:00,101\n2024-05-01T08:05:00,1"  # "182" cut short
    )
    out = tmp_path / "p.csv"
    result = run("pair", sensor, reference, "-o", out)
    assert result.exit_code == 0, result.output
    assert pd.read_csv(out)["REF"].tolist() == [101]
    text = " ".join(result.output.split())
    assert "looks cut off" in text and "in line 3; refused" in text
    lone = tmp_path / "lone.csv"  # a lone "1" under two-field lines
    lone.write_bytes(b"timestamp,glucose\n2024-05-01T08:00:00,101\n1")
    result = run("pair", sensor, lone, "-o", tmp_path / "q.csv")
    assert result.exit_code == 0 and "line 3" in result.output
    whole = tmp_path / "whole.csv"  # no final line break but a whole line: kept
    whole.write_bytes(b"timestamp,glucose\n2024-05-01T08:00:00,101\n2024-05-01T08:05:00,182")
    result = run("pair", sensor, whole, "-o", tmp_path / "w.csv")
    assert result.exit_code == 0 and len(pd.read_csv(tmp_path / "w.csv")) == 2


def test_a_cut_last_line_of_meter_pairs_or_ratings_is_refused_by_line(tmp_path):
    pairs = tmp_path / "cut.csv"
    pairs.write_bytes(b"BGM,REF\n100,110\n120,130\n150,1")  # "150,180" cut to a REF of 1
    out = tmp_path / "p.csv"
    result = run("meter-report", pairs, "--pairs-out", out)
    assert result.exit_code == 0, result.output
    assert "looks cut off" in " ".join(result.output.split()) and "line 4" in result.output
    assert pd.read_csv(out)["REF"].tolist() == [110, 130]
    ratings = tmp_path / "ratings.csv"
    frame = continuous_ratings(30).round(2)
    text = frame.to_csv(index=False, lineterminator="\n").rstrip("\n")
    ratings.write_text(text[: text.rindex(",") + 2])  # the last rating cut to one character
    result = run("learn", ratings, "--out-dir", tmp_path / "g")
    assert result.exit_code == 0, result.output
    assert "looks cut off" in " ".join(result.output.split()) and "line 31" in result.output
    assert json.loads((tmp_path / "g" / "grid.json").read_text())["ratings"] == 29


# -- nothing overwritten -----------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--pairs-out", "--json", "--report"])
def test_meter_report_never_writes_over_its_input(pairs_csv, option):
    before = digest(pairs_csv)
    target = pairs_csv if option != "--report" else pairs_csv.with_suffix(".html")
    if option == "--report":
        target.symlink_to(pairs_csv)  # the input behind a link
    result = run("meter-report", pairs_csv, option, target)
    assert result.exit_code == 1
    one_sentence(result, option)
    assert digest(pairs_csv) == before


def test_learn_never_writes_its_grid_over_the_ratings(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    source = folder / "grid.csv"
    continuous_ratings().to_csv(source, index=False)
    before = digest(source)
    result = run("learn", source, "--out-dir", folder)
    assert result.exit_code == 1
    one_sentence(result, "is the input file")
    assert digest(source) == before and not (folder / "grid.npy").exists()


def test_records_export_never_follows_a_link_planted_in_the_folder(database, tmp_path):
    source = tmp_path / "ratings.csv"
    continuous_ratings().to_csv(source, index=False)
    assert run("learn", source, "--save", "kept").exit_code == 0
    folder = tmp_path / "export"
    folder.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (folder / "grid.csv").symlink_to(victim)
    result = run("records", "export", "kept", "--out-dir", folder)
    assert result.exit_code == 1 and "symbolic link" in result.output
    assert victim.read_text() == "precious" and (folder / "grid.csv").is_symlink()


def test_a_safe_write_replaces_a_file_whole_and_leaves_no_temporary(tmp_path):
    from ranking_core.cli.output import OutputError, write_output

    target = tmp_path / "a.csv"
    target.write_text("old")
    target.chmod(0o640)
    write_output(target, "new", "--out")
    assert target.read_text() == "new" and (target.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv"]
    with pytest.raises(OutputError, match="is the input file"):
        write_output(tmp_path / "." / "a.csv", "x", "--out", [target])


# -- every output error is one sentence, exit 1 -----------------------------------------------


def bad_targets(tmp_path: Path) -> dict[str, Path]:
    a_file = tmp_path / "plain.txt"
    a_file.write_text("x")
    (tmp_path / "folder.html").mkdir(exist_ok=True)
    return {
        "full": Path("/dev/full"),
        "folder": tmp_path / "folder.html",
        "below a file": a_file / "out.html",
    }


@pytest.mark.parametrize("kind", ["full", "folder", "below a file"])
@pytest.mark.parametrize("option", ["--pairs-out", "--json", "--report"])
def test_meter_report_outputs_that_cannot_be_written(pairs_csv, tmp_path, kind, option):
    target = bad_targets(tmp_path)[kind]
    if option == "--report" and kind == "full":
        pytest.skip("--report needs a .pdf or .html name; /dev/full has none")
    result = run("meter-report", pairs_csv, option, target)
    assert result.exit_code == 1, result.output
    text = one_sentence(result, str(target))
    assert text.count("\n") == 0 and not result.stdout.strip().endswith(text)


@pytest.mark.parametrize("kind", ["full", "folder", "below a file"])
@pytest.mark.parametrize("command", ["export", "status"])
def test_survey_outputs_that_cannot_be_written(database, tmp_path, kind, command):
    assert run("survey", "create", "s", "--design", "5").exit_code == 0
    target = bad_targets(tmp_path)[kind]
    option = "--out" if command == "export" else "--json"
    result = run("survey", command, "s", option, target)
    assert result.exit_code == 1, result.output
    one_sentence(result, str(target))


@pytest.mark.parametrize("kind", ["folder", "below a file"])
@pytest.mark.parametrize("option", ["--panel-report", "--out-dir"])
def test_learn_outputs_that_cannot_be_written_are_refused_before_the_fit(tmp_path, kind, option):
    source = tmp_path / "ratings.csv"
    continuous_ratings().to_csv(source, index=False)
    target = bad_targets(tmp_path)[kind]
    if option == "--out-dir" and kind == "folder":
        (target / "grid.npy").mkdir()  # a folder where a grid file goes
    args = ["learn", source, option, target]
    if option == "--panel-report":
        args += ["--out-dir", tmp_path / "grid"]
    started = time.perf_counter()
    result = run(*args)
    assert result.exit_code == 1, result.output
    one_sentence(result, option)
    assert "fitting" not in result.output and time.perf_counter() - started < 30


@pytest.mark.parametrize("kind", ["full", "folder", "below a file"])
def test_pair_plan_and_invite_outputs_that_cannot_be_written(database, tmp_path, kind):
    target = bad_targets(tmp_path)[kind]
    series = tmp_path / "s.csv"
    series.write_text("timestamp,glucose\n2024-05-01T08:00:00,100\n")
    assert run("survey", "create", "s", "--design", "5").exit_code == 0
    for args, option in (
        (("pair", series, series, "-o", target), "--output"),
        (("plan-panel", "-o", target, "--html", tmp_path / "sheet.html"), "--out"),
        (("survey", "invite", "s", "--raters", "2", "-o", target), "--out"),
    ):
        result = run(*args)
        assert result.exit_code == 1, (args, result.output)
        one_sentence(result, str(target), option)
        if kind == "full":  # invited: the links printed instead of lost
            assert args[0] != "survey" or "/?survey=s&token=" in result.stdout


def test_an_invitation_that_fails_midway_writes_the_links_made(
    database, tmp_path, monkeypatch, third_invite_batch_fails
):
    from ranking_core.surveys import SurveyStore
    from ranking_core.surveys import storage as survey_storage

    assert run("survey", "create", "s", "--design", "5").exit_code == 0
    monkeypatch.setattr(survey_storage, "INVITE_ROWS", 1)  # one rater per transaction
    links = tmp_path / "out" / "links.csv"
    result = run("survey", "invite", "s", "--raters", "4", "-o", links)
    assert result.exit_code == 1, result.output
    one_sentence(result, "the disk is full", "2 of 4 raters were invited", str(links))
    written = pd.read_csv(links)
    assert written["rater"].tolist() == ["rater-1", "rater-2"]
    stored = SurveyStore()
    for link in written["link"]:  # the links written are the ones stored
        assert stored.rater("s", link.split("token=")[1]) is not None


def test_learn_panel_report_on_a_full_disk_is_one_sentence(tmp_path):
    source = tmp_path / "ratings.csv"
    continuous_ratings(30).to_csv(source, index=False)
    result = run("learn", source, "--out-dir", tmp_path / "g", "--panel-report", "/dev/full")
    assert result.exit_code == 1
    one_sentence(result, "/dev/full", "no space left")


# -- names are text -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a[/]b", "ICU panel [v2]", "x[bold]y\\", "old[/b]"])
def test_survey_names_with_markup_print_as_written(database, tmp_path, name):
    assert run("survey", "create", name, "--design", "5").exit_code == 0
    result = run("survey", "status", name)
    assert result.exit_code == 0, result.output
    assert f"survey '{name}': open" in result.output
    names = tmp_path / "names.txt"
    names.write_text(f"{name}\n[b]A[/b]\n")
    assert run("survey", "invite", name, "--names", names, "-o", tmp_path / "l.csv").exit_code == 0
    state = tmp_path / "state.json"
    result = run("survey", "status", name, "--json", state)
    assert result.exit_code == 0 and "[b]A[/b]" in result.output  # the table shows it as text
    assert [r["rater"] for r in json.loads(state.read_text())["raters"]] == [name, "[b]A[/b]"]


@pytest.mark.parametrize(
    "command",
    [
        ("learn", "old[/b]", "--out-dir", "o"),
        ("meter-report", "old[/b]"),
        ("plan-panel", "old[/b]"),
        ("pair", "old[/b]", "old[/b]", "-o", "p.csv"),
        ("survey", "status", "old[/b]"),
        ("survey", "create", "x", "--pairs", "old[/b]"),
    ],
)
def test_missing_files_and_names_with_markup_are_one_sentence(database, command):
    result = run(*command)
    assert result.exit_code == 1, result.output
    one_sentence(result, "old[/b]")


def test_control_characters_in_a_name_are_shown_escaped(database):
    assert run("survey", "create", "ok", "--design", "5").exit_code == 0
    result = run("survey", "status", "bad\x1b[31mname")
    assert result.exit_code == 1 and "\x1b" not in result.output and "\\x1b" in result.stderr


# -- consistency -------------------------------------------------------------------------------


def test_errors_go_to_standard_error_with_status_one():
    done = subprocess.run(
        [sys.executable, "-m", "ranking_core.cli", "meter-report", "no-such-file.csv"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "no-such-file.csv" in done.stderr
    assert not done.stdout.strip() and "Traceback" not in done.stderr


def test_version_and_a_plain_dashboard_help():
    from ranking_core.version import riskgrid_version

    result = run("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"riskgrid {riskgrid_version()}"
    help_text = run("dashboard", "--help").output
    assert "Usage: riskgrid dashboard [OPTIONS]" in help_text and "COMMAND" not in help_text


def test_cf_per_user_prints_json_only_when_asked(tmp_path):
    small = [
        "cf", "per-user", "--format", "synthetic", "--group", "20-60", "--learner", "lavrentiev",
        "--test-users", "4", "--repeats", "1", "--reference", "20", "--test-range", "50-150",
        "--scheduler", "synchronous",
    ]  # fmt: skip
    plain = run(*small)
    assert plain.exit_code == 0, plain.output
    assert "{" not in plain.stdout and "MSD" in plain.stdout  # the table, no JSON
    piped = run(*small, "--json", "-")
    assert piped.exit_code == 0
    assert json.loads(piped.stdout)["config"]["repeats"] == 1  # standard output: JSON alone


def test_records_errors_go_to_stderr(tmp_path, monkeypatch):
    monkeypatch.setenv("RISKGRID_DATABASE_URL", f"sqlite:///{tmp_path / 'r.sqlite3'}")
    result = run("records", "export", "no such [b]record[/b]", "--out-dir", tmp_path)
    assert result.exit_code == 1 and not result.stdout.strip()
    assert "no such [b]record[/b]" in " ".join(result.stderr.split())
