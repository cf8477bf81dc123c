"""The oracle: the known-good actions for a seed, per environment."""

from __future__ import annotations

import asyncio
import re
import threading
from typing import Any, Mapping

from proofgym.envs import Environment, make
from proofgym.policies._protocol import PolicyReply, PolicyRequest
from proofgym.policies._scripted import action_text

_REFERENCE_MODULE = re.compile(r"\bRefModule\b")


class OraclePolicy:
    """Plays the known-good answer for the rollout's seed (``request.seed``).

    Rulebook environments: answer with the gold completion of the seed's record. ``verilog``: write
    the problem's reference design, renamed to ``TopModule``, then submit. The oracle builds its own
    instance of the environment (``env_config`` as for ``make``) to look the seed's task up; other
    environments have no oracle (``ValueError``). It should earn the environment's top outcome on
    every seed: a test of the environment, not of a model.
    """

    def __init__(self, env_name: str, env_config: Mapping[str, Any] | None = None, *,
                 policy_id: str = "oracle") -> None:
        self.env_name = env_name
        self.policy_id = policy_id
        self._env = make(env_name, **dict(env_config or {}))
        if _plan_kind(self._env) is None:
            self._env.close()
            raise ValueError(f"there is no oracle for environment {env_name!r} ({type(self._env).__name__})")
        self._plans: dict[int, list[Any]] = {}
        self._lock = threading.Lock()

    def actions_for(self, seed: int) -> list[Any]:
        """The oracle's actions for ``seed``, in order."""
        with self._lock:
            if seed not in self._plans:
                self._plans[seed] = _plan(self._env, seed)
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


def _plan_kind(env: Environment) -> str | None:
    from proofgym.envs._rulebook import RulebookEnv
    from proofgym.verilog import VerilogEnv

    if isinstance(env, RulebookEnv):
        return "rulebook"
    if isinstance(env, VerilogEnv):
        return "verilog"
    return None


def _plan(env: Any, seed: int) -> list[Any]:
    env.reset(seed)
    if _plan_kind(env) == "rulebook":
        from proofgym.domains import gold_completion

        return [{"tool": "answer", "args": {"completion": gold_completion(env.domain, env.record)}}]
    design = _REFERENCE_MODULE.sub("TopModule", env.problem.reference)
    return [{"tool": "write_file", "args": {"path": "top.v", "content": design}}, {"tool": "submit", "args": {}}]
