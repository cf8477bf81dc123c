"""Crafter's baseline agents as policies (``crafter-random``, ``crafter-heuristic``; registered through the
``proofgym.policies`` entry point): they read the last observation's text, as a language model would."""

from __future__ import annotations

from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field

from proofgym.crafter import HeuristicAgent, RandomAgent
from proofgym.policies._build import PolicyKind
from proofgym.policies._protocol import PolicyReply, PolicyRequest
from proofgym.policies._scripted import action_text


class CrafterAgentConfig(BaseModel):
    """Config of a Crafter baseline policy: ``seed`` mixes into the agent's draws (with the rollout's seed and
    the turn), ``policy_id`` names it in traces."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int = Field(0, ge=0, le=2**63 - 1)
    policy_id: str | None = Field(None, min_length=1)


class CrafterAgentPolicy:
    """A Crafter agent (:class:`~proofgym.crafter.RandomAgent` or :class:`~proofgym.crafter.HeuristicAgent`)
    playing from the text of the last observation; stateless, so one instance drives many rollouts."""

    def __init__(self, agent: RandomAgent | HeuristicAgent, *, seed: int = 0, policy_id: str) -> None:
        self.agent, self.seed, self.policy_id = agent, seed, policy_id

    async def act(self, request: PolicyRequest) -> PolicyReply:
        text = _last_observation(request.messages)
        plan = self.agent.decide(text, seed=hash((self.seed, request.seed or 0)), turn=request.turn)
        action: dict[str, Any] = {"tool": "interact", "args": {"action": plan[0]}} if len(plan) == 1 else \
            {"tool": "interact_many", "args": {"actions": plan}}
        return PolicyReply(action, {"role": "assistant", "content": action_text(action)})

    async def aclose(self) -> None:
        """Nothing to release."""


def _last_observation(messages: list[Mapping[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") in ("user", "tool") and isinstance(message.get("content"), str):
            return str(message["content"])
    return ""


def _random(config: CrafterAgentConfig) -> CrafterAgentPolicy:
    return CrafterAgentPolicy(RandomAgent(), seed=config.seed, policy_id=config.policy_id or "crafter-random")


def _heuristic(config: CrafterAgentConfig) -> CrafterAgentPolicy:
    return CrafterAgentPolicy(HeuristicAgent(), seed=config.seed, policy_id=config.policy_id or "crafter-heuristic")


CRAFTER_RANDOM = PolicyKind(CrafterAgentConfig, _random)
CRAFTER_HEURISTIC = PolicyKind(CrafterAgentConfig, _heuristic)
