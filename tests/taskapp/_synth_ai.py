"""The reference's own client, synth-ai 0.2.14, in a venv of its own: built once, cached, and driven by subprocess.

The venv lives in ``.proofgym-cache/synth-ai-0.2.14/venv`` at the repository root (git-ignored), or where
``PROOFGYM_SYNTH_AI_VENV`` says; building it (``python -m venv``, then ``pip install synth-ai==0.2.14``: about
three minutes) happens under a file lock, so concurrent test runs build it once, and a finished build is marked
so that an interrupted one is started over. Where it cannot be installed (no index reachable, say), the tests
that need it skip, saying why. synth-ai's code never runs in proofgym's interpreter: ``_synth_ai_driver.py``
runs in its venv, one check per call.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

VERSION = "0.2.14"
ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".proofgym-cache" / f"synth-ai-{VERSION}"
DRIVER = Path(__file__).with_name("_synth_ai_driver.py")
_MARKER = ".proofgym-complete"
_INSTALL_TIMEOUT_S = 1800


def synth_ai_venv() -> Path:
    """The venv holding synth-ai 0.2.14 (built on first use), or a skip saying why it cannot be built."""
    configured = os.environ.get("PROOFGYM_SYNTH_AI_VENV")
    venv = Path(configured) if configured else CACHE / "venv"
    if (venv / _MARKER).is_file():
        return venv
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run may be building it: wait for that one
        if not (venv / _MARKER).is_file():
            _build(venv)
    return venv


def _build(venv: Path) -> None:
    shutil.rmtree(venv, ignore_errors=True)  # an interrupted build
    steps = [[sys.executable, "-m", "venv", str(venv)],
             [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", f"synth-ai=={VERSION}"]]
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=_INSTALL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pytest.skip(f"synth-ai=={VERSION} could not be installed in {venv}: {step[2:]} took over "
                        f"{_INSTALL_TIMEOUT_S} s")
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
            pytest.skip(f"synth-ai=={VERSION} could not be installed in {venv} ({' '.join(step[2:])} exited "
                        f"{done.returncode}):\n{tail}")
    (venv / _MARKER).touch()


def environ(api_key: str, **extra: str) -> dict[str, str]:
    """The environment synth-ai's code runs with: the app's key, no proofgym key variables, warnings off."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("PROOFGYM_API_KEY", "ENV_API_KEY", "ENVIRONMENT_API_KEY_ALIASES", "PYTHONPATH")}
    env.update(ENVIRONMENT_API_KEY=api_key, PYTHONWARNINGS="ignore", **extra)
    return env


def drive(venv: Path, check: str, url: str, argument: Any = "", *, api_key: str, **extra: str) -> Any:
    """Run one check of ``_synth_ai_driver.py`` in the venv; its JSON result (a failed check fails the test)."""
    if not isinstance(argument, str):
        argument = json.dumps(argument)
    done = subprocess.run([str(venv / "bin" / "python"), str(DRIVER), check, url, argument], capture_output=True,
                          text=True, timeout=300, env=environ(api_key, **extra))
    assert done.returncode == 0, f"synth-ai's {check} check failed:\n{done.stderr[-4000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def drive_all(venv: Path, url: str, checks: dict[str, tuple[str, Any]], *, api_key: str) -> dict[str, Any]:
    """Run ``checks`` (``{name: (check, argument)}``) in one driver process; each one's result by name, or
    ``{"error": traceback}`` for one that failed."""
    names = list(checks)
    batch = [[check, argument if isinstance(argument, str) else json.dumps(argument)]
             for check, argument in checks.values()]
    return dict(zip(names, drive(venv, "batch", url, batch, api_key=api_key)))


def cli(venv: Path, *args: str, api_key: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``synth-ai ARGS`` (its console script, in the venv), run in ``cwd``."""
    return subprocess.run([str(venv / "bin" / "synth-ai"), *args], capture_output=True, text=True, timeout=600,
                          env=environ(api_key), cwd=cwd)


if __name__ == "__main__":  # `make setup` builds it, so that the first test run does not spend minutes on it
    try:
        print(synth_ai_venv())
    except pytest.skip.Exception as skipped:
        print(f"synth-ai's client tests will skip: {skipped}")
