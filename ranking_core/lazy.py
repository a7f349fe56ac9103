"""Names imported on first use, so that the command line's help and the registries' names load no
numerical library (NumPy, SciPy, pandas, scikit-learn): ``tests/test_cli_startup.py`` checks it.

* :func:`imported` — the object at an import path ``"package.module:attribute"``: a registry entry
  names its implementation so, and the implementation is imported when first used;
  :class:`Deferred` is such a function, imported at its first call;
* :func:`lazy_exports` — a package's ``__getattr__`` and ``__dir__`` (PEP 562) for public names each
  defined in one module of the package, imported when first asked for. A package using it must
  not export a name that is also one of its modules (``tests/test_cli_startup.py`` checks): the
  import system binds a module to its package's attribute of the same name once the module is
  imported, which would then hide the exported object.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Deferred", "checked_homes", "imported", "lazy_exports"]


def imported(path: str) -> Any:
    """The object at ``path`` = ``"package.module:attribute"``, its module imported if need be
    (once: Python keeps imported modules). ``ImportError`` or ``AttributeError`` when there is
    none."""
    module, _, attribute = path.partition(":")
    if not attribute:
        raise ValueError(f"an import path reads 'package.module:attribute'; got {path!r}")
    return getattr(importlib.import_module(module), attribute)


def checked_homes(package: str) -> dict[str, str]:
    """The public names of ``package`` (its ``__name__``) and the module of the package each
    comes from, as its ``if TYPE_CHECKING:`` block imports them: the one list a lazily
    exporting package keeps (type checkers read the block, :func:`lazy_exports` this map). The
    package's source is parsed, not run; imports from outside the project are type hints."""
    import ast

    source = sys.modules[package].__file__
    if source is None:
        raise ImportError(f"{package} has no source file to read its exports from")
    with open(source, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    project = package.split(".")[0] + "."
    homes: dict[str, str] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
            continue
        for statement in node.body:
            if isinstance(statement, ast.ImportFrom) and (statement.module or "").startswith(
                project
            ):
                for alias in statement.names:
                    homes[alias.asname or alias.name] = str(statement.module)
    return homes


def lazy_exports(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for the package ``package`` (its ``__name__``), whose public
    names are ``homes``: name → the module defining it. A name is imported when first asked for
    and then kept in the package's namespace."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(homes[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__


@dataclass(frozen=True)
class Deferred:
    """The function at ``path`` (``"package.module:function"``), imported at its first call: a
    registry entry names its implementation so without importing it."""

    path: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return imported(self.path)(*args, **kwargs)
