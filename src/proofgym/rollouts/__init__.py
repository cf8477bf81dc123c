"""Rollouts: a policy acting in an environment, every step recorded as a trace."""

from proofgym.rollouts._loop import run_rollout
from proofgym.rollouts._result import RolloutResult

__all__ = ["RolloutResult", "run_rollout"]
