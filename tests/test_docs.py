"""The documents a newcomer reads: a short README whose set-up commands are the ones CI runs, and
links (README and docs/) that lead to files that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
INSTALL = "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/riskgrid dashboard"
TESTS = (
    'python3 -m venv .venv && .venv/bin/pip install -e ".[dev]" && '
    ".venv/bin/python -m pytest -q -n 2"
)


def test_the_readme_is_short_and_gives_the_two_set_up_commands():
    assert README.stat().st_size <= 8192
    text = README.read_text(encoding="utf-8")
    assert f"```bash\n{INSTALL}\n```" in text and f"```bash\n{TESTS}\n```" in text
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'pip install --quiet -e ".[dev]"' in ci and "python -m pytest -q -n 2" in ci


def test_every_relative_link_of_the_documents_leads_to_a_file():
    documents = [README, *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for document in documents:
        for target in LINK.findall(document.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            if not (document.parent / target).exists():
                broken.append(f"{document.relative_to(ROOT)} → {target}")
    assert not broken, broken
    linked = set(LINK.findall(README.read_text(encoding="utf-8")))
    for name in ("INPUTS", "CLI", "OPERATIONS", "ARCHITECTURE"):
        assert f"docs/{name}.md" in linked


def test_the_standards_document_is_current():
    """docs/STANDARDS.md is what scripts/standards_doc.py writes from the registry."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "scripts/standards_doc.py", "--check"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert result.returncode == 0, result.stderr
