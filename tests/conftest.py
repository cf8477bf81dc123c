"""Suite-wide settings: how torch's threads wait, and how tests are spread over pytest-xdist workers."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

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


# Modules of slow tests only whose collection alone is costly (schemathesis builds its tests then): not collected when
# the marker expression is the default ``not slow`` (pyproject.toml's addopts), which deselects every test in them.
_SLOW_MODULES = {"tests/taskapp/test_openapi_other_environments.py"}


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if config.getoption("markexpr") != "not slow" or not collection_path.is_relative_to(config.rootpath):
        return None
    return True if collection_path.relative_to(config.rootpath).as_posix() in _SLOW_MODULES else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup``, keep the tests that share a module fixture on one worker (it is built once),
    and every test of a shared service on one worker; without xdist the marks do nothing."""
    groups = {}
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        group = next((name for fixture, name in _SHARED_SERVICES.items() if fixture in fixtures), None)
        groups[item.nodeid] = group or _module_group(item)
        item.add_marker(pytest.mark.xdist_group(groups[item.nodeid]))
    folder = getattr(config, "workerinput", {}).get(_GROUPS_KEY)
    if folder:  # an xdist worker: the controller's scheduler reads the groups from here (see _GroupScheduling)
        path = Path(folder, f"{config.workerinput['workerid']}.json")
        path.with_suffix(".tmp").write_text(json.dumps(groups), encoding="utf-8")
        path.with_suffix(".tmp").replace(path)


# pytest 9.2 keeps a test's id structured, and pytest-xdist 3.8 still marks a test's group by rewriting the old
# string field (pytest-dev/pytest-xdist#1386): its loadgroup scheduler then saw no group at all, and each worker
# built every module and session fixture (the Ray cluster, the filled stores, the trained run) for itself. So the
# groups travel beside the ids: each worker writes {test id: group} into a folder named in its workerinput (above),
# written before it reports its collection, and the controller's scheduler reads them when it splits the work.
_GROUPS_KEY = "proofgym_xdist_groups"


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("xdist") and getattr(config.option, "dist", "no") == "loadgroup" \
            and not hasattr(config, "workerinput"):
        config.stash[_GROUPS_FOLDER] = tempfile.mkdtemp(prefix="proofgym-xdist-groups-")


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_GROUPS_FOLDER, None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


_GROUPS_FOLDER = pytest.StashKey[str]()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    folder = node.config.stash.get(_GROUPS_FOLDER, None)
    if folder:
        node.workerinput[_GROUPS_KEY] = folder


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    folder = config.stash.get(_GROUPS_FOLDER, None)
    if not folder:
        return None
    from xdist.scheduler import LoadGroupScheduling

    class _GroupScheduling(LoadGroupScheduling):
        """xdist's loadgroup scheduler, its groups read from what the workers wrote; the groups that build a shared
        service, a session fixture or a parametrized module fixture (the long ones) are handed out first, then the
        others by size, so that no long group starts last while the other worker has run dry."""

        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if nodeid.rfind("@") > nodeid.rfind("]"):  # an xdist that marks the group in the id again
                return super()._split_scope(nodeid)
            if self.groups is None:
                self.groups = {}
                for path in sorted(Path(folder).glob("*.json")):
                    self.groups.update(json.loads(path.read_text(encoding="utf-8")))
            return self.groups.get(nodeid, nodeid)

        ordered = False

        def _assign_work_unit(self, node) -> None:
            if not self.ordered:  # the queue as xdist built it (by size), before the first unit is handed out
                self.ordered = True
                for scope in sorted(self.workqueue, key=lambda scope: (not _long(scope), -len(self.workqueue[scope]))):
                    self.workqueue.move_to_end(scope)
            super()._assign_work_unit(node)

    return _GroupScheduling(config, log)


def _long(group: str) -> bool:
    """A group that builds something shared: a service, a session fixture, a module fixture per parameter."""
    return group in _SHARED_SERVICES.values() or group.startswith("session fixture ") or \
        (group.endswith("]") and "::" not in group)


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
