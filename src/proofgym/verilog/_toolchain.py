"""Finding the Verilog toolchain (Icarus Verilog) and the sandbox (bubblewrap) on this machine."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from dataclasses import dataclass, field

VERILOG_INSTALL_HINT = "apt-get install -y iverilog bubblewrap"
"""What to run (as root) on Debian or Ubuntu to get every tool the Verilog judge uses."""


class ToolchainError(RuntimeError):
    """Icarus Verilog (``iverilog`` or ``vvp``) is missing: nothing can be compiled or simulated."""


@dataclass(frozen=True)
class Toolchain:
    """Paths and versions of the tools the judge runs; a path is ``None`` when the tool is not found.

    ``prlimit`` (util-linux) is optional: without it resource limits are set in the child before
    ``exec`` from Python. ``missing`` names the required tools that were not found (``bwrap`` counts
    as required: running model-written code without it needs an explicit opt-out).
    """

    iverilog: str | None
    vvp: str | None
    bwrap: str | None
    prlimit: str | None
    iverilog_version: str | None = None
    vvp_version: str | None = None
    bwrap_version: str | None = None
    missing: list[str] = field(default_factory=list)

    @property
    def can_simulate(self) -> bool:
        """Whether both Icarus Verilog programs were found."""
        return self.iverilog is not None and self.vvp is not None

    def versions(self) -> dict[str, str | None]:
        """``{"iverilog": ..., "vvp": ..., "bwrap": ...}``: enters the verifier's version."""
        return {"iverilog": self.iverilog_version, "vvp": self.vvp_version, "bwrap": self.bwrap_version}

    def describe(self) -> str:
        """One line per tool, and what to install when something is missing."""
        rows = [
            ("iverilog", self.iverilog, self.iverilog_version),
            ("vvp", self.vvp, self.vvp_version),
            ("bwrap", self.bwrap, self.bwrap_version),
            ("prlimit", self.prlimit, None),
        ]
        lines = [f"{name}: not found" if path is None else f"{name}: {version} at {path}" if version
                 else f"{name}: at {path}" for name, path, version in rows]
        if self.missing:
            lines.append(f"missing {', '.join(self.missing)}: install with `{VERILOG_INSTALL_HINT}`")
        return "\n".join(lines)

    def require_simulator(self) -> None:
        """Raise :class:`ToolchainError` (saying what to install) unless iverilog and vvp were found."""
        if not self.can_simulate:
            absent = [name for name in ("iverilog", "vvp") if getattr(self, name) is None]
            # Headline first (what an eval shows per rollout), then the detail and the fix.
            raise ToolchainError(
                f"{absent[0]} not installed; the Verilog judge needs Icarus Verilog ({', '.join(absent)}: not found "
                f"on PATH): install it with `{VERILOG_INSTALL_HINT}` (Icarus Verilog 11 or later)"
            )


@functools.lru_cache(maxsize=8)
def detect_toolchain(iverilog: str = "iverilog", vvp: str = "vvp", bwrap: str | None = "bwrap") -> Toolchain:
    """Locate the tools (names are looked up on ``PATH``, paths are taken as given) and read their versions.

    Cached per argument tuple: the tools do not change while a process runs. ``bwrap=None`` means the
    sandbox is not wanted, so it is not reported missing.
    """
    iverilog_path, vvp_path = shutil.which(iverilog), shutil.which(vvp)
    bwrap_path = shutil.which(bwrap) if bwrap is not None else None
    missing = [name for name, path in (("iverilog", iverilog_path), ("vvp", vvp_path)) if path is None]
    if bwrap is not None and bwrap_path is None:
        missing.append("bwrap")
    return Toolchain(
        iverilog=iverilog_path,
        vvp=vvp_path,
        bwrap=bwrap_path,
        prlimit=shutil.which("prlimit"),
        iverilog_version=_version([iverilog_path, "-V"], r"version (\S+)") if iverilog_path else None,
        vvp_version=_version([vvp_path, "-V"], r"version (\S+)") if vvp_path else None,
        bwrap_version=_version([bwrap_path, "--version"], r"bubblewrap (\S+)") if bwrap_path else None,
        missing=missing,
    )


def _version(argv: list[str], pattern: str) -> str | None:
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(pattern, done.stdout + done.stderr)
    return match.group(1) if match else None
