"""A trainer's run config source (a file or a shipped domain's name), and one shared reward function per source per
process."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from proofgym.config import RunConfig, load_run_config
from proofgym.rewards import RewardFunction

_LOCK = threading.Lock()
_SHARED: dict[tuple[int, str], RewardFunction] = {}


def domain_run_config(name: str) -> RunConfig:
    """The default reward path of a shipped domain (its one run config file, which ``configs/run/<domain>.yaml``
    links to: its own output contract, the embedded kernel, the default shaping). ``KeyError`` lists the domains."""
    from proofgym.domains import default_run_config

    config: RunConfig = default_run_config(name)  # proofgym.domains imports it lazily (typed Any here)
    return config


def resolve_run_config(source: str | Path) -> RunConfig:
    """A run config from a file path, or from a shipped domain's name (``loan``,
    ``proofgym/loan`` or ``proofgym:loan``). ``ValueError`` says which was tried."""
    from proofgym.domains import domain_names

    text = str(source).strip()
    if not text:
        raise ValueError("the run config is blank: give a config file path or a shipped domain name")
    name = _domain_name(text)
    if name in domain_names():
        return domain_run_config(name)
    path = Path(text).expanduser()
    if path.is_file():
        return load_run_config(path)
    raise ValueError(f"{text!r} is neither a run config file nor a shipped domain "
                     f"(domains: {', '.join(domain_names())})")


def reward_function_for_run_config(source: str | Path) -> RewardFunction:
    """One reward function per run config (file or domain) per process, built on first use.

    Safe from any thread: the first caller builds it under a lock, everyone shares it (a
    RewardFunction is thread-safe, and sharing it shares its verification cache). Keyed by process
    id too, so a forked child never uses its parent's runtime thread, which does not exist there.
    """
    key = _key(source)
    pid = os.getpid()
    with _LOCK:
        reward_fn = _SHARED.get((pid, key))
        if reward_fn is None:
            reward_fn = resolve_run_config(source).reward_function()
            _SHARED[(pid, key)] = reward_fn
        return reward_fn


def _domain_name(text: str) -> str:
    for prefix in ("proofgym/", "proofgym:"):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def _key(source: Any) -> str:
    from proofgym.domains import domain_names

    text = str(source).strip()
    name = _domain_name(text)
    if name in domain_names():
        return f"domain:{name}"
    # The same file reached by two spellings is one config.
    return f"file:{Path(text).expanduser().resolve()}"
