"""The reference-count memo: a problem's reference sample count ``M`` (or why its reference run failed),
remembered for the process's life and, counts only, on disk (:mod:`._reference_cache`).

Keyed by the judge version, the problem's content hash, the tool versions and the judge's limits, so a change
to any of them finds the count again. The reference runs themselves are the judge's (:mod:`._judge`).
"""

from __future__ import annotations

import threading
from typing import Any

from proofgym.verilog._judge_config import JUDGE_VERSION, JudgeConfig
from proofgym.verilog._problem import Problem
from proofgym.verilog._reference_cache import cache_key
from proofgym.verilog._toolchain import Toolchain

# Sample counts (or why there is none) by problem hash, tool versions and limits.
_SAMPLES: dict[tuple[Any, ...], int | str] = {}
_SAMPLES_LOCK = threading.Lock()


def _samples_key(problem: Problem, config: JudgeConfig, toolchain: Toolchain) -> tuple[Any, ...]:
    return (JUDGE_VERSION, problem.content_hash, toolchain.iverilog_version, toolchain.vvp_version,
            config.fingerprint())


def known_samples(problem: Problem, config: JudgeConfig, toolchain: Toolchain) -> int | str | None:
    """The remembered count (or failure) of the problem's reference run, from this process or the disk."""
    key = _samples_key(problem, config, toolchain)
    with _SAMPLES_LOCK:
        known = _SAMPLES.get(key)
    if known is None:
        cache = config.reference_cache()
        known = cache.get(cache_key(*key)) if cache is not None else None
        if known is not None:
            with _SAMPLES_LOCK:
                _SAMPLES[key] = known
    return known


def remember_samples(problem: Problem, config: JudgeConfig, toolchain: Toolchain, known: int | str) -> None:
    key = _samples_key(problem, config, toolchain)
    with _SAMPLES_LOCK:
        _SAMPLES[key] = known
    cache = config.reference_cache()
    if isinstance(known, int) and cache is not None:
        cache.put(cache_key(*key), known)
