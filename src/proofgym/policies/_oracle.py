"""The oracle: the known-good actions for a seed, per environment."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Mapping

from proofgym.envs import env_hook, make
from proofgym.policies._protocol import PolicyReply, PolicyRequest
from proofgym.policies._scripted import action_text


class OraclePolicy:
    """Plays the known-good answer for the rollout's seed (``request.seed``).

    The actions come from the environment's own ``oracle_actions(seed)`` (the rulebook environments answer with
    the gold completion of the seed's record; ``verilog`` writes the problem's reference design, then submits).
    The oracle builds its own instance of the environment (``env_config`` as for ``make``) to look the seed's
    task up; an environment without ``oracle_actions`` has no oracle (``ValueError``). It should earn the
    environment's top outcome on every seed: a test of the environment, not of a model.
    """

    def __init__(self, env_name: str, env_config: Mapping[str, Any] | None = None, *,
                 policy_id: str = "oracle") -> None:
        self.env_name = env_name
        self.policy_id = policy_id
        self._env = make(env_name, **dict(env_config or {}))
        if not callable(env_hook(self._env, "oracle_actions")):
            self._env.close()
            raise ValueError(f"there is no oracle for environment {env_name!r} ({type(self._env).__name__})")
        self._plans: dict[int, list[Any]] = {}
        self._lock = threading.Lock()

    def actions_for(self, seed: int) -> list[Any]:
        """The oracle's actions for ``seed``, in order."""
        with self._lock:
            if seed not in self._plans:
                # An optional hook, not on the Environment protocol; __init__ refused an env without it.
                self._plans[seed] = list(self._env.oracle_actions(seed))  # type: ignore[attr-defined]
            return self._plans[seed]

    async def act(self, request: PolicyRequest) -> PolicyReply:
        if request.seed is None:
            return PolicyReply(None, {"role": "assistant", "content": ""}, unavailable=True,
                               error="the oracle needs the rollout's seed (PolicyRequest.seed)")
        try:
            plan = await asyncio.to_thread(self.actions_for, request.seed)
        except Exception as exc:  # e.g. a seed the environment refuses
            return PolicyReply(None, {"role": "assistant", "content": ""}, unavailable=True,
                               error=f"the oracle could not look up seed {request.seed}: {type(exc).__name__}: {exc}")
        index = request.turn - 1
        if index >= len(plan):
            return PolicyReply(None, {"role": "assistant", "content": ""},
                               error=f"the oracle has {len(plan)} actions; none for turn {request.turn}")
        return PolicyReply(plan[index], {"role": "assistant", "content": action_text(plan[index])})

    async def aclose(self) -> None:
        """Close the oracle's own environment instance."""
        await asyncio.to_thread(self._env.close)
