"""The TRL path: proofgym's reward path as a TRL reward function, its environments through TRL's
``environment_factory``, proofgym's ``GRPOTrainer`` (TRL's, with a curriculum, dynamic sampling and proofgym's
sampling and log-probability engine) and the ``proofgym train`` run.

Importing this package is light: torch, transformers, trl and peft are imported inside the functions that use them
(extra ``train``).
"""

from proofgym.training.trl._adapter import (
    AsyncTRLRewardFunction,
    TRLRewardFunction,
    build_grpo_trainer,
    grpo_config_kwargs,
    lora_config,
    trl_reward_function,
)
from proofgym.training.trl._env import TRLEnvironment, trl_environment
from proofgym.training.trl._run import TrainResult, run_training

__all__ = [
    "AsyncTRLRewardFunction",
    "TRLEnvironment",
    "TRLRewardFunction",
    "TrainResult",
    "build_grpo_trainer",
    "grpo_config_kwargs",
    "lora_config",
    "run_training",
    "trl_environment",
    "trl_reward_function",
]
