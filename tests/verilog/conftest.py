"""Fixtures of the Verilog tests: a private reference-count cache, and a counter of reference runs."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="package")
def _private_reference_cache(tmp_path_factory):
    """Reference sample counts these tests find go to a temporary directory, not the user's cache
    (worker processes the tests start inherit the variable)."""
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if previous is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = previous


@pytest.fixture
def reference_runs(monkeypatch) -> list[str]:
    """The problem id of every reference-vs-reference run that finished from now on (in this process)."""
    import proofgym.verilog._judge as judge_module

    runs: list[str] = []
    real = judge_module._reference_count

    def counted(problem, statuses, logs):  # called once for every reference run that finished
        runs.append(problem.id)
        return real(problem, statuses, logs)

    monkeypatch.setattr(judge_module, "_reference_count", counted)
    return runs
