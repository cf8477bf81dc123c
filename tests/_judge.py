"""Whether the Verilog judge can run here (Icarus Verilog, and a usable bubblewrap sandbox): the one check for
every test that needs those tools, so that each such test *skips*, saying what is missing and how to install it,
instead of failing. Imported as ``from _judge import requires_judge`` (``tests/`` is on ``sys.path``: see
``pythonpath`` in pyproject.toml). ``scripts/system_packages.sh`` installs the tools where it can."""

from __future__ import annotations

import functools

import pytest


@functools.lru_cache(maxsize=1)
def simulator_problem() -> str | None:
    """Why Icarus Verilog (``iverilog``, ``vvp``) cannot run here, or ``None`` when it can."""
    from proofgym.verilog import ToolchainError, detect_toolchain

    try:
        detect_toolchain().require_simulator()
    except ToolchainError as exc:
        return str(exc)
    return None


@functools.lru_cache(maxsize=1)
def judge_problem() -> str | None:
    """Why the Verilog judge cannot run here, or ``None`` when it can: the simulator is installed, and
    bubblewrap is installed and does start a sandbox (it may not, e.g. where user namespaces are disabled)."""
    from proofgym.verilog import Sandbox, SandboxUnavailable

    if simulator_problem() is not None:
        return simulator_problem()
    try:
        Sandbox().sandboxed
    except SandboxUnavailable as exc:
        return str(exc)
    return None


#: Skips a test (or, as ``pytestmark``, a module) where the judge cannot run, saying why.
requires_judge = pytest.mark.skipif(judge_problem() is not None, reason=str(judge_problem()))

#: Skips a test that runs Icarus Verilog itself, outside the judge's sandbox, where it is not installed.
requires_simulator = pytest.mark.skipif(simulator_problem() is not None, reason=str(simulator_problem()))
