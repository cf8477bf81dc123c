"""Training on verifiable rewards: a compact GRPO loop, a format warm-up, held-out evaluation, the offline demo.

Importing this package is light: torch and transformers are imported inside the functions that need
them (install the ``train`` extra to call those).
"""

from proofgym.training._average import WeightAverage
from proofgym.training._curriculum import BranchCurriculum
from proofgym.training._demo import DEFAULT_STEPS as DEFAULT_DEMO_STEPS
from proofgym.training._demo import GOAL_RULE as DEMO_GOAL_RULE
from proofgym.training._demo import STOP_RULE as DEMO_STOP_RULE
from proofgym.training._demo import DemoResult, DemoSettings, run_demo
from proofgym.training._demo_task import DOMAIN_NAME as DEMO_DOMAIN_NAME
from proofgym.training._demo_task import contrast_rows, demo_completion, demo_rows, demo_run_config
from proofgym.training._generate import Generation, generate, sample_token_ids
from proofgym.training._grpo import (
    CompactGRPO,
    GRPOConfig,
    LossTerms,
    Rollout,
    StepResult,
    group_advantages,
    grpo_loss,
    kl_k3,
    shared_prompt_logprobs,
)
from proofgym.training._heldout import HeldoutReport, evaluate_heldout
from proofgym.training._report import MetricsLog
from proofgym.training._sft import SFTConfig, sft_warmup
from proofgym.training._threads import prefer_passive_waiting

__all__ = [
    "DEFAULT_DEMO_STEPS",
    "DEMO_DOMAIN_NAME",
    "DEMO_GOAL_RULE",
    "DEMO_STOP_RULE",
    "BranchCurriculum",
    "CompactGRPO",
    "DemoResult",
    "DemoSettings",
    "GRPOConfig",
    "Generation",
    "HeldoutReport",
    "LossTerms",
    "MetricsLog",
    "Rollout",
    "SFTConfig",
    "StepResult",
    "WeightAverage",
    "contrast_rows",
    "demo_completion",
    "demo_rows",
    "demo_run_config",
    "evaluate_heldout",
    "generate",
    "group_advantages",
    "grpo_loss",
    "kl_k3",
    "prefer_passive_waiting",
    "run_demo",
    "sample_token_ids",
    "sft_warmup",
    "shared_prompt_logprobs",
]
