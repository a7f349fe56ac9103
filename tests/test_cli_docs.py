"""docs/CLI.md is what ``scripts/cli_docs.py`` writes from the command line's ``--help``: current,
the same whatever terminal runs it, and one section per command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ranking_core.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "cli_docs.py"
DOC = ROOT / "docs" / "CLI.md"


def run(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_committed_cli_doc_is_current_whatever_the_terminal(tmp_path):
    # a narrow, colour-forcing terminal: the script fixes width and colour itself
    checked = run("--check", COLUMNS="40", TERMINAL_WIDTH="40", FORCE_COLOR="1")
    assert checked.returncode == 0, checked.stderr
    stale = tmp_path / "CLI.md"
    stale.write_text(DOC.read_text(encoding="utf-8").replace("--port", "--harbour"))
    refused = run("--check", "--out", str(stale))
    assert refused.returncode == 1 and "is not current" in refused.stderr


def test_every_command_has_its_section():
    text = DOC.read_text(encoding="utf-8")
    for name in COMMANDS:
        assert f"\n## riskgrid {name}\n" in text
        assert f"Usage: riskgrid {name} " in text
    assert "\x1b" not in text  # no colour codes
