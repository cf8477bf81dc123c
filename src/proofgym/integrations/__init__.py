"""Trainer adapters: veRL (``compute_score``) and a trainer's run config source (a file or a shipped domain); the TRL
path, which lives in :mod:`proofgym.training.trl`, is re-exported here under its documented names. OpenRLHF's reward
server is :mod:`proofgym.reward_server`.

Importing this package is light: torch, transformers, trl and peft are imported only inside the functions that use
them (extra ``train`` for TRL).
"""

from proofgym.integrations._run_config_source import (
    domain_run_config,
    resolve_run_config,
    reward_function_for_run_config,
)
from proofgym.integrations._verl import compute_score, compute_score_batch
from proofgym.rewards import COMPONENTS, batch_metrics, item_breakdown
from proofgym.training import (
    AsyncTRLRewardFunction,
    TRLEnvironment,
    TRLRewardFunction,
    TrainResult,
    build_grpo_trainer,
    grpo_config_kwargs,
    lora_config,
    run_training,
    trl_environment,
    trl_reward_function,
)

__all__ = [
    "COMPONENTS",
    "AsyncTRLRewardFunction",
    "TRLEnvironment",
    "TRLRewardFunction",
    "TrainResult",
    "batch_metrics",
    "build_grpo_trainer",
    "compute_score",
    "compute_score_batch",
    "domain_run_config",
    "grpo_config_kwargs",
    "item_breakdown",
    "lora_config",
    "resolve_run_config",
    "reward_function_for_run_config",
    "run_training",
    "trl_environment",
    "trl_reward_function",
]
