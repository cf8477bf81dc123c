"""The policy contract: given the conversation so far and the tools, produce the next action."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, runtime_checkable

from proofgym.policies._frames import Frame
from proofgym.traces import LMCallEvent


@dataclass(frozen=True)
class PolicyRequest:
    """What a policy sees on one turn.

    ``messages`` is the OpenAI chat history (system, user observations, assistant replies, tool
    results); ``tools`` the environment's tools in the OpenAI tool format; ``turn`` counts from 1.
    ``accepts_text`` is true when the environment also takes plain text as an action (a
    single-turn answer): a reply with no tool call is then the action itself, not an error.
    ``frame`` is the last observation's rendered frame when it carries one (checked: a PNG within the
    size limits, see :mod:`proofgym.policies._frames`); the messages hold text only, and a policy that
    shows its model images adds the frame itself. A text-only policy ignores it.
    """

    messages: list[Mapping[str, Any]]
    tools: list[Mapping[str, Any]] = field(default_factory=list)
    turn: int = 1
    seed: int | None = None
    accepts_text: bool = False
    frame: Frame | None = None


@dataclass(frozen=True)
class PolicyReply:
    """A policy's answer for one turn.

    ``action`` goes to ``env.step`` (a ``{"tool": name, "args": {...}}`` object, or the raw text
    for a text-only environment); ``message`` is the assistant message to append to the history;
    ``lm_calls`` records each model call made for it. ``error`` is set, and ``action`` is None,
    when the policy could not produce an action (unreachable server, unparseable reply): the
    rollout loop turns that into an error observation, never a crash. ``unavailable`` marks an
    error that is not the model's doing (the server unreachable or answering with an HTTP error
    after retries, a malformed response body, a model that failed to run): the loop then ends the
    session with status ``"error"`` instead of charging the agent a turn, so an outage is never
    scored as a bad answer.
    """

    action: Any
    message: Mapping[str, Any]
    lm_calls: list[LMCallEvent] = field(default_factory=list)
    error: str | None = None
    unavailable: bool = False


@runtime_checkable
class Policy(Protocol):
    """Anything that can act: ``policy_id`` names it in traces; ``act`` is async and must not raise
    on a bad model reply (it returns a ``PolicyReply`` with ``error`` instead). ``aclose`` releases
    connections or models."""

    policy_id: str

    async def act(self, request: PolicyRequest) -> PolicyReply: ...

    async def aclose(self) -> None: ...
