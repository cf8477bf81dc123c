"""Suite-wide settings: how torch's threads wait, and how tests are spread over pytest-xdist workers."""

from __future__ import annotations

import os

import pytest

# A spinning OpenMP thread holds its core: under load (another job, or the other xdist worker) every parallel
# region then waits for a descheduled partner. Set before any test imports torch (OpenMP reads it only then).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# pytest-xdist starts its workers with COLUMNS=80, which rich reads once, when the command line's consoles are made
# (at import): the tests that print wide tables set COLUMNS for their command, as on a terminal.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)

# Fixtures that start one shared service per process: the tests using them run on one worker, so that a run
# with `-n 2` starts one two-node Ray cluster and one Postgres cluster, not one per worker.
_SHARED_SERVICES = {"ray_cluster": "ray", "postgres_server": "postgres", "postgres_url": "postgres"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup``, keep the tests that share a module fixture on one worker (it is built once),
    and every test of a shared service on one worker; without xdist the marks do nothing."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        group = next((name for fixture, name in _SHARED_SERVICES.items() if fixture in fixtures), None)
        item.add_marker(pytest.mark.xdist_group(group or _module_group(item)))


def _module_group(item: pytest.Item) -> str:
    """The first session fixture of the test suite's own that the test uses (a store filled through the real
    paths, a warmed-up model: built once per worker, so their tests share one worker), else the test's file and
    the value of each parameter of a module- or session-scoped fixture it uses: a file whose module fixture is
    parametrized (a task app per environment) spreads over the workers by parameter."""
    definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    shared = sorted(name for name in getattr(item, "fixturenames", ())
                    if definitions.get(name) and definitions[name][-1].scope == "session"
                    and definitions[name][-1].baseid.startswith("tests/"))
    if shared:
        return f"session fixture {shared[0]}"
    group = item.nodeid.split("::", 1)[0]
    callspec = getattr(item, "callspec", None)
    for name, value in sorted(callspec.params.items()) if callspec is not None else ():
        scope = definitions[name][-1].scope if definitions.get(name) else "function"
        if scope != "function" and isinstance(value, (str, int)):
            group += f"[{name}={value}]"
    return group
