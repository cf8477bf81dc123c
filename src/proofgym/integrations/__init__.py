"""Trainer adapters: TRL (reward function, GRPOTrainer builder, environments), veRL (``compute_score``)
and OpenRLHF (a remote reward server), plus the ``proofgym train`` run.

Importing this package is light: torch, transformers, trl, peft, fastapi and uvicorn are imported
only inside the functions that use them (extra ``train`` for TRL, ``serve`` for the server).
"""

from proofgym.integrations._run_config_source import (
    domain_run_config,
    resolve_run_config,
    reward_function_for_run_config,
)
from proofgym.integrations._train_run import TrainResult, run_training
from proofgym.integrations._trl import (
    AsyncTRLRewardFunction,
    TRLRewardFunction,
    build_grpo_trainer,
    grpo_config_kwargs,
    lora_config,
    trl_reward_function,
)
from proofgym.integrations._trl_env import TRLEnvironment, trl_environment
from proofgym.integrations._verl import compute_score, compute_score_batch
from proofgym.rewards import COMPONENTS, batch_metrics, item_breakdown  # their home; re-exported here

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
