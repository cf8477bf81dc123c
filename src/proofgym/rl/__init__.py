"""Multi-step RL over task apps: the reference's RL TOML, rollouts by correlation id, judged and blended rewards,
trajectory- and decision-level credit, and the policy update on the exact sampled token ids.

Imports torch (through the trainer) only when :class:`RLTrainer` is used.
"""

from typing import Any

from proofgym.rl._config import MACHINE_SECTIONS, RLConfig, is_rl_config, load_rl_config, parse_rl_config
from proofgym.rl._task_app import RLError

_LAZY = {"RLTrainer": "proofgym.rl._trainer", "RunResult": "proofgym.rl._trainer",
         "policy_loss": "proofgym.rl._trainer", "trained_ids": "proofgym.rl._trainer",
         "Turn": "proofgym.rl._credit", "sampled_turns": "proofgym.rl._credit",
         "group_advantages": "proofgym.rl._credit", "decision_values": "proofgym.rl._credit",
         "PolicyServer": "proofgym.rl._policy", "build_policy_models": "proofgym.rl._policy"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'proofgym.rl' has no attribute {name!r}")


__all__ = ["MACHINE_SECTIONS", "PolicyServer", "RLConfig", "RLError", "RLTrainer", "RunResult", "Turn",
           "build_policy_models", "decision_values", "group_advantages", "is_rl_config", "load_rl_config",
           "parse_rl_config", "policy_loss", "sampled_turns", "trained_ids"]
