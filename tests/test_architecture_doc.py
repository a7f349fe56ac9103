"""docs/ARCHITECTURE.md's module table lists exactly the packages and modules of ranking_core,
read from the source tree when the test runs (so a module added, moved or removed fails here
until the table says so)."""

from __future__ import annotations

import re
from pathlib import Path

import ranking_core

PACKAGE = Path(ranking_core.__file__).parent
DOC = PACKAGE.parent / "docs" / "ARCHITECTURE.md"
# Directories described by one row as a whole: Alembic's own layout (env.py and one script per
# schema version) grows with every migration.
WHOLE = ("migrations/",)
ROW = re.compile(r"^\| `([^`]+)` \|")


def listed() -> list[str]:
    """The first-column paths of the table under "## Modules", in order."""
    section = DOC.read_text(encoding="utf-8").split("\n## Modules\n", 1)[1].split("\n## ", 1)[0]
    return [match.group(1) for line in section.splitlines() if (match := ROW.match(line))]


def in_tree() -> set[str]:
    """Every package (``name/``) and module of ranking_core, by path inside it; a subpackage's
    ``__init__.py`` is its package row, ``__main__.py`` is not a module one imports."""
    entries = set()
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        if "__pycache__" in relative or relative.startswith(WHOLE) or path.name == "__main__.py":
            continue
        parent = path.parent.relative_to(PACKAGE).as_posix()
        if parent != ".":
            entries.add(f"{parent}/")
        if path.name != "__init__.py" or parent == ".":
            entries.add(relative)
    return entries | {whole for whole in WHOLE if (PACKAGE / whole).is_dir()}


def test_the_module_table_lists_every_module_and_nothing_else() -> None:
    rows = listed()
    assert len(rows) == len(set(rows)), "a module is listed twice in docs/ARCHITECTURE.md"
    missing = sorted(in_tree() - set(rows))
    stale = sorted(set(rows) - in_tree())
    assert not missing and not stale, (
        f"docs/ARCHITECTURE.md, table 'Modules': add {missing}; remove (no such module) {stale}"
    )


def test_the_table_is_read_from_the_document_and_the_tree() -> None:
    """The two sides the check compares are not empty or trivially equal: the table holds rows
    of both kinds, and the tree holds modules nested two levels deep."""
    rows = listed()
    assert "learners/" in rows and "selection/choose.py" in rows
    assert any(entry.count("/") == 1 and entry.endswith(".py") for entry in in_tree())


def section(title: str) -> str:
    """The text of the section ``## title`` of docs/ARCHITECTURE.md."""
    return DOC.read_text(encoding="utf-8").split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


HOME = re.compile(r"^\| [^|]+ \| `([a-z_.]+):([A-Za-z_]+)`")


def test_every_registry_home_named_exists():
    import importlib

    homes = [m.groups() for line in section("Registries").splitlines() if (m := HOME.match(line))]
    assert len(homes) >= 8, homes
    for module, name in homes:
        assert hasattr(importlib.import_module(module), name), f"{module}:{name}"


def test_the_dashboard_table_lists_its_files():
    dashboard = PACKAGE.parent / "dashboard"
    rows = [m.group(1) for line in section("The dashboard").splitlines() if (m := ROW.match(line))]
    files = {p.name for p in dashboard.glob("*.py")} | {"views/"}
    assert sorted(rows) == sorted(files)


def test_every_recipe_test_named_exists():
    """A recipe ends with the test that performs it (``tests/x.py::test_y`` or ``tests/x.py``)."""
    text = DOC.read_text(encoding="utf-8")
    named = re.findall(r"`(tests/[a-z_]+\.py)(?:::([a-z_]+))?`", text)
    assert any(function for _, function in named)
    for path, function in named:
        if "<" in path:
            continue
        source = PACKAGE.parent / path
        assert source.is_file(), path
        if function:
            assert f"def {function}(" in source.read_text(encoding="utf-8"), f"{path}::{function}"
