"""Multi-step tool environments: the protocol, a base class for tool-calling environments, and a registry.

Nothing concrete lives here: the rulebook domains' environments (:mod:`proofgym.domains`), ``verilog``, ``math``,
``crafter`` and plugins' environments come in through the ``proofgym.envs`` entry-point group.

Every environment has train / val / test splits of its seeds: ``make(name, split=..., index=...)`` (see
:class:`SplitEnv`; an environment may say how its seeds are partitioned with a ``seed_partition``).
"""

import sys
from typing import Any

from proofgym.envs._core import HOOK_DEFAULTS, Environment, EnvironmentHooks, Observation, StepResult, env_hook
from proofgym.envs._registry import ENVIRONMENTS, EnvFactory, env_names, make, quick_to_make, register_env
from proofgym.envs._splits import (
    DIFFICULTIES,
    SPLIT_KEYS,
    SPLITS,
    BlockPartition,
    SeedPartition,
    SplitEnv,
    SplitSelection,
    TaskPartition,
    seed_partition,
    split_selection,
)
from proofgym.envs._single_answer import (
    AnswerTask,
    SingleAnswerEnv,
    answer_reward_function,
    answer_tool,
    check_answer_run_config,
    plain_text_answer,
    reward_components,
    run_config_version,
    validated_env_config,
)
from proofgym.envs._tool_env import ToolEnv, ToolResult
from proofgym.envs._tools import MAX_ACTION_CHARS, Tool, ToolCall


def verification_cache_usage() -> list[dict[str, Any]]:
    """The verdict caches this process's rulebook environments share (one per domain and run config): entries,
    estimated bytes, the bound, evictions. Empty until one is built; loads no domain."""
    rulebook = sys.modules.get("proofgym.domains._env")
    return [] if rulebook is None else rulebook.verification_cache_usage()


__all__ = [
    "AnswerTask",
    "BlockPartition",
    "DIFFICULTIES",
    "ENVIRONMENTS",
    "EnvFactory",
    "Environment",
    "EnvironmentHooks",
    "HOOK_DEFAULTS",
    "MAX_ACTION_CHARS",
    "Observation",
    "SPLITS",
    "SPLIT_KEYS",
    "SeedPartition",
    "SingleAnswerEnv",
    "SplitEnv",
    "SplitSelection",
    "StepResult",
    "TaskPartition",
    "Tool",
    "ToolCall",
    "ToolEnv",
    "ToolResult",
    "answer_reward_function",
    "answer_tool",
    "check_answer_run_config",
    "env_hook",
    "env_names",
    "make",
    "plain_text_answer",
    "quick_to_make",
    "register_env",
    "reward_components",
    "run_config_version",
    "seed_partition",
    "split_selection",
    "validated_env_config",
    "verification_cache_usage",
]
