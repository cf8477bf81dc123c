"""Trainer adapters: veRL (``compute_score``) and a trainer's run config source (a file or a shipped domain); the TRL
path, which lives in :mod:`proofgym.training.trl`, is re-exported here under its documented names. OpenRLHF's reward
server is :mod:`proofgym.reward_server`.

inspect_ai (extra ``inspect``): every environment is a task, ``inspect eval proofgym/<env>`` (registered through the
``inspect_ai`` entry point), and ``--model proofgym/<model>`` talks to any OpenAI-compatible server (docs/inspect.md).
:func:`inspect_task` builds an environment's task, :func:`inspect_episode` is its solver (proofgym's rollout loop),
:func:`inspect_tool_loop` the other one (inspect's tool loop over :class:`InspectEnvToolbox`'s tools, each an
``env.step``) and :func:`inspect_scorer` its scorer, to compose tasks of your own; imported on first use.

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

#: The inspect_ai names and where they live, imported on first use (inspect_ai is an optional extra).
_INSPECT = {"inspect_task": ("_inspect_tasks", "proofgym_task"),
            "inspect_episode": ("_inspect_tasks", "proofgym_episode"),
            "inspect_tool_loop": ("_inspect_tools", "proofgym_tool_loop"),
            "InspectEnvToolbox": ("_inspect_tools", "EnvToolbox"),
            "inspect_scorer": ("_inspect_scorer", "proofgym_scorer")}


def __getattr__(name: str) -> Any:
    if name in _INSPECT:
        import importlib

        module, attribute = _INSPECT[name]
        return getattr(importlib.import_module(f"proofgym.integrations.{module}"), attribute)
    raise AttributeError(f"module 'proofgym.integrations' has no attribute {name!r}")


__all__ = [
    "COMPONENTS",
    "InspectEnvToolbox",
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
    "inspect_tool_loop",
    "item_breakdown",
    "lora_config",
    "resolve_run_config",
    "reward_function_for_run_config",
    "run_training",
    "trl_environment",
    "trl_reward_function",
]
