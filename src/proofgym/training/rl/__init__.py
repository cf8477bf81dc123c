"""Multi-step RL over task apps: the reference's RL TOML, rollouts by correlation id, judged and blended rewards,
trajectory- and decision-level credit, and the policy update on the exact sampled token ids.

Imports torch (through the trainer) only when :class:`RLTrainer` is used.
"""

from typing import Any

from proofgym.training.rl._config import (
    MACHINE_SECTIONS,
    RLConfig,
    is_rl_config,
    load_rl_config,
    parse_rl_config,
)
from proofgym.training.rl._task_app import RLError

_LAZY = {"RLTrainer": "_trainer", "RunResult": "_trainer", "policy_loss": "_trainer", "trained_ids": "_trainer",
         "Turn": "_credit", "sampled_turns": "_credit", "decision_values": "_credit",
         "PolicyServer": "_policy", "build_policy_models": "_policy"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'proofgym.training.rl' has no attribute {name!r}")


__all__ = ["MACHINE_SECTIONS", "PolicyServer", "RLConfig", "RLError", "RLTrainer", "RunResult", "Turn",
           "build_policy_models", "decision_values", "is_rl_config", "load_rl_config",
           "parse_rl_config", "policy_loss", "sampled_turns", "trained_ids"]
