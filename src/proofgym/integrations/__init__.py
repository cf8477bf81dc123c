"""Trainer adapters: TRL (reward function, GRPOTrainer builder, environments), veRL (``compute_score``)
and OpenRLHF (a remote reward server), plus the ``proofgym train`` run.

Importing this package is light: torch, transformers, trl, peft, fastapi and uvicorn are imported
only inside the functions that use them (extra ``train`` for TRL, ``serve`` for the server).
"""

from proofgym.integrations._metrics import COMPONENTS, batch_metrics, item_breakdown
from proofgym.integrations._openrlhf import (
    RewardRequest,
    RewardResponse,
    create_reward_app,
    parse_label,
    reward_api_key,
    serve_reward,
    split_response,
)
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

__all__ = [
    "COMPONENTS",
    "AsyncTRLRewardFunction",
    "RewardRequest",
    "RewardResponse",
    "TRLEnvironment",
    "TRLRewardFunction",
    "TrainResult",
    "batch_metrics",
    "build_grpo_trainer",
    "compute_score",
    "compute_score_batch",
    "create_reward_app",
    "domain_run_config",
    "grpo_config_kwargs",
    "item_breakdown",
    "lora_config",
    "parse_label",
    "resolve_run_config",
    "reward_api_key",
    "reward_function_for_run_config",
    "run_training",
    "serve_reward",
    "split_response",
    "trl_environment",
    "trl_reward_function",
]
