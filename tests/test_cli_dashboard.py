"""``riskgrid dashboard``: the streamlit command line and the child's environment."""

from __future__ import annotations

import os
import sys
import tomllib
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ranking_core
from dashboard import APP_PATH
from ranking_core.cli import app
from ranking_core.cli.dashboard import streamlit_command, streamlit_environment
from scripts.screenshots import free_port, serve


def test_command_runs_streamlit_on_the_app_with_port_and_headless():
    command = streamlit_command(APP_PATH, 8765, True)
    assert command == [sys.executable, "-m", "streamlit", "run", str(APP_PATH),
                       "--server.port", "8765", "--server.headless", "true"]
    assert APP_PATH.is_file() and (APP_PATH.parent / ".streamlit" / "config.toml").is_file()


@pytest.mark.slow
def test_readme_command_starts_on_a_fresh_machine_without_prompting(tmp_path):
    """`riskgrid dashboard` without --headless, a HOME with no Streamlit credentials and stdin
    closed (Streamlit's first-run e-mail question would otherwise stop the start)."""
    env = {**os.environ, "HOME": str(tmp_path), "BROWSER": "true",
           "RISKGRID_DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    env.pop("SEG_TABLE", None)
    with serve(free_port(), env, headless=False) as url:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as answer:
            assert answer.read() == b"ok"


def test_app_config_limits_uploads():
    config = tomllib.loads((APP_PATH.parent / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == 50  # MB: a plain-CSV SEG table is about 9 MB
    assert config["browser"]["gatherUsageStats"] is False


def test_environment_passes_an_absolute_seg_path_and_this_checkout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = streamlit_environment(Path("seg.csv"), {"PYTHONPATH": "/elsewhere", "KEEP": "1"})
    assert env["SEG_TABLE"] == str(tmp_path / "seg.csv")
    root = str(Path(ranking_core.__file__).resolve().parents[1])
    assert env["PYTHONPATH"].split(":") == [root, "/elsewhere"] and env["KEEP"] == "1"
    assert "SEG_TABLE" not in streamlit_environment(None, {})


def test_missing_seg_table_file_is_refused_with_guidance(tmp_path):
    result = CliRunner().invoke(app, ["dashboard", "--seg-table", str(tmp_path / "nope.csv")])
    assert result.exit_code == 2
    assert "SEG table file not found" in result.output and "SEG_TABLE" in result.output


def test_cli_starts_streamlit_with_the_chosen_options(tmp_path, monkeypatch):
    seg = tmp_path / "seg.csv"
    seg.write_text("x")
    calls = []

    def fake_call(command, env, cwd):
        calls.append((command, env, cwd))
        return 0

    monkeypatch.setattr("ranking_core.cli.dashboard.subprocess.call", fake_call)
    result = CliRunner().invoke(app, ["dashboard", "--port", "9123", "--headless",
                                      "--seg-table", str(seg)])
    assert result.exit_code == 0, result.output
    (command, env, cwd), = calls
    assert command[-4:] == ["--server.port", "9123", "--server.headless", "true"]
    assert env["SEG_TABLE"] == str(seg.resolve()) and cwd == APP_PATH.parent
