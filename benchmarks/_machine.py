"""What the benchmarks print about the machine they ran on (imported by the scripts beside it)."""

from __future__ import annotations

import platform
from pathlib import Path


def processor() -> str:
    """The processor's model name (``/proc/cpuinfo``), else what ``platform`` knows of it."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
