"""Bounds for the tests that check something ends, or ends soon, on machines that are busy and slower than ours.

A wall-clock bound is only asserted where the alternative never ends (a hang, a deadlock, a sleep of a minute):
:data:`CUT_OFF_S` is far above what the cut-off costs and far below the alternative, so load cannot cross it. Work
whose cost is the point (a scan that must be linear) is bounded in CPU seconds of this process
(:func:`cpu_seconds`), which other processes on the machine do not inflate.
"""

from __future__ import annotations

import time
from typing import Any, Callable

#: How long a call that must be cut off (a timeout, a close, a killed job) may take before a test calls it a hang.
CUT_OFF_S = 15.0

#: The CPU seconds a linear scan of the tests' adversarial inputs (a few hundred thousand characters) may take:
#: about 50x what one takes here, and far below a quadratic scan (hours).
LINEAR_SCAN_CPU_S = 5.0


def cpu_seconds(work: Callable[[], Any]) -> tuple[Any, float]:
    """Run ``work`` and return its result and the CPU seconds (user + system) this process spent on it."""
    start = time.process_time()
    result = work()
    return result, time.process_time() - start
