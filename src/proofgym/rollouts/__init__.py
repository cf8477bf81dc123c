"""Rollouts: a policy acting in an environment, every step recorded as a trace."""

from proofgym.rollouts._loop import run_rollout
from proofgym.rollouts._result import RolloutResult, invalid_reason

__all__ = ["RolloutResult", "invalid_reason", "run_rollout"]
