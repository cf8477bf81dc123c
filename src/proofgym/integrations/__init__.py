"""Trainer adapters: veRL (``compute_score``) and a trainer's run config source (a file or a shipped domain); the TRL
path, which lives in :mod:`proofgym.training.trl`, is re-exported here under its documented names. OpenRLHF's reward
server is :mod:`proofgym.reward_server`.

inspect_ai (extra ``inspect``): every environment is a task, ``inspect eval proofgym/<env>`` (registered through the
``inspect_ai`` entry point), and ``--model proofgym/<model>`` talks to any OpenAI-compatible server (docs/inspect.md).
:func:`inspect_task` builds an environment's task, :func:`inspect_episode` is its solver and :func:`inspect_scorer` its
scorer, to compose tasks of your own; they are imported from inspect_ai on first use.

verifiers 0.4 (extra ``verifiers``): every environment is a taskset, ``vf-eval proofgym-<env>``, in the subpackage
:mod:`proofgym.integrations.vf` (docs/verifiers.md); this package does not import it.

Importing this package is light: torch, transformers, trl and peft are imported only inside the functions that use
them (extra ``train`` for TRL), and inspect_ai only when one of its names is first used.
"""

from typing import Any

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

#: The inspect_ai names, imported on first use (inspect_ai is an optional extra).
_INSPECT = {"inspect_task": "proofgym_task", "inspect_episode": "proofgym_episode", "inspect_scorer": "proofgym_scorer"}


def __getattr__(name: str) -> Any:
    if name in _INSPECT:
        from proofgym.integrations import _inspect_tasks

        return getattr(_inspect_tasks, _INSPECT[name])
    raise AttributeError(f"module 'proofgym.integrations' has no attribute {name!r}")


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
    "inspect_episode",
    "inspect_scorer",
    "inspect_task",
    "item_breakdown",
    "lora_config",
    "resolve_run_config",
    "reward_function_for_run_config",
    "run_training",
    "trl_environment",
    "trl_reward_function",
]
