"""The console script sets OpenMP's passive waiting before any command imports torch (every command that runs torch:
train, eval, serve-model, the task app a run starts, the demo), and leaves a policy the user chose alone."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_PROBE = """\
import os, sys
sys.argv = ["proofgym", "--version"]
from proofgym.cli import main
assert "torch" not in sys.modules, "importing the command line imported torch"
try:
    main()
except SystemExit:
    pass
print("policy:", os.environ.get("OMP_WAIT_POLICY"))
"""


@pytest.mark.parametrize("chosen,expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_the_console_script_waits_passively_unless_told_otherwise(chosen, expected):
    env = {key: value for key, value in os.environ.items() if key != "OMP_WAIT_POLICY"}
    if chosen is not None:
        env["OMP_WAIT_POLICY"] = chosen
    done = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == f"policy: {expected}"
