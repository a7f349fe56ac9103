"""Counts and sizes bounded before work: the JSON nesting scan against a character-by-character
scanner, a line of any length found in linear time, ``meter-report --by`` groups and
``plan-study --agreement`` criteria checked before anything is computed."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ranking_core.cli import app
from ranking_core.inputs import decoding, json_records
from ranking_core.meter.pairs.readings import MAX_GROUPS


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def first_too_deep(text: str, limit: int) -> int:
    """Character by character: the offset of the first bracket outside strings nested deeper
    than ``limit`` (a backslash in a string escapes the next character), or −1."""
    depth, in_string, escaped = 0, False, False
    for at, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return at
        elif char in "]}":
            depth -= 1
    return -1


token = st.one_of(
    st.sampled_from(list("[]{},:1")),
    st.text(alphabet='[]{}"\\a', max_size=6).map(json.dumps),  # a string, escapes and all
)


@settings(max_examples=300, deadline=None)
@given(st.lists(token, max_size=40), st.integers(1, 4), st.integers(1, 9))
def test_the_nesting_scan_is_the_character_by_character_one(tokens, limit, step):
    text = "".join(tokens)
    original = json_records._DEPTH_STEP
    json_records._DEPTH_STEP = step  # strings and backslash runs cut across the steps
    try:
        assert json_records.too_deep(text.encode(), limit) == first_too_deep(text, limit)
    finally:
        json_records._DEPTH_STEP = original


def test_json_at_the_depth_limit_is_read_and_one_deeper_is_refused_naming_the_line():
    limit = json_records.MAX_JSON_DEPTH
    fine = "[" * limit + "]" * limit
    assert json_records.load_json(fine.encode(), "x.json") == json.loads(fine)
    deep = '[\n{"a": "[[[["},\n' + "[" * limit + "]" * limit + "]"
    with pytest.raises(json_records.InputError, match=r"^x\.json: line 3 nests brackets more"):
        json_records.load_json(deep.encode(), "x.json")


def test_an_integer_beyond_the_parser_limit_is_one_sentence():
    with pytest.raises(json_records.InputError, match="not readable as JSON"):
        json_records.load_json(b"[" + b"9" * 5000 + b"]", "x.json")


class _Counting:
    """A pattern that counts the characters it is asked to search."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.searched = pattern, 0

    def search(self, text: str, *args: int) -> re.Match[str] | None:
        self.searched += len(text)
        return self.pattern.search(text, *args)


def test_a_line_of_any_length_is_found_in_linear_time(monkeypatch):
    counting = _Counting(decoding._ANY_END)
    monkeypatch.setattr(decoding, "_ANY_END", counting)
    length = 5_000_000
    stream = decoding.LineEnds(io.StringIO("BGM,REF\n" + "1" * length + ",2\n3,4\n", newline=""))
    assert stream.readline() == "BGM,REF\n"
    assert stream.readline() == "1" * length + ",2\n"
    assert stream.readline() == "3,4\n"
    assert counting.searched < 2 * length  # each character searched at most about once


def test_a_huge_field_is_refused_by_its_line_and_the_rest_kept(tmp_path):
    path = tmp_path / "pairs.csv"
    rows = "".join(f"{100 + i},{105 + i}\n" for i in range(30))
    path.write_text("BGM,REF\n100,110\n" + "1" * 3_000_005 + ",100\n" + rows + "7" * 400_000)
    result = run("meter-report", path)
    text = " ".join(result.output.split())
    assert result.exit_code == 0 and "Traceback" not in text
    # line 3, and the last line (no line break) beyond any field: refused by the same rule
    assert "the line is longer than" in text
    assert "(3,000,010 characters)) in lines 3, 34; refused" in text
    assert "33 rows read, 2 refused" in text


@pytest.fixture
def grouped(tmp_path):
    def make(groups: int):
        rng = np.random.default_rng(0)
        ref = rng.integers(60, 300, 2 * groups)
        path = tmp_path / f"g{groups}.csv"
        pd.DataFrame(
            {"BGM": ref + 3, "REF": ref, "site": [f"s{i % groups}" for i in range(2 * groups)]}
        ).to_csv(path, index=False)
        return path

    return make


def test_by_refuses_more_groups_than_the_limit_before_judging(grouped, monkeypatch):
    from ranking_core.meter.standards import acceptance

    def never(*args, **kwargs):
        raise AssertionError("a group was judged")

    monkeypatch.setattr(acceptance, "acceptance_table", never)
    result = run("meter-report", grouped(50_000), "--by", "site")
    assert result.exit_code == 1 and "Traceback" not in result.output
    text = " ".join(result.stderr.split())
    assert f"--by site has 50,000 distinct values, more than the limit of {MAX_GROUPS}" in text


def test_by_at_the_limit_is_judged(grouped, tmp_path):
    report = tmp_path / "r.json"
    result = run("meter-report", grouped(MAX_GROUPS), "--by", "site", "--json", report)
    assert result.exit_code == 0, result.output
    groups = {row["group"] for row in json.loads(report.read_text())["acceptance"]}
    assert groups == {None} | {f"s{i}" for i in range(MAX_GROUPS)}  # the pooled verdict first
