"""No package reaches into another package's private modules: across packages, only public names are imported.

A private module is one whose name starts with ``_`` (``proofgym.core._limits``). Inside its own package it is
imported freely; from any other package (``proofgym.taskapp``, or the top-level modules ``proofgym/__init__.py``
and ``proofgym/testing.py``) the name must come from the owning package's ``__init__`` instead
(``from proofgym.core import MAX_DEPTH``). Computed from the source like ``tests/test_layering.py``: every
``import`` / ``from ... import`` counts, inside functions and under ``TYPE_CHECKING`` too, and so do
``from proofgym.core import _limits`` and relative imports that leave their package.
"""

from __future__ import annotations

import ast
from pathlib import Path

from _source_tree import SOURCE, copy_source


#: ``(importing package, imported module)`` pairs allowed although they cross packages. Empty.
ALLOWED: set[tuple[str, str]] = set()


def _module_of(path: Path, source: Path) -> list[str]:
    parts = ["proofgym", *path.relative_to(source).with_suffix("").parts]
    return parts[:-1] if parts[-1] == "__init__" else parts


def _package_of(path: Path, source: Path) -> str:
    relative = path.relative_to(source)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _imported(node: ast.Import | ast.ImportFrom, path: Path, source: Path) -> tuple[list[str], str | None]:
    """The dotted modules ``node`` imports, and for a ``from`` import the module its names come from (relative
    imports resolved): ``from proofgym.core import _limits`` imports the module ``proofgym.core._limits``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names], None
    if node.level:
        module = _module_of(path, source)
        # A module's own package is one level up; a package's __init__ is its package already.
        base = module if path.name == "__init__.py" else module[:-1]
        base = base[:len(base) - (node.level - 1)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    return [f"{prefix}.{alias.name}" for alias in node.names if alias.name != "*"], prefix


def _private_elsewhere(module: str, package: str) -> bool:
    parts = module.split(".")
    return (parts[0] == "proofgym" and len(parts) > 2 and parts[1] != package and parts[2].startswith("_")
            and (package, module) not in ALLOWED)


def private_cross_imports(source: Path = SOURCE) -> list[str]:
    """``"file:line: package imports module"`` for every import of another package's private module."""
    found = []
    for path in sorted(source.rglob("*.py")):
        package = _package_of(path, source)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            names, origin = _imported(node, path, source)
            if origin is not None and _private_elsewhere(origin, package):
                names = [origin]  # the module the names come from is the private one
            found += [f"{path.relative_to(source.parent)}:{node.lineno}: {package} imports {module}"
                      for module in names if _private_elsewhere(module, package)]
    return found


def test_no_package_imports_another_packages_private_module():
    assert private_cross_imports() == [], "export the name from the owning package's __init__ and import that"


def test_a_reintroduced_private_import_is_caught(tmp_path):
    copy = copy_source(tmp_path)
    guard = copy / "http" / "_guard.py"
    lines = len(guard.read_text(encoding="utf-8").splitlines())
    guard.write_text(guard.read_text(encoding="utf-8")
                     + "\n\ndef _late():\n    from proofgym.core._limits import MAX_DEPTH\n"
                     + "\n\nif False:\n    from proofgym.training import _average\n"
                     + "    from ..core._text import model_text\n"
                     + "    from proofgym.core import MAX_DEPTH, _limits\n"
                     + "    from ._json import json_bytes\n", encoding="utf-8")
    assert private_cross_imports(copy) == [
        f"proofgym/http/_guard.py:{lines + 4}: http imports proofgym.core._limits",
        f"proofgym/http/_guard.py:{lines + 8}: http imports proofgym.training._average",
        f"proofgym/http/_guard.py:{lines + 9}: http imports proofgym.core._text",
        f"proofgym/http/_guard.py:{lines + 10}: http imports proofgym.core._limits",
    ]
