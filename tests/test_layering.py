"""The package layering, computed from the source: no cycle, and no package imports one above it.

Every ``import`` / ``from ... import`` in ``src/proofgym`` counts, including those inside functions and under
``TYPE_CHECKING``: a lazy import is still a dependency. The order is docs/architecture.md's layer table.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from _architecture import documented_layers
from _source_tree import SOURCE, copy_source


#: Lowest first, read from docs/architecture.md's layer table (the one place the layering is written down, with what
#: each package owns). A package may import packages of lower layers only (and itself). Packages on one row are
#: peers: they must not import each other.
LAYERS: list[tuple[str, ...]] = documented_layers()
RANK = {package: rank for rank, line in enumerate(LAYERS) for package in line}


def _package_of(path: Path, source: Path = SOURCE) -> str:
    relative = path.relative_to(source)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def import_graph(source: Path = SOURCE) -> dict[str, dict[str, list[str]]]:
    """``{package: {imported package: ["file:line", ...]}}`` over every import in ``source``."""
    graph: dict[str, dict[str, list[str]]] = {}
    for path in sorted(source.rglob("*.py")):
        package = _package_of(path, source)
        if package == "__init__":
            continue  # proofgym/__init__.py: the top-level re-exports
        edges = graph.setdefault(package, {})
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules = []
            else:
                continue  # relative imports stay inside their package
            for module in modules:
                parts = module.split(".")
                if parts[0] == "proofgym" and len(parts) > 1 and parts[1] != package:
                    where = f"{path.relative_to(source.parent)}:{node.lineno}"
                    edges.setdefault(parts[1], []).append(where)
    return graph


def upward_imports(graph: dict[str, dict[str, list[str]]]) -> list[str]:
    return [f"{where}: {package} (layer {RANK[package]}) imports {target} (layer {RANK[target]})"
            for package, edges in graph.items() for target, places in edges.items()
            if package in RANK and target in RANK and RANK[target] >= RANK[package] for where in places]


def cycles(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    found, state = [], {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = "open"
        for target in sorted(graph.get(node, {})):
            if state.get(target) == "open":
                found.append(stack[stack.index(target):] + [target] if target in stack else [node, target])
            elif target not in state:
                visit(target, [*stack, target])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_every_package_has_a_layer():
    packages = {_package_of(path) for path in SOURCE.rglob("*.py")} - {"__init__"}
    assert sorted(packages - set(RANK)) == [], "add the new package to docs/architecture.md's layer table"
    assert sorted(set(RANK) - packages) == [], "remove the package that is gone from docs/architecture.md's layer table"


def test_no_package_imports_a_package_above_it_or_beside_it():
    assert upward_imports(import_graph()) == []


def test_the_package_graph_has_no_cycle():
    assert cycles(import_graph()) == []


def test_a_reintroduced_upward_import_is_caught(tmp_path):
    # The cycle this layering removed: verifiers imported the Verilog verifier, which loads the environment.
    copy = copy_source(tmp_path)
    init = copy / "verifiers" / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + "\nfrom proofgym.verilog._verifier import VERILOG_VERIFIER\n",
                    encoding="utf-8")
    graph = import_graph(copy)
    problems = upward_imports(graph)
    line = len(init.read_text().splitlines())
    assert problems == [f"proofgym/verifiers/__init__.py:{line}: verifiers (layer {RANK['verifiers']}) "
                        f"imports verilog (layer {RANK['verilog']})"]
    assert cycles(graph)  # verilog imports verifiers: the two now form a cycle


@pytest.mark.parametrize("module", ["proofgym.runtime", "proofgym.verifiers", "proofgym.config"])
def test_the_reward_path_loads_no_environment(module):
    import subprocess
    import sys

    code = (f"import {module}, sys; print(' '.join(sorted(m for m in sys.modules if m.startswith('proofgym'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert [m for m in loaded if m.startswith(("proofgym.envs", "proofgym.verilog", "proofgym.domains"))] == []
