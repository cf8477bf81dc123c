"""What ``GET /task_info`` and ``GET /info`` say about the app's tasks, in the reference's ``TaskInfo`` shape.

The reference's ``TaskInfo`` is ``{task: {id, name, description, version}, environment, dataset: {id, name,
version, splits, default_split, description}, rubric: {outcome, events}, inference: {model, inference_url},
limits: {max_turns, max_response_tokens, timeout_seconds}, task_metadata}``, extra keys allowed. A seed's task
adds proofgym's own keys beside them: ``env_name``, ``seed``, ``task_id``, ``observation`` (the first
observation, as the agent sees it) and ``tools``. The rubric states how the environment pays: the outcome is its
verdict-based score, the events its step rewards (their components are the trace's event rewards); the
environment's reward is the contract, no judge is involved.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import proofgym
from proofgym.envs import Environment
from proofgym.taskapp._response import task_id

#: The most seeds one ``GET /task_info`` may ask for (each resets an environment).
MAX_TASK_INFO_SEEDS = 64
#: The splits of every environment's seeds (``env.config.split``).
DATASET_SPLITS: tuple[str, ...] = ("train", "val", "test")

_RUBRIC = {
    "outcome": {"name": "outcome_score", "criteria": [{
        "id": "outcome", "weight": 1.0,
        "description": "1.0 when the environment's verification passes the episode, 0.0 when it does not "
                       "(metrics.outcome_score; null when it could not judge it, see metrics.invalid_reason)"}]},
    "events": {"name": "step_rewards", "criteria": [{
        "id": "reward", "weight": 1.0,
        "description": "the environment's reward for each step; its components are the trace's event rewards"}]},
}


class TaskDescriber:
    """Describes the tasks of one app's environment: ``base()`` (what every task shares), ``taskset()`` and
    ``tasks(seeds)`` (each seed's task; resets an environment, so call it off the event loop)."""

    def __init__(self, env_name: str, make: Callable[[Mapping[str, Any]], Environment],
                 base_config: Mapping[str, Any], tools: Sequence[Mapping[str, Any]], *,
                 policies: Sequence[str], max_time_s: float) -> None:
        self.env_name = env_name
        self._make = make
        self._config = dict(base_config)
        self._tools = [dict(tool) for tool in tools]
        self._policies = list(policies)
        self._max_time_s = max_time_s

    def base(self) -> dict[str, Any]:
        """The keys of ``TaskInfo`` every task of the app shares (``task`` names the environment)."""
        max_turns = self._config.get("max_turns")
        return {
            "task": {"id": self.env_name, "name": f"proofgym {self.env_name}", "version": proofgym.__version__,
                     "description": f"proofgym's {self.env_name!r} environment: tools "
                                    f"{[tool.get('function', tool).get('name') for tool in self._tools]}"},
            "environment": self.env_name,
            "dataset": {"id": self.env_name, "name": self.env_name, "version": proofgym.__version__,
                        "splits": list(DATASET_SPLITS), "default_split": None,
                        "description": "tasks by seed (env.seed); with env.config.split, the seed is a position "
                                       "in that split"},
            "rubric": _RUBRIC,
            "inference": {"model": None, "inference_url": None, "policies": self._policies},
            "limits": {"max_turns": max_turns if isinstance(max_turns, int) else None, "max_response_tokens": None,
                       "timeout_seconds": int(self._max_time_s)},
            "task_metadata": {"env_config": self._config},
        }

    def taskset(self) -> dict[str, Any]:
        """The task set's description (``GET /task_info`` without a seed)."""
        base = self.base()
        return {"id": self.env_name, "name": base["task"]["name"], "description": base["task"]["description"],
                "environment": self.env_name, "dataset": base["dataset"], "tools": self._tools,
                "seeds": "any integer from 0 to 2**63 - 1"}

    def tasks(self, seeds: Sequence[int]) -> list[dict[str, Any]]:
        """Each seed's task as the agent sees it, in the order asked (one environment instance for all)."""
        base = self.base()
        out = []
        with self._make(self._config) as env:
            for seed in seeds:
                observation = env.reset(seed).to_dict()
                tid = task_id(observation, self.env_name, seed)
                out.append({
                    **base,
                    "task": {**base["task"], "id": tid, "name": f"{self.env_name} seed {seed}"},
                    "task_metadata": {**base["task_metadata"], "seed": seed, "task_id": tid},
                    "env_name": self.env_name, "seed": seed, "task_id": tid,
                    "observation": observation, "tools": env.tools,
                })
        return out
