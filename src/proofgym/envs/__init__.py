"""Multi-step tool environments: the protocol, a base class for tool-calling environments, and a registry.

Nothing concrete lives here: the rulebook domains' environments (:mod:`proofgym.domains`), ``verilog``, ``math``,
``crafter`` and plugins' environments come in through the ``proofgym.envs`` entry-point group.

Every environment has train / val / test splits of its seeds: ``make(name, split=..., index=...)`` (see
:class:`SplitEnv`; an environment may say how its seeds are partitioned with a ``seed_partition``).
"""

from proofgym.envs._core import HOOK_DEFAULTS, Environment, EnvironmentHooks, Observation, StepResult, env_hook
from proofgym.envs._registry import (
    ENVIRONMENTS,
    EnvFactory,
    env_names,
    make,
    quick_to_make,
    register_env,
    report_verification_caches,
    verification_cache_usage,
)
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
    run_config_version,
    validated_env_config,
)
from proofgym.envs._tool_env import ToolEnv, ToolResult
from proofgym.envs._tools import MAX_ACTION_CHARS, Tool, ToolCall


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
    "env_hook",
    "env_names",
    "make",
    "quick_to_make",
    "register_env",
    "report_verification_caches",
    "run_config_version",
    "seed_partition",
    "split_selection",
    "validated_env_config",
    "verification_cache_usage",
]
