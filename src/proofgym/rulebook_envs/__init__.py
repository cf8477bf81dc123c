"""The rulebook domains' single-turn environments: one record of a domain, one answer, scored by the domain's
reward path (``grant_eligibility``, ``loan``; registered through the ``proofgym.envs`` entry points).

``RulebookEnv`` and the rest are imported on first use, so that registering the environments loads no domain.
"""

from typing import Any

from proofgym.rulebook_envs._factory import (
    GRANT_ELIGIBILITY_ENV,
    LOAN_ENV,
    SHIPPED_RULEBOOK_DOMAINS,
    RulebookEnvFactory,
    register_rulebook_env,
)

_LAZY = {"ANSWER_TOOL", "RulebookEnv", "RulebookEnvConfig", "balance_period", "default_run_config",
         "make_rulebook_env", "shared_reward_function", "verification_cache_usage"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from proofgym.rulebook_envs import _env

        return getattr(_env, name)
    raise AttributeError(f"module 'proofgym.rulebook_envs' has no attribute {name!r}")


__all__ = [
    "ANSWER_TOOL",
    "GRANT_ELIGIBILITY_ENV",
    "LOAN_ENV",
    "SHIPPED_RULEBOOK_DOMAINS",
    "RulebookEnv",
    "RulebookEnvConfig",
    "RulebookEnvFactory",
    "balance_period",
    "default_run_config",
    "make_rulebook_env",
    "register_rulebook_env",
    "shared_reward_function",
    "verification_cache_usage",
]
