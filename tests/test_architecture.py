"""docs/architecture.md matches the code: its layer table names every package of the tree (and no other), it is
the table the layering test enforces, and no public name has two meanings across packages."""

from __future__ import annotations

import importlib

import pytest

from _architecture import ARCHITECTURE, documented_layers
from _source_tree import SOURCE

def tree_packages() -> set[str]:
    packages = {path.parent.name for path in SOURCE.glob("*/__init__.py")}
    modules = {path.stem for path in SOURCE.glob("*.py") if path.stem != "__init__"}
    return packages | modules


def test_the_layer_table_names_every_package_of_the_tree():
    documented = [package for row in documented_layers() for package in row]
    assert len(documented) == len(set(documented)), "a package is listed twice"
    assert sorted(set(documented) - tree_packages()) == [], "documented but not in src/proofgym"
    assert sorted(tree_packages() - set(documented)) == [], "in src/proofgym but not in docs/architecture.md"


def test_the_layering_test_enforces_the_documented_table():
    from test_layering import LAYERS

    assert LAYERS == documented_layers() and len(LAYERS) > 10


def test_a_package_missing_from_the_table_is_caught():
    layers = documented_layers(ARCHITECTURE.read_text(encoding="utf-8").replace("`formats`", "`formatz`"))
    documented = {package for row in layers for package in row}
    assert "formats" in tree_packages() - documented and "formatz" in documented - tree_packages()


def test_a_table_out_of_order_is_refused():
    text = ARCHITECTURE.read_text(encoding="utf-8").replace("| 2 | `parsers`", "| 7 | `parsers`")
    with pytest.raises(ValueError, match="layer 7 where 2 was expected"):
        documented_layers(text)


def public_packages() -> list[str]:
    return sorted(f"proofgym.{name}" for name in tree_packages())


def test_no_public_name_has_two_meanings():
    owners: dict[str, dict[int | str, list[str]]] = {}
    for module_name in public_packages():
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            # a constant re-exported is the same meaning when its value is equal; anything else, the same object
            key = repr(value) if isinstance(value, (str, int, float, bool, tuple, frozenset)) else id(value)
            owners.setdefault(name, {}).setdefault(key, []).append(module_name)
    clashes = {name: sorted(m for modules in by_id.values() for m in modules)
               for name, by_id in owners.items() if len(by_id) > 1}
    assert clashes == {}, "one public name, two different objects: rename one"


@pytest.mark.parametrize("package", ["core", "training", "envs"])
def test_the_table_says_what_each_package_owns(package):
    text = ARCHITECTURE.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if f"`{package}`" in line and line.startswith("|"))
    assert len(row.split("|")[3].strip()) > 20, f"say what {package} owns"
