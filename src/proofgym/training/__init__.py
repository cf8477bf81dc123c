"""Training on verifiable rewards: the policy-gradient core (:mod:`proofgym.training._policy_gradient`: group
advantages, clipped token or sequence (GSPO) ratios, KL, log-probabilities, microbatches), a compact GRPO loop, a
format warm-up, held-out evaluation, the offline demo;
the TRL path (:mod:`proofgym.training.trl`: reward function, environments, GRPOTrainer, ``proofgym train``) and
multi-step RL over task apps (:mod:`proofgym.training.rl`).

Importing this package is light: torch and transformers are imported inside the functions that need
them (install the ``train`` extra to call those).
"""

from proofgym.policies import DEMO_DOMAIN_NAME, demo_completion
from proofgym.training._average import WeightAverage
from proofgym.training._curriculum import BranchCurriculum
from proofgym.training._demo import DEFAULT_STEPS as DEFAULT_DEMO_STEPS
from proofgym.training._demo import GOAL_RULE as DEMO_GOAL_RULE
from proofgym.training._demo import STOP_RULE as DEMO_STOP_RULE
from proofgym.training._demo import DemoResult, DemoSettings, run_demo
from proofgym.training._demo_task import contrast_rows, demo_rows, demo_run_config
from proofgym.training._generate import Generation, generate, sample_token_ids
from proofgym.training._grpo import CompactGRPO, CompactGRPOConfig, CompactGRPOStep, Rollout, shared_prompt_logprobs
from proofgym.training._heldout import HeldoutReport, evaluate_heldout
from proofgym.training._policy_gradient import (
    LossTerms,
    RatioLevel,
    clipped_loss,
    group_advantages,
    kl_k3,
    microbatches,
    selected_logprobs,
)
from proofgym.training._report import MetricsLog
from proofgym.training._sft import SFTConfig, sft_warmup
from proofgym.training._threads import prefer_passive_waiting
from proofgym.training.trl import (
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
    "DEFAULT_DEMO_STEPS",
    "DEMO_DOMAIN_NAME",
    "DEMO_GOAL_RULE",
    "DEMO_STOP_RULE",
    "AsyncTRLRewardFunction",
    "BranchCurriculum",
    "CompactGRPO",
    "CompactGRPOConfig",
    "CompactGRPOStep",
    "DemoResult",
    "DemoSettings",
    "Generation",
    "HeldoutReport",
    "LossTerms",
    "MetricsLog",
    "RatioLevel",
    "Rollout",
    "SFTConfig",
    "TRLEnvironment",
    "TRLRewardFunction",
    "TrainResult",
    "WeightAverage",
    "build_grpo_trainer",
    "clipped_loss",
    "contrast_rows",
    "demo_completion",
    "demo_rows",
    "demo_run_config",
    "evaluate_heldout",
    "generate",
    "group_advantages",
    "grpo_config_kwargs",
    "kl_k3",
    "lora_config",
    "microbatches",
    "prefer_passive_waiting",
    "run_demo",
    "run_training",
    "sample_token_ids",
    "selected_logprobs",
    "sft_warmup",
    "shared_prompt_logprobs",
    "trl_environment",
    "trl_reward_function",
]
