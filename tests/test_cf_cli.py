"""``riskgrid cf per-user`` end to end on small synthetic data (in-process scheduler)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ranking_core.cf import synthetic_ratings
from ranking_core.cli import app

runner = CliRunner()
SMALL = "--test-users 4 --repeats 2 --reference 60 --test-range 50-150 --scheduler synchronous"
SYNTHETIC = "cf per-user --format synthetic --group 20-60 --learner lavrentiev"


def invoke(words: str, *more: str | Path):
    """``riskgrid`` with the space-separated ``words`` and then ``more`` (paths, spaced
    values)."""
    return runner.invoke(app, [*words.split(), *map(str, more)])


def test_per_user_synthetic_writes_the_four_metrics(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    result = invoke(f"{SYNTHETIC} {SMALL} --json", out)
    assert result.exit_code == 0, result.output
    saved = json.loads(out.read_text())
    for metric in ("pairwise_misranking", "msd", "m1d", "ndcg10"):
        assert set(saved[metric]) >= {"mean", "sd"}
        assert saved[metric] == saved["learners"]["lavrentiev"][metric]
    assert saved["tasks"] == 8 and saved["config"]["shift"] == 0.0
    assert 0.0 < saved["pairwise_misranking"]["mean"] < 0.5


def test_per_user_jester_long_is_shifted_by_ten(tmp_path: Path) -> None:
    """A Jester-format file (ratings −9..+9) runs through the same command; its ratings are
    shifted by +10 so that −1 means "not rated" (Kriukova et al. 2014, §4.2)."""
    data = synthetic_ratings(n_users=150, n_items=100, median_ratings=50, seed=2)
    coo = data.ratings.tocoo()
    path = tmp_path / "jester.csv"
    path.write_text(
        "user_id,joke_id,rating\n"
        + "".join(
            f"{u + 1},{i + 1},{(r - 3) * 4.5:.2f}\n"
            for u, i, r in zip(coo.row, coo.col, coo.data, strict=True)
        )
    )
    out = tmp_path / "jester.json"
    result = invoke(
        "cf per-user --format jester-long --group 20-40 --learner iterated-lavrentiev "
        f"--learner rankboost {SMALL} --json",
        out,
        "--data",
        path,
    )
    assert result.exit_code == 0, result.output
    saved = json.loads(out.read_text())
    assert saved["config"]["shift"] == 10.0
    assert set(saved["learners"]) == {"iterated-lavrentiev", "rankboost"}
    assert "pairwise_misranking" not in saved  # several learners: per-learner entries only
    assert saved["learners"]["iterated-lavrentiev"]["pairwise_misranking"]["mean"] < 0.5


def test_per_user_reports_a_malformed_file_by_line(tmp_path: Path) -> None:
    path = tmp_path / "u.data"
    path.write_text("1\t1\t5\t0\n1\t2\tfive\t0\n")
    result = invoke(f"cf per-user --format ml-100k {SMALL} --data", path)
    assert result.exit_code != 0
    # the message sits in a box wrapped at the terminal width: compare it without box and breaks
    text = " ".join(result.output.replace("│", " ").split())
    assert "line 2" in text and "numbers" in text


def test_per_user_offers_both_readings_of_the_protocol(tmp_path: Path) -> None:
    """--protocol split|refit: the same draws, the reading recorded in the JSON and the table
    title; the refitted functions rank the held-out half differently; refit is the default."""
    misranking = {}
    for protocol in ("split", "refit", None):
        out = tmp_path / f"{protocol}.json"
        chosen = "" if protocol is None else f"--protocol {protocol}"
        result = invoke(f"{SYNTHETIC} {SMALL} {chosen} --json", out)
        assert result.exit_code == 0, result.output
        saved = json.loads(out.read_text())
        assert saved["config"]["protocol"] == (protocol or "refit")
        misranking[protocol] = saved["pairwise_misranking"]["per_repeat"]
    assert misranking["split"] != misranking["refit"] == misranking[None]
    result = invoke(f"cf per-user --format synthetic --protocol half {SMALL}")
    text = " ".join(result.output.replace("│", " ").split())
    assert result.exit_code != 0 and "'protocol' must be one of" in text


def test_per_user_tie_threshold_leaves_out_close_pairs(tmp_path: Path) -> None:
    """--tie-threshold t: only test pairs whose ratings differ by more than t count. The synthetic
    ratings are whole stars, so t = 0.5 leaves out no pair (the same figures as eq. (1)) while
    t = 1 leaves out the pairs one star apart (other figures); the value is recorded."""
    misranking = {}
    for threshold in ("0", "0.5", "1"):
        out = tmp_path / f"tie-{threshold}.json"
        result = runner.invoke(
            app,
            [
                "cf",
                "per-user",
                "--format",
                "synthetic",
                "--group",
                "20-60",
                "--learner",
                "lavrentiev",
                *SMALL.split(),
                "--tie-threshold",
                threshold,
                "--json",
                str(out),
            ],
        )
        assert result.exit_code == 0, result.output
        saved = json.loads(out.read_text())
        assert saved["config"]["tie_threshold"] == float(threshold)
        misranking[threshold] = saved["pairwise_misranking"]["per_repeat"]
    assert misranking["0"] == misranking["0.5"] != misranking["1"]
    for bad in ("-1", "nan"):
        result = runner.invoke(
            app, ["cf", "per-user", "--format", "synthetic", "--tie-threshold", bad, *SMALL]
        )
        text = " ".join(result.output.replace("│", " ").split())
        assert result.exit_code == 2 and "tie" in text.lower(), text


def test_per_user_rejects_a_bad_group() -> None:
    result = invoke(f"cf per-user --format synthetic --group forty {SMALL}")
    assert result.exit_code != 0 and "40-60" in result.output


def test_pairs_synthetic(tmp_path: Path) -> None:
    out = tmp_path / "pairs.json"
    result = invoke(
        "cf pairs --format synthetic --train-pairs 400 --test-pairs 1000 --validation-pairs 400 "
        "--experiments 2 --alpha 0.01 --loss hinge --loss value-linear --json",
        out,
    )
    assert result.exit_code == 0, result.output
    saved = json.loads(out.read_text())
    assert set(saved["test_loss"]) == {"hinge", "value-linear"}
    assert len(saved["test_loss"]["hinge"]["400"]["per_run"]) == 2


def test_pairs_needs_movie_metadata(tmp_path: Path) -> None:
    (tmp_path / "u.data").write_text("1\t1\t5\t0\n1\t2\t3\t0\n")
    result = invoke("cf pairs --format ml-100k --data", tmp_path)
    assert result.exit_code != 0 and "u.item" in result.output
