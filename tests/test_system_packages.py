"""scripts/system_packages.sh, the one place that knows the system packages: silent when the tools are there, one line
naming the missing ones and the install command when they cannot be installed, and exit 0 (never failing make).
apt-get is never run here: PROOFGYM_NO_SYSTEM_PACKAGES=1 in every call."""

import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "system_packages.sh"
BASH = shutil.which("bash")

pytestmark = pytest.mark.skipif(BASH is None or shutil.which("id") is None, reason="needs bash and id")


def run(tmp_path, *args, tools=()):
    """The script with a PATH holding ``id`` and a stub for each of ``tools``, nothing else."""
    path = tmp_path / "bin"
    if not path.exists():
        path.mkdir()
        (path / "id").symlink_to(shutil.which("id"))
    for tool in tools:
        (path / tool).write_text("#!/bin/sh\n")
        (path / tool).chmod(0o755)
    return subprocess.run([BASH, str(SCRIPT), *args], capture_output=True, text=True, timeout=30,
                          env={"PATH": str(path), "PROOFGYM_NO_SYSTEM_PACKAGES": "1"})


def test_present_tools_are_checked_silently(tmp_path):
    done = run(tmp_path, "iverilog", "bwrap", tools=("iverilog", "vvp", "bwrap"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_missing_tools_are_named_on_one_line_with_the_install_command_and_exit_0(tmp_path):
    done = run(tmp_path, "iverilog", "bwrap", tools=("vvp",))
    assert done.returncode == 0 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("proofgym: Icarus Verilog (iverilog) and bubblewrap (bwrap) are not installed, so the "
                           "Verilog tests will skip; install them with: ")
    assert "apt-get install -y iverilog bubblewrap (not installed automatically: PROOFGYM_NO_SYSTEM_PACKAGES=1)" in line


def test_one_missing_tool(tmp_path):
    done = run(tmp_path, "iverilog", "bwrap", tools=("iverilog", "vvp"))
    assert "bubblewrap (bwrap) is not installed" in done.stderr and "Icarus" not in done.stderr
    assert "install it with: " in done.stderr and "apt-get install -y bubblewrap (" in done.stderr


def test_strict_fails_and_an_unknown_tool_is_a_usage_error(tmp_path):
    assert run(tmp_path, "--strict", "bwrap").returncode == 1
    unknown = run(tmp_path, "chess")
    assert unknown.returncode == 2 and "unknown tool 'chess'" in unknown.stderr
