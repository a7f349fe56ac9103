"""The package's import structure: library code never depends on experiments or user interfaces,
and no two parts of ``ranking_core``, nor of any package inside it, import each other (checked on
the import graph with grimp).

Layers, top to bottom: ``ranking_core.cli`` (the command line), ``ranking_core.experiments`` (the
papers' experiments, thin scripts over the library), then the library itself. A module may import
from its own layer's lower neighbours only.
"""

from __future__ import annotations

import itertools

import grimp
import pytest

PACKAGE = "ranking_core"
INTERFACE = f"{PACKAGE}.cli"
EXPERIMENTS = f"{PACKAGE}.experiments"


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(PACKAGE)


def _children(graph: grimp.ImportGraph, package: str = PACKAGE) -> list[str]:
    return sorted(graph.find_children(package))


def _cycles(graph: grimp.ImportGraph, package: str) -> list[str]:
    """Pairs of direct children of ``package`` (modules or subpackages) that import each other,
    directly or through other modules."""
    cycles = []
    for a, b in itertools.combinations(_children(graph, package), 2):
        forward = graph.find_shortest_chain(importer=a, imported=b, as_packages=True)
        backward = graph.find_shortest_chain(importer=b, imported=a, as_packages=True)
        if forward is not None and backward is not None:
            cycles.append(f"{' -> '.join(forward)}  and  {' -> '.join(backward)}")
    return cycles


def _packages(graph: grimp.ImportGraph, package: str = PACKAGE) -> list[str]:
    """``package`` and every package inside it, at any depth."""
    return [package] + [
        inner
        for child in _children(graph, package)
        if graph.find_children(child)
        for inner in _packages(graph, child)
    ]


def _cycles_anywhere(graph: grimp.ImportGraph, package: str = PACKAGE) -> list[str]:
    """:func:`_cycles` of ``package`` and of every package inside it."""
    return [cycle for inner in _packages(graph, package) for cycle in _cycles(graph, inner)]


def test_library_never_imports_experiments_or_the_cli(graph: grimp.ImportGraph) -> None:
    library = [name for name in _children(graph) if name not in (INTERFACE, EXPERIMENTS)]
    offenders = []
    for module, upper in itertools.product(library, (EXPERIMENTS, INTERFACE)):
        chain = graph.find_shortest_chain(importer=module, imported=upper, as_packages=True)
        if chain is not None:
            offenders.append(" -> ".join(chain))
    assert not offenders, "library code imports an upper layer:\n" + "\n".join(offenders)


def test_experiments_never_import_the_cli(graph: grimp.ImportGraph) -> None:
    chain = graph.find_shortest_chain(importer=EXPERIMENTS, imported=INTERFACE, as_packages=True)
    assert chain is None, " -> ".join(chain or ())


def test_no_import_cycle_between_parts_of_the_package(graph: grimp.ImportGraph) -> None:
    cycles = _cycles(graph, PACKAGE)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_no_import_cycle_between_parts_of_any_package_inside(graph: grimp.ImportGraph) -> None:
    packages = _packages(graph)
    assert f"{PACKAGE}.inputs" in packages and f"{PACKAGE}.learners" in packages
    cycles = _cycles_anywhere(graph)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_the_cycle_check_finds_a_planted_cycle(tmp_path, monkeypatch) -> None:
    """Not vacuous: a subpackage and a module that import each other (one of them inside a
    function, as a lazy import) are reported; an unrelated module is not."""
    root = tmp_path / "planted"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sub" / "__init__.py").write_text("")
    (root / "sub" / "inner.py").write_text("from planted import lone\n")
    (root / "lone.py").write_text("def f():\n    from planted.sub import inner\n")
    (root / "other.py").write_text("from planted import lone\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cycles = _cycles(grimp.build_graph("planted", cache_dir=None), "planted")
    assert len(cycles) == 1 and "planted.lone" in cycles[0] and "planted.sub" in cycles[0]


def test_the_cycle_check_finds_a_cycle_planted_inside_a_package(tmp_path, monkeypatch) -> None:
    """Not vacuous inside packages either: two modules of a package two levels down that import
    each other (one lazily, inside a function) are reported, though no two top-level parts form
    a cycle; modules that import one way only are not."""
    root = tmp_path / "nested"
    (root / "sub" / "deeper").mkdir(parents=True)
    for package in (root, root / "sub", root / "sub" / "deeper"):
        (package / "__init__.py").write_text("")
    (root / "sub" / "deeper" / "reader.py").write_text("from nested.sub.deeper import errors\n")
    (root / "sub" / "deeper" / "errors.py").write_text(
        "def f():\n    from nested.sub.deeper import reader\n"
    )
    (root / "sub" / "deeper" / "one_way.py").write_text("from nested.sub.deeper import errors\n")
    (root / "sub" / "user.py").write_text("from nested.sub.deeper import reader\n")
    (root / "top.py").write_text("from nested.sub import user\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    planted = grimp.build_graph("nested", cache_dir=None)
    assert _cycles(planted, "nested") == []  # the top-level check alone misses it
    cycles = _cycles_anywhere(planted, "nested")
    assert len(cycles) == 1, cycles
    assert "nested.sub.deeper.reader" in cycles[0] and "nested.sub.deeper.errors" in cycles[0]


def _lazy_export_problems(package: str) -> list[str]:
    """What is wrong with the lazy exports (``_HOMES``, :func:`ranking_core.lazy.lazy_exports`)
    of ``package``: a name that does not resolve to its home's object, a name that is also one
    of the package's modules (the import system binds the module over it once imported), or a
    type checkers' import (``if TYPE_CHECKING:``) naming another home than ``_HOMES``."""
    import ast
    import importlib
    import inspect
    import pkgutil

    module = importlib.import_module(package)
    homes: dict[str, str] = module._HOMES
    problems = [
        f"{package}.{name}: also a module of the package"
        for name in sorted({m.name for m in pkgutil.iter_modules(module.__path__)} & set(homes))
    ]
    tree = ast.parse(inspect.getsource(module))
    checked: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for inner in node.body:
                if isinstance(inner, ast.ImportFrom) and inner.module:
                    checked |= {alias.name: inner.module for alias in inner.names}
    problems += [
        f"{package}.{name}: type checkers import it from {checked.get(name)}, _HOMES from {home}"
        for name, home in sorted(homes.items())
        if checked.get(name) != home
    ]
    own = package.split(".")[0]  # imports of other libraries serve annotations only
    problems += [
        f"{package}.{name}: only for type checkers"
        for name in sorted(checked.keys() - homes)
        if checked[name].split(".")[0] == own
    ]
    for name, home in sorted(homes.items()):
        if f"{package}.{name}: also a module of the package" in problems:
            continue  # the attribute may be the module, and importing the home would make it so
        if getattr(module, name) is not getattr(importlib.import_module(home), name):
            problems.append(f"{package}.{name}: not the object of {home}")
    return problems


LAZY_PACKAGES = [
    f"{PACKAGE}.{name}"
    for name in (
        "cf",
        "filters",
        "grids",
        "inputs",
        "kernels",
        "learn",
        "learners",
        "meter",
        "panels",
        "surveys",
    )
]


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_lazy_export_resolves_to_its_home_as_type_checkers_see_it(package: str) -> None:
    assert _lazy_export_problems(package) == []


def test_the_lazy_export_check_finds_a_shadowed_name_and_a_wrong_home(tmp_path, monkeypatch):
    """Not vacuous: a package exporting ``helper`` from its module ``helper`` (which the import
    of that module then hides) and naming another home for type checkers is reported twice."""
    root = tmp_path / "shadowed"
    root.mkdir()
    (root / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from ranking_core.lazy import lazy_exports\n"
        "if TYPE_CHECKING:\n"
        "    from shadowed.other import helper, size\n"
        "_HOMES = {'helper': 'shadowed.helper', 'size': 'shadowed.other'}\n"
        "__getattr__, __dir__ = lazy_exports(__name__, _HOMES)\n"
    )
    (root / "helper.py").write_text("def helper():\n    return 1\n")
    (root / "other.py").write_text("size = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    problems = _lazy_export_problems("shadowed")
    assert problems == [
        "shadowed.helper: also a module of the package",
        "shadowed.helper: type checkers import it from shadowed.other, _HOMES from shadowed.helper",
    ]
