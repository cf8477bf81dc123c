"""Whether the Verilog judge can run here (Icarus Verilog, and a usable bubblewrap sandbox): one check for every
test package. Imported as ``from _judge import requires_judge`` (pytest puts ``tests/`` on ``sys.path`` for the
test packages under it)."""

from __future__ import annotations

import functools

import pytest


@functools.lru_cache(maxsize=1)
def judge_problem() -> str | None:
    """Why the Verilog judge cannot run here, or ``None`` when it can."""
    from proofgym.verilog import Sandbox, SandboxUnavailable, detect_toolchain

    if not detect_toolchain().can_simulate:
        return "Icarus Verilog is not installed (apt-get install -y iverilog bubblewrap)"
    try:
        Sandbox().sandboxed
    except SandboxUnavailable as exc:
        return str(exc)
    return None


#: Skips a test (or, as ``pytestmark``, a module) where the judge cannot run, saying why.
requires_judge = pytest.mark.skipif(judge_problem() is not None, reason=str(judge_problem()))
