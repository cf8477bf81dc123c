"""Scripted policies: replay a fixed list of actions."""

from __future__ import annotations

import json
from typing import Any, Sequence

from proofgym.policies._protocol import PolicyReply, PolicyRequest


class ScriptedPolicy:
    """Replays ``actions``: turn ``t`` gets ``actions[t - 1]``; past the end, every reply is an error.

    An action is whatever the environment's ``step`` takes (a ``{"tool": ..., "args": ...}`` object
    or plain text). Stateless between calls, so one instance can drive many rollouts at once.
    """

    def __init__(self, actions: Sequence[Any], *, policy_id: str = "scripted") -> None:
        if isinstance(actions, (str, bytes)) or not isinstance(actions, Sequence):
            raise TypeError(f"actions must be a list of actions, got {type(actions).__name__}")
        self.actions = list(actions)
        self.policy_id = policy_id

    async def act(self, request: PolicyRequest) -> PolicyReply:
        index = request.turn - 1
        if not 0 <= index < len(self.actions):
            return PolicyReply(None, {"role": "assistant", "content": ""},
                               error=f"the script has {len(self.actions)} actions; none for turn {request.turn}")
        action = self.actions[index]
        return PolicyReply(action, {"role": "assistant", "content": action_text(action)})

    async def aclose(self) -> None:
        """Nothing to release."""


def action_text(action: Any) -> str:
    """An action as the assistant message's text: plain text as is, anything else as JSON."""
    return action if isinstance(action, str) else json.dumps(action, default=str)
